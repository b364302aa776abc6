import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import should from 'should';
import type { PlatformClient } from '../../nodes/lib/platform/client';
import type { ClientConfig } from '../../nodes/lib/platform/types';
import type { SvcConfigNode } from '../../nodes/lib/node-red/config';
import {
  CONFIG_ID,
  SANDBOX_DEFAULTS,
  configNode,
  expectError,
  expectOutput,
  helper,
  Fields,
  loadWithSandbox,
  nodeModule,
  sandboxCredentials,
  useSandbox,
} from '../support/harness';
import { credentials, defaults } from '../../nodes/svc-config/defaults';
import { waitUntil } from '../support/wait';
import { Recorder, startRecorder } from '../support/recorder';

const SECRETS = [SANDBOX_DEFAULTS.clientSecret, SANDBOX_DEFAULTS.apiKey, SANDBOX_DEFAULTS.pubsubApiKey];
const FLOW_PROPERTIES = ['name', 'baseUrl', 'authUrl', 'sandboxUrl', 'audience', 'projectId', 'timeout', 'rateLimit', 'maxConcurrency', 'tls', 'proxy'];

/** The settings the config node handed to its client (private to the client, read here on purpose). */
function settingsOf(client: PlatformClient): ClientConfig {
  return (client as unknown as { config: ClientConfig }).config;
}

const configClient = () => (helper.getNode(CONFIG_ID) as unknown as SvcConfigNode).client;

/** The runtime's own registry (not in the helper's typings): what Node-RED knows of a type's credentials. */
function credentialDefinition(type: string): Record<string, { type: string }> {
  const runtime = (helper as unknown as { _redNodes: { getCredentialDefinition(type: string): Record<string, { type: string }> } })._redNodes;
  return runtime.getCredentialDefinition(type);
}

function loadConfigOnly(def: Fields, credentials: Fields = {}): Promise<void> {
  return helper.load([nodeModule('svc-config')], [def], { [def.id as string]: { ...sandboxCredentials()[CONFIG_ID], ...credentials } } as Record<
    string,
    Record<string, string>
  >);
}

describe('svc-config', function () {
  const ctx = useSandbox();

  describe('properties and credentials', function () {
    it('registers the credentials of issues 2 and 13: clientId as text, the secret, both keys and the Redis URL as passwords', async function () {
      await loadConfigOnly(configNode(ctx.sandbox));
      should(credentialDefinition('svc-config')).eql({
        clientId: { type: 'text' },
        clientSecret: { type: 'password' },
        apiKey: { type: 'password' },
        pubsubApiKey: { type: 'password' },
        redisUrl: { type: 'password' },
      });
    });

    it('the editor defines the flow-JSON properties of issue 2 with their defaults', function () {
      for (const name of FLOW_PROPERTIES) should(defaults).have.property(name);
      should(defaults.timeout.value).equal(30000);
      should(defaults.rateLimit.value).equal(80);
      should(defaults.maxConcurrency.value).equal(8);
      should(defaults.tls).eql({ type: 'tls-config', required: false });
      should(defaults.proxy).eql({ type: 'http proxy', required: false });
      should(credentials.clientId).eql({ type: 'text' });
      for (const name of ['clientSecret', 'apiKey', 'pubsubApiKey'] as const) should(credentials[name]).eql({ type: 'password' });
    });

    it('uses timeout 30000 ms, rateLimit 80 per minute and maxConcurrency 8 when the flow leaves them out', async function () {
      await loadConfigOnly({ id: CONFIG_ID, type: 'svc-config', baseUrl: ctx.sandbox.url, authUrl: ctx.sandbox.url });
      const settings = settingsOf(configClient());
      should(settings.timeoutMs).equal(30_000);
      should(settings.ratePerMinute).equal(80);
      should(settings.maxConcurrency).equal(8);
      should(settings.maxResponseBytes).equal(5 * 1024 * 1024);
      should(settings.maxFileBytes).equal(100 * 1024 * 1024);
      should(settings.sandboxUrl).equal(ctx.sandbox.url);
      should(settings.tls).be.undefined();
      should(settings.proxy).be.undefined();
    });

    it('takes the values given (strings from the editor too); 0 turns rate limit and cap off, never the timeout or a size limit', async function () {
      await loadConfigOnly(
        configNode(ctx.sandbox, { timeout: '1500', rateLimit: '0', maxConcurrency: 0, sandboxUrl: 'http://127.0.0.1:1', projectId: 'p-1', audience: 'aud' }),
      );
      const settings = settingsOf(configClient());
      should(settings).containDeep({
        timeoutMs: 1500,
        ratePerMinute: 0,
        maxConcurrency: 0,
        sandboxUrl: 'http://127.0.0.1:1',
        projectId: 'p-1',
        audience: 'aud',
      });
      should(configClient().projectId).equal('p-1');
      await helper.unload();

      await loadConfigOnly(configNode(ctx.sandbox, { maxResponseSize: '0.5', maxFileSize: 2 }));
      should(settingsOf(configClient())).containDeep({ maxResponseBytes: 512 * 1024, maxFileBytes: 2 * 1024 * 1024 });
      await helper.unload();

      await loadConfigOnly(configNode(ctx.sandbox, { timeout: 0, tokenLifetime: 0, rateLimit: 'fast', maxResponseSize: 0, maxFileSize: 'big' }));
      should(settingsOf(configClient())).containDeep({
        timeoutMs: 30_000,
        tokenLifetimeSec: 3600,
        ratePerMinute: 80,
        maxResponseBytes: 5 * 1024 * 1024,
        maxFileBytes: 100 * 1024 * 1024,
      });
    });

    it('hands the credentials to the client and closes it with the node', async function () {
      await loadConfigOnly(configNode(ctx.sandbox));
      const client = configClient();
      should(settingsOf(client).credentials).eql(sandboxCredentials()[CONFIG_ID]);
      should((await client.fetchToken()).token).be.a.String();
      await helper.unload();
      should(
        await client
          .gateFor('geocode')
          .acquire()
          .then(
            () => 'admitted',
            (err: { code: string }) => err.code,
          ),
      ).equal('CANCELLED');
    });
  });

  describe('"Test connection" admin endpoint', function () {
    const proxyModule = require.resolve('@node-red/nodes/core/network/06-httpproxy.js');
    const tlsModule = require.resolve('@node-red/nodes/core/network/05-tls.js');
    const ALL_SET = {
      clientId: SANDBOX_DEFAULTS.clientId,
      clientSecret: SANDBOX_DEFAULTS.clientSecret,
      apiKey: SANDBOX_DEFAULTS.apiKey,
      pubsubApiKey: SANDBOX_DEFAULTS.pubsubApiKey,
    };
    const UNCHANGED = { clientId: SANDBOX_DEFAULTS.clientId, clientSecret: '__PWRD__', apiKey: '__PWRD__', pubsubApiKey: '__PWRD__' };
    let attacker: Recorder;

    before(async function () {
      await helper.startServer();
      attacker = await startRecorder();
    });
    after(async function () {
      await attacker.close();
      await helper.stopServer();
    });
    afterEach(function () {
      attacker.seen.splice(0);
    });

    /** What the editor sends: the dialog's values, the node id and the credentials as typed. */
    function dialog(credentials: Fields, extra: Fields = {}): Fields {
      return {
        id: CONFIG_ID,
        authUrl: ctx.sandbox.url,
        baseUrl: ctx.sandbox.url,
        audience: SANDBOX_DEFAULTS.audience,
        projectId: SANDBOX_DEFAULTS.projectId,
        tls: '',
        proxy: '',
        credentials,
        ...extra,
      };
    }

    async function testConnection(body: Fields): Promise<Fields> {
      const res = await helper.request().post('/svc-config/test').send(body).expect(200);
      const response = res.body as Fields;
      for (const secret of SECRETS) should(JSON.stringify(response)).not.containEql(secret);
      return response;
    }

    /** The one-line summary and each credential's outcome. */
    function outcomes(response: Fields): { line: unknown; checks: Record<string, unknown> } {
      const checks = response.checks as Array<{ credential: string; outcome: string; code: string | null; statusCode: number | null }>;
      return {
        line: response.message,
        checks: Object.fromEntries(checks.map((c) => [c.credential, [c.outcome, c.code, c.statusCode].filter((x) => x !== null).join(' ')])),
      };
    }

    function checkOf(response: Fields, credential: string): Fields {
      return (response.checks as Fields[]).find((c) => c.credential === credential) as Fields;
    }

    it('checks every credential the dialog holds, each with one request that creates nothing: a token, one geocode, the topic list', async function () {
      await loadConfigOnly(configNode(ctx.sandbox));
      const response = await testConnection(dialog(ALL_SET));
      should(response).containDeep({ ok: true, message: 'token ✓ · API key ✓ · topics key ✓', code: null, statusCode: null });
      should(ctx.sandbox.log.map((r) => `${r.method} ${r.endpoint} ${r.status}`).sort()).eql(['GET topic-list 200', 'POST geocode 200', 'POST token 200']);
    });

    it('says an empty audience is not set, and sends no token request (issue 28)', async function () {
      await loadConfigOnly(configNode(ctx.sandbox));
      const response = await testConnection(dialog(ALL_SET, { audience: '' }));
      should(response).containDeep({ ok: false, message: 'token ✗ CONFIG_INVALID · API key ✓ · topics key ✓' });
      should(checkOf(response, 'token')).containDeep({
        outcome: 'failed',
        code: 'CONFIG_INVALID',
        message: 'the svc-config node cannot be used: the audience is not set',
      });
      should(ctx.sandbox.requests('token')).have.length(0);
    });

    it('reports each wrong credential in turn, one line each, with the field to fix', async function () {
      await loadConfigOnly(configNode(ctx.sandbox));
      const cases: Array<[Fields, Fields, string, string, string]> = [
        [
          { clientSecret: 'not-the-secret' },
          {},
          'token ✗ 401 · API key ✓ · topics key ✓',
          'token',
          'refused (401): check the Client id, Client secret and Audience fields',
        ],
        [
          { clientId: 'someone-else' },
          {},
          'token ✗ 401 · API key ✓ · topics key ✓',
          'token',
          'refused (401): check the Client id, Client secret and Audience fields',
        ],
        [
          {},
          { audience: 'https://elsewhere' },
          'token ✗ 403 · API key ✓ · topics key ✓',
          'token',
          'refused (403): check the Client id, Client secret and Audience fields',
        ],
        [{ apiKey: 'not-the-key' }, {}, 'token ✓ · API key ✗ 401 · topics key ✓', 'apiKey', 'refused (401): check the API key and Project id fields'],
        [{}, { projectId: 'other-project' }, 'token ✓ · API key ✗ 401 · topics key ✓', 'apiKey', 'refused (401): check the API key and Project id fields'],
        [{ pubsubApiKey: 'not-the-key' }, {}, 'token ✓ · API key ✓ · topics key ✗ 401', 'topicsKey', 'refused (401): check the Topics API key field'],
      ];
      for (const [credentials, settings, line, credential, text] of cases) {
        const response = await testConnection(dialog({ ...ALL_SET, ...credentials }, settings));
        should(response).containDeep({ ok: false, message: line });
        should(checkOf(response, credential)).containDeep({ outcome: 'refused', message: text });
      }
      // No retries for a test: one request per credential and test.
      should(ctx.sandbox.requests('token')).have.length(cases.length);
      should(ctx.sandbox.requests('topic-create')).have.length(0);
    });

    it('says which credentials are not set, and tests the others', async function () {
      await loadConfigOnly(configNode(ctx.sandbox), { apiKey: '', pubsubApiKey: '' });
      const response = await testConnection(dialog({ ...ALL_SET, apiKey: '', pubsubApiKey: '' }));
      should(response).containDeep({ ok: true, message: 'token ✓ · API key not set · topics key not set' });
      should(ctx.sandbox.requests('geocode')).have.length(0);
    });

    it('reports an unreachable token URL as NETWORK with the connection error code', async function () {
      await loadConfigOnly(configNode(ctx.sandbox));
      const response = await testConnection(dialog(ALL_SET, { authUrl: 'http://127.0.0.1:1' }));
      should(outcomes(response).line).equal('token ✗ NETWORK · API key ✓ · topics key ✓');
      should(checkOf(response, 'token')).containDeep({
        outcome: 'failed',
        code: 'NETWORK',
        statusCode: null,
        message: 'could not connect (ECONNREFUSED): check the Token URL and Proxy fields',
      });
    });

    it("uses the running node's stored secrets when the editor sends the __PWRD__ placeholder and nothing they go with has changed", async function () {
      await loadConfigOnly(configNode(ctx.sandbox));
      const response = await testConnection(dialog(UNCHANGED));
      should(response).containDeep({ ok: true, message: 'token ✓ · API key ✓ · topics key ✓' });
      const [tokenRequest] = ctx.sandbox.requests('token');
      should((JSON.parse(tokenRequest.body) as Fields).client_secret).equal(SANDBOX_DEFAULTS.clientSecret);
      should(ctx.sandbox.requests('geocode')[0].headers['x-svc-api-key']).equal(SANDBOX_DEFAULTS.apiKey);
    });

    it('reads a setting written as ${NAME} as the deployed node does, so its stored secrets can be tested', async function () {
      process.env.SVC_TEST_CONNECTION_URL = ctx.sandbox.url;
      try {
        await loadConfigOnly(configNode(ctx.sandbox, { authUrl: '${SVC_TEST_CONNECTION_URL}', baseUrl: '${SVC_TEST_CONNECTION_URL}' }));
        const response = await testConnection(dialog(UNCHANGED, { authUrl: '${SVC_TEST_CONNECTION_URL}', baseUrl: '${SVC_TEST_CONNECTION_URL}' }));
        should(response).containDeep({ ok: true, message: 'token ✓ · API key ✓ · topics key ✓' });
      } finally {
        delete process.env.SVC_TEST_CONNECTION_URL;
      }
    });

    it('never sends a stored secret to another token URL or base URL: the user types it again', async function () {
      await loadConfigOnly(configNode(ctx.sandbox));
      const movedToken = await testConnection(dialog(UNCHANGED, { authUrl: attacker.url }));
      should(outcomes(movedToken)).eql({
        line: 'token: type it again · API key ✓ · topics key ✓',
        checks: { token: 'retype INVALID_INPUT', apiKey: 'accepted', topicsKey: 'accepted' },
      });
      should(checkOf(movedToken, 'token').message).equal('changed since the last deploy: token URL; type the client secret again to test it');
      const movedBase = await testConnection(dialog(UNCHANGED, { baseUrl: attacker.url }));
      should(outcomes(movedBase).line).equal('token ✓ · API key: type it again · topics key: type it again');
      const newAudience = await testConnection(dialog(UNCHANGED, { audience: 'https://elsewhere' }));
      should(outcomes(newAudience).checks.token).equal('retype INVALID_INPUT');
      should(attacker.seen).eql([]);
      // A secret typed again goes where the dialog says.
      await testConnection(dialog({ ...UNCHANGED, clientSecret: 'typed-again' }, { authUrl: attacker.url }));
      should(attacker.seen.map((r) => r.url)).eql(['/oauth/token']);
    });

    it('without a running svc-config node of that id no stored credential is read: the reply says to type it again, nothing is sent', async function () {
      await loadConfigOnly(configNode(ctx.sandbox));
      for (const id of ['never-deployed', '']) {
        const response = await testConnection(dialog(UNCHANGED, { id }));
        should(outcomes(response).line).equal('token: type it again · API key: type it again · topics key: type it again');
        should(checkOf(response, 'token').message).match(/^the stored client secret is used only by a deployed, running svc-config node/);
      }
      should(ctx.sandbox.log).have.length(0);
    });

    it('takes proxy and TLS from the deployed node when a stored secret is used; another proxy or TLS node in the request means typing it again', async function () {
      await helper.load(
        [nodeModule('svc-config'), require(proxyModule), require(tlsModule)],
        [
          configNode(ctx.sandbox),
          { id: 'px', type: 'http proxy', name: '', url: attacker.url, noproxy: [] },
          { id: 'tl', type: 'tls-config', name: '', verifyservercert: true },
        ],
        { ...sandboxCredentials(), px: { username: 'proxy-user', password: 'proxy-pass' } },
      );
      const proxied = await testConnection(dialog(UNCHANGED, { proxy: 'px' }));
      should(attacker.seen).eql([]);
      should(outcomes(proxied).line).equal('token: type it again · API key: type it again · topics key: type it again');
      should(checkOf(proxied, 'apiKey').message).equal('changed since the last deploy: proxy; type the API key again to test it');
      const otherTls = await testConnection(dialog(UNCHANGED, { tls: 'tl' }));
      should(ctx.sandbox.log).have.length(0);
      should(checkOf(otherTls, 'token').message).equal('changed since the last deploy: TLS; type the client secret again to test it');
      should(attacker.seen).eql([]);
      should(ctx.sandbox.log).have.length(0);
      // Typed secrets may take the proxy the dialog names.
      await testConnection(dialog({ ...ALL_SET, apiKey: '', pubsubApiKey: '' }, { proxy: 'px' }));
      should(attacker.seen.map((r) => r.method)).eql(['CONNECT']);
    });

    it('responds with 500 and its own words, and audits, when the client cannot even be made (a proxy node with no usable URL)', async function () {
      await helper.load(
        [nodeModule('svc-config'), require(proxyModule)],
        [configNode(ctx.sandbox), { id: 'bad', type: 'http proxy', name: '', url: 'not a url', noproxy: [] }],
        sandboxCredentials(),
      );
      const res = await helper
        .request()
        .post('/svc-config/test')
        .send(dialog(ALL_SET, { proxy: 'bad' }))
        .expect(500);
      should(res.body).eql({ ok: false, code: 'CONFIG_INVALID', statusCode: null, message: 'the test could not start: check the proxy and TLS settings' });
      const audits = helper
        .log()
        .getCalls()
        .map((call) => call.args[0] as Fields)
        .filter((entry) => entry.event === 'svc-config.test');
      should(audits).containDeep([{ id: CONFIG_ID, result: 'error' }]);
      should(ctx.sandbox.log).have.length(0);
    });

    it('reads at most a small response and waits a short time, whatever the request says', async function () {
      this.timeout(30_000);
      await loadConfigOnly(configNode(ctx.sandbox));
      const limits = { timeout: '600000', maxResponseSize: 1000, maxFileSize: 1000 };
      ctx.sandbox.setFault('token', { hugeBodyBytes: 50 * 1024 * 1024 });
      const huge = await testConnection(dialog({ ...ALL_SET, apiKey: '', pubsubApiKey: '' }, limits));
      await waitUntil(() => ctx.sandbox.requests('token')[0].closedAt !== undefined, 'the huge response to be abandoned');
      should(ctx.sandbox.requests('token')[0].faultBodyBytes).be.below(8 * 1024 * 1024);
      should(checkOf(huge, 'token')).containDeep({ outcome: 'failed', code: 'BAD_RESPONSE', statusCode: 200 });

      ctx.sandbox.setFault('token', { dripMs: 200 });
      const started = Date.now();
      const slow = await testConnection(dialog({ ...ALL_SET, apiKey: '', pubsubApiKey: '' }, limits));
      should(checkOf(slow, 'token')).containDeep({ outcome: 'failed', code: 'TIMEOUT', message: 'no response within 10 s' });
      should(Date.now() - started).be.below(15_000);
    });

    it("never reflects the response's text: a status, a code and the pack's own words", async function () {
      await loadConfigOnly(configNode(ctx.sandbox));
      const leak = 'internal-only-text from the server';
      ctx.sandbox.setFault('token', { status: 400, body: JSON.stringify({ message: leak, error_description: leak }) });
      ctx.sandbox.setFault('geocode', { status: 500, body: leak });
      ctx.sandbox.setFault('topic-list', { malformedJson: true });
      const response = await testConnection(dialog(ALL_SET));
      should(JSON.stringify(response)).not.containEql('internal-only');
      should(outcomes(response).checks).eql({ token: 'failed BAD_REQUEST 400', apiKey: 'failed SERVER 500', topicsKey: 'accepted' });
      should(checkOf(response, 'token').message).equal('the service responded with 400');
    });

    it('contacts only the endpoints it tests: a redirect is not followed', async function () {
      await loadConfigOnly(configNode(ctx.sandbox));
      const redirector = http.createServer((_req, res) => res.writeHead(307, { location: `${attacker.url}/oauth/token` }).end());
      await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
        const response = await testConnection(dialog({ ...ALL_SET }, { authUrl: url, baseUrl: url }));
        should(attacker.seen).eql([]);
        should(outcomes(response).checks).eql({ token: 'failed BAD_REQUEST 307', apiKey: 'failed BAD_REQUEST 307', topicsKey: 'failed BAD_REQUEST 307' });
      } finally {
        redirector.closeAllConnections();
        await new Promise((resolve) => redirector.close(resolve));
      }
    });

    it('writes one audit line per call with the node id and each outcome, never a secret', async function () {
      await loadConfigOnly(configNode(ctx.sandbox));
      await testConnection(dialog({ ...ALL_SET, apiKey: 'not-the-key' }));
      const audits = helper
        .log()
        .getCalls()
        .map((call) => call.args[0] as Fields)
        .filter((entry) => entry.event === 'svc-config.test');
      should(audits).have.length(1);
      should(audits[0]).containDeep({
        id: CONFIG_ID,
        result: 'failed',
        checks: { token: 'accepted', apiKey: 'refused UNAUTHORIZED 401', topicsKey: 'accepted' },
      });
      for (const secret of [...SECRETS, 'not-the-key']) should(JSON.stringify(audits)).not.containEql(secret);
    });
  });

  describe('secrets', function () {
    it('never appear in flow JSON, messages, status texts or log lines', async function () {
      // No Catch node: unhandled errors are what Node-RED writes to the log.
      await loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [{ id: 'n1', type: 'svc-geocode', address: 'payload', addressType: 'msg' }] });

      const outputs = [await expectOutput('n1', { payload: '12 Main Street' })];
      // A server that repeats the credentials in its error body must not carry them into the flow.
      const echo = JSON.stringify({
        message: `key ${SANDBOX_DEFAULTS.apiKey} refused`,
        client_secret: SANDBOX_DEFAULTS.clientSecret,
        apikey: SANDBOX_DEFAULTS.pubsubApiKey,
      });
      ctx.sandbox.setFault('geocode', { status: 401, body: echo, times: 1 });
      const failure = await expectError('n1', { payload: '12 Main Street' });
      ctx.sandbox.setFault('geocode', { malformedJson: true, times: 1 });
      const malformed = await expectError('n1', { payload: '12 Main Street' });
      should(failure.error.code).equal('UNAUTHORIZED');
      should(malformed.error.code).equal('BAD_RESPONSE');
      await new Promise((resolve) => setImmediate(resolve));

      const flowJson = JSON.stringify((helper as unknown as { _redNodes: { getFlows(): unknown } })._redNodes.getFlows());
      const statuses = JSON.stringify((helper.getNode('n1').status.getCalls?.() ?? []).map((call) => call.args));
      // inspect, not JSON: a logged Error keeps its message, stack and cause there.
      const logLines = helper
        .log()
        .getCalls()
        .map((call) => inspect(call.args, { depth: 6 }))
        .join('\n');
      const messages = JSON.stringify([outputs, failure.msg, failure.error.message, malformed.msg, malformed.error.message]);
      should(logLines).match(/API key refused \(401\)/);
      should(statuses).match(/UNAUTHORIZED \(401\)/);
      for (const [where, text] of Object.entries({ flowJson, statuses, logLines, messages })) {
        for (const secret of SECRETS) should(text.includes(secret)).equal(false, `${secret} in ${where}`);
      }
    });
  });
});
