import should from 'should';
import { Sandbox, startSandbox } from '../../sandbox';
import { busiestWindow, promisedBusiest } from '../bench/measure';
import { nowSeconds, signatureHeader } from '../bench/webhook-signing';
import { CONFIG_ID, Cluster, geocodeThrough, postWebhook, prefixed, sharedFlows, showLogsOnFailure } from '../instances/cluster';
import { Collector, reportingFlow, startMessage } from '../support/process-flows';
import type { NodeRedProcess } from '../support/node-red-process';
import { adminClient, deploymentToolsAvailable } from '../support/redis-deployments';
import { waitUntil } from '../support/wait';

/**
 * What the Sentinel and Cluster suites share: one flow with every kind of shared state on one
 * svc-config (geocodes through `POST /geocode` under a shared rate and daily count, isoline jobs
 * through `POST /start`, a bulk run through `POST /start-bulk`, a webhook on `POST /hook`), steady
 * geocode traffic into both instances, and the checks of what must hold through a failover.
 */

export const RATE_PER_MINUTE = 600;
export const JOBS_KEY = `svc-location:{jobs:${CONFIG_ID}}`;
export const SECRET = 'webhook-secret';
const ISOLINE = { type: 'svc-isoline', pollIntervalSec: 0.2, maxWait: 120 };
const ISOLINE_SUMMARY = '(m) => ({ polygons: m.geojson ? m.geojson.features.length : 0 })';
const BULK = { type: 'svc-bulk-geocode', batchSize: 10, parallel: 2, pollIntervalSec: 0.2, maxWait: 120 };
const BULK_SUMMARY = '(m) => ({ rows: (m.payload || []).length, located: (m.payload || []).filter((r) => r.location).length })';
const ISOLINE_REQUEST = { async: true, origins: [{ lat: 52.52, lon: 13.405 }], range: { type: 'time', value: 600 } };

/** The sandbox platform, the collector of job results and webhook messages, and two Node-RED instances running the fleet's flows. */
export interface Fleet {
  sandbox: Sandbox;
  collector: Collector;
  cluster: Cluster;
}

/** Fails the suite, saying what to install, unless redis-server, redis-sentinel and redis-cli are all there. */
export function requireDeploymentTools(): void {
  if (!deploymentToolsAvailable())
    throw new Error('redis-server, redis-sentinel and redis-cli are not all installed: apt-get install -y redis-server redis-sentinel (.ci/run does it)');
}

/**
 * The hooks of a fleet suite, registered where it is called: before, the sandbox, the collector and two Node-RED instances
 * deployed with the fleet's flows on the Redis at `redisUrl()` start; after, what
 * started stops, the instances first (mocha runs it when the start failed too); a failed test shows each instance's last log lines. Gives the running fleet.
 */
export function useFleet(redisUrl: () => string): () => Fleet {
  let fleet: Partial<Fleet> = {};
  const stop = async () => {
    await fleet.cluster?.stop();
    await fleet.collector?.close();
    await fleet.sandbox?.close();
  };
  before(async function () {
    const sandbox = await startSandbox({ jobPolls: 10 });
    const collector = new Collector();
    fleet = { sandbox, collector };
    await collector.start();
    fleet.cluster = await Cluster.start(2);
    await fleet.cluster.deploy(fleetFlows(sandbox, collector.url, redisUrl(), 1_000_000));
  });
  showLogsOnFailure(() => fleet.cluster, 40);
  after(stop);
  return () => {
    const { sandbox, collector, cluster } = fleet;
    if (!sandbox || !collector || !cluster) throw new Error('the fleet has not started');
    return { sandbox, collector, cluster };
  };
}

/** A geocode through each instance (each must succeed), then the collector's reports and the sandbox's log start empty. */
export async function warmUp({ sandbox, collector, cluster }: Fleet, address: string): Promise<void> {
  for (const instance of cluster.instances) should((await geocodeThrough(instance, address)).status).equal(200);
  collector.reports.splice(0);
  sandbox.log.splice(0);
}

/**
 * `disturb` (a failover, slot migrations) while steady geocode traffic flows into both instances (3 messages a second
 * each) and jobs run, `settleMs` after the traffic starts and before it stops; a webhook delivery accepted by the first
 * instance just before it is posted to the second just after. Checks that every job and the webhook were delivered
 * once and that every message got one 200 response from one platform request; gives what `disturb` resolved with and
 * every response.
 */
export async function underTraffic<T>(
  { sandbox, collector, cluster }: Fleet,
  settleMs: number,
  disturb: () => Promise<T>,
): Promise<{ disturbed: T; responses: Sent[] }> {
  const [a, b] = cluster.instances;
  const tags = await startJobs(sandbox, [a, b]);
  const traffic = steadyTraffic(cluster, 3);
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  // Accepted by one instance just before the disturbance: the other refuses it as a replay after it.
  const reading = `before ${Date.now()}`;
  const body = JSON.stringify({ reading });
  const signature = signatureHeader(nowSeconds(), SECRET, body);
  should(await postWebhook(a, body, signature)).equal(200);
  const disturbed = await disturb();
  // Acknowledged as a duplicate (200), not delivered again.
  should(await postWebhook(b, body, signature)).equal(200);
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  traffic.stop();
  const responses = await traffic.done;
  await expectJobsDeliveredOnce(sandbox, collector, tags);
  should(webhookMessages(collector, reading)).equal(1);
  // Every message: one response, none failed.
  should(responses.filter((response) => response.status !== 200)).eql([]);
  should(sandbox.requests('geocode')).have.length(responses.length);
  return { disturbed, responses };
}

/** Checks that the Redis server on `port` holds no job any more. */
export async function expectNoJobsLeft(port: number): Promise<void> {
  const client = adminClient(port);
  try {
    should(await client.hlen(JOBS_KEY)).equal(0);
  } finally {
    client.disconnect();
  }
}

export function fleetFlows(sandbox: Sandbox, collectorUrl: string, redisUrl: string, dailyLimit: number): Array<Record<string, unknown>> {
  const jobs = reportingFlow(sandbox, collectorUrl, ISOLINE, ISOLINE_SUMMARY, { redisUrl }).map((node) =>
    node.id === CONFIG_ID ? { ...node, rateLimit: RATE_PER_MINUTE, dailyLimit, maxRetries: 0, timeout: 10_000 } : node,
  );
  const bulk = reportingFlow(sandbox, collectorUrl, BULK, BULK_SUMMARY, { redisUrl })
    .filter((node) => node.type !== 'tab' && node.id !== CONFIG_ID)
    .map((node) => prefixed(node, 'bulk-'));
  // The geocode flow's ids prefixed (its Catch node would meet the job flow's), its paths kept.
  const geocode = sharedFlows({ sandboxUrl: sandbox.url, redisUrl, webhookSecret: SECRET })
    .filter((node) => node.type !== 'tab' && node.id !== CONFIG_ID)
    .map((node): Record<string, unknown> => ({ ...prefixed(node, 'geo-'), url: node.url, y: 500 }));
  // Each message of the webhook reaches the collector too, so that a replay delivered twice is seen.
  const webhook = {
    id: 'hook-report',
    type: 'function',
    z: 'tab',
    x: 600,
    y: 600,
    func: "msg.payload = { tag: 'webhook', reading: msg.payload.reading };\nmsg.headers = { 'content-type': 'application/json' };\ndelete msg.req;\ndelete msg.res;\nreturn msg;",
    outputs: 1,
    wires: [['post']],
  };
  return [...jobs, ...bulk, ...geocode.map((node) => (node.id === 'geo-hook' ? { ...node, wires: [['hook-report']] } : node)), webhook];
}

/** The webhook messages that carried `reading`, as the collector got them. */
export function webhookMessages(collector: Collector, reading: string): number {
  return collector.reports.filter((report) => report.tag === 'webhook' && report.reading === reading).length;
}

/** Starts two isoline jobs on each instance and a bulk run of two jobs on the first; resolves once every one is accepted and polled. */
export async function startJobs(sandbox: Sandbox, instances: NodeRedProcess[]): Promise<string[]> {
  const [a, b] = instances;
  const tags = ['iso-a1', 'iso-a2', 'iso-b1', 'iso-b2'];
  await Promise.all(tags.map((tag) => startMessage(tag.startsWith('iso-a') ? a : b, tag, ISOLINE_REQUEST)));
  const started = await fetch(`${a.url}start-bulk`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tag: 'bulk', payload: Array.from({ length: 20 }, (_v, i) => `${i + 1} Fleet Street, Sandbox City`) }),
  });
  if (started.status !== 202) throw new Error(`POST /start-bulk responded with ${started.status}`);
  const accepted = (endpoint: string, status: number) => sandbox.requests(endpoint).filter((r) => r.status === status).length;
  await waitUntil(
    () => accepted('isoline', 200) === 4 && accepted('bulk-upload', 201) === 2 && accepted('isoline-job', 200) >= 4 && accepted('bulk-status', 200) >= 2,
    'every job accepted and polled',
    30_000,
  );
  return [...tags, 'bulk'];
}

/** Checks that every job delivered its result once, without error, and none was created twice. */
export async function expectJobsDeliveredOnce(sandbox: Sandbox, collector: Collector, tags: string[]): Promise<void> {
  const jobReports = () => collector.reports.filter((report) => report.tag !== 'webhook');
  await waitUntil(() => jobReports().length >= tags.length, `${tags.length} job reports`, 90_000);
  // A second delivery of any job would come within this.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const reports = jobReports();
  for (const report of reports) should(report.error).be.undefined();
  should(reports.map((report) => report.tag).sort()).eql([...tags].sort());
  for (const report of reports.filter((r) => r.tag !== 'bulk')) should(report.polygons).equal(1);
  should(reports.find((report) => report.tag === 'bulk')).have.properties({ rows: 20, located: 20 });
  should(sandbox.requests('bulk-upload')).have.length(2);
  should(sandbox.requests('isoline')).have.length(4);
}

export interface Sent {
  status: number;
  code: unknown;
  sentAt: number;
}

/** Open-loop geocode traffic, `perSecond` messages a second into each instance, until `stop` is called; `done` resolves with every response. */
export function steadyTraffic(cluster: Cluster, perSecond: number): { stop: () => void; done: Promise<Sent[]> } {
  const sent: Array<Promise<Sent>> = [];
  let sending = true;
  const loops = cluster.instances.map(async (instance, i) => {
    for (let n = 0; sending && n < 10_000; n++) {
      const sentAt = Date.now();
      sent.push(geocodeThrough(instance, `${n} Fleet ${i} Avenue`).then((response) => ({ status: response.status, code: response.body.code, sentAt })));
      await new Promise((resolve) => setTimeout(resolve, 1000 / perSecond));
    }
  });
  return {
    stop: () => {
      sending = false;
    },
    done: Promise.all(loops).then(() => Promise.all(sent)),
  };
}

/**
 * The shared rate held: at most what the limiter promises in any 2 s window that does not meet the
 * switch (`from`..`to`), and at most that per instance (the outage allowance) in the windows that do.
 */
export function expectRateWithinBounds(arrivals: number[], instances: number, switchWindow?: { from: number; to: number }, stampErrorMs = 250): string {
  const windowMs = 2000;
  const promised = promisedBusiest(RATE_PER_MINUTE, windowMs, stampErrorMs);
  const outside = switchWindow ? arrivals.filter((t) => t < switchWindow.from - windowMs || t > switchWindow.to + windowMs) : arrivals;
  const busiestOutside = busiestWindow(outside, windowMs);
  const busiest = busiestWindow(arrivals, windowMs);
  should(busiestOutside).be.belowOrEqual(promised);
  should(busiest).be.belowOrEqual(switchWindow ? instances * promised : promised);
  if (!switchWindow) return `busiest 2 s: ${busiest} (allowed ${promised})`;
  return `busiest 2 s: ${busiest} (allowed ${instances * promised}), away from the switch ${busiestOutside} (allowed ${promised})`;
}

/** What each instance has logged of the shared state so far: outages (one warning each), recoveries and refused operations. */
export function notices(instances: NodeRedProcess[]): Array<{ warnings: number; recoveries: number; refusals: number }> {
  const lines = (instance: NodeRedProcess, pattern: RegExp) => instance.log.filter((line) => pattern.test(line)).length;
  return instances.map((instance) => ({
    warnings: lines(instance, /shared state unavailable \(Redis/),
    recoveries: lines(instance, /shared state available again/),
    refusals: lines(instance, /refused an operation/),
  }));
}

/** The editor's Test connection for a dialog with only a Redis URL (no platform secret): the response's line and its shared-state check. */
export async function testSharedState(
  instance: NodeRedProcess,
  redisUrl: string,
): Promise<{ message: string; ok: boolean; shared: Record<string, unknown> | undefined }> {
  const response = await fetch(`${instance.url}svc-config/test`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'not-deployed', baseUrl: 'http://127.0.0.1:9', authUrl: 'http://127.0.0.1:9', credentials: { redisUrl } }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await response.json()) as { message: string; ok: boolean; checks: Array<Record<string, unknown>> };
  return { message: body.message, ok: body.ok, shared: body.checks.find((check) => check.credential === 'shared') };
}
