import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { NodeRedProcess } from '../support/node-red-process';
import { NODES_DIR } from '../support/paths';
import { SANDBOX_DEFAULTS } from '../../sandbox';

/**
 * Several real Node-RED processes with this pack's built nodes (dist/nodes through `nodesDir`), as
 * replicas behind a load balancer run them: same flows, same credentials, one Redis. Flows are
 * deployed through each instance's admin API, credentials included, as the editor deploys them.
 */

export type FlowNode = Record<string, unknown>;

/** Where an instance's admin API tells its event-loop delay (GET), read by Cluster.measureLateness. */
const EVENT_LOOP_DELAY_PATH = '/event-loop-delay';
/** The event-loop delay monitors' tick: a reading is the longest gap between ticks, a stall plus up to one tick. */
const MONITOR_RESOLUTION_MS = 10;

const settingsJs = (nodesDir: string) => `const { monitorEventLoopDelay } = require('node:perf_hooks');
// How late this process ran since the last reading (the longest gap between ${MONITOR_RESOLUTION_MS} ms ticks, in ms).
const eventLoopDelay = monitorEventLoopDelay({ resolution: ${MONITOR_RESOLUTION_MS} });
eventLoopDelay.enable();
module.exports = {
    flowFile: 'flows.json',
    uiHost: '127.0.0.1',
    credentialSecret: 'instances-suite',
    nodesDir: ${JSON.stringify(nodesDir)},
    telemetry: { enabled: false },
    editorTheme: { tours: false, palette: { catalogues: [] } },
    logging: { console: { level: 'info', metrics: false, audit: false } },
    httpAdminMiddleware: (req, res, next) => {
        if (req.method !== 'GET' || req.url !== '${EVENT_LOOP_DELAY_PATH}') return next();
        res.json({ maxMs: eventLoopDelay.max / 1e6 });
        eventLoopDelay.reset();
    }
};
`;

/**
 * How late the clocks behind a rate measurement ran: the sandbox (in this process) stamps an arrival up
 * to `stampMs` late, and an instance sends a request its gate let go up to `sendMs` late (the longest
 * stall of any instance's event loop); `totalMs`, their sum, is what a bound on arrivals adds. Each is
 * the longest gap between ticks, a stall plus up to one tick.
 */
export interface Lateness {
  stampMs: number;
  sendMs: number;
  totalMs: number;
}

export class Cluster {
  private constructor(
    readonly instances: NodeRedProcess[],
    private readonly workDir: string,
  ) {}

  /** `count` Node-RED processes, each on its own user directory and port; `envOf(i)` adds to instance i's environment. */
  static async start(count: number, envOf: (index: number) => NodeJS.ProcessEnv = () => ({})): Promise<Cluster> {
    const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-instances-'));
    const instances: NodeRedProcess[] = [];
    try {
      for (let i = 0; i < count; i++) {
        const userDir = path.join(workDir, `instance-${i + 1}`);
        fs.mkdirSync(userDir);
        fs.writeFileSync(path.join(userDir, 'settings.js'), settingsJs(NODES_DIR));
        instances.push(await NodeRedProcess.start(userDir, undefined, 90_000, envOf(i)));
      }
    } catch (err) {
      await Promise.all(instances.map((instance) => instance.stop(10_000)));
      fs.rmSync(workDir, { recursive: true, force: true });
      throw err;
    }
    return new Cluster(instances, workDir);
  }

  /** The same flows on every instance (a full deploy); resolves once every instance has started them. */
  async deploy(flows: FlowNode[]): Promise<void> {
    await Promise.all(this.instances.map((instance) => deployTo(instance, flows)));
  }

  /**
   * Runs `work` (requests through the instances to the sandbox) and measures how late the sandbox
   * stamped and the instances sent meanwhile: what a bound on the arrivals' spacing must allow beyond
   * the rate gate's own promise.
   */
  async measureLateness<T>(work: () => Promise<T>): Promise<{ result: T; lateness: Lateness }> {
    const stamps = monitorEventLoopDelay({ resolution: MONITOR_RESOLUTION_MS });
    await this.eventLoopDelayMs();
    stamps.enable();
    try {
      const result = await work();
      const [stampMs, sendMs] = [stamps.max / 1e6, await this.eventLoopDelayMs()];
      return { result, lateness: { stampMs, sendMs, totalMs: stampMs + sendMs } };
    } finally {
      stamps.disable();
    }
  }

  /** The longest event-loop delay of any instance since the last reading (which starts a new one). */
  private async eventLoopDelayMs(): Promise<number> {
    const readings = await Promise.all(
      this.instances.map(async (instance) => {
        const response = await fetch(`${instance.url}${EVENT_LOOP_DELAY_PATH.slice(1)}`, { signal: AbortSignal.timeout(10_000) });
        return ((await response.json()) as { maxMs: number }).maxMs;
      }),
    );
    return Math.max(...readings);
  }

  /** Stops every instance by its PID and removes the user directories. */
  async stop(): Promise<void> {
    await Promise.all(this.instances.map((instance) => instance.stop(10_000)));
    fs.rmSync(this.workDir, { recursive: true, force: true });
  }
}

async function deployTo(instance: NodeRedProcess, flows: FlowNode[]): Promise<void> {
  const startedBefore = instance.log.filter((line) => line.includes('Started flows')).length;
  const response = await fetch(`${instance.url}flows`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full', 'node-red-api-version': 'v1' },
    body: JSON.stringify(flows),
  });
  if (response.status >= 300) throw new Error(`deploy responded with ${response.status}: ${await response.text()}`);
  const deadline = Date.now() + 30_000;
  while (instance.log.filter((line) => line.includes('Started flows')).length <= startedBefore) {
    if (Date.now() > deadline) throw new Error(`the flows did not start within 30 s:\n${instance.log.slice(-20).join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface FlowOptions {
  sandboxUrl: string;
  redisUrl?: string;
  rateLimit?: number;
  dailyLimit?: number;
  cacheTtl?: number;
  webhookSecret?: string;
}

export const CONFIG_ID = 'cfg';
export const WEBHOOK_PATH = '/hook';

/** One async isoline job as the job suites send it, its Redis key and how to count an instance's resumes. */
export const ISOLINE_JOB = {
  isoline: { type: 'svc-isoline', pollIntervalSec: 0.2, maxWait: 120 },
  summary: '(m) => ({ polygons: m.geojson ? m.geojson.features.length : 0 })',
  request: { async: true, origins: [{ lat: 52.52, lon: 13.405 }], range: { type: 'time', value: 600 } },
  jobsKey: `svc-location:{jobs:${CONFIG_ID}}`,
  resumes: (instance: { log: string[] }) => instance.log.filter((line) => line.includes('resuming isoline job')).length,
};

/**
 * One tab: `POST /geocode` (`{ "address": … }`) → svc-geocode → the response, or `{ code, message }` with
 * status 500 from a Catch node; svc-webhook-in on `POST /hook` sharing the config's Redis.
 */
export function sharedFlows(options: FlowOptions): FlowNode[] {
  // Flow nodes need a position: Node-RED takes a node without x and y for a config node.
  const at = (node: FlowNode, index: number): FlowNode => (node.z ? { x: 100 + 150 * index, y: 100, ...node } : node);
  return [
    { id: 'tab', type: 'tab', label: 'instances' },
    {
      id: CONFIG_ID,
      type: 'svc-config',
      name: 'sandbox',
      baseUrl: options.sandboxUrl,
      authUrl: options.sandboxUrl,
      sandboxUrl: options.sandboxUrl,
      audience: SANDBOX_DEFAULTS.audience,
      projectId: SANDBOX_DEFAULTS.projectId,
      timeout: 10_000,
      rateLimit: options.rateLimit ?? 0,
      maxConcurrency: 8,
      maxQueue: 1000,
      maxRetries: 0,
      tokenLifetime: 3600,
      dailyLimit: options.dailyLimit ?? 0,
      cacheTtl: options.cacheTtl ?? 0,
      credentials: {
        clientId: SANDBOX_DEFAULTS.clientId,
        clientSecret: SANDBOX_DEFAULTS.clientSecret,
        apiKey: SANDBOX_DEFAULTS.apiKey,
        pubsubApiKey: SANDBOX_DEFAULTS.pubsubApiKey,
        redisUrl: options.redisUrl ?? '',
      },
    },
    { id: 'in', type: 'http in', z: 'tab', url: '/geocode', method: 'post', wires: [['geocode']] },
    { id: 'geocode', type: 'svc-geocode', z: 'tab', server: CONFIG_ID, address: 'payload', addressType: 'msg', wires: [['response']] },
    { id: 'catch', type: 'catch', z: 'tab', scope: ['geocode'], wires: [['failure']] },
    {
      id: 'failure',
      type: 'function',
      z: 'tab',
      func: 'msg.statusCode = 500;\nmsg.payload = { code: msg.error.code, message: msg.error.message };\nreturn msg;',
      outputs: 1,
      wires: [['response']],
    },
    { id: 'response', type: 'http response', z: 'tab', wires: [] },
    {
      id: 'hook',
      type: 'svc-webhook-in',
      z: 'tab',
      url: WEBHOOK_PATH,
      verify: 'signature',
      tolerance: 300,
      maxBodyKb: 64,
      server: CONFIG_ID,
      credentials: { secret: options.webhookSecret ?? 'webhook-secret' },
      wires: [[]],
    },
  ].map(at);
}

/** One geocode message through an instance's `POST /geocode`; the status and the parsed response. */
export async function geocodeThrough(instance: NodeRedProcess, address: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${instance.url}geocode`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ address }),
    signal: AbortSignal.timeout(90_000),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A signed webhook request to an instance; the HTTP status it returns. */
export async function postWebhook(instance: NodeRedProcess, body: string, signature: string): Promise<number> {
  const response = await fetch(`${instance.url}${WEBHOOK_PATH.slice(1)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'svc-signature': signature },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  await response.arrayBuffer();
  return response.status;
}

/** After each test of the suite: the last `lines` log lines of every instance when the test failed, to tell why. */
export function showLogsOnFailure(cluster: () => Cluster | undefined, lines = 12): void {
  afterEach(function () {
    if (this.currentTest?.state !== 'failed') return;
    for (const instance of cluster()?.instances ?? []) console.log(`--- ${instance.url} ---\n${instance.log.slice(-lines).join('\n')}`);
  });
}

/** A flow node with `prefix` on its id, its wires and its Catch scope (another copy of a flow on the same tab), its http in on `/start-…`. */
export function prefixed(node: Record<string, unknown>, prefix: string): Record<string, unknown> {
  const renamed: Record<string, unknown> = { ...node, id: `${prefix}${String(node.id)}`, y: 300 };
  if (Array.isArray(node.wires)) renamed.wires = (node.wires as string[][]).map((port) => port.map((id) => `${prefix}${id}`));
  if (Array.isArray(node.scope)) renamed.scope = (node.scope as string[]).map((id) => `${prefix}${id}`);
  if (node.type === 'http in') renamed.url = `/start-${prefix.replace(/-$/, '')}`;
  return renamed;
}
