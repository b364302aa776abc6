import { Bench, sleep } from './bench';
import { BENCH_ADDRESS, FlowNode, burstFlows, configNode } from './flows';

/**
 * Issue 28 point 1 (BENCH_ONLY=families): a flow publishing 600 positions a minute beside a geocoding
 * flow at 80 a minute, both on one config node with a rate per endpoint family (the geocode rate 80,
 * the topics rate 600) and more messages than either rate lets through, against a sandbox that
 * responds with 429 beyond 80 geocodes in any minute. Each family must keep its own rate: publishes
 * never wait on the geocode rate.
 */

const GEOCODE_RATE = 80;
const PUBLISH_RATE = 600;

export interface FamilyFigures {
  ratePerMinute: number;
  /** Requests the platform responded to with 200 within the window. */
  okResponses: number;
  tooManyRequests: number;
  /** From the first to the last request with a 200 response in the window. */
  measuredPerMinute: number;
  deviationPercent: number;
}

export interface FamilyRatesResult {
  windowMinutes: number;
  geocode: FamilyFigures;
  publish: FamilyFigures;
}

function familyFlows(sandboxUrl: string, topicId: number): FlowNode[] {
  const config = configNode('fam-cfg', sandboxUrl, {
    version: 2,
    rateScope: 'family',
    rateLimit: GEOCODE_RATE,
    rateTopics: PUBLISH_RATE,
    maxConcurrency: 8,
    maxQueue: 5000,
  });
  return [
    ...burstFlows(
      'bench-fam-geocode',
      'family rates: geocode',
      '/bench/families/geocode',
      { id: 'fam-geocode', type: 'svc-geocode', name: '', server: 'fam-cfg' },
      `{ payload: ${JSON.stringify(BENCH_ADDRESS)}, burst: i }`,
      [config],
    ),
    ...burstFlows(
      'bench-fam-publish',
      'family rates: publish',
      '/bench/families/publish',
      { id: 'fam-publish', type: 'svc-topic-publish', name: '', server: 'fam-cfg' },
      `{ topicId: ${topicId}, locationId: 'cell-' + (i % 10), payload: { vehicle: i % 10, n: i } }`,
      [],
    ),
  ];
}

function figures(times: number[], tooManyRequests: number, ratePerMinute: number): FamilyFigures {
  const measuredPerMinute = times.length < 2 ? 0 : (60_000 * (times.length - 1)) / (Math.max(...times) - Math.min(...times));
  return {
    ratePerMinute,
    okResponses: times.length,
    tooManyRequests,
    measuredPerMinute,
    deviationPercent: (100 * (measuredPerMinute - ratePerMinute)) / ratePerMinute,
  };
}

export async function familyRates(bench: Bench): Promise<FamilyRatesResult> {
  const windowMinutes = bench.quick ? 0.5 : 2;
  const topicId = await bench.sandbox.call('addTopic', 'positions');
  await bench.sandbox.call('clearFaults', undefined);
  await bench.sandbox.call('setFault', { endpoint: 'geocode', fault: { rateLimitPerMinute: GEOCODE_RATE } });
  await bench.deploy(familyFlows(bench.sandboxUrl, topicId));
  await bench.sandbox.call('trace', ['geocode', 'topic-publish']);
  try {
    // More messages than each window lets through, so the rates, not the supply, set the pace.
    await Promise.all([
      bench.call('POST', '/bench/families/geocode', { count: Math.ceil(GEOCODE_RATE * windowMinutes) + 40 }),
      bench.call('POST', '/bench/families/publish', { count: Math.ceil(PUBLISH_RATE * windowMinutes) + 100 }),
    ]);
    await sleep(windowMinutes * 60_000 + 2000);
    const traced = await bench.sandbox.call('traced', undefined);
    const first = Math.min(...traced.map((t) => t.time));
    const inWindow = traced.filter((t) => t.time < first + windowMinutes * 60_000);
    const of = (endpoint: string) => inWindow.filter((t) => t.endpoint === endpoint);
    const okTimes = (endpoint: string) =>
      of(endpoint)
        .filter((t) => t.status === 200)
        .map((t) => t.time);
    const tooMany = (endpoint: string) => of(endpoint).filter((t) => t.status === 429).length;
    return {
      windowMinutes,
      geocode: figures(okTimes('geocode'), tooMany('geocode'), GEOCODE_RATE),
      publish: figures(okTimes('topic-publish'), tooMany('topic-publish'), PUBLISH_RATE),
    };
  } finally {
    await bench.sandbox.call('trace', []);
    await bench.sandbox.call('clearFaults', undefined);
    // Ends the waiting messages before the next measurement.
    await bench.deploy([]);
  }
}
