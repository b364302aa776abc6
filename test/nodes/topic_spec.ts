import should from 'should';
import { expectError, expectOutput, helper, loadWithSandbox, useSandbox, Fields, TestNode } from '../support/harness';
import { addTopic, pubsubState, resetPubsub } from '../../sandbox/pubsub-state';

/** ISO 8601 with fractional seconds and no zone designator. */
const CREATED_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+$/;

describe('svc-topic', function () {
  const ctx = useSandbox();
  const topicNode = (extra: Fields = {}) => ({ id: 'n1', type: 'svc-topic', ...extra });
  const load = (extra: Fields = {}, options: { config?: Fields; credentials?: Fields; nodeCredentials?: Record<string, Record<string, string>> } = {}) =>
    loadWithSandbox(ctx.sandbox, { types: ['svc-topic'], nodes: [topicNode(extra)], ...options });

  beforeEach(function () {
    resetPubsub(ctx.sandbox);
  });

  describe('create-topic', function () {
    it('sends Name and Description from msg.payload and outputs the Topic with msg.topicId', async function () {
      await load();
      const msg = await expectOutput('n1', { operation: 'create-topic', payload: { Name: 'sensors', Description: 'room sensors' } });
      const [request] = ctx.sandbox.requests('topic-create');
      should(request.method).equal('POST');
      should(request.path).equal('/v1/pubsub/topics');
      should(request.headers.apikey).equal('sandbox-pubsub-key');
      should(JSON.parse(request.body)).eql({ Name: 'sensors', Description: 'room sensors' });
      should(msg.statusCode).equal(200);
      const topic = msg.payload as Fields;
      should(topic).match({ name: 'sensors', description: 'room sensors', userId: 'sandbox-user' });
      should(Number.isInteger(topic.id)).be.true();
      should(topic.createdAt).match(CREATED_AT);
      should(msg.topicId).equal(topic.id);
    });

    it('takes the operation and fields fixed in the editor over the message', async function () {
      await load({
        operation: 'create-topic',
        operationType: 'operation',
        topicName: 'fixed',
        topicNameType: 'str',
        topicDescription: 'desc',
        topicDescriptionType: 'str',
      });
      await expectOutput('n1', { operation: 'list-topics', payload: { Name: 'from message' } });
      should(JSON.parse(ctx.sandbox.requests('topic-create')[0].body)).eql({ Name: 'fixed', Description: 'desc' });
      should(ctx.sandbox.requests('topic-list')).have.length(0);
    });

    it('sends an empty Description when none is given', async function () {
      await load();
      await expectOutput('n1', { operation: 'create-topic', payload: { Name: 'bare' } });
      should(JSON.parse(ctx.sandbox.requests('topic-create')[0].body)).eql({ Name: 'bare', Description: '' });
    });

    it('refuses an empty or missing name before any request', async function () {
      await load();
      for (const payload of [{ Name: '  ' }, {}, { Name: 5 }, 'text']) {
        const { error, msg } = await expectError('n1', { operation: 'create-topic', payload });
        should(error.code).equal('INVALID_INPUT');
        should(msg.payload).eql(payload);
      }
      should(ctx.sandbox.requests()).have.length(0);
    });

    it('never repeats a create after a 5xx, but does after a 429', async function () {
      await load();
      ctx.sandbox.setFault('topic-create', { status: 500, times: 1 });
      should((await expectError('n1', { operation: 'create-topic', payload: { Name: 'a' } })).error.code).equal('SERVER');
      should(ctx.sandbox.requests('topic-create')).have.length(1);
      ctx.sandbox.setFault('topic-create', { status: 429, retryAfter: '0', times: 1 });
      await expectOutput('n1', { operation: 'create-topic', payload: { Name: 'a' } });
      should(ctx.sandbox.requests('topic-create').map((r) => r.status)).eql([500, 429, 200]);
    });
  });

  describe('list-topics', function () {
    beforeEach(function () {
      for (let i = 1; i <= 25; i++) addTopic(ctx.sandbox, `topic-${i}`);
    });

    it('sends limit and offset as query parameters and outputs the page', async function () {
      await load();
      const msg = await expectOutput('n1', { operation: 'list-topics', payload: { limit: 5, offset: 10 } });
      should(ctx.sandbox.requests('topic-list')[0].query).eql({ limit: '5', offset: '10' });
      const page = msg.payload as { limit: number; offset: number; totalCount: number; items: Fields[] };
      should(page).match({ limit: 5, offset: 10, totalCount: 25 });
      should(page.items.map((t) => t.name)).eql(['topic-11', 'topic-12', 'topic-13', 'topic-14', 'topic-15']);
      should(page.items[0].createdAt).match(CREATED_AT);
    });

    it('sends a default limit of 100 and offset 0', async function () {
      await load({ operation: 'list-topics', operationType: 'operation' });
      const msg = await expectOutput('n1', {});
      should(ctx.sandbox.requests('topic-list')[0].query).eql({ limit: '100', offset: '0' });
      should((msg.payload as { items: unknown[] }).items).have.length(25);
    });

    it('collects every page with "all pages", following the offsets the service returns', async function () {
      pubsubState(ctx.sandbox).maxPageSize = 7;
      await load({ operation: 'list-topics', operationType: 'operation', allPages: true, limit: '10', limitType: 'num' });
      const msg = await expectOutput('n1', {});
      const page = msg.payload as { offset: number; totalCount: number; items: Fields[] };
      should(page.totalCount).equal(25);
      should(page.items.map((t) => t.id)).eql(Array.from({ length: 25 }, (_v, i) => i + 1));
      should(ctx.sandbox.requests('topic-list').map((r) => r.query.offset)).eql(['0', '7', '14', '21']);
    });

    it('stops at the safety cap of pages with a warning', async function () {
      await load({ operation: 'list-topics', operationType: 'operation', allPages: true, limit: '10', limitType: 'num', maxPages: 2 });
      const msg = await expectOutput('n1', {});
      should((msg.payload as { items: unknown[] }).items).have.length(20);
      should(ctx.sandbox.requests('topic-list')).have.length(2);
      const node = helper.getNode('n1');
      const warnings = (node.warn as { getCalls(): Array<{ args: unknown[] }> }).getCalls().map((c) => String(c.args[0]));
      should(warnings.some((w) => /stopped after 2 pages/.test(w))).be.true();
    });

    it('refuses "all pages" responses that are not pages or do not advance', async function () {
      await load({ operation: 'list-topics', operationType: 'operation', allPages: true });
      ctx.sandbox.setFault('topic-list', { status: 200, body: JSON.stringify({ isSuccess: true, data: { items: 'none' } }), times: 1 });
      should((await expectError('n1', {})).error.message).match(/not a page object/);
      const stuck = { isSuccess: true, data: { limit: 2, offset: 0, totalCount: 25, items: [{ id: 1 }, { id: 2 }] } };
      ctx.sandbox.setFault('topic-list', { status: 200, body: JSON.stringify(stuck), times: 2 });
      const { error } = await expectError('n1', {});
      should(error.code).equal('BAD_RESPONSE');
      should(error.message).match(/did not advance past offset 2/);
    });

    it('retries a read after a 5xx', async function () {
      await load({ operation: 'list-topics', operationType: 'operation' });
      ctx.sandbox.setFault('topic-list', { status: 503, times: 1 });
      await expectOutput('n1', {});
      should(ctx.sandbox.requests('topic-list').map((r) => r.status)).eql([503, 200]);
    });

    it('refuses paging values that are not integers', async function () {
      await load();
      for (const payload of [{ limit: 0 }, { limit: 'ten' }, { offset: -1 }, { offset: 1.5 }]) {
        should((await expectError('n1', { operation: 'list-topics', payload })).error.code).equal('INVALID_INPUT');
      }
      should(ctx.sandbox.requests()).have.length(0);
    });
  });

  describe('get-topic and delete-topic', function () {
    it('gets a topic by msg.topicId (a number or digits)', async function () {
      const topic = addTopic(ctx.sandbox, 'sensors', 'desc');
      await load();
      const msg = await expectOutput('n1', { operation: 'get-topic', topicId: String(topic.id) });
      should(ctx.sandbox.requests('topic-get')[0].path).equal(`/v1/pubsub/topics/${topic.id}`);
      should(msg.payload).eql(topic);
    });

    it('reports isSuccess: false as an error carrying the start of the response (not the envelope object) to a Catch node', async function () {
      await loadWithSandbox(ctx.sandbox, {
        types: ['svc-topic'],
        nodes: [topicNode({ wires: [[]] }), { id: 'c1', type: 'catch', scope: null, uncaught: false, wires: [['out']] }],
      });
      const caught = new Promise<Fields>((resolve) => helper.getNode('out').once('input', resolve));
      helper.getNode('n1').receive({ operation: 'get-topic', topicId: 404 });
      const msg = await caught;
      const error = msg.error as { code: string; cause: unknown };
      should(error.code).equal('NOT_FOUND');
      should(error.cause).equal('{"isSuccess":false,"data":null,"message":"topic 404 not found"}');
      should(msg.statusCode).equal(404);
    });

    it('treats isSuccess: false in a 200 response as an error too', async function () {
      pubsubState(ctx.sandbox).failureStatus = 200;
      await load();
      const { error, msg } = await expectError('n1', { operation: 'get-topic', topicId: 404 });
      should(error.code).equal('BAD_REQUEST');
      should(msg.statusCode).equal(200);
      should(error.cause).startWith('{"isSuccess":false');
    });

    it('deletes a topic, saying so in msg.payload for the empty response (never undefined, issue 54), and retries a 5xx (DELETE is idempotent)', async function () {
      const topic = addTopic(ctx.sandbox, 'gone');
      await load({ operation: 'delete-topic', operationType: 'operation' });
      ctx.sandbox.setFault('topic-delete', { status: 502, times: 1 });
      const msg = await expectOutput('n1', { topicId: topic.id });
      should(msg.statusCode).equal(204);
      should(msg.payload).eql({ id: topic.id, deleted: true });
      should(ctx.sandbox.requests('topic-delete').map((r) => [r.method, r.path, r.status])).eql([
        ['DELETE', `/v1/pubsub/topics/${topic.id}`, 502],
        ['DELETE', `/v1/pubsub/topics/${topic.id}`, 204],
      ]);
      should(pubsubState(ctx.sandbox).topics.has(topic.id)).be.false();
    });

    it('refuses topic ids that are not integers before any request', async function () {
      await load({ operation: 'get-topic', operationType: 'operation' });
      for (const topicId of [undefined, 'abc', 1.5, '7a', true, -3]) {
        should((await expectError('n1', { topicId })).error.code).equal('INVALID_INPUT');
      }
      should(ctx.sandbox.requests()).have.length(0);
    });

    it('reads the topic id from a field fixed in the editor', async function () {
      const topic = addTopic(ctx.sandbox, 'fixed');
      await load({ operation: 'get-topic', operationType: 'operation', topicId: String(topic.id), topicIdType: 'num' });
      await expectOutput('n1', { topicId: 999 });
      should(ctx.sandbox.requests('topic-get')[0].path).equal(`/v1/pubsub/topics/${topic.id}`);
    });
  });

  describe('create-subscription', function () {
    const request = (topicId: number, extra: Fields = {}) => ({
      WebhookAddress: 'https://receiver.example/hook',
      LocationIds: ['cell-1', 'cell-2'],
      TopicId: topicId,
      ...extra,
    });

    it('sends the capitalised Subscription fields from msg.payload', async function () {
      const topic = addTopic(ctx.sandbox, 'sensors');
      await load();
      const msg = await expectOutput('n1', {
        operation: 'create-subscription',
        payload: request(topic.id, { WebhookHeader: 'x-receiver-key:key-1', SecretToken: 'from-message' }),
      });
      const [sent] = ctx.sandbox.requests('subscription-create');
      should(sent.path).equal('/v1/pubsub/subscriptions');
      should(JSON.parse(sent.body)).eql(request(topic.id, { WebhookHeader: 'x-receiver-key:key-1', SecretToken: 'from-message' }));
      should(msg.payload).match({ topicId: topic.id, locationIds: ['cell-1', 'cell-2'], active: true });
      should(JSON.stringify(msg.payload)).not.match(/from-message/);
      should(pubsubState(ctx.sandbox).subscriptions[0]).match({ secretToken: 'from-message', webhookHeader: 'x-receiver-key:key-1' });
    });

    it('takes TopicId from msg.topicId first, and a comma-separated location list', async function () {
      const topic = addTopic(ctx.sandbox, 'sensors');
      await load({ locationIds: 'cell-a, cell-b', locationIdsType: 'str' });
      await expectOutput('n1', {
        operation: 'create-subscription',
        topicId: topic.id,
        payload: { WebhookAddress: 'http://127.0.0.1:1880/hook', TopicId: 999 },
      });
      const sent = JSON.parse(ctx.sandbox.requests('subscription-create')[0].body) as unknown;
      should(sent).eql({ WebhookAddress: 'http://127.0.0.1:1880/hook', LocationIds: ['cell-a', 'cell-b'], TopicId: topic.id });
    });

    it('takes SecretToken and WebhookHeader from the node credentials over the message', async function () {
      const topic = addTopic(ctx.sandbox, 'sensors');
      await load({}, { nodeCredentials: { n1: { secretToken: 'stored-secret', webhookHeader: 'x-key:stored' } } });
      const msg = await expectOutput('n1', {
        operation: 'create-subscription',
        payload: request(topic.id, { SecretToken: 'message-secret', WebhookHeader: 'x-key:message' }),
      });
      should(JSON.parse(ctx.sandbox.requests('subscription-create')[0].body)).match({ SecretToken: 'stored-secret', WebhookHeader: 'x-key:stored' });
      should(JSON.stringify(msg)).not.match(/stored-secret/);
    });

    it('validates every field before any request, without repeating secrets', async function () {
      const topic = addTopic(ctx.sandbox, 'sensors');
      await load();
      const cases: Array<[Fields, RegExp]> = [
        [{ WebhookAddress: 'ftp://receiver.example/hook' }, /http or https/],
        [{ WebhookAddress: 'not a url' }, /not a valid URL/],
        [{ WebhookAddress: '' }, /WebhookAddress is empty/],
        [{ WebhookHeader: 'x-receiver-key secret-value' }, /no colon/],
        [{ WebhookHeader: 'bad name:secret-value' }, /not a valid header name/],
        [{ WebhookHeader: 'x-key:' }, /value after the colon is empty/],
        [{ LocationIds: [] }, /LocationIds is empty/],
        [{ LocationIds: ['cell-1', ''] }, /LocationIds\[1\] is empty/],
        [{ LocationIds: undefined }, /LocationIds must be an array/],
        [{ TopicId: 1.5 }, /TopicId must be an integer/],
        [{ TopicId: 'seven' }, /TopicId must be an integer/],
        [{ SecretToken: 42 }, /SecretToken must be a string/],
      ];
      for (const [change, message] of cases) {
        const { error } = await expectError('n1', { operation: 'create-subscription', payload: request(topic.id, change) });
        should(error.code).equal('INVALID_INPUT');
        should(error.message).match(message);
        should(error.message).not.match(/secret-value/);
      }
      should(ctx.sandbox.requests()).have.length(0);
    });

    it('reports an unknown topic as an error carrying the start of the response', async function () {
      await load();
      const { error } = await expectError('n1', { operation: 'create-subscription', payload: request(31337) });
      should(error.code).equal('NOT_FOUND');
      should(error.cause).equal('{"isSuccess":false,"data":null,"message":"topic 31337 not found"}');
    });

    it('never repeats a subscription request after a reset connection', async function () {
      const topic = addTopic(ctx.sandbox, 'sensors');
      await load();
      ctx.sandbox.setFault('subscription-create', { reset: true, times: 1 });
      should((await expectError('n1', { operation: 'create-subscription', payload: request(topic.id) })).error.code).equal('NETWORK');
      should(ctx.sandbox.requests('subscription-create')).have.length(1);
    });
  });

  describe('the sandbox (strict instrument)', function () {
    const call = (method: string, path: string, body?: unknown, apikey = 'sandbox-pubsub-key') =>
      fetch(`${ctx.sandbox.url}${path}`, {
        method,
        headers: { apikey, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (res) => ({ status: res.status, body: await res.text() }));

    it('refuses lower-case or unknown fields, bad paging and a wrong key', async function () {
      should((await call('POST', '/v1/pubsub/topics', { name: 'x', Description: '' })).status).equal(400);
      should((await call('POST', '/v1/pubsub/topics', { Name: 'x' })).status).equal(400);
      should((await call('GET', '/v1/pubsub/topics?limit=0')).status).equal(400);
      should((await call('GET', '/v1/pubsub/topics?page=2')).status).equal(400);
      should((await call('GET', '/v1/pubsub/topics/abc')).status).equal(400);
      should((await call('GET', '/v1/pubsub/topics', undefined, 'wrong')).status).equal(401);
      const topic = addTopic(ctx.sandbox, 'strict');
      should((await call('POST', `/v1/pubsub/topics/${topic.id}/publish`, { LocationId: 'cell-1', Data: [1] })).status).equal(400);
      should(
        (await call('POST', '/v1/pubsub/subscriptions', { WebhookAddress: 'http://x.example/h', LocationIds: ['c'], TopicId: String(topic.id) })).status,
      ).equal(400);
    });
  });

  describe('every operation', function () {
    it('refuses an unknown or missing operation', async function () {
      await load();
      for (const operation of [undefined, 'drop-everything', 3]) {
        const { error } = await expectError('n1', { operation });
        should(error.code).equal('INVALID_INPUT');
        should(error.message).match(/operation must be one of create-topic, list-topics/);
      }
    });

    it('surfaces a wrong topics key as 401', async function () {
      await load({}, { credentials: { pubsubApiKey: 'wrong-key' } });
      const { error, msg } = await expectError('n1', { operation: 'list-topics' });
      should(error.code).equal('UNAUTHORIZED');
      should(msg.statusCode).equal(401);
      should(error.message).equal("svc-config 'sandbox': topics API key refused (401): check the Topics API key field");
    });

    it('reports a timeout and malformed JSON', async function () {
      await load({}, { config: { timeout: 300, maxRetries: 0 } });
      ctx.sandbox.setFault('topic-get', { hang: true, times: 1 });
      should((await expectError('n1', { operation: 'get-topic', topicId: 1 })).error.code).equal('TIMEOUT');
      ctx.sandbox.setFault('topic-list', { malformedJson: true, times: 1 });
      should((await expectError('n1', { operation: 'list-topics' })).error.code).equal('BAD_RESPONSE');
    });

    it('shows the outcome in the node status', async function () {
      await load();
      await expectOutput('n1', { operation: 'create-topic', payload: { Name: 'shown' } });
      const node: TestNode = helper.getNode('n1');
      should(node.status.lastCall?.args[0]).match({ fill: 'green', text: /created topic \d+/ });
    });
  });
});
