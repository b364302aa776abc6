import fs from 'node:fs';
import path from 'node:path';
import should from 'should';
import { CONFIG_ID, Fields, SANDBOX_DEFAULTS, configNode, sandboxCredentials } from '../support/harness';
import { NodeRedProcess, runtimeUnderTest } from '../support/node-red-process';
import { startRecorder } from '../support/recorder';
import { waitUntil } from '../support/wait';
import { deploy, userDirWithPack } from '../support/process-flows';
import { Sandbox, startSandbox } from '../../sandbox';

/**
 * "Test connection" (`POST /svc-config/test`) in a real Node-RED process, where its behaviour depends
 * on Node-RED itself: the admin API's body parsers (a form-encoded cross-site POST), the audit log,
 * and which config nodes run (a disabled tab, a subflow, a disabled node). `npm test` runs it on
 * Node-RED 4.1, `npm run test:nr5` on Node-RED 5 (NODE_RED_PATH).
 */
const RUNTIME = runtimeUnderTest();

const SECRETS = [SANDBOX_DEFAULTS.clientSecret, SANDBOX_DEFAULTS.apiKey, SANDBOX_DEFAULTS.pubsubApiKey];
const UNCHANGED = { clientId: SANDBOX_DEFAULTS.clientId, clientSecret: '__PWRD__', apiKey: '__PWRD__', pubsubApiKey: '__PWRD__' };
const RETYPE_ALL = 'token: type it again · API key: type it again · topics key: type it again';
/** Environment variables of the Node-RED process: one holding a secret (a Redis URL with its password, as README suggests), one the audience. */
const SECRET_VARIABLE = { name: 'SVC_TEST_REDIS_URL', value: 'redis://:env-password-7f3a@127.0.0.1:6390' };
const AUDIENCE_VARIABLE = 'SVC_TEST_AUDIENCE';

describe(`"Test connection" in a real Node-RED process (${RUNTIME.title})`, function () {
  this.timeout(60_000);
  let sandbox: Sandbox;
  let attacker: Awaited<ReturnType<typeof startRecorder>>;
  let dir: ReturnType<typeof userDirWithPack>;
  let nodeRed: NodeRedProcess;

  before(async function () {
    sandbox = await startSandbox();
    attacker = await startRecorder();
    dir = userDirWithPack();
    // Node-RED writes audit lines only when the settings ask for them.
    fs.writeFileSync(path.join(dir.userDir, 'settings.js'), "module.exports = { logging: { console: { level: 'info', audit: true } } };\n");
    nodeRed = await NodeRedProcess.start(dir.userDir, RUNTIME, undefined, {
      [SECRET_VARIABLE.name]: SECRET_VARIABLE.value,
      [AUDIENCE_VARIABLE]: SANDBOX_DEFAULTS.audience,
    });
  });
  after(async function () {
    await nodeRed?.stop(10_000);
    await attacker?.close();
    await sandbox?.close();
    dir?.remove();
  });
  beforeEach(function () {
    sandbox.log.splice(0);
    attacker.seen.splice(0);
  });

  /** The config node with its stored credentials, as the editor deploys it, with `extra` properties. */
  function storedConfig(extra: Fields = {}): Fields {
    return { ...configNode(sandbox), credentials: sandboxCredentials()[CONFIG_ID], ...extra };
  }

  /** What the editor sends, pointed at `authUrl` and `baseUrl`. */
  function dialog(url: string, credentials: Fields = UNCHANGED): Fields {
    return {
      id: CONFIG_ID,
      authUrl: url,
      baseUrl: url,
      audience: SANDBOX_DEFAULTS.audience,
      projectId: SANDBOX_DEFAULTS.projectId,
      tls: '',
      proxy: '',
      credentials,
    };
  }

  async function post(body: string, contentType: string): Promise<{ status: number; response: Fields }> {
    const res = await nodeRed.request('/svc-config/test', { method: 'POST', headers: { 'content-type': contentType }, body });
    const text = await res.text();
    for (const secret of SECRETS) should(text).not.containEql(secret);
    return { status: res.status, response: JSON.parse(text) as Fields };
  }

  const testConnection = (body: Fields) => post(JSON.stringify(body), 'application/json');

  /** The audit lines Node-RED has written for Test connection, parsed. */
  function auditLines(): Fields[] {
    return nodeRed.log
      .filter((line) => line.includes('[audit]') && line.includes('svc-config.test'))
      .map((line) => JSON.parse(line.slice(line.indexOf('{'))) as Fields);
  }

  it('a stored secret is used by the running node only: the same request gets a response using the token', async function () {
    await deploy(nodeRed, [{ id: 'tab', type: 'tab', label: 'on' }, storedConfig()]);
    const { status, response } = await testConnection(dialog(sandbox.url));
    should(status).equal(200);
    should(response).containDeep({ ok: true, message: 'token ✓ · API key ✓ · topics key ✓' });
    should(sandbox.requests('token')).have.length(1);
  });

  const notRunning: Array<[string, () => Fields[]]> = [
    ['on a disabled tab', () => [{ id: 'off', type: 'tab', label: 'off', disabled: true }, storedConfig({ z: 'off' })]],
    [
      'inside a subflow',
      () => [
        { id: 'tab', type: 'tab', label: 'on' },
        { id: 'sf', type: 'subflow', name: 'sub', in: [], out: [] },
        storedConfig({ z: 'sf' }),
        { id: 'instance', type: 'subflow:sf', z: 'tab', x: 100, y: 100, wires: [] },
      ],
    ],
    ['itself disabled', () => [{ id: 'tab', type: 'tab', label: 'on' }, storedConfig({ d: true })]],
  ];
  for (const [where, flows] of notRunning) {
    it(`a config node ${where} lends no stored secret, whatever address the request names: the user types it again`, async function () {
      await deploy(nodeRed, flows());
      for (const url of [attacker.url, sandbox.url]) {
        const { status, response } = await testConnection(dialog(url));
        should(attacker.seen).eql([]);
        should(sandbox.log).eql([]);
        should(status).equal(200);
        should(response).containDeep({ ok: false, message: RETYPE_ALL });
      }
    });
  }

  describe('environment variables (issue 27 point 8)', function () {
    const TYPED = { clientId: SANDBOX_DEFAULTS.clientId, clientSecret: 'typed-secret', apiKey: 'typed-key', pubsubApiKey: 'typed-topics-key' };
    const reference = `\${${SECRET_VARIABLE.name}}`;

    it('${NAME} in audience or project id is refused and nothing is sent: with typed addresses, typed secrets only, or no running node', async function () {
      for (const running of [true, false]) {
        await deploy(nodeRed, running ? [{ id: 'tab', type: 'tab', label: 'on' }, storedConfig()] : [{ id: 'tab', type: 'tab', label: 'on' }]);
        for (const url of [attacker.url, sandbox.url]) {
          for (const credentials of [TYPED, UNCHANGED]) {
            // The one case where variables are read: the running node's stored secrets at its own addresses.
            if (running && url === sandbox.url && credentials === UNCHANGED) continue;
            for (const setting of ['audience', 'projectId']) {
              const { status, response } = await testConnection({ ...dialog(url, credentials), [setting]: reference });
              const what = `${url} ${setting} ${String(credentials.clientSecret)} running: ${String(running)}`;
              should(attacker.seen).eql([], what);
              should(sandbox.log).eql([], what);
              should(status).equal(200);
              should(response).containDeep({ ok: false, code: 'INVALID_INPUT', checks: [] });
              should(response.message).match(/environment variable/);
              should(JSON.stringify(response)).not.containEql(SECRET_VARIABLE.value);
            }
          }
        }
      }
      should(nodeRed.log.join('\n')).not.containEql(SECRET_VARIABLE.value);
    });

    it("with a running node's stored secrets at its own addresses, ${NAME} is read as the node reads it", async function () {
      await deploy(nodeRed, [{ id: 'tab', type: 'tab', label: 'on' }, storedConfig({ audience: `\${${AUDIENCE_VARIABLE}}` })]);
      const { status, response } = await testConnection({ ...dialog(sandbox.url), audience: `\${${AUDIENCE_VARIABLE}}` });
      should(status).equal(200);
      should(response).containDeep({ ok: true, message: 'token ✓ · API key ✓ · topics key ✓' });
      should(sandbox.requests('token')).have.length(1);
    });
  });

  it('refuses a form-encoded or plain-text body with 415 before anything is sent (a cross-site page can send those)', async function () {
    await deploy(nodeRed, [{ id: 'tab', type: 'tab', label: 'on' }, storedConfig()]);
    const form = new URLSearchParams({ id: CONFIG_ID, authUrl: attacker.url, baseUrl: attacker.url, audience: SANDBOX_DEFAULTS.audience });
    form.set('credentials[clientSecret]', '__PWRD__');
    const refused = [await post(form.toString(), 'application/x-www-form-urlencoded'), await post(JSON.stringify(dialog(attacker.url)), 'text/plain')];
    should(attacker.seen).eql([]);
    should(sandbox.log).eql([]);
    for (const { status, response } of refused) {
      should(status).equal(415);
      should(response).containDeep({ ok: false, code: 'UNSUPPORTED_MEDIA_TYPE' });
    }
  });

  it('writes one audit line per call: event, node id, outcome of each check, user and path; never a secret', async function () {
    await deploy(nodeRed, [{ id: 'tab', type: 'tab', label: 'on' }, storedConfig()]);
    const before = auditLines().length;
    await testConnection(dialog(sandbox.url, { ...UNCHANGED, apiKey: 'not-the-key' }));
    await post('id=cfg', 'application/x-www-form-urlencoded');
    await waitUntil(() => auditLines().length >= before + 2, 'two audit lines', 5000);
    const lines = auditLines().slice(before);
    should(lines).have.length(2);
    should(lines[0]).containDeep({
      event: 'svc-config.test',
      id: CONFIG_ID,
      result: 'failed',
      checks: { token: 'accepted', apiKey: 'refused UNAUTHORIZED 401', topicsKey: 'accepted' },
      path: '/svc-config/test',
    });
    should(lines[1]).containDeep({ event: 'svc-config.test', id: CONFIG_ID, result: 'unsupported-media-type' });
    for (const secret of [...SECRETS, 'not-the-key']) should(nodeRed.log.join('\n')).not.containEql(secret);
  });
});

describe(`"Test connection" with adminAuth in a real Node-RED process (${RUNTIME.title})`, function () {
  this.timeout(60_000);
  let sandbox: Sandbox;
  let dir: ReturnType<typeof userDirWithPack>;
  let nodeRed: NodeRedProcess;

  before(async function () {
    sandbox = await startSandbox();
    dir = userDirWithPack();
    // Two users, checked by a function instead of bcrypt hashes; credentials in plain text so the flow can be written before the start.
    const settings = `module.exports = {
  flowFile: 'flows.json',
  credentialSecret: false,
  logging: { console: { level: 'info', audit: true } },
  adminAuth: {
    type: 'credentials',
    users: (username) => Promise.resolve(['admin', 'reader'].includes(username) ? { username, permissions: username === 'admin' ? '*' : 'read' } : null),
    authenticate: (username, password) =>
      Promise.resolve(['admin', 'reader'].includes(username) && password === 'pw-' + username ? { username, permissions: username === 'admin' ? '*' : 'read' } : null),
  },
};
`;
    fs.writeFileSync(path.join(dir.userDir, 'settings.js'), settings);
    fs.writeFileSync(path.join(dir.userDir, 'flows.json'), JSON.stringify([{ id: 'tab', type: 'tab', label: 'on' }, configNode(sandbox)]));
    fs.writeFileSync(path.join(dir.userDir, 'flows_cred.json'), JSON.stringify(sandboxCredentials()));
    nodeRed = await NodeRedProcess.start(dir.userDir, RUNTIME);
  });
  after(async function () {
    await nodeRed?.stop(10_000);
    await sandbox?.close();
    dir?.remove();
  });

  async function login(username: string): Promise<string> {
    const form = new URLSearchParams({
      client_id: 'node-red-admin',
      grant_type: 'password',
      scope: username === 'admin' ? '*' : 'read',
      username,
      password: `pw-${username}`,
    });
    const res = await nodeRed.request('/auth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    should(res.status).equal(200);
    return ((await res.json()) as { access_token: string }).access_token;
  }

  function testConnection(token: string | undefined): Promise<Response> {
    const body = {
      id: CONFIG_ID,
      authUrl: sandbox.url,
      baseUrl: sandbox.url,
      audience: SANDBOX_DEFAULTS.audience,
      projectId: SANDBOX_DEFAULTS.projectId,
      credentials: UNCHANGED,
    };
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    return nodeRed.request('/svc-config/test', { method: 'POST', headers, body: JSON.stringify(body) });
  }

  it('is refused without a login and for a read-only user; an editor runs it and the audit line names the user', async function () {
    should((await testConnection(undefined)).status).equal(401);
    should((await testConnection(await login('reader'))).status).equal(401);
    should(sandbox.log).eql([]);
    const res = await testConnection(await login('admin'));
    should(res.status).equal(200);
    should(await res.json()).containDeep({ ok: true, message: 'token ✓ · API key ✓ · topics key ✓' });
    const audits = () => nodeRed.log.filter((line) => line.includes('"event":"svc-config.test"'));
    await waitUntil(() => audits().length >= 1, 'the audit line', 5000);
    should(audits()).have.length(1);
    should(JSON.parse(audits()[0].slice(audits()[0].indexOf('{')))).containDeep({
      event: 'svc-config.test',
      id: CONFIG_ID,
      result: 'ok',
      user: { username: 'admin' },
    });
  });
});
