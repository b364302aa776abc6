import fs from 'node:fs';
import path from 'node:path';
import { inspect } from 'node:util';
import should from 'should';
import type { ClientConfig, PlatformClient } from '../nodes/lib/platform/client';
import type { SvcConfigNode } from '../nodes/lib/node-red/config';
import {
  CONFIG_ID,
  SANDBOX_DEFAULTS,
  configNode,
  expectError,
  expectOutput,
  helper,
  Json,
  loadWithSandbox,
  nodeModule,
  sandboxCredentials,
  useSandbox,
} from './support/harness';
import { SOURCE_NODES_DIR } from './support/paths';

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

function loadConfigOnly(def: Json, credentials: Json = {}): Promise<void> {
  return helper.load([nodeModule('svc-config')], [def], { [def.id as string]: { ...sandboxCredentials()[CONFIG_ID], ...credentials } } as Record<string, Record<string, string>>);
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
      const html = fs.readFileSync(path.join(SOURCE_NODES_DIR, 'svc-config.html'), 'utf8');
      const defaults = /defaults:\s*\{([\s\S]*?)\n\s*\},\n\s*credentials:/.exec(html)?.[1] ?? '';
      const names = [...defaults.matchAll(/^\s*(\w+):\s*\{/gm)].map((m) => m[1]);
      for (const name of FLOW_PROPERTIES) should(names).containEql(name);
      should(defaults).match(/timeout: \{ value: 30000\b/);
      should(defaults).match(/rateLimit: \{ value: 80\b/);
      should(defaults).match(/maxConcurrency: \{ value: 8\b/);
      should(defaults).match(/tls: \{ type: 'tls-config', required: false \}/);
      should(defaults).match(/proxy: \{ type: 'http proxy', required: false \}/);
      const credentials = /credentials:\s*\{([\s\S]*?)\}\s*,\s*label/.exec(html)?.[1] ?? '';
      should(credentials).match(/clientId: \{ type: 'text' \}/);
      for (const name of ['clientSecret', 'apiKey', 'pubsubApiKey']) should(credentials).match(new RegExp(`${name}: \\{ type: 'password' \\}`));
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
      should(settings).containDeep({ timeoutMs: 1500, ratePerMinute: 0, maxConcurrency: 0, sandboxUrl: 'http://127.0.0.1:1', projectId: 'p-1', audience: 'aud' });
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
      should((await client.gate.acquire().then(() => 'admitted', (err: { code: string }) => err.code))).equal('CANCELLED');
    });
  });

  describe('"Test connection" admin endpoint', function () {
    before(async function () {
      await helper.startServer();
    });
    after(async function () {
      await helper.stopServer();
    });

    /** What the editor sends: the dialog's values, the node id and the credentials as typed. */
    function dialog(credentials: Json, extra: Json = {}): Json {
      return {
        id: CONFIG_ID,
        authUrl: ctx.sandbox.url,
        baseUrl: ctx.sandbox.url,
        audience: SANDBOX_DEFAULTS.audience,
        timeout: '2000',
        tls: '',
        proxy: '',
        credentials,
        ...extra,
      };
    }

    async function testConnection(body: Json): Promise<Json> {
      const res = await helper.request().post('/svc-config/test').send(body).expect(200);
      const answer = res.body as Json;
      for (const secret of SECRETS) should(JSON.stringify(answer)).not.containEql(secret);
      return answer;
    }

    it('reports success when a token is issued', async function () {
      await loadConfigOnly(configNode(ctx.sandbox));
      const answer = await testConnection(dialog({ clientId: SANDBOX_DEFAULTS.clientId, clientSecret: SANDBOX_DEFAULTS.clientSecret }));
      should(answer).eql({ ok: true, expiresIn: 3600 });
      should(ctx.sandbox.requests('token')).have.length(1);
    });

    it('reports the exact failure for a wrong client secret: code, status and message', async function () {
      await loadConfigOnly(configNode(ctx.sandbox));
      const answer = await testConnection(dialog({ clientId: SANDBOX_DEFAULTS.clientId, clientSecret: 'not-the-secret' }));
      should(answer).eql({
        ok: false,
        code: 'UNAUTHORIZED',
        statusCode: 401,
        message: 'token request refused (401): check client id, secret and audience',
      });
      // No retries for a test: one request, one answer.
      should(ctx.sandbox.requests('token')).have.length(1);
    });

    it('reports a wrong audience as FORBIDDEN 403 and an unreachable token URL as NETWORK', async function () {
      await loadConfigOnly(configNode(ctx.sandbox));
      const credentials = { clientId: SANDBOX_DEFAULTS.clientId, clientSecret: SANDBOX_DEFAULTS.clientSecret };
      should(await testConnection(dialog(credentials, { audience: 'https://elsewhere' }))).containDeep({ ok: false, code: 'FORBIDDEN', statusCode: 403 });
      const unreachable = await testConnection(dialog(credentials, { authUrl: 'http://127.0.0.1:1' }));
      should(unreachable).containDeep({ ok: false, code: 'NETWORK', statusCode: null });
      should(unreachable.message).match(/ECONNREFUSED/);
    });

    it('uses the deployed node\'s stored secret when the editor sends the __PWRD__ placeholder', async function () {
      await loadConfigOnly(configNode(ctx.sandbox));
      const answer = await testConnection(dialog({ clientId: SANDBOX_DEFAULTS.clientId, clientSecret: '__PWRD__' }));
      should(answer.ok).be.true();
      const [tokenRequest] = ctx.sandbox.requests('token');
      should(JSON.parse(tokenRequest.body).client_secret).equal(SANDBOX_DEFAULTS.clientSecret);
    });

    it('never sends a stored secret to a token URL other than the deployed one', async function () {
      await loadConfigOnly(configNode(ctx.sandbox));
      const answer = await testConnection(dialog({ clientId: SANDBOX_DEFAULTS.clientId, clientSecret: '__PWRD__' }, { authUrl: 'http://127.0.0.1:9' }));
      should(answer).containDeep({ ok: false, code: 'INVALID_INPUT' });
      should(ctx.sandbox.requests('token')).have.length(0);
    });

    it('without a deployed node the placeholder is no secret: a clear failure before any request', async function () {
      await loadConfigOnly(configNode(ctx.sandbox));
      const answer = await testConnection(dialog({ clientId: SANDBOX_DEFAULTS.clientId, clientSecret: '__PWRD__' }, { id: 'never-deployed' }));
      should(answer).eql({ ok: false, code: 'CONFIG_INVALID', statusCode: null, message: 'the svc-config node cannot be used: the client secret is not set' });
      should(ctx.sandbox.requests('token')).have.length(0);
    });
  });

  describe('secrets', function () {
    it('never appear in flow JSON, messages, status texts or log lines', async function () {
      // No Catch node: unhandled errors are what Node-RED writes to the log.
      await loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [{ id: 'n1', type: 'svc-geocode', address: 'payload', addressType: 'msg' }] });

      const outputs = [await expectOutput('n1', { payload: '12 Main Street' })];
      // A server that repeats the credentials in its error body must not carry them into the flow.
      const echo = JSON.stringify({ message: `key ${SANDBOX_DEFAULTS.apiKey} refused`, client_secret: SANDBOX_DEFAULTS.clientSecret, apikey: SANDBOX_DEFAULTS.pubsubApiKey });
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
      const logLines = helper.log().getCalls().map((call) => inspect(call.args, { depth: 6 })).join('\n');
      const messages = JSON.stringify([outputs, failure.msg, failure.error.message, malformed.msg, malformed.error.message]);
      should(logLines).match(/the service answered 401/);
      should(statuses).match(/UNAUTHORIZED \(401\)/);
      for (const [where, text] of Object.entries({ flowJson, statuses, logLines, messages })) {
        for (const secret of SECRETS) should(text.includes(secret)).equal(false, `${secret} in ${where}`);
      }
    });
  });
});
