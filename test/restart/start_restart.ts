import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import should from 'should';
import { SANDBOX_DEFAULTS } from '../sandbox';
import { NpmStart, StartPorts, freeStartPorts } from '../support/npm-start';

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

async function deploy(start: NpmStart, flows: FlowNode[], rev: string): Promise<void> {
  const response = await fetch(`${start.editorUrl}/flows`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'Node-RED-API-Version': 'v2', 'Node-RED-Deployment-Type': 'full' },
    body: JSON.stringify({ rev, flows }),
    signal: AbortSignal.timeout(10_000),
  });
  should(response.status).equal(200, await response.text());
}

function sandboxFetch(start: NpmStart, urlPath: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${start.sandboxUrl}${urlPath}`, { ...init, signal: AbortSignal.timeout(10_000) });
}

const PUBSUB = { apikey: SANDBOX_DEFAULTS.pubsubApiKey };
const PROJECT = { 'x-svc-project-id': SANDBOX_DEFAULTS.projectId, 'x-svc-api-key': SANDBOX_DEFAULTS.apiKey };

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
    should(npmStart.banner()).containEql(SANDBOX_DEFAULTS.apiKey).and.containEql(SANDBOX_DEFAULTS.pubsubApiKey).and.containEql(SANDBOX_DEFAULTS.clientSecret);
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
      headers: { ...PUBSUB, 'content-type': 'application/json' },
      body: JSON.stringify({ Name: 'kept topic', Description: 'made before the restart' }),
    });
    should(topic.status).equal(200);
    const topicId = ((await topic.json()) as { data: { id: number } }).data.id;
    const form = new FormData();
    form.append('file', new Blob(['address\n12 Main Street\n5 High Street\n'], { type: 'text/csv' }), 'addresses.csv');
    const upload = await sandboxFetch(npmStart, '/v1/geocode/bulk', { method: 'POST', headers: PROJECT, body: form });
    should(upload.status).equal(201);
    const jobId = ((await upload.json()) as { jobId: string }).jobId;
    should(((await (await sandboxFetch(npmStart, `/v1/geocode/bulk/${jobId}`, { headers: PROJECT })).json()) as { status: string }).status).equal('queued');
    await stop();

    for (const restart of [1, 2]) {
      npmStart = await start();
      const banner = npmStart.banner();
      should(banner).match(/kept from the last run .*1 topic\(s\), 0 subscription\(s\), 1 running job\(s\)/);
      should(banner).match(/kept as they were: 1 tab\(s\), 4 other node\(s\) and 1 config node\(s\) of yours, with their credentials/);
      if (restart === 1) should(banner).match(/put back as examples\/ has them .*: Geocode an address/);
      else should(banner).not.match(/put back/);
      const now = (await getFlows(npmStart)).flows;
      for (const own of OWN_NODES) should(now.find((node) => node.id === own.id)).match(own, `${own.id} after restart ${restart}`);
      should(now.find((node) => node.id === 'ex-geocode-inject')?.payload).equal('12 Main Street, Sandbox City');
      should(now.find((node) => node.id === 'svc-sandbox')).match({ baseUrl: npmStart.sandboxUrl });
      should(credentials()).match({
        'own-webhook': { secret: OWN_SECRET },
        'own-config': { apiKey: OWN_KEY },
        'svc-sandbox': { apiKey: SANDBOX_DEFAULTS.apiKey },
      });
      // The webhook got its secret back: it listens (a node without one refuses to, with a red status).
      should((await fetch(`${npmStart.editorUrl}/my-hook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).equal(401);
      const kept = await sandboxFetch(npmStart, `/v1/pubsub/topics/${topicId}`, { headers: PUBSUB });
      should(kept.status).equal(200);
      should(((await kept.json()) as { data: { name: string } }).data.name).equal('kept topic');
      await stop();
    }
    // The job went on where it was: its polls before the restarts count, and it completes.
    npmStart = await start();
    const statuses: string[] = [];
    for (let poll = 0; poll < 3 && statuses.at(-1) !== 'completed'; poll++) {
      statuses.push(((await (await sandboxFetch(npmStart, `/v1/geocode/bulk/${jobId}`, { headers: PROJECT })).json()) as { status: string }).status);
    }
    should(statuses.at(-1)).equal('completed');
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
    const topics = (await (await sandboxFetch(npmStart, '/v1/pubsub/topics', { headers: PUBSUB })).json()) as { data: { totalCount: number } };
    should(topics.data.totalCount).equal(0);
    should((await getFlows(npmStart)).flows.find((node) => node.id === 'ex-geocode-inject')?.payload).equal('kept edit');
    should(credentials()).match({ 'own-webhook': { secret: OWN_SECRET } });
    await stop();
  });

  it('refuses an option it does not know, before starting anything', async function () {
    await NpmStart.start(userDir, ['--fersh']).then(
      () => should.fail(undefined, undefined, 'started with an unknown option'),
      (err: Error) => should(err.message).match(/unknown option --fersh: npm start takes --fresh and --keep-flows/),
    );
  });
});
