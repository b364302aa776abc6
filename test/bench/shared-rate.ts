import path from 'node:path';
import { request } from 'undici';
import { RedisServer } from '../support/redis-server';
import { Bench, deployTo, sleep } from './bench';
import { BENCH_ADDRESS, FlowNode, burstFlows, configNode } from './flows';
import { busiestWindow, latencySummary } from './measure';
import type { NodeRedMethods } from './nodered-process';
import { Child } from './rpc';

/**
 * 7. The shared rate limit's precision with two instances: a second embedded Node-RED beside the
 * bench's own, the same flows on both, one real redis-server. Both are given more messages than the
 * limit lets through, so the shared schedule sets the pace, and the sandbox's arrival times are
 * measured against it; then the same without Redis (each instance on its own schedule), for contrast.
 */

export interface SharedRatePhase {
  redis: boolean;
  seconds: number;
  okResponses: number;
  measuredPerMinute: number;
  deviationPercent: number;
  /** The most requests any window held, and what the rate allows in it (+1 for a window starting on a request). */
  busiestSecond: number;
  busiestTenSeconds: number;
  /** How far gaps between consecutive arrivals are from 60/rate s, in ms. */
  gapErrorP50Ms: number;
  gapErrorP99Ms: number;
}

export interface SharedRateResult {
  ratePerMinute: number;
  instances: number;
  shared: SharedRatePhase;
  independent: SharedRatePhase;
}

type NodeRedChild = Child<NodeRedMethods, { url: string; adminUrl: string }>;

const RATE_PER_MINUTE = 600;
const PATH = '/bench/shared-rate';

function sharedRateFlows(sandboxUrl: string, redisUrl: string | undefined): FlowNode[] {
  const config = configNode('shared-cfg', sandboxUrl, { rateLimit: RATE_PER_MINUTE, maxConcurrency: 8, maxQueue: 5000, dailyLimit: 0 });
  config.credentials = { ...(config.credentials as Record<string, string>), redisUrl: redisUrl ?? '' };
  return burstFlows(
    'bench-shared-rate',
    'shared rate limit',
    PATH,
    { id: 'shared-geocode', type: 'svc-geocode', name: '', server: 'shared-cfg' },
    `{ payload: ${JSON.stringify(BENCH_ADDRESS)} + ' ' + i }`,
    [config],
  );
}

async function startBurst(nodeRed: NodeRedChild, count: number): Promise<void> {
  const res = await request(`${nodeRed.info.url}${PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ count }),
  });
  await res.body.text();
  if (res.statusCode !== 200) throw new Error(`starting the burst responded with ${res.statusCode}`);
}

async function phase(bench: Bench, instances: NodeRedChild[], redisUrl: string | undefined, seconds: number): Promise<SharedRatePhase> {
  const flows = sharedRateFlows(bench.sandboxUrl, redisUrl);
  await Promise.all(instances.map((nodeRed) => deployTo(nodeRed, flows)));
  await bench.sandbox.call('trace', ['geocode']);
  try {
    // Each instance alone could send the whole window's worth: only a shared schedule holds the total.
    const perInstance = Math.ceil((RATE_PER_MINUTE * seconds) / 60) + 20;
    await Promise.all(instances.map((nodeRed) => startBurst(nodeRed, perInstance)));
    await sleep(seconds * 1000 + 1000);
    const traced = await bench.sandbox.call('traced', undefined);
    const first = Math.min(...traced.map((t) => t.time));
    const times = traced
      .filter((t) => t.status === 200 && t.time < first + seconds * 1000)
      .map((t) => t.time)
      .sort((a, b) => a - b);
    const measuredPerMinute = (60_000 * (times.length - 1)) / (times[times.length - 1] - times[0]);
    const intervalMs = 60_000 / RATE_PER_MINUTE;
    const gapErrors = times.slice(1).map((time, i) => Math.abs(time - times[i] - intervalMs));
    const gaps = latencySummary(gapErrors);
    return {
      redis: redisUrl !== undefined,
      seconds,
      okResponses: times.length,
      measuredPerMinute,
      deviationPercent: (100 * (measuredPerMinute - RATE_PER_MINUTE)) / RATE_PER_MINUTE,
      busiestSecond: busiestWindow(times, 1000),
      busiestTenSeconds: busiestWindow(times, 10_000),
      gapErrorP50Ms: gaps.p50Ms,
      gapErrorP99Ms: gaps.p99Ms,
    };
  } finally {
    await bench.sandbox.call('trace', []);
    // Ends the messages still waiting before the next phase.
    await Promise.all(instances.map((nodeRed) => deployTo(nodeRed, [])));
  }
}

export async function sharedRate(bench: Bench): Promise<SharedRateResult> {
  if (!RedisServer.available()) throw new Error('redis-server is not installed: apt-get install -y redis-server');
  const redis = await RedisServer.start();
  let second: NodeRedChild | undefined;
  try {
    second = await Child.start<NodeRedMethods, { url: string; adminUrl: string }>('node-red-2', path.join(__dirname, 'nodered-process.js'), {
      execArgv: ['--expose-gc'],
      logFile: bench.logFile('node-red-2'),
    });
    const instances = [bench.nodeRed, second];
    const shared = await phase(bench, instances, redis.url, bench.quick ? 10 : 60);
    const independent = await phase(bench, instances, undefined, 10);
    return { ratePerMinute: RATE_PER_MINUTE, instances: instances.length, shared, independent };
  } finally {
    await second?.stop();
    await redis.remove();
  }
}
