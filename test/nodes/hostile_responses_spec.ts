import http from 'node:http';
import type { AddressInfo } from 'node:net';
import util from 'node:util';
import should from 'should';
import { SANDBOX_DEFAULTS, expectError, expectOutput, helper, loadWithSandbox, storedJobStore, useSandbox, Fields } from '../support/harness';
import { waitUntil } from '../support/wait';
import type { EchoedRequest, Fault } from '../../sandbox/faults';
import { addTopic, resetPubsub } from '../../sandbox/pubsub-state';
import { bulkControls, resetBulk } from '../../sandbox/endpoints/bulk';

/**
 * Issue 20 as a hostile or broken platform plays it, in real Node-RED: no secret the pack sends or
 * holds comes back out of a response (point 1), and no value from a response or an input moves a
 * request up its path or sends a token to another origin (point 2).
 */

type Calls = { getCalls(): Array<{ args: unknown[] }> };

/** Everything of a run a user could see: errors as Catch and debug nodes get them, log lines, statuses and outputs. */
function userVisible(extra: unknown[] = []): string {
  const render = (value: unknown) => util.inspect(value, { depth: 12, breakLength: Infinity, maxStringLength: 1_000_000, maxArrayLength: 10_000 });
  const texts: string[] = extra.map(render);
  for (const call of (helper.log() as unknown as Calls).getCalls()) texts.push(render(call.args[0]));
  // The helper spies on the Node prototype: one node's spy holds the calls of every node. Of node.error
  // only the error: its second argument is the input message, which holds what the flow itself put there.
  const any = helper.getNode('out');
  for (const spy of [any.status, any.error, any.warn, any.log] as unknown as Calls[]) {
    for (const call of spy.getCalls()) texts.push(render(call.args[0]));
  }
  return texts.join('\n');
}

function shouldNotShow(text: string, secrets: readonly string[]): void {
  for (const secret of secrets) {
    const at = text.indexOf(secret);
    should(at).equal(-1, `"${secret}" is visible: …${text.slice(Math.max(0, at - 120), at + secret.length + 40)}…`);
  }
}

/** `text` with each character as a JSON `\uXXXX` escape: the same string to a parser, invisible to a plain search. */
function unicodeEscaped(text: string): string {
  return [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
}

describe('hostile responses (issue 20)', function () {
  const ctx = useSandbox({ jobPolls: 2 });

  describe('secrets never come back (point 1)', function () {
    const SECRET_TOKEN = 'st-secret/value+2=';
    const HEADER_VALUE = 'header-secret-value-1';
    const SECRETS = [SECRET_TOKEN, HEADER_VALUE, encodeURIComponent(SECRET_TOKEN), SANDBOX_DEFAULTS.pubsubApiKey];
    let topicId = 0;
    const subscription = (extra: Fields = {}) => ({
      operation: 'create-subscription',
      payload: {
        WebhookAddress: 'http://127.0.0.1:9/hook',
        WebhookHeader: `X-Receiver-Key: ${HEADER_VALUE}`,
        SecretToken: SECRET_TOKEN,
        LocationIds: ['room-1'],
        TopicId: topicId,
        ...extra,
      },
    });
    const request = (r: EchoedRequest) => JSON.parse(r.body) as { SecretToken: string; WebhookHeader: string };

    /** svc-topic with a Catch node: resolves with what the Catch node got (msg.error as Node-RED builds it). */
    async function caughtError(fault: Fault, msg: Fields = subscription()): Promise<{ error: Fields; text: string }> {
      ctx.sandbox.setFault('subscription-create', fault);
      await loadWithSandbox(ctx.sandbox, {
        types: ['svc-topic'],
        nodes: [
          { id: 'n1', type: 'svc-topic', wires: [[]] },
          { id: 'c1', type: 'catch', scope: null, uncaught: false, wires: [['out']] },
        ],
      });
      const caught = new Promise<Fields>((resolve) => helper.getNode('out').once('input', resolve));
      helper.getNode('n1').receive(msg);
      const error = (await caught).error as Fields;
      should(ctx.sandbox.requests('subscription-create')).have.length(1);
      return { error, text: userVisible([error, error.cause, error.stack]) };
    }

    beforeEach(function () {
      resetPubsub(ctx.sandbox);
      topicId = addTopic(ctx.sandbox, 'rooms').id;
    });

    it('svc-topic: a create-subscription echoed as JSON in an error shows neither SecretToken, the header value nor the key, and the cause is a bounded excerpt', async function () {
      const echo = (r: EchoedRequest) => ({ isSuccess: false, data: null, message: 'invalid subscription', request: request(r), headers: r.headers });
      for (const fault of [
        { status: 400, echo: (r: EchoedRequest) => JSON.stringify(echo(r)) },
        { status: 200, echo: (r: EchoedRequest) => JSON.stringify({ ...echo(r), filler: 'x'.repeat(100_000) }) },
      ]) {
        const { error, text } = await caughtError(fault);
        should(error.code).equal('BAD_REQUEST');
        should(error.cause).be.a.String();
        should((error.cause as string).length).be.belowOrEqual(300);
        should(error.cause).startWith('{"isSuccess":false,"data":null,"message":"invalid subscription"');
        shouldNotShow(text, SECRETS);
        await helper.unload();
        ctx.sandbox.log.splice(0);
      }
    });

    it('svc-topic: SecretToken and the header value repeated in prose ("SecretToken X is too short"), in an error status or in a 200 envelope', async function () {
      const prose = (r: EchoedRequest) => `SecretToken ${request(r).SecretToken} is too short; WebhookHeader ${request(r).WebhookHeader} is refused`;
      for (const fault of [
        { status: 400, echo: (r: EchoedRequest) => JSON.stringify({ isSuccess: false, message: prose(r) }) },
        { status: 422, echo: (r: EchoedRequest) => JSON.stringify({ error: 'invalid', message: prose(r) }) },
        { status: 200, echo: (r: EchoedRequest) => JSON.stringify({ isSuccess: false, message: prose(r) }) },
      ]) {
        const { error, text } = await caughtError(fault);
        should(error.message).match(/SecretToken \*\*\* is too short/);
        shouldNotShow(text, SECRETS);
        await helper.unload();
        ctx.sandbox.log.splice(0);
      }
    });

    it('svc-topic: a secret written with \\u escapes, URL-encoded or inside malformed JSON is masked too', async function () {
      for (const fault of [
        { status: 400, echo: () => `{"isSuccess":false,"message":"SecretToken ${unicodeEscaped(SECRET_TOKEN)} and ${unicodeEscaped(HEADER_VALUE)} refused"}` },
        { status: 400, echo: () => JSON.stringify({ message: `see https://portal.example/subscriptions?token=${encodeURIComponent(SECRET_TOKEN)}` }) },
        { status: 200, echo: (r: EchoedRequest) => `{"isSuccess":true,"data":{"note":"SecretToken ${request(r).SecretToken} ${HEADER_VALUE}` },
      ]) {
        const { text } = await caughtError(fault);
        shouldNotShow(text, [...SECRETS, unicodeEscaped(SECRET_TOKEN)]);
        await helper.unload();
        ctx.sandbox.log.splice(0);
      }
    });

    it('svc-topic: a short SecretToken repeated in prose is masked as well', async function () {
      const { error, text } = await caughtError(
        { status: 400, echo: (r) => JSON.stringify({ message: `SecretToken ${request(r).SecretToken} is too short` }) },
        subscription({ SecretToken: 'q7z' }),
      );
      should(error.message).match(/SecretToken \*\*\* is too short/);
      shouldNotShow(text, ['q7z']);
    });

    it('svc-topic: a success response that repeats the secrets gives msg.payload without them', async function () {
      ctx.sandbox.setFault('subscription-create', {
        status: 200,
        echo: (r) =>
          JSON.stringify({ isSuccess: true, data: { id: 5, ...request(r), echoedKey: r.headers.apikey } }).replace(
            /\}\}$/,
            `,"escaped":"${unicodeEscaped(HEADER_VALUE)}"}}`,
          ),
      });
      await loadWithSandbox(ctx.sandbox, { types: ['svc-topic'], nodes: [{ id: 'n1', type: 'svc-topic' }] });
      const msg = await expectOutput('n1', subscription());
      should(msg.payload).match({ id: 5, SecretToken: '***', WebhookHeader: 'X-Receiver-Key: ***', echoedKey: '***', escaped: '***' });
      shouldNotShow(userVisible([msg.payload]), SECRETS);
    });

    it('svc-topic: a WebhookHeader holding CR, LF or NUL is INVALID_INPUT before anything is sent', async function () {
      await loadWithSandbox(ctx.sandbox, { types: ['svc-topic'], nodes: [{ id: 'n1', type: 'svc-topic' }] });
      for (const header of ['X-Key: a\r\nX-Injected: 1', 'X-Key: a\nb', 'X-Key: a\u0000b', 'X-Key: value\r\n', 'X-Key: a\rb']) {
        const { error, msg } = await expectError('n1', subscription({ WebhookHeader: header }));
        should(error.code).equal('INVALID_INPUT', JSON.stringify(header));
        should(error.message).not.containEql('value');
        should((msg.payload as Fields).WebhookHeader).equal(header);
      }
      should(ctx.sandbox.requests()).have.length(0);
    });

    it('svc-geocode: the API key and project headers echoed in prose or as JSON never reach the error', async function () {
      ctx.sandbox.setFault('geocode', {
        status: 403,
        echo: (r) => JSON.stringify({ message: `key ${String(r.headers['x-svc-api-key'])} may not geocode`, headers: r.headers }),
      });
      await loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [{ id: 'n1', type: 'svc-geocode' }] });
      const { error } = await expectError('n1', { payload: '1 Main Street' });
      should(error.code).equal('FORBIDDEN');
      shouldNotShow(userVisible([error, error.cause, error.stack, error.bodyExcerpt]), [SANDBOX_DEFAULTS.apiKey]);
    });

    it('svc-isoline: a job status that repeats the API key reaches neither the node status nor the stored job', async function () {
      ctx.sandbox.setFault('isoline-job', {
        status: 200,
        echo: (r) => JSON.stringify({ jobId: 'job-1', status: `running for key ${String(r.headers['x-svc-api-key'])}` }),
      });
      const node = { id: 'n1', type: 'svc-isoline', pollIntervalSec: 0.02, maxWait: 60 };
      await loadWithSandbox(ctx.sandbox, { types: ['svc-isoline'], nodes: [node] });
      helper.getNode('n1').receive({ payload: { origins: [{ lat: 52.52, lon: 13.405 }], range: { type: 'time', value: 600 }, async: true } });
      await waitUntil(() => ctx.sandbox.requests('isoline-job').length >= 3, 'three polls');
      const statuses = userVisible();
      await helper.unload();
      await storedJobStore().flush();
      const [stored] = await storedJobStore().list('n1');
      should((stored.job.state as Fields).status).equal('running for key ***');
      shouldNotShow(`${statuses}\n${JSON.stringify(stored)}`, [SANDBOX_DEFAULTS.apiKey]);
      should(statuses).match(/running for key \*\*\*/);
    });

    it('svc-words: a token holding CR or LF is BAD_RESPONSE, and no request is sent with it', async function () {
      ctx.sandbox.setFault('token', { status: 200, body: JSON.stringify({ access_token: 'abc\r\nX-Injected: 1', expires_in: 3600 }) });
      await loadWithSandbox(ctx.sandbox, { types: ['svc-words'], nodes: [{ id: 'n1', type: 'svc-words' }], config: { maxRetries: 0 } });
      const { error } = await expectError('n1', { payload: 'index.home.raft' });
      should(error.code).equal('BAD_RESPONSE');
      should(ctx.sandbox.requests('words')).have.length(0);
    });

    it('svc-words: a bearer token the response repeats is masked in msg.payload', async function () {
      ctx.sandbox.setFault('words', {
        status: 200,
        echo: (r) => JSON.stringify({ coordinates: { lat: 52.5, lon: 13.4 }, requestedWith: r.headers.authorization }),
      });
      await loadWithSandbox(ctx.sandbox, { types: ['svc-words'], nodes: [{ id: 'n1', type: 'svc-words' }] });
      const msg = await expectOutput('n1', { payload: 'index.home.raft' });
      should((msg.payload as Fields).requestedWith).equal('Bearer ***');
      const tokens = [...ctx.sandbox.stateOf('tokens', () => new Map<string, number>()).keys()];
      should(tokens).not.be.empty();
      shouldNotShow(userVisible([msg]), tokens);
    });
  });

  describe('paths and links (point 2)', function () {
    beforeEach(() => resetBulk(ctx.sandbox));
    const bulk = (extra: Fields = {}) =>
      loadWithSandbox(ctx.sandbox, { types: ['svc-bulk-geocode'], nodes: [{ id: 'n1', type: 'svc-bulk-geocode', pollInterval: 10, maxWait: 5, ...extra }] });
    /** Every request that reached the sandbox, as `METHOD path`. */
    const requestLines = () => ctx.sandbox.requests().map((r) => `${r.method} ${r.path}`);

    it('svc-bulk-geocode: a job id of ".", ".." or "" in the upload response (body or Location) is BAD_RESPONSE, and no status request goes anywhere', async function () {
      await bulk();
      const responses: Fault[] = [
        { status: 201, body: JSON.stringify({ jobId: '..' }) },
        { status: 201, body: JSON.stringify({ jobId: '.' }) },
        { status: 201, body: JSON.stringify({ id: '..' }) },
        { status: 201, body: '{}', headers: { location: '/v1/geocode/bulk/%2e%2e' } },
        { status: 201, body: '{}', headers: { location: '/v1/geocode/bulk/%' } },
        { status: 201, body: '{}' },
      ];
      for (const response of responses) {
        ctx.sandbox.setFault('bulk-upload', response);
        const { error } = await expectError('n1', { payload: ['12 Main Street'] });
        should(error.code).equal('BAD_RESPONSE', JSON.stringify(response));
        should(requestLines()).eql(['POST /v1/geocode/bulk'], JSON.stringify(response));
        ctx.sandbox.log.splice(0);
      }
    });

    it('svc-bulk-geocode: a job id with slashes and dots stays one path segment', async function () {
      await bulk();
      ctx.sandbox.setFault('bulk-upload', { status: 201, body: JSON.stringify({ jobId: '../../x/%2e%2e' }), times: 1 });
      const { error } = await expectError('n1', { payload: ['12 Main Street'] });
      should(error.code).equal('NOT_FOUND');
      should(new Set(requestLines().slice(1))).eql(new Set(['GET /v1/geocode/bulk/..%2F..%2Fx%2F%252e%252e']));
    });

    it('svc-isoline and svc-sequence: a job handle of ".." is BAD_RESPONSE before any poll', async function () {
      for (const [type, endpoint, payload] of [
        ['svc-isoline', 'isoline', { origins: [{ lat: 52.52, lon: 13.405 }], range: { type: 'time', value: 600 }, async: true }],
        [
          'svc-sequence',
          'sequence',
          {
            waypoints: [
              { lat: 52.5, lon: 13.4 },
              { lat: 52.51, lon: 13.41 },
              { lat: 52.52, lon: 13.42 },
            ],
            async: true,
          },
        ],
      ] as const) {
        ctx.sandbox.setFault(endpoint, { status: 200, body: JSON.stringify({ jobId: '..', status: 'accepted' }) });
        await loadWithSandbox(ctx.sandbox, { types: [type], nodes: [{ id: 'n1', type, pollInterval: 0.01 }] });
        const { error } = await expectError('n1', { payload });
        should(error.code).equal('BAD_RESPONSE', type);
        should(requestLines()).have.length(1);
        await helper.unload();
        ctx.sandbox.clearFaults();
        ctx.sandbox.log.splice(0);
      }
    });

    it('refuses ".", ".." and empty from the user before any request (topic ids, three words)', async function () {
      await loadWithSandbox(ctx.sandbox, {
        types: ['svc-topic', 'svc-words'],
        nodes: [
          { id: 'n1', type: 'svc-topic' },
          { id: 'w1', type: 'svc-words', wires: [['out']] },
        ],
      });
      for (const topicId of ['..', '.', '']) {
        const { error } = await expectError('n1', { operation: 'get-topic', topicId });
        should(error.code).equal('INVALID_INPUT');
      }
      for (const words of ['..', '.', '', 'a.b/../c']) should((await expectError('w1', { payload: words })).error.code).equal('INVALID_INPUT');
      should(ctx.sandbox.requests()).have.length(0);
    });

    describe('download links', function () {
      let elsewhere: http.Server;
      let elsewhereUrl = '';
      const received: Array<{ url: string; headers: http.IncomingHttpHeaders }> = [];
      before(async function () {
        elsewhere = http.createServer((req, res) => {
          received.push({ url: req.url ?? '', headers: req.headers });
          res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"not here"}');
        });
        await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
        elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
      });
      after(() => new Promise<void>((resolve) => elsewhere.close(() => resolve())));
      beforeEach(() => received.splice(0));

      const completed = (payload: Fields): Fault => ({ status: 200, body: JSON.stringify({ status: 'completed', payload }) });

      it('a link on another origin is fetched with nothing added: no download token, no credentials', async function () {
        await bulk();
        ctx.sandbox.setFault('bulk-status', completed({ link: `${elsewhereUrl}/results.csv`, token: 'download-token-elsewhere-1' }));
        const { error } = await expectError('n1', { payload: ['12 Main Street'] });
        should(error.code).equal('NOT_FOUND');
        should(received.length).be.above(0);
        for (const request of received) {
          should(request.url).equal('/results.csv');
          should(request.headers).not.have.properties(['x-svc-api-key', 'x-svc-project-id', 'apikey', 'authorization']);
        }
        shouldNotShow(userVisible([error, error.stack]), ['download-token-elsewhere-1', SANDBOX_DEFAULTS.apiKey]);
      });

      it('a link on the platform origin gets the token and the project headers', async function () {
        await bulk();
        ctx.sandbox.setFault('bulk-status', completed({ link: `${ctx.sandbox.url}/v1/download`, token: 'platform-token-2' }));
        await expectError('n1', { payload: ['12 Main Street'] });
        const downloads = ctx.sandbox.requests('bulk-download');
        should(downloads.length).be.above(0);
        should(downloads[0].query).eql({ token: 'platform-token-2' });
        should(downloads[0].headers['x-svc-api-key']).equal(SANDBOX_DEFAULTS.apiKey);
      });

      it('a download token the platform repeats in an error never reaches the error', async function () {
        bulkControls(ctx.sandbox).downloadAs = 'token';
        bulkControls(ctx.sandbox).downloadMember = 'payload.token';
        const tokens: string[] = [];
        ctx.sandbox.setFault('bulk-download', {
          status: 410,
          echo: (r) => {
            tokens.push(r.query.token);
            return JSON.stringify({ message: `download token ${r.query.token} has expired`, query: r.query });
          },
        });
        await bulk();
        const { error } = await expectError('n1', { payload: ['12 Main Street'] });
        should(tokens).have.length(2);
        should(error.message).match(/download token \*\*\* has expired/);
        shouldNotShow(userVisible([error, error.stack, error.bodyExcerpt]), [...tokens, ...tokens.map(encodeURIComponent)]);
      });
    });
  });

  describe('response headers are masked as bodies are (issue 27 point 7)', function () {
    const KEY = SANDBOX_DEFAULTS.apiKey;
    /** The key with every character percent-escaped: the same URL, and no plain search finds it. */
    const ESCAPED_KEY = [...KEY].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('');
    beforeEach(() => resetBulk(ctx.sandbox));
    const bulk = (extra: Fields = {}) =>
      loadWithSandbox(ctx.sandbox, {
        types: ['svc-bulk-geocode'],
        nodes: [{ id: 'n1', type: 'svc-bulk-geocode', pollIntervalSec: 0.01, maxWait: 5, ...extra }],
      });
    const upload = (location: string): Fault => ({ status: 201, body: '{}', headers: { location } });

    it('svc-bulk-geocode: a key repeated in the Location header never becomes the job id in msg.jobs, a request path or the log', async function () {
      for (const written of [KEY, ESCAPED_KEY]) {
        ctx.sandbox.setFault('bulk-upload', upload(`/v1/geocode/bulk/job-${written}`));
        ctx.sandbox.setFault('bulk-status', { status: 200, body: JSON.stringify({ status: 'completed', payload: { link: '/v1/download?token=t1' } }) });
        ctx.sandbox.setFault('bulk-download', { status: 200, body: JSON.stringify([{ address: '12 Main Street', lat: 1, lon: 2 }]) });
        await bulk();
        const msg = await expectOutput('n1', { payload: ['12 Main Street'] });
        should((msg.jobs as Fields[])[0].jobId).equal('job-***', written);
        const paths = ctx.sandbox.requests('bulk-status').map((r) => r.path);
        should(paths.length).be.above(0);
        shouldNotShow([userVisible([msg]), ...paths].join('\n'), [KEY, ESCAPED_KEY]);
        await helper.unload();
        ctx.sandbox.clearFaults();
        ctx.sandbox.log.splice(0);
      }
    });

    it('svc-bulk-geocode: a key repeated in the Location header never reaches the stored job file', async function () {
      ctx.sandbox.setFault('bulk-upload', upload(`/v1/geocode/bulk/job-${KEY}`));
      ctx.sandbox.setFault('bulk-status', { status: 200, body: JSON.stringify({ status: 'running' }) });
      await bulk({ maxWait: 60 });
      helper.getNode('n1').receive({ payload: ['12 Main Street'] });
      await waitUntil(() => ctx.sandbox.requests('bulk-status').length >= 2, 'two polls');
      const visible = userVisible();
      await helper.unload();
      await storedJobStore().flush();
      const stored = await storedJobStore().list('n1');
      should(stored).not.be.empty();
      should(JSON.stringify(stored)).containEql('job-***');
      shouldNotShow(`${visible}\n${JSON.stringify(stored)}`, [KEY]);
    });

    it('a key repeated in Content-Type (svc-bulk-geocode) or Content-Encoding (svc-geocode) never reaches msg.error or the log', async function () {
      ctx.sandbox.setFault('bulk-download', {
        status: 200,
        body: JSON.stringify({ nothing: 1 }),
        headers: { 'content-type': `application/json; profile=${KEY}` },
      });
      await bulk();
      const bulkError = await expectError('n1', { payload: ['12 Main Street'] });
      should(bulkError.error.code).equal('BAD_RESPONSE');
      should(bulkError.error.message).containEql('application/json; profile=***');
      shouldNotShow(userVisible([bulkError.error, bulkError.error.stack, bulkError.msg]), [KEY]);
      await helper.unload();
      ctx.sandbox.setFault('geocode', { status: 200, body: '{}', headers: { 'content-encoding': `x-${KEY}` } });
      await loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [{ id: 'n1', type: 'svc-geocode' }] });
      const { error } = await expectError('n1', { payload: '1 Main Street' });
      should(error.code).equal('BAD_RESPONSE');
      should(error.message).containEql('x-***');
      shouldNotShow(userVisible([error, error.stack]), [KEY]);
    });
  });
});
