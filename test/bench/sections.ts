import { SANDBOX_DEFAULTS } from '../../sandbox';
import { Bench, sleep, waitFor } from './bench';
import type { FlowNode, SoakRoute } from './flows';
import { BENCH_ADDRESS, WEBHOOK_SECRET, bulkFlows, rateLimitFlows, soakFlows, throughputFlows, tokenStormFlows, webhookFlows } from './flows';
import type { LoadResult, RequestTemplate } from './loadgen';
import { median, slope } from './measure';
import type { Snapshot } from './nodered-process';

/** The six measurements of issue 7. Each deploys its own flows and returns plain JSON for the report. */

const CONCURRENCIES = [1, 8, 64];

/** What one flow (or the raw client) achieved at one concurrency, over all its rounds. */
export interface LoadFigures {
  requestsPerSecond: number;
  /** Medians of the rounds' percentiles. */
  p50Ms: number;
  p99Ms: number;
  /** Responses other than 200 and requests without a response. */
  failures: number;
  /** CPU used by the Node-RED process meanwhile, in % of one core (0 for raw undici). */
  nodeRedCpuPercent: number;
  /**
   * Node-RED's CPU time per request with a response, microseconds (0 for raw undici): what a message costs
   * Node-RED, which depends far less than req/s on what else the machine is doing.
   */
  nodeRedCpuMicrosPerRequest: number;
}

export interface ThroughputRow extends LoadFigures {
  flow: string;
  concurrency: number;
}

export interface ThroughputResult {
  rows: ThroughputRow[];
  /** At concurrency 64, req/s. */
  geocodeVsFloor: number;
  geocodeVsHttpRequest: number;
  /** At concurrency 64, Node-RED CPU time per message of the floor over that of svc-geocode. */
  floorVsGeocodeCpu: number;
}

interface LoadTarget {
  name: string;
  origin: string;
  template: RequestTemplate;
}

/** Responses other than 200, and requests that got no response. */
export function failures(result: LoadResult): number {
  const wrongStatus = Object.entries(result.statuses).reduce((sum, [status, n]) => sum + (status === '200' ? 0 : n), 0);
  return wrongStatus + Object.values(result.errors).reduce((sum, n) => sum + n, 0);
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

/**
 * Loads each target in turn, for several short rounds, so that whatever else the machine is doing
 * meanwhile falls on all of them alike and their ratios stay fair.
 */
async function interleaved(bench: Bench, targets: LoadTarget[], concurrency: number): Promise<Map<string, LoadFigures>> {
  const rounds = bench.quick ? 1 : 3;
  const runs = new Map<string, Array<{ result: LoadResult; cpuMs: number; wallMs: number }>>(targets.map((t) => [t.name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const target of targets) {
      const cpuBefore = await bench.nodeRed.call('cpu', undefined);
      const started = Date.now();
      const result = await bench.load({
        origin: target.origin,
        templates: [target.template],
        concurrency,
        warmupMs: 500,
        durationMs: bench.quick ? 1500 : 2000,
      });
      const cpuAfter = await bench.nodeRed.call('cpu', undefined);
      // Node-RED does nothing for the raw client: whatever CPU it used then is not the target's.
      const cpuMs = target.origin === bench.sandboxUrl ? 0 : (cpuAfter.user - cpuBefore.user + cpuAfter.system - cpuBefore.system) / 1000;
      runs.get(target.name)?.push({ result, cpuMs, wallMs: Date.now() - started });
    }
  }
  const figures = new Map<string, LoadFigures>();
  for (const [name, list] of runs) {
    figures.set(name, {
      requestsPerSecond: sum(list.map((r) => r.result.requests)) / (sum(list.map((r) => r.result.durationMs)) / 1000),
      p50Ms: median(list.map((r) => r.result.p50Ms)),
      p99Ms: median(list.map((r) => r.result.p99Ms)),
      failures: sum(list.map((r) => failures(r.result))),
      nodeRedCpuPercent: (100 * sum(list.map((r) => r.cpuMs))) / sum(list.map((r) => r.wallMs)),
      nodeRedCpuMicrosPerRequest: (1000 * sum(list.map((r) => r.cpuMs))) / sum(list.map((r) => r.result.responsesInAll)),
    });
  }
  return figures;
}

/** One request per target before measuring: a flow that does not respond with 200 would measure nothing. */
async function expectWorking(bench: Bench, targets: LoadTarget[]): Promise<void> {
  for (const target of targets) {
    const first = await bench.load({ origin: target.origin, templates: [target.template], concurrency: 1, count: 1 });
    if (first.statuses[200] !== 1) throw new Error(`${target.name}: the first request got ${JSON.stringify({ ...first.statuses, ...first.errors })}`);
  }
}

/** 1. `http in` → X → `http response` for X = function (floor), core http request, svc-geocode; and undici straight to the sandbox. */
export async function throughput(bench: Bench): Promise<ThroughputResult> {
  await bench.deploy(throughputFlows(bench.sandboxUrl));
  const body = JSON.stringify({ address: BENCH_ADDRESS });
  const targets: LoadTarget[] = [
    { name: 'function node only (floor)', origin: bench.nodeRedUrl, template: { method: 'POST', path: '/bench/floor', body } },
    { name: 'core http request', origin: bench.nodeRedUrl, template: { method: 'POST', path: '/bench/http-request', body } },
    { name: 'svc-geocode', origin: bench.nodeRedUrl, template: { method: 'POST', path: '/bench/geocode', body } },
    {
      name: 'raw undici to the sandbox',
      origin: bench.sandboxUrl,
      template: {
        method: 'POST',
        path: `/v1/geocode?address=${encodeURIComponent(BENCH_ADDRESS)}`,
        headers: { accept: 'application/json', 'x-svc-project-id': SANDBOX_DEFAULTS.projectId, 'x-svc-api-key': SANDBOX_DEFAULTS.apiKey },
      },
    },
  ];
  await expectWorking(bench, targets);
  const rows: ThroughputRow[] = [];
  for (const concurrency of CONCURRENCIES) {
    const figures = await interleaved(bench, targets, concurrency);
    for (const [flow, figure] of figures) rows.push({ flow, concurrency, ...figure });
  }
  const at64 = (flow: string) => rows.find((row) => row.flow === flow && row.concurrency === 64) as ThroughputRow;
  const [floor, httpRequest, geocode] = ['function node only (floor)', 'core http request', 'svc-geocode'].map(at64);
  return {
    rows,
    geocodeVsFloor: geocode.requestsPerSecond / floor.requestsPerSecond,
    geocodeVsHttpRequest: geocode.requestsPerSecond / httpRequest.requestsPerSecond,
    floorVsGeocodeCpu: floor.nodeRedCpuMicrosPerRequest / geocode.nodeRedCpuMicrosPerRequest,
  };
}

interface BurstReport {
  expected: number;
  outputs: number;
  errors: number;
  startedAt: number;
  finishedAt: number;
  firstError: string;
}

/** Starts a burst flow (see `burstFlows`) and resolves with its report once every message has an outcome. */
async function runBurst(bench: Bench, path: string, count: number, timeoutMs: number): Promise<BurstReport> {
  const started = await bench.call('POST', path, { count });
  if (started.status !== 200) throw new Error(`${path} responded with ${started.status}: ${JSON.stringify(started.body)}`);
  return waitFor(
    `${count} outcomes of ${path}`,
    async () => {
      const report = (await bench.call('GET', path)).body as BurstReport | null;
      return report && report.outputs + report.errors >= report.expected ? report : undefined;
    },
    timeoutMs,
  );
}

async function tokenRequests(bench: Bench): Promise<number> {
  const byStatus = (await bench.sandbox.call('counts', undefined)).token ?? {};
  return Object.values(byStatus).reduce((sum, n) => sum + n, 0);
}

export interface TokenStormVariant {
  variant: string;
  messages: number;
  tokenRequests: number;
  outputs: number;
  errors: number;
  firstError: string;
  durationMs: number;
}

/**
 * 2. 1,000 messages into svc-words at once, at the moment the token stops being valid: once when it
 * has expired (the node knows), once when the platform has revoked it early (the node learns from 401s).
 */
export async function tokenStorm(bench: Bench): Promise<TokenStormVariant[]> {
  const messages = 1000;
  const lifetimeSec = 4;
  await bench.sandbox.call('configure', { tokenLifetimeSec: 3600 });
  await bench.deploy(tokenStormFlows(bench.sandboxUrl));
  const storm = async (variant: string): Promise<TokenStormVariant> => {
    const before = await tokenRequests(bench);
    const report = await runBurst(bench, '/bench/storm', messages, 120_000);
    return {
      variant,
      messages,
      tokenRequests: (await tokenRequests(bench)) - before,
      outputs: report.outputs,
      errors: report.errors,
      firstError: report.firstError,
      durationMs: report.finishedAt - report.startedAt,
    };
  };
  try {
    await runBurst(bench, '/bench/storm', 1, 10_000);
    await bench.sandbox.call('expireTokens', undefined);
    const revoked = await storm('token revoked by the platform (401)');
    // A short-lived token for the second storm: revoke the long one, and one message fetches it.
    await bench.sandbox.call('configure', { tokenLifetimeSec: lifetimeSec });
    await bench.sandbox.call('expireTokens', undefined);
    await runBurst(bench, '/bench/storm', 1, 10_000);
    await sleep(lifetimeSec * 1000 + 300);
    const expired = await storm(`token expired (${lifetimeSec} s lifetime)`);
    return [revoked, expired];
  } finally {
    await bench.sandbox.call('configure', { tokenLifetimeSec: 3600 });
  }
}

export interface BulkResult {
  addresses: number;
  batchSize: number;
  parallel: number;
  pollIntervalMs: number;
  rows: number;
  inOrder: boolean;
  located: number;
  failed: number;
  jobs: number;
  wallMs: number;
  /** Mean time from a job's upload to the status poll that found it complete, at the sandbox. */
  meanJobMs: number;
  /** The wall time if nothing but the sandbox's job time counted: jobs in rounds of `parallel`. */
  jobBoundMs: number;
  baselineRssMb: number;
  peakRssGrowthMb: number;
  peakHeapGrowthMb: number;
}

/** 3. 100,000 addresses through svc-bulk-geocode. */
export async function bulk(bench: Bench): Promise<BulkResult> {
  const addresses = bench.quick ? 10_000 : 100_000;
  const settings = { batchSize: 1000, parallel: 4, pollIntervalMs: 250 };
  await bench.deploy(bulkFlows(bench.sandboxUrl, settings));
  await bench.sandbox.call('trace', ['bulk-upload', 'bulk-status']);
  await bench.nodeRed.call('watchMemory', undefined);
  const started = Date.now();
  const response = await bench.call('POST', '/bench/bulk', { count: addresses });
  const wallMs = Date.now() - started;
  const memory = await bench.nodeRed.call('memoryPeak', undefined);
  const timings = await bench.sandbox.call('bulkJobTimings', undefined);
  await bench.sandbox.call('trace', []);
  if (response.status !== 200) throw new Error(`bulk run responded with ${response.status}: ${JSON.stringify(response.body)}`);
  const summary = response.body as { rows: number; inOrder: boolean; located: number; failed: number; jobs: number };
  const meanJobMs = timings.reduce((sum, t) => sum + (t.readyAt - t.uploadedAt), 0) / Math.max(1, timings.length);
  const mb = (bytes: number) => bytes / 1024 / 1024;
  return {
    addresses,
    ...settings,
    ...summary,
    wallMs,
    meanJobMs,
    jobBoundMs: Math.ceil(summary.jobs / settings.parallel) * meanJobMs,
    baselineRssMb: mb(memory.baselineRssBytes),
    peakRssGrowthMb: mb(memory.peakRssBytes - memory.baselineRssBytes),
    peakHeapGrowthMb: mb(memory.peakHeapBytes - memory.baselineHeapBytes),
  };
}

export interface WebhookResult {
  concurrency: number;
  webhookIn: LoadFigures;
  coreHttpIn: LoadFigures;
  ratio: number;
  /** With BENCH_WEBHOOK_FILL_SECONDS: the unique deliveries svc-webhook-in accepted before the measurement, and in how long. */
  filled?: { seconds: number; accepted: number; statuses: Record<string, number> };
}

/**
 * BENCH_WEBHOOK_FILL_SECONDS=<s>: before measuring, unique signed deliveries are sent to svc-webhook-in for that long, at
 * BENCH_WEBHOOK_FILL_RATE a second (as fast as it takes them without), so that its replay record holds what it holds at
 * that rate: 4,000 a second over the default 300 s tolerance is 1.2 M entries, near the default cap of 1.5 M.
 */
const WEBHOOK_FILL_SECONDS = Number(process.env.BENCH_WEBHOOK_FILL_SECONDS ?? 0);
const WEBHOOK_FILL_RATE = process.env.BENCH_WEBHOOK_FILL_RATE ? Number(process.env.BENCH_WEBHOOK_FILL_RATE) : undefined;

/** 4. Signed POSTs to svc-webhook-in against the same POSTs to a core `http in` → `http response` that checks nothing. */
export async function webhooks(bench: Bench): Promise<WebhookResult> {
  await bench.deploy(webhookFlows());
  const concurrency = 64;
  const template = (path: string): RequestTemplate => ({
    method: 'POST',
    path,
    body: JSON.stringify({ temperature: 21.5, cell: 'cell-1' }),
    signWith: WEBHOOK_SECRET,
  });
  const targets: LoadTarget[] = [
    { name: 'svc-webhook-in', origin: bench.nodeRedUrl, template: template('/bench/hook') },
    { name: 'core http in', origin: bench.nodeRedUrl, template: template('/bench/plain') },
  ];
  await expectWorking(bench, targets);
  let filled: WebhookResult['filled'];
  if (WEBHOOK_FILL_SECONDS > 0) {
    const fill = await bench.load({
      origin: bench.nodeRedUrl,
      templates: [targets[0].template],
      concurrency,
      durationMs: WEBHOOK_FILL_SECONDS * 1000,
      ratePerSecond: WEBHOOK_FILL_RATE,
    });
    filled = { seconds: WEBHOOK_FILL_SECONDS, accepted: fill.statuses['200'] ?? 0, statuses: { ...fill.statuses, ...fill.errors } };
  }
  const figures = await interleaved(bench, targets, concurrency);
  const webhookIn = figures.get('svc-webhook-in') as LoadFigures;
  const coreHttpIn = figures.get('core http in') as LoadFigures;
  return { concurrency, webhookIn, coreHttpIn, ratio: webhookIn.requestsPerSecond / coreHttpIn.requestsPerSecond, ...(filled ? { filled } : {}) };
}

export interface RateLimitResult {
  ratePerMinute: number;
  windowMinutes: number;
  okResponses: number;
  tooManyRequests: number;
  measuredPerMinute: number;
  deviationPercent: number;
}

/** 5. rateLimit 80/min against a sandbox that responds with 429 beyond 80 requests in any minute. */
export async function rateLimit(bench: Bench): Promise<RateLimitResult> {
  const ratePerMinute = 80;
  const windowMinutes = bench.quick ? 0.5 : 3;
  await bench.sandbox.call('clearFaults', undefined);
  await bench.sandbox.call('setFault', { endpoint: 'geocode', fault: { rateLimitPerMinute: ratePerMinute } });
  await bench.deploy(rateLimitFlows(bench.sandboxUrl));
  await bench.sandbox.call('trace', ['geocode']);
  try {
    // More messages than the window lets through, so the limiter, not the supply, sets the pace.
    await bench.call('POST', '/bench/rate', { count: Math.ceil(ratePerMinute * windowMinutes) + 40 });
    await sleep(windowMinutes * 60_000 + 2000);
    const traced = await bench.sandbox.call('traced', undefined);
    const first = Math.min(...traced.map((t) => t.time));
    const okTimes = traced.filter((t) => t.status === 200 && t.time < first + windowMinutes * 60_000).map((t) => t.time);
    const okResponses = okTimes.length;
    // The sustained rate: requests per minute from the first request with a 200 response to the last one in the window.
    const measuredPerMinute = (60_000 * (okResponses - 1)) / (Math.max(...okTimes) - Math.min(...okTimes));
    return {
      ratePerMinute,
      windowMinutes,
      okResponses,
      tooManyRequests: traced.filter((t) => t.status === 429).length,
      measuredPerMinute,
      deviationPercent: (100 * (measuredPerMinute - ratePerMinute)) / ratePerMinute,
    };
  } finally {
    await bench.sandbox.call('trace', []);
    await bench.sandbox.call('clearFaults', undefined);
    // Ends the waiting messages before the next measurement.
    await bench.deploy([]);
  }
}

export interface SoakCheckpoint {
  redeploys: number;
  heapUsedMb: number;
  /** Sockets and timers that keep the process alive (process.getActiveResourcesInfo()). */
  sockets: number;
  timers: number;
  /** Every open socket, idle keep-alive ones included (Linux only). */
  socketDescriptors: number | undefined;
  routes: number;
}

/** One soak: redeploys of one flow while traffic flows through it. */
export interface SoakRun {
  meanDeployMs: number;
  /** Taken after traffic has stopped and settled, before and after the redeploys. */
  start: SoakCheckpoint;
  end: SoakCheckpoint;
  /** Taken every few redeploys while messages flow. */
  checkpoints: SoakCheckpoint[];
  heapSlopeKbPerRedeploy: number;
  socketSlopePerRedeploy: number;
  socketDescriptorSlopePerRedeploy: number;
  timerSlopePerRedeploy: number;
  routeSlopePerRedeploy: number;
  /** What the traffic during the redeploys got back. */
  traffic: { requests: number; statuses: Record<string, number>; errors: Record<string, number> };
}

export interface SoakResult {
  redeploys: number;
  nodeTypes: string[];
  /** The flow with every node of the pack. */
  pack: SoakRun;
  /** The same flow with core function nodes in place of ours: Node-RED's own share. */
  control: SoakRun;
  /** Paths whose first request (before the soak) did not respond with 200: a node that does not work. */
  brokenRoutes: Array<{ type: string; status: number; body: unknown }>;
}

function checkpoint(redeploys: number, snapshot: Snapshot): SoakCheckpoint {
  return {
    redeploys,
    heapUsedMb: snapshot.heapUsedBytes / 1024 / 1024,
    sockets: snapshot.handles.TCPSocketWrap ?? 0,
    timers: snapshot.handles.Timeout ?? 0,
    socketDescriptors: snapshot.socketDescriptors,
    routes: snapshot.routes,
  };
}

/** A request whose message a redeploy cut off never gets a response: the load generator gives up after this. */
const SOAK_REQUEST_TIMEOUT_MS = 2000;
/** Longer than the request limit, so requests cut off by a redeploy have ended before figures are taken. */
const SOAK_SETTLE_MS = SOAK_REQUEST_TIMEOUT_MS + 2000;
/** Between redeploys, so that messages get through the new flow before the next redeploy. */
const SOAK_PAUSE_MS = 100;

function soakTemplates(routes: SoakRoute[]): RequestTemplate[] {
  return routes.map((route) => ({
    method: 'POST',
    path: route.path,
    body: JSON.stringify(route.body),
    signWith: route.type === 'svc-webhook-in' ? WEBHOOK_SECRET : undefined,
  }));
}

/** The first request on every path, before the soak: a path that does not respond with 200 is a broken node. */
async function brokenRoutesOf(bench: Bench, routes: SoakRoute[]): Promise<SoakResult['brokenRoutes']> {
  const broken: SoakResult['brokenRoutes'] = [];
  const templates = soakTemplates(routes);
  for (const [i, route] of routes.entries()) {
    const first = await bench.load({ origin: bench.nodeRedUrl, templates: [templates[i]], concurrency: 1, count: 1 });
    if (first.statuses[200] !== 1) broken.push({ type: route.type, status: Number(Object.keys(first.statuses)[0] ?? 0), body: first.errors });
  }
  return broken;
}

/** Redeploys `flows` (already deployed) `redeploys` times while 16 clients keep sending requests along `routes`. */
async function soakRun(bench: Bench, flows: FlowNode[], routes: SoakRoute[], redeploys: number, every: number): Promise<SoakRun> {
  const templates = soakTemplates(routes);
  const traffic = () =>
    bench.loadgen.call('run', { origin: bench.nodeRedUrl, templates, concurrency: 16, untilStopped: true, timeoutMs: SOAK_REQUEST_TIMEOUT_MS });
  const stopTraffic = () => bench.loadgen.call('stop', undefined);

  // Warm up: JIT, token, connections and a few redeploys, so the start is the steady state.
  const warmTraffic = traffic();
  for (let i = 0; i < 10; i++) await bench.deploy(flows);
  await sleep(2000);
  await stopTraffic();
  await warmTraffic;
  await sleep(SOAK_SETTLE_MS);
  const start = checkpoint(0, await bench.nodeRed.call('snapshot', undefined));

  const running = traffic();
  const checkpoints: SoakCheckpoint[] = [];
  let deployMs = 0;
  for (let i = 1; i <= redeploys; i++) {
    const began = Date.now();
    await bench.deploy(flows);
    deployMs += Date.now() - began;
    await sleep(SOAK_PAUSE_MS);
    if (i % every === 0) checkpoints.push(checkpoint(i, await bench.nodeRed.call('snapshot', undefined)));
  }
  await stopTraffic();
  const load = await running;
  await sleep(SOAK_SETTLE_MS);
  const end = checkpoint(redeploys, await bench.nodeRed.call('snapshot', undefined));
  const slopeOf = (pick: (c: SoakCheckpoint) => number) => slope(checkpoints.map((c) => ({ x: c.redeploys, y: pick(c) })));
  return {
    meanDeployMs: deployMs / redeploys,
    start,
    end,
    checkpoints,
    heapSlopeKbPerRedeploy: slopeOf((c) => c.heapUsedMb) * 1024,
    socketSlopePerRedeploy: slopeOf((c) => c.sockets),
    socketDescriptorSlopePerRedeploy: slopeOf((c) => c.socketDescriptors ?? 0),
    timerSlopePerRedeploy: slopeOf((c) => c.timers),
    routeSlopePerRedeploy: slopeOf((c) => c.routes),
    traffic: { requests: load.requests + Object.values(load.errors).reduce((a, b) => a + b, 0), statuses: load.statuses, errors: load.errors },
  };
}

/**
 * 6. Full redeploys of a flow with every node of the pack while messages flow through all of them;
 * then the same with core function nodes in their place, to tell Node-RED's share from ours.
 */
export async function redeploySoak(bench: Bench): Promise<SoakResult> {
  const redeploys = bench.quick ? 40 : 200;
  const every = bench.quick ? 5 : 20;
  const topicId = await bench.sandbox.call('addTopic', 'soak');
  const pack = soakFlows(bench.sandboxUrl, bench.available, topicId);
  await bench.deploy(pack.flows);
  const brokenRoutes = await brokenRoutesOf(bench, pack.routes);
  const packRun = await soakRun(bench, pack.flows, pack.routes, redeploys, every);
  const control = soakFlows(bench.sandboxUrl, bench.available, topicId, true);
  await bench.deploy(control.flows);
  const controlRun = await soakRun(bench, control.flows, control.routes, redeploys, every);
  await bench.deploy([]);
  return { redeploys, nodeTypes: pack.routes.map((r) => r.type), pack: packRun, control: controlRun, brokenRoutes };
}
