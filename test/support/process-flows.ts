import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { NodeRedProcess, flowsStarted, newUserDir } from './node-red-process';
import { REPO_ROOT } from './paths';
import { CONFIG_ID, Fields, configNode, sandboxCredentials } from './harness';
import { Sandbox, SandboxOptions, startSandbox } from '../../sandbox';
import { waitUntil } from './wait';
import { readJobs } from '../../nodes/lib/state/job-store';

/**
 * Plumbing for the restart suite: Node-RED child processes on a user directory that holds this
 * checkout (linked as an installed package), flows deployed through the admin API as the editor
 * does, and a collector that receives each output of the node under test as one HTTP POST.
 */

/** A new user directory with the pack installed as a link to this checkout's build. */
export function userDirWithPack(): { userDir: string; remove: () => void } {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-restart-'));
  const userDir = newUserDir(parent, 'node-red');
  const modules = path.join(userDir, 'node_modules', '@svc');
  fs.mkdirSync(modules, { recursive: true });
  fs.symlinkSync(REPO_ROOT, path.join(modules, 'node-red-location'), 'dir');
  return { userDir, remove: () => fs.rmSync(parent, { recursive: true, force: true }) };
}

/** Every report the flow posted, in arrival order. */
export class Collector {
  readonly reports: Fields[] = [];
  private readonly waiters: Array<() => void> = [];
  private server: http.Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.reports.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Fields);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
        for (const wake of this.waiters.splice(0)) wake();
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/report`;
  }

  /** Resolves once `count` reports have arrived; rejects after `timeoutMs`. */
  async waitFor(count: number, timeoutMs: number): Promise<Fields[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.reports.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${this.reports.length} of ${count} reports within ${timeoutMs} ms: ${JSON.stringify(this.reports)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.reports;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/**
 * A flow around one node under test (`node`, id `under-test`): `POST /start` with
 * `{tag, payload}` sends the payload to it with `msg.tag` (and the HTTP request and response on
 * the message); its output and any error it reports reach the collector as a summary built by `summary`
 * (a function node body reading `msg`, returning the object to post).
 */
export function reportingFlow(sandbox: Sandbox, collectorUrl: string, node: Fields, summary: string, credentials: Fields = {}): Fields[] {
  const report = (id: string) => ({
    id,
    type: 'function',
    z: 'tab',
    func: `const error = msg.error ? msg.error.message : undefined;\nconst report = (${summary})(msg);\nmsg.payload = { ...report, resumed: msg.resumed === true, tag: msg.tag, jobs: msg.jobs, hasReq: 'req' in msg, hasRes: 'res' in msg, error };\ndelete msg.req;\ndelete msg.res;\nmsg.headers = { 'content-type': 'application/json' };\nreturn msg;`,
    outputs: 1,
    wires: [['post']],
  });
  // Flow nodes need a position: Node-RED takes a node without x and y for a config node.
  const placed = (node: Fields, index: number): Fields => (node.z ? { x: 100 + 150 * index, y: 100, ...node } : node);
  return [
    { id: 'tab', type: 'tab', label: 'restart' },
    { ...configNode(sandbox), credentials: { ...sandboxCredentials()[CONFIG_ID], ...credentials } },
    { id: 'start', type: 'http in', z: 'tab', url: '/start', method: 'post', wires: [['prepare', 'reply']] },
    { id: 'reply', type: 'http response', z: 'tab', statusCode: '202', wires: [] },
    {
      id: 'prepare',
      type: 'function',
      z: 'tab',
      // As flows do: the request's headers and cookies copied onto the message, and a credential of the flow's own.
      func: `msg.tag = msg.payload.tag;\nmsg.payload = msg.payload.payload;\nmsg.headers = msg.req.headers;\nmsg.cookies = msg.req.cookies;\nmsg.auth = { user: 'u', password: '${FLOW_SECRETS.password}' };\nreturn msg;`,
      outputs: 1,
      wires: [['under-test']],
    },
    { ...node, id: 'under-test', z: 'tab', server: CONFIG_ID, wires: [['report']] },
    { id: 'catch', type: 'catch', z: 'tab', scope: ['under-test'], wires: [['report']] },
    report('report'),
    { id: 'post', type: 'http request', z: 'tab', method: 'POST', ret: 'txt', url: collectorUrl, wires: [] },
  ].map(placed);
}

/** A full deployment through the admin API, resolving once the flows have started. */
export async function deploy(nodeRed: NodeRedProcess, flows: Fields[]): Promise<void> {
  const started = startedCount(nodeRed);
  const res = await fetch(`${nodeRed.url}flows`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full', 'node-red-api-version': 'v1' },
    body: JSON.stringify(flows),
  });
  if (res.status >= 300) throw new Error(`deploy responded with ${res.status}: ${await res.text()}`);
  await waitUntil(() => startedCount(nodeRed) > started, 'the deployed flows to start', 30_000);
}

function startedCount(nodeRed: NodeRedProcess): number {
  return nodeRed.log.filter(flowsStarted).length;
}

/** The stored jobs file of the config node in the user directory, as text ('' when there is none). */
export function storeText(userDir: string): string {
  const file = path.join(userDir, 'svc-location', `jobs-${CONFIG_ID}.json`);
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
}

/** The jobs the store's file holds, as the store reads them. */
export function storedJobs(userDir: string): Fields[] {
  const file = path.join(userDir, 'svc-location', `jobs-${CONFIG_ID}.json`);
  return [...readJobs(file, { warn: () => undefined, info: () => undefined }).values()] as unknown as Fields[];
}

/**
 * One test's parts, set up before the suite and stopped after it by PID: a sandbox whose jobs take
 * `jobs` polls (or as its options say), the collector, a user directory with the pack, and the Node-RED on it (if any).
 */
export function useRestartRig(jobs: number | SandboxOptions): RestartRig {
  const rig = new RestartRig();
  before(async function () {
    rig.sandbox = await startSandbox(typeof jobs === 'number' ? { jobPolls: jobs } : jobs);
    rig.dir = userDirWithPack();
    await rig.collector.start();
  });
  after(async function () {
    await rig.nodeRed?.stop(10_000);
    await rig.collector.close();
    await rig.sandbox.close();
    rig.dir.remove();
  });
  return rig;
}

export class RestartRig {
  sandbox!: Sandbox;
  readonly collector = new Collector();
  dir!: { userDir: string; remove: () => void };
  nodeRed: NodeRedProcess | undefined;

  /** Starts Node-RED on the rig's user directory (again, after a kill or a stop). */
  async start(): Promise<NodeRedProcess> {
    this.nodeRed = await NodeRedProcess.start(this.dir.userDir);
    return this.nodeRed;
  }

  /** Deploys the reporting flow around `node`, and sends it `payload` with `msg.tag`. */
  async deployAndSend(node: Fields, summary: string, tag: string, payload: unknown): Promise<void> {
    const nodeRed = this.nodeRed as NodeRedProcess;
    await deploy(nodeRed, reportingFlow(this.sandbox, this.collector.url, node, summary));
    await startMessage(nodeRed, tag, payload);
  }
}

/**
 * Credentials a flow holds in the messages it starts jobs with (`msg.headers.authorization` and
 * `msg.cookies` from the HTTP request, `msg.auth.password`): none may reach a job store (issue 20 point 8).
 */
export const FLOW_SECRETS = { authorization: 'Bearer flow-received-token-1', cookie: 'flow-cookie-value-2', password: 'flow-password-3' };

/** Sends `payload` with `msg.tag` into the reporting flow of a Node-RED, with an authorization header and a cookie. */
export async function startMessage(nodeRed: NodeRedProcess, tag: string, payload: unknown): Promise<void> {
  const started = await fetch(`${nodeRed.url}start`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: FLOW_SECRETS.authorization, cookie: `sid=${FLOW_SECRETS.cookie}` },
    body: JSON.stringify({ tag, payload }),
  });
  if (started.status !== 202) throw new Error(`POST /start responded with ${started.status}`);
}
