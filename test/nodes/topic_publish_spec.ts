import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import should from 'should';
import { expectError, expectOutput, helper, loadWithSandbox, useSandbox, Fields } from '../support/harness';
import { startSandbox } from '../../sandbox';
import { freePort } from '../support/node-red-process';
import { addSubscription, addTopic, pubsubState, resetPubsub, setSubscriptionActive, waitForDeliveries } from '../../sandbox/pubsub-state';

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A plain HTTP receiver standing in for webhook addresses; records what arrives. */
async function startReceiver(): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('svc-topic-publish', function () {
  const ctx = useSandbox();
  const publishNode = (extra: Fields = {}) => ({ id: 'n1', type: 'svc-topic-publish', ...extra });
  const load = (extra: Fields = {}, options: { config?: Fields; credentials?: Fields } = {}) =>
    loadWithSandbox(ctx.sandbox, { types: ['svc-topic-publish'], nodes: [publishNode(extra)], ...options });
  let topicId: number;

  beforeEach(function () {
    resetPubsub(ctx.sandbox);
    topicId = addTopic(ctx.sandbox, 'sensors').id;
  });

  it('publishes msg.payload to msg.topicId / msg.locationId with the apikey header', async function () {
    await load();
    const msg = await expectOutput('n1', { topicId, locationId: 'cell-1', payload: { temperature: 21.5 } });
    should(msg.statusCode).equal(200);
    should(msg.payload).eql({ isSuccess: true, data: { topicId, locationId: 'cell-1', subscriptions: 0 } });
    const [request] = ctx.sandbox.requests('topic-publish');
    should(request.method).equal('POST');
    should(request.path).equal(`/v1/pubsub/topics/${topicId}/publish`);
    should(request.headers.apikey).equal('sandbox-pubsub-key');
    should(request.headers['x-svc-api-key']).be.undefined();
    should(JSON.parse(request.body)).eql({ LocationId: 'cell-1', Data: { temperature: 21.5 } });
  });

  it('passes an empty response through as it came', async function () {
    pubsubState(ctx.sandbox).publishResponse = 'empty';
    await load();
    const msg = await expectOutput('n1', { topicId, locationId: 'cell-1', payload: { on: true } });
    should(msg.statusCode).equal(202);
    should(msg.payload).be.undefined();
  });

  it('uses values fixed in the editor over the message, and other sources for Data', async function () {
    const other = addTopic(ctx.sandbox, 'other').id;
    await load({ topicId: String(other), topicIdType: 'num', locationId: 'cell-9', locationIdType: 'str', data: 'reading', dataType: 'msg' });
    await expectOutput('n1', { topicId, locationId: 'cell-1', reading: { level: 3 }, payload: 'ignored' });
    const [request] = ctx.sandbox.requests('topic-publish');
    should(request.path).equal(`/v1/pubsub/topics/${other}/publish`);
    should(JSON.parse(request.body)).eql({ LocationId: 'cell-9', Data: { level: 3 } });
  });

  it('accepts a topic id given as a string of digits', async function () {
    await load();
    await expectOutput('n1', { topicId: String(topicId), locationId: 'cell-1', payload: {} });
    should(ctx.sandbox.requests('topic-publish')[0].path).equal(`/v1/pubsub/topics/${topicId}/publish`);
  });

  it('refuses Data that is not a JSON object before any request', async function () {
    await load();
    for (const payload of ['text', 42, [1, 2], null, undefined]) {
      const { error, msg } = await expectError('n1', { topicId, locationId: 'cell-1', payload });
      should(error.code).equal('INVALID_INPUT');
      should(msg.payload).eql(payload);
    }
    should(ctx.sandbox.requests('topic-publish')).have.length(0);
  });

  it('wraps other values as {"value": ...} when the option is on', async function () {
    await load({ wrapValue: true });
    await expectOutput('n1', { topicId, locationId: 'cell-1', payload: 'open' });
    await expectOutput('n1', { topicId, locationId: 'cell-1', payload: [1, 2] });
    await expectOutput('n1', { topicId, locationId: 'cell-1', payload: { already: 'object' } });
    const bodies = ctx.sandbox.requests('topic-publish').map((r) => (JSON.parse(r.body) as Fields).Data);
    should(bodies).eql([{ value: 'open' }, { value: [1, 2] }, { already: 'object' }]);
  });

  it('refuses bad topic and location ids before any request', async function () {
    await load();
    for (const bad of [{ topicId: 1.5 }, { topicId: 'abc' }, { topicId: undefined }, { topicId: -1 }, { locationId: '  ' }, { locationId: 7 }]) {
      const { error } = await expectError('n1', { topicId, locationId: 'cell-1', payload: {}, ...bad });
      should(error.code).equal('INVALID_INPUT');
    }
    should(ctx.sandbox.requests('topic-publish')).have.length(0);
  });

  it('reports isSuccess: false as an error carrying the start of the response, whatever the status', async function () {
    await load();
    const missing = await expectError('n1', { topicId: 999, locationId: 'cell-1', payload: {} });
    should(missing.error.code).equal('NOT_FOUND');
    should(missing.msg.statusCode).equal(404);
    should(missing.error.cause).equal('{"isSuccess":false,"data":null,"message":"topic 999 not found"}');
    pubsubState(ctx.sandbox).failureStatus = 200;
    const inEnvelopeOnly = await expectError('n1', { topicId: 999, locationId: 'cell-1', payload: {} });
    should(inEnvelopeOnly.msg.statusCode).equal(200);
    should(inEnvelopeOnly.error.message).match(/isSuccess: false: topic 999 not found/);
  });

  it('never repeats a publish that may have reached the service (5xx, reset, timeout)', async function () {
    await load({}, { config: { timeout: 300 } });
    ctx.sandbox.setFault('topic-publish', { status: 503, times: 1 });
    should((await expectError('n1', { topicId, locationId: 'cell-1', payload: {} })).error.code).equal('SERVER');
    should(ctx.sandbox.requests('topic-publish')).have.length(1);
    ctx.sandbox.setFault('topic-publish', { reset: true, times: 1 });
    should((await expectError('n1', { topicId, locationId: 'cell-1', payload: {} })).error.code).equal('NETWORK');
    should(ctx.sandbox.requests('topic-publish')).have.length(2);
    ctx.sandbox.setFault('topic-publish', { hang: true, times: 1 });
    should((await expectError('n1', { topicId, locationId: 'cell-1', payload: {} })).error.code).equal('TIMEOUT');
    should(ctx.sandbox.requests('topic-publish')).have.length(3);
  });

  it('retries a publish that never left (connection refused)', async function () {
    await load({}, { config: { baseUrl: `http://127.0.0.1:${await freePort()}` } });
    const { error } = await expectError('n1', { topicId, locationId: 'cell-1', payload: {} });
    should(error.code).equal('NETWORK');
    const texts =
      helper
        .getNode('n1')
        .status.getCalls?.()
        .map((call) => String((call.args[0] as { text?: string }).text)) ?? [];
    should(texts.filter((text) => /^retry \d after NETWORK$/.test(text))).have.length(2);
  });

  it('retries after a 429 and then succeeds', async function () {
    await load();
    ctx.sandbox.setFault('topic-publish', { status: 429, retryAfter: '0', times: 1 });
    const msg = await expectOutput('n1', { topicId, locationId: 'cell-1', payload: {} });
    should(msg.statusCode).equal(200);
    should(ctx.sandbox.requests('topic-publish').map((r) => r.status)).eql([429, 200]);
  });

  it('surfaces a wrong topics key as 401 UNAUTHORIZED', async function () {
    await load({}, { credentials: { pubsubApiKey: 'wrong-key' } });
    const { error, msg } = await expectError('n1', { topicId, locationId: 'cell-1', payload: {} });
    should(error.code).equal('UNAUTHORIZED');
    should(msg.statusCode).equal(401);
    should(error.message).equal("svc-config 'sandbox': topics API key refused (401): check the Topics API key field");
  });

  it('reports malformed JSON in the response as BAD_RESPONSE', async function () {
    await load();
    ctx.sandbox.setFault('topic-publish', { malformedJson: true, times: 1 });
    should((await expectError('n1', { topicId, locationId: 'cell-1', payload: {} })).error.code).equal('BAD_RESPONSE');
  });

  describe('the webhooks a publish triggers (sandbox behaviour the nodes rely on)', function () {
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    before(async function () {
      receiver = await startReceiver();
    });
    after(async function () {
      await receiver.close();
    });

    it('reach every active subscription of the topic listing the location, and no one else', async function () {
      const otherTopic = addTopic(ctx.sandbox, 'other').id;
      const hook = (name: string) => `${receiver.url}/${name}`;
      addSubscription(ctx.sandbox, {
        topicId,
        webhookAddress: hook('signed'),
        secretToken: 'sub-secret',
        webhookHeader: 'x-receiver-key: key-123',
        locationIds: ['cell-1', 'cell-2'],
      });
      addSubscription(ctx.sandbox, { topicId, webhookAddress: hook('unsigned'), locationIds: ['cell-1'] });
      addSubscription(ctx.sandbox, { topicId, webhookAddress: hook('other-location'), locationIds: ['cell-2'] });
      addSubscription(ctx.sandbox, { topicId: otherTopic, webhookAddress: hook('other-topic'), locationIds: ['cell-1'] });
      const inactive = addSubscription(ctx.sandbox, { topicId, webhookAddress: hook('inactive'), locationIds: ['cell-1'] });
      setSubscriptionActive(ctx.sandbox, inactive.id, false);
      receiver.received.splice(0);

      await load();
      await expectOutput('n1', { topicId, locationId: 'cell-1', payload: { temperature: 21.5 } });
      await waitForDeliveries(ctx.sandbox, 2);
      should(pubsubState(ctx.sandbox).deliveries).have.length(2);
      should(receiver.received.map((r) => r.path).sort()).eql(['/signed', '/unsigned']);

      const signed = receiver.received.find((r) => r.path === '/signed') as Received;
      should(signed.headers['x-receiver-key']).equal('key-123');
      should(signed.headers['content-type']).equal('application/json');
      const match = /^t=(\d+),digestV1=([0-9a-f]{64})$/.exec(String(signed.headers['svc-signature']));
      if (!match) throw new Error(`unexpected signature header ${String(signed.headers['svc-signature'])}`);
      should(match[2]).equal(createHash('sha256').update(`${match[1]}.sub-secret.${signed.body}`).digest('hex'));
      should(Math.abs(Number(match[1]) - Date.now() / 1000)).be.below(60);
      should(JSON.parse(signed.body)).match({ topicId, locationId: 'cell-1', data: { temperature: 21.5 } });

      const unsigned = receiver.received.find((r) => r.path === '/unsigned') as Received;
      should(unsigned.headers['svc-signature']).be.undefined();
      should(unsigned.headers['x-receiver-key']).be.undefined();

      setSubscriptionActive(ctx.sandbox, inactive.id, true);
      await expectOutput('n1', { topicId, locationId: 'cell-1', payload: { temperature: 22 } });
      await waitForDeliveries(ctx.sandbox, 5);
      should(receiver.received.map((r) => r.path).sort()).eql(['/inactive', '/signed', '/signed', '/unsigned', '/unsigned']);
    });

    it('are aborted and awaited when the sandbox closes', async function () {
      const hanging = http.createServer(() => undefined);
      await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
      const arrived = new Promise<void>((resolve) => hanging.once('request', () => resolve()));
      const own = await startSandbox();
      try {
        const topic = addTopic(own, 'slow receiver');
        addSubscription(own, {
          topicId: topic.id,
          webhookAddress: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/hook`,
          locationIds: ['cell-1'],
        });
        const res = await fetch(`${own.url}/v1/pubsub/topics/${topic.id}/publish`, {
          method: 'POST',
          headers: { apikey: 'sandbox-pubsub-key', 'content-type': 'application/json' },
          body: JSON.stringify({ LocationId: 'cell-1', Data: {} }),
        });
        should(res.status).equal(200);
        await arrived;
      } finally {
        await own.close();
        hanging.closeAllConnections();
        await new Promise<void>((resolve) => hanging.close(() => resolve()));
      }
      const [delivery] = pubsubState(own).deliveries;
      should(delivery.finished).be.true();
      should(delivery.status).be.undefined();
      should(delivery.error).be.a.String();
    });
  });
});
