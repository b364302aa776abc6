import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import should from 'should';
import { nowSeconds, signatureHeader } from '../bench/webhook-signing';
import { SANDBOX_DEFAULTS } from '../../sandbox';
import { NpmStart, StartPorts, freeStartPorts } from '../support/npm-start';
import { flowsStarted } from '../support/node-red-process';
import { waitUntil } from '../support/wait';

/**
 * `npm start` never loses work (issue 29 points 1 and 2): a tab, nodes and a config node made through
 * Node-RED's admin API (as the editor's Deploy does), with their credentials, survive two restarts;
 * the examples are refreshed (an edited example node is put back, and the terminal says so); the
 * sandbox keeps its topic and its running bulk job; `--fresh` starts the sandbox empty and
 * `--keep-flows` deploys the flows as they are.
 */

type FlowNode = Record<string, unknown> & { id: string; type: string };

const OWN_SECRET = 'my-own-webhook-secret';
const OWN_KEY = 'my-own-api-key';
const OWN_NODES: FlowNode[] = [
  { id: 'own-tab', type: 'tab', label: 'My flow', disabled: false, info: '' },
  {
    id: 'own-inject',
    type: 'inject',
    z: 'own-tab',
    name: 'mine',
    props: [{ p: 'payload' }],
    payload: 'x',
    payloadType: 'str',
    x: 100,
    y: 80,
    wires: [['own-debug']],
  },
  {
    id: 'own-debug',
    type: 'debug',
    z: 'own-tab',
    name: 'my debug',
    active: true,
    tosidebar: true,
    complete: 'payload',
    targetType: 'msg',
    x: 300,
    y: 80,
    wires: [],
  },
  { id: 'own-webhook', type: 'svc-webhook-in', z: 'own-tab', name: 'my webhook', url: '/my-hook', verify: 'signature', x: 100, y: 160, wires: [['own-debug']] },
  // A node of the user's on an example's tab stays there.
  { id: 'own-on-example-tab', type: 'comment', z: 'tab-geocode-an-address', name: 'my note', info: '', x: 600, y: 300, wires: [] },
  {
    id: 'own-config',
    type: 'svc-config',
    name: 'My account',
    baseUrl: 'https://api.example.com',
    authUrl: '',
    sandboxUrl: '',
    audience: '',
    projectId: 'mine',
  },
];
const OWN_CREDENTIALS: Record<string, Record<string, string>> = { 'own-webhook': { secret: OWN_SECRET }, 'own-config': { apiKey: OWN_KEY } };

async function getFlows(start: NpmStart): Promise<{ rev: string; flows: FlowNode[] }> {
  const response = await fetch(`${start.editorUrl}/flows`, { headers: { 'Node-RED-API-Version': 'v2' }, signal: AbortSignal.timeout(10_000) });
  should(response.status).equal(200);
  return (await response.json()) as { rev: string; flows: FlowNode[] };
}

/** Deploys through the admin API and waits for the flows to start: Node-RED responds before it starts them. */
async function deploy(start: NpmStart, flows: FlowNode[], rev: string): Promise<void> {
  const started = start.output.filter(flowsStarted).length;
  const response = await fetch(`${start.editorUrl}/flows`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'Node-RED-API-Version': 'v2', 'Node-RED-Deployment-Type': 'full' },
    body: JSON.stringify({ rev, flows }),
    signal: AbortSignal.timeout(10_000),
  });
  should(response.status).equal(200, await response.text());
  await waitUntil(() => start.output.filter(flowsStarted).length > started, 'the deployed flows to start', 30_000);
}

function sandboxFetch(start: NpmStart, urlPath: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${start.sandboxUrl}${urlPath}`, { ...init, signal: AbortSignal.timeout(10_000) });
}

/** The built-in sandbox's headers: its generated keys, read from the user directory. */
const PUBSUB = (start: NpmStart) => ({ apikey: start.sandboxKeys().pubsubApiKey });
const PROJECT = (start: NpmStart) => ({ 'x-svc-project-id': SANDBOX_DEFAULTS.projectId, 'x-svc-api-key': start.sandboxKeys().apiKey });

describe('restart: npm start keeps the flows and the sandbox (issue 29)', function () {
  this.timeout(240_000);
  let userDir = '';
  let running: NpmStart | undefined;
  let ports: StartPorts;

  before(async function () {
    // The same ports at every start, as `npm start` uses 1880 and 18790.
    ports = await freeStartPorts();
    userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'npm-start-'));
  });

  afterEach(async function () {
    await running?.stop();
    running = undefined;
  });

  after(function () {
    fs.rmSync(userDir, { recursive: true, force: true });
  });

  const start = async (args: string[] = []): Promise<NpmStart> => {
    running = await NpmStart.start(userDir, args, ports);
    return running;
  };
  const stop = async (): Promise<void> => {
    should(await running?.stop()).equal(0);
    running = undefined;
  };
  const credentials = (): Record<string, Record<string, string>> =>
    JSON.parse(fs.readFileSync(path.join(userDir, 'flows_cred.json'), 'utf8')) as Record<string, Record<string, string>>;

  it('keeps a flow made through the admin API, with its credentials, and the sandbox topic and job, over two restarts; refreshes the examples and says so', async function () {
    let npmStart = await start();
    // The built-in sandbox: its credentials are in the user directory, never printed.
    should(npmStart.banner()).match(/sandbox: the built-in sandbox, served by this Node-RED at \S+\/svc-sandbox/);
    should(npmStart.banner()).not.containEql(npmStart.sandboxKeys().apiKey);
    should(npmStart.banner()).match(/sandbox state: none yet/);
    const { rev, flows } = await getFlows(npmStart);
    // The user edits an example node too: the next start puts it back and says on which tab.
    const edited = flows.map((node) => (node.id === 'ex-geocode-inject' ? { ...node, payload: 'my own address' } : node));
    await deploy(
      npmStart,
      [...edited, ...OWN_NODES.map((node) => (OWN_CREDENTIALS[node.id] ? { ...node, credentials: OWN_CREDENTIALS[node.id] } : node))],
      rev,
    );
    const topic = await sandboxFetch(npmStart, '/v1/pubsub/topics', {
      method: 'POST',
      headers: { ...PUBSUB(npmStart), 'content-type': 'application/json' },
      body: JSON.stringify({ Name: 'kept topic', Description: 'made before the restart' }),
    });
    should(topic.status).equal(200);
    const topicId = ((await topic.json()) as { data: { id: number } }).data.id;
    const form = new FormData();
    form.append('file', new Blob(['address\n12 Main Street\n5 High Street\n'], { type: 'text/csv' }), 'addresses.csv');
    const upload = await sandboxFetch(npmStart, '/v1/geocode/bulk', { method: 'POST', headers: PROJECT(npmStart), body: form });
    should(upload.status).equal(201);
    const jobId = ((await upload.json()) as { jobId: string }).jobId;
    await stop();

    for (const restart of [1, 2]) {
      npmStart = await start();
      const banner = npmStart.banner();
      should(banner).match(/kept from the last run .*1 topic\(s\), 0 subscription\(s\), 1 job\(s\)/);
      should(banner).match(/kept as they were: 1 tab\(s\), 4 other node\(s\) and 1 config node\(s\) of yours, with their credentials/);
      if (restart === 1) {
        should(banner).match(/put back as examples\/ has them .*: Geocode an address/);
        // The edit put back is in the backup the terminal names, made before this start wrote anything.
        const backup = /your changes there are in (\S+flows\.json)\)/.exec(banner)?.[1] ?? '';
        const before = JSON.parse(fs.readFileSync(backup, 'utf8')) as FlowNode[];
        should(before.find((node) => node.id === 'ex-geocode-inject')?.payload).equal('my own address');
      } else should(banner).not.match(/put back/);
      const now = (await getFlows(npmStart)).flows;
      for (const own of OWN_NODES) should(now.find((node) => node.id === own.id)).match(own, `${own.id} after restart ${restart}`);
      should(now.find((node) => node.id === 'ex-geocode-inject')?.payload).equal('12 Main Street, Sandbox City');
      should(now.find((node) => node.id === 'svc-sandbox')).match({ platform: 'sandbox' });
      should(credentials()).match({ 'own-webhook': { secret: OWN_SECRET }, 'own-config': { apiKey: OWN_KEY } });
      // The webhook got its secret back: it listens (a node without one refuses to, with a red status).
      should((await fetch(`${npmStart.editorUrl}/my-hook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).equal(401);
      const kept = await sandboxFetch(npmStart, `/v1/pubsub/topics/${topicId}`, { headers: PUBSUB(npmStart) });
      should(kept.status).equal(200);
      should(((await kept.json()) as { data: { name: string } }).data.name).equal('kept topic');
      await stop();
    }
    // The job went on by the sandbox's clock over the restarts: complete, its results kept.
    npmStart = await start();
    const status = (await (await sandboxFetch(npmStart, `/v1/geocode/bulk/${jobId}`, { headers: PROJECT(npmStart) })).json()) as {
      status: string;
      payload: { total: number };
    };
    should(status).match({ status: 'completed', payload: { total: 2 } });
    await stop();
  });

  it('--fresh starts the sandbox empty and --keep-flows deploys the flows as they are', async function () {
    let npmStart = await start();
    const { rev, flows } = await getFlows(npmStart);
    await deploy(
      npmStart,
      flows.map((node) => (node.id === 'ex-geocode-inject' ? { ...node, payload: 'kept edit' } : node)),
      rev,
    );
    await stop();

    npmStart = await start(['--fresh', '--keep-flows']);
    should(npmStart.banner())
      .match(/sandbox state: started empty \(--fresh\)/)
      .and.match(/deployed as it is \(--keep-flows\)/);
    const topics = (await (await sandboxFetch(npmStart, '/v1/pubsub/topics', { headers: PUBSUB(npmStart) })).json()) as { data: { totalCount: number } };
    should(topics.data.totalCount).equal(0);
    should((await getFlows(npmStart)).flows.find((node) => node.id === 'ex-geocode-inject')?.payload).equal('kept edit');
    should(credentials()).match({ 'own-webhook': { secret: OWN_SECRET } });
    await stop();
  });

  it('moves what an earlier npm start ran on its own sandbox (127.0.0.1:18790) to the built-in one, and says what it moved (issue 52)', async function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'npm-start-old-sandbox-'));
    try {
      const oldConfig = {
        id: 'old-sandbox',
        type: 'svc-config',
        version: 2,
        name: 'My sandbox',
        baseUrl: 'http://127.0.0.1:18790',
        authUrl: 'http://127.0.0.1:18790',
        sandboxUrl: 'http://127.0.0.1:18790',
        audience: SANDBOX_DEFAULTS.audience,
        projectId: SANDBOX_DEFAULTS.projectId,
      };
      fs.writeFileSync(path.join(dir, 'flows.json'), JSON.stringify([...OWN_NODES, oldConfig], null, 4));
      const oldKeys = {
        clientId: SANDBOX_DEFAULTS.clientId,
        clientSecret: SANDBOX_DEFAULTS.clientSecret,
        apiKey: SANDBOX_DEFAULTS.apiKey,
        pubsubApiKey: SANDBOX_DEFAULTS.pubsubApiKey,
      };
      fs.writeFileSync(path.join(dir, 'flows_cred.json'), JSON.stringify({ ...OWN_CREDENTIALS, 'old-sandbox': oldKeys }, null, 4));
      const topic = { id: 7, name: 'kept from the old sandbox', description: '', createdAt: new Date().toISOString(), userId: 'sandbox' };
      const snapshot = {
        version: 1,
        topics: [topic],
        nextTopicId: 8,
        subscriptions: [],
        nextSubscriptionId: 1,
        bulkJobs: [],
        jobs: { isoline: [], sequence: [] },
      };
      fs.writeFileSync(path.join(dir, 'sandbox-state.json'), JSON.stringify(snapshot));

      const npmStart = (running = await NpmStart.start(dir, [], ports));
      const banner = npmStart.banner();
      should(banner).match(/sandbox: moved to the built-in sandbox .*: "My sandbox" \(old-sandbox\)/);
      should(banner).match(/sandbox state: moved from \S*sandbox-state\.json to \S*svc-location\/sandbox-state\.json/);
      should(banner).match(/kept from the last run .*1 topic\(s\)/);
      should(fs.existsSync(path.join(dir, 'sandbox-state.json'))).be.false();
      should((await getFlows(npmStart)).flows.find((node) => node.id === 'old-sandbox')).match({ platform: 'sandbox', baseUrl: '', name: 'My sandbox' });
      const stored = JSON.parse(fs.readFileSync(path.join(dir, 'flows_cred.json'), 'utf8')) as Record<string, unknown>;
      should(stored).not.have.property('old-sandbox');
      should(stored).match({ 'own-config': { apiKey: OWN_KEY } });
      const kept = await sandboxFetch(npmStart, '/v1/pubsub/topics/7', { headers: PUBSUB(npmStart) });
      should(kept.status).equal(200);
      should(((await kept.json()) as { data: { name: string } }).data.name).equal('kept from the old sandbox');
      await stop();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an option it does not know, before starting anything', async function () {
    await NpmStart.start(userDir, ['--fersh']).then(
      () => should.fail(undefined, undefined, 'started with an unknown option'),
      (err: Error) => should(err.message).match(/unknown option --fersh: npm start takes --fresh and --keep-flows/),
    );
  });
});

/**
 * Node-RED's credential file format, written here independently of start-files.ts so that the tests
 * do not trust the code they check: aes-256-ctr, key SHA-256(secret), `{"$": <IV hex><base64>}`.
 */
function seal(secret: string, credentials: Record<string, Record<string, string>>): string {
  const iv = crypto.randomBytes(16);
  const cipher = crypto.createCipheriv('aes-256-ctr', crypto.createHash('sha256').update(secret).digest(), iv);
  return JSON.stringify({ $: iv.toString('hex') + cipher.update(JSON.stringify(credentials), 'utf8', 'base64') + cipher.final('base64') });
}

function unseal(secret: string, file: string): Record<string, Record<string, string>> {
  const stored = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>;
  should(Object.keys(stored)).eql(['$'], `${file} is encrypted`);
  const decipher = crypto.createDecipheriv('aes-256-ctr', crypto.createHash('sha256').update(secret).digest(), Buffer.from(stored.$.slice(0, 32), 'hex'));
  return JSON.parse(decipher.update(stored.$.slice(32), 'base64', 'utf8') + decipher.final('utf8')) as Record<string, Record<string, string>>;
}

/** A request to the user's own webhook signed with `secret`: 200 only when Node-RED read the node's secret and it is that one. */
async function signedHook(start: NpmStart, secret: string): Promise<number> {
  const body = JSON.stringify({ event: 'kept' });
  const response = await fetch(`${start.editorUrl}/my-hook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'svc-signature': signatureHeader(nowSeconds(), secret, body) },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  await response.arrayBuffer();
  return response.status;
}

/** The backups npm start made in `userDir`, oldest first. */
function backups(userDir: string): string[] {
  return fs
    .readdirSync(path.join(userDir, 'backups'))
    .filter((name) => /^\d{4}-/.test(name))
    .sort();
}

describe('restart: npm start keeps encrypted credentials and backs up what it changes (issue 51)', function () {
  this.timeout(240_000);
  const SECRET = 'my own credential secret';
  let userDir = '';
  let running: NpmStart | undefined;
  let ports: StartPorts;
  const cleanUp: string[] = [];

  before(async function () {
    ports = await freeStartPorts();
    userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'npm-start-secret-'));
    cleanUp.push(userDir);
  });

  afterEach(async function () {
    await running?.stop();
    running = undefined;
  });

  after(function () {
    for (const dir of cleanUp) fs.rmSync(dir, { recursive: true, force: true });
  });

  const start = async (dir: string, env: NodeJS.ProcessEnv = {}): Promise<NpmStart> => {
    running = await NpmStart.start(dir, [], ports, undefined, 60_000, env);
    return running;
  };
  const stop = async (): Promise<void> => {
    should(await running?.stop()).equal(0);
    running = undefined;
  };
  const file = (name: string, dir = userDir): string => path.join(dir, name);
  const withCredentials = OWN_NODES.map((node) => (OWN_CREDENTIALS[node.id] ? { ...node, credentials: OWN_CREDENTIALS[node.id] } : node));

  it('keeps flows_cred.json encrypted with NODE_RED_CREDENTIAL_SECRET over two restarts, read by Node-RED, backing up the files before each start', async function () {
    const env = { NODE_RED_CREDENTIAL_SECRET: SECRET };
    let npmStart = await start(userDir, env);
    const { rev, flows } = await getFlows(npmStart);
    await deploy(npmStart, [...flows, ...withCredentials], rev);
    await stop();
    // Node-RED encrypted them with the secret npm start gave it.
    should(unseal(SECRET, file('flows_cred.json'))).match({ 'own-webhook': { secret: OWN_SECRET } });
    should(npmStart.banner()).match(/credentials: \S*flows_cred\.json written encrypted with NODE_RED_CREDENTIAL_SECRET/);

    for (const restart of [1, 2]) {
      const before = { flows: fs.readFileSync(file('flows.json')), credentials: fs.readFileSync(file('flows_cred.json')) };
      npmStart = await start(userDir, env);
      should(unseal(SECRET, file('flows_cred.json'))).match({ 'own-webhook': { secret: OWN_SECRET }, 'own-config': { apiKey: OWN_KEY } });
      // Node-RED read them: the webhook accepts its own secret, and only that.
      should(await signedHook(npmStart, OWN_SECRET)).equal(200, `restart ${restart}`);
      should(await signedHook(npmStart, 'another secret')).equal(401);
      const banner = npmStart.banner();
      should(banner).match(/kept as they were: 1 tab\(s\), 4 other node\(s\) and 1 config node\(s\) of yours, with their credentials/);
      should(banner).match(/credentials: \S*flows_cred\.json (written|kept as it was), encrypted with NODE_RED_CREDENTIAL_SECRET/);
      // The files as they were before this start, byte for byte, in a backup of their own, which the terminal names.
      const made = backups(userDir);
      should(made).have.length(restart);
      const newest = path.join(userDir, 'backups', made[made.length - 1]);
      should(fs.readFileSync(path.join(newest, 'flows.json')).equals(before.flows)).be.true();
      should(fs.readFileSync(path.join(newest, 'flows_cred.json')).equals(before.credentials)).be.true();
      should(banner).containEql(`backup: the flows and credentials found copied to ${newest} before any change`);
      await stop();
    }
  });

  it('leaves an encrypted flows_cred.json it cannot open byte for byte, and says what it did not do and how to fix it', async function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'npm-start-sealed-'));
    cleanUp.push(dir);
    // As the user's own Node-RED with `credentialSecret` in its settings leaves it.
    fs.writeFileSync(file('flows.json', dir), JSON.stringify(OWN_NODES, null, 4));
    fs.writeFileSync(file('flows_cred.json', dir), seal(SECRET, OWN_CREDENTIALS));
    const before = fs.readFileSync(file('flows_cred.json', dir));
    for (const env of [{}, { NODE_RED_CREDENTIAL_SECRET: 'not the secret' }]) {
      const npmStart = await start(dir, env);
      should(fs.readFileSync(file('flows_cred.json', dir)).equals(before)).be.true();
      const banner = npmStart.banner();
      should(banner).match(
        env.NODE_RED_CREDENTIAL_SECRET
          ? /flows_cred\.json is encrypted and NODE_RED_CREDENTIAL_SECRET does not open it: it was left as it was, byte for byte/
          : /flows_cred\.json is encrypted and no credentialSecret was given \(NODE_RED_CREDENTIAL_SECRET\): it was left as it was, byte for byte/,
      );
      should(banner).match(/every node starts without its credentials, the examples' too/);
      should(banner).containEql('NODE_RED_CREDENTIAL_SECRET=<the credentialSecret that encrypted it> npm start');
      should(banner).match(/of yours, without their credentials/);
      should(banner).not.match(/with their credentials/);
      // The user's nodes are still deployed.
      should((await getFlows(npmStart)).flows.find((node) => node.id === 'own-webhook')).match({ url: '/my-hook' });
      await stop();
      should(fs.readFileSync(file('flows_cred.json', dir)).equals(before)).be.true();
    }
    // With the secret, all of it comes back.
    await start(dir, { NODE_RED_CREDENTIAL_SECRET: SECRET });
    should(await signedHook(running as NpmStart, OWN_SECRET)).equal(200);
    should(unseal(SECRET, file('flows_cred.json', dir))).match({ 'own-config': { apiKey: OWN_KEY } });
    await stop();
  });

  it("reads and keeps credentials encrypted with Node-RED's generated _credentialSecret, and keeps the last five backups", async function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'npm-start-generated-'));
    cleanUp.push(dir);
    // As Node-RED leaves a user directory it ran on with its own settings (no credentialSecret).
    const generated = crypto.randomBytes(32).toString('hex');
    fs.writeFileSync(file('.config.runtime.json', dir), JSON.stringify({ _credentialSecret: generated }, null, 4));
    fs.writeFileSync(file('flows.json', dir), JSON.stringify(OWN_NODES, null, 4));
    fs.writeFileSync(file('flows_cred.json', dir), seal(generated, OWN_CREDENTIALS));
    const before = fs.readFileSync(file('flows_cred.json', dir));
    const older = [1, 2, 3, 4, 5].map((day) => `2020-01-0${day}T00-00-00-000Z`);
    for (const name of older) {
      fs.mkdirSync(path.join(dir, 'backups', name), { recursive: true });
      fs.writeFileSync(path.join(dir, 'backups', name, 'flows.json'), `[] ${name}`);
    }
    fs.writeFileSync(path.join(dir, 'backups', 'notes.txt'), 'mine');

    const npmStart = await start(dir);
    should(unseal(generated, file('flows_cred.json', dir))).match({ 'own-webhook': { secret: OWN_SECRET }, 'own-config': { apiKey: OWN_KEY } });
    should(await signedHook(npmStart, OWN_SECRET)).equal(200);
    const banner = npmStart.banner();
    // The examples add no credentials (the built-in sandbox needs none): the file is kept as it was.
    should(banner).match(/credentials: \S*flows_cred\.json kept as it was, encrypted with the _credentialSecret in \S*\.config\.runtime\.json/);
    should(banner).match(/kept as they were: 1 tab\(s\), 4 other node\(s\) and 1 config node\(s\) of yours, with their credentials/);
    // The oldest backup went; the four after it, this start's and what is not a backup stay.
    const kept = backups(dir);
    should(kept).have.length(5);
    should(kept.slice(0, 4)).eql(older.slice(1));
    const newest = path.join(dir, 'backups', kept[4]);
    should(fs.readFileSync(path.join(newest, 'flows_cred.json')).equals(before)).be.true();
    should(banner).containEql(newest);
    should(fs.readFileSync(path.join(dir, 'backups', 'notes.txt'), 'utf8')).equal('mine');
    await stop();
  });
});
