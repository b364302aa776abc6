import path from 'node:path';
import { Bench } from './bench';
import { request } from 'undici';
import {
  BENCH_ADDRESS,
  COUNTING_GEOCODE_PATH,
  GEOCODE_HEADERS,
  GEOCODE_PATH,
  LEAST_NODE_PATH,
  countingGeocodeFlows,
  defaultLimitGeocodeFlow,
  defaultLimitGeocodePath,
  leastNodeFlows,
  sameResponseFloorFlows,
  throughputFlows,
  undiciFloorFlows,
} from './flows';
import type { LoadResult, RequestTemplate } from './loadgen';
import { failures } from './sections';
import type { ProfileSummary } from './profile';

/**
 * Issue 14 part 3: CPU time per message. Ways to a geocode response, measured in the same run,
 * interleaved so that other load on the machine falls on each alike:
 * - floor: `http in` → function → `http response` in Node-RED (no outgoing call);
 * - floor with the response: the same, the function returning the sandbox's geocode response (so the
 *   `http response` writes as much as in the svc-geocode flow);
 * - svc-geocode with the daily limit off: `http in` → svc-geocode (against the sandbox) → `http response`;
 * - svc-geocode with the default config: the same with svc-config's default daily limit, counted in the
 *   user directory's counter file (a config of its own per slice, so that no slice finds the day's limit
 *   used up: a flow past it measures QUOTA_EXCEEDED, and its figures are then marked not valid);
 * - floor with undici: the floor whose function node makes the geocode request itself (undici's pooled
 *   `request`, the body parsed as JSON) and returns its body;
 * - the least node: a node of the bench's own (least-node.ts) that makes the same exchange with undici's
 *   `dispatch()`, parses the JSON and sends it on, with nothing else;
 * - raw undici: a plain Node process (the load generator) straight to the sandbox, whose own CPU
 *   per request is what the outgoing exchange costs a client at the least.
 * CPU time, not wall time, so that the figures depend little on what else the machine runs; each run
 * takes the flows in a rotated order, so that none always runs right after the same one.
 * Then a profile of Node-RED under each flow says where svc-geocode's extra time goes.
 *
 * Issue 31: the least one geocode through Node-RED can cost (the limit) is the floor's Node-RED CPU plus
 * one pooled undici exchange, whose client side is raw undici's CPU per request; each run's svc-geocode
 * figures are divided by that run's limit, and its throughput by that run's floor. The same exchange made
 * inside Node-RED (a function node with a pooled undici request, `floor with undici`) says what the limit
 * costs when Node-RED's own process makes the request; svc-geocode is also divided by that.
 * The least node says what the exchange costs a node with nothing of this pack in it; svc-geocode is
 * divided by it. The daily limit's own cost, a few µs of some 250, is below what those runs resolve: it
 * is measured again in pairs of short slices, one flow right after the other (dailyLimitInPairs), and so
 * is svc-geocode over the least node. The limit's two parts are also measured at svc-geocode's own rate
 * (atItsRate).
 */

export const CPU_FLOWS = [
  'floor',
  'floor with the response',
  'floor with undici',
  'least node',
  'svc-geocode, daily limit off',
  'svc-geocode, default config',
  'raw undici',
] as const;
type CpuFlow = (typeof CPU_FLOWS)[number];

/** svc-geocode over the floor with undici: Node-RED CPU per message, and req/s. */
export interface InProcessFigures {
  cpu: Spread;
  throughput: Spread;
}

/** Median and spread of several runs. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

export interface CpuRow {
  flow: CpuFlow;
  concurrency: number;
  /** Node-RED's CPU per request with a response, µs (not measured for raw undici: Node-RED takes no part). */
  nodeRedMicros?: Spread;
  /** The load generator's CPU per request with a response, µs: the client side of each exchange. */
  clientMicros: Spread;
  requestsPerSecond: Spread;
  /** Responses other than 200 and requests without a response, over all runs: a flow that fails measures nothing. */
  failures: number;
}

export interface CpuResult {
  runs: number;
  rows: CpuRow[];
  /** svc-geocode's Node-RED CPU per message over the floor's (and over the floor with the response's), run by run, at each concurrency. */
  geocodeVsFloor: Array<{ concurrency: number; ratio: Spread; ratioSameResponse: Spread }>;
  /** Issue 31, at each concurrency: svc-geocode's CPU per message over the limit, and its throughput over the floor's, run by run. */
  overLimit: Array<{
    concurrency: number;
    defaultConfig: LimitFigures;
    dailyLimitOff: LimitFigures;
    /** CPU per message with the default config over the same with the daily limit off. */
    dailyLimitCost: Spread;
    /**
     * The limit as Node-RED reaches it: a function node making the same pooled undici request and parsing
     * its JSON, over the limit above (run by run); and svc-geocode over that flow, in CPU and in req/s.
     */
    inProcess: { overLimit: Spread; defaultConfig: InProcessFigures; dailyLimitOff: InProcessFigures };
    /** The least node over the limit (CPU) and over the floor (req/s), run by run: what a node doing nothing but the exchange reaches. */
    leastNode: { cpu: Spread; throughput: Spread };
  }>;
  /** Issue 31's daily limit at concurrency 64, in pairs of slices (see dailyLimitInPairs). */
  dailyLimitInPairs: PairedFigures;
  /** Issue 31's limit with its two parts measured at svc-geocode's own rate (see atItsRate). */
  atItsRate: SameRateFigures;
  /** Self time of Node-RED under each flow at concurrency 64. */
  profiles: Array<{ flow: CpuFlow; file: string; summary: ProfileSummary; requests: number }>;
  loadAverage: { start: number[]; end: number[] };
}

/** Two flows compared in pairs of slices taken one right after the other; each run's slices summed. */
export interface PairedFigures {
  pairs: number;
  sliceMs: number;
  /** svc-geocode counting every message (a daily limit of 10,000,000) over the daily limit off: Node-RED CPU per message, run by run. */
  onOff: Spread;
  /** The daily limit off over itself, measured the same way: what such runs can resolve. */
  itself: Spread;
  /** svc-geocode counting every message over the least node, measured the same way. */
  overLeastNode: Spread;
  /** Responses other than 200 and requests without a response, over all pairs. */
  failures: number;
}

/** svc-geocode against the limit's parts measured at its own rate, run by run (see atItsRate). */
export interface SameRateFigures {
  /** svc-geocode counting every message: Node-RED CPU per message ÷ (the floor's + raw undici's client CPU, both at svc-geocode's rate). */
  overLimitAtItsRate: Spread;
  /** The same ÷ the limit as the interleaved runs take it (both parts at their own top rate), in the same runs. */
  overLimit: Spread;
  /** The floor's Node-RED CPU per message at svc-geocode's rate ÷ at its own top rate. */
  floorAtItsRate: Spread;
  /** Raw undici's client CPU per request at svc-geocode's rate ÷ at its own top rate. */
  rawAtItsRate: Spread;
  /** svc-geocode's rate, req/s. */
  rate: Spread;
  failures: number;
}

export interface LimitFigures {
  /** Node-RED CPU per message ÷ (the floor's Node-RED CPU per message + raw undici's client CPU per request). */
  cpu: Spread;
  /** The same over the floor with the response's CPU + raw undici's: the floor then writes the same response (but parses none). */
  cpuSameResponse: Spread;
  /** Requests a second ÷ the floor's. */
  throughput: Spread;
  /** The flow's failed requests (see CpuRow): with any, its figures measure the failures, not the flow. */
  failures: number;
}

const CONCURRENCIES = [1, 64];

export function spread(runs: number[]): Spread {
  const sorted = [...runs].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  const median = sorted.length % 2 === 1 ? sorted[Math.floor(middle)] : (sorted[middle - 1] + sorted[middle]) / 2;
  return { median, min: sorted[0], max: sorted[sorted.length - 1], runs };
}

const GEOCODE_REQUEST: RequestTemplate = { method: 'POST', path: GEOCODE_PATH, headers: GEOCODE_HEADERS };

/** Where a flow is reached, and with what request. */
export interface Target {
  origin: string;
  template: RequestTemplate;
}

/** The requests of each flow, the default config's at its flow `defaultFlow` (see defaultLimitGeocodeFlow). */
export function templates(bench: Bench, defaultFlow: number): Record<CpuFlow, Target> {
  const body = JSON.stringify({ address: BENCH_ADDRESS });
  return {
    floor: { origin: bench.nodeRedUrl, template: { method: 'POST', path: '/bench/floor', body } },
    'floor with the response': { origin: bench.nodeRedUrl, template: { method: 'POST', path: '/bench/floor-response', body } },
    'floor with undici': { origin: bench.nodeRedUrl, template: { method: 'POST', path: '/bench/floor-undici', body } },
    'least node': { origin: bench.nodeRedUrl, template: { method: 'POST', path: LEAST_NODE_PATH, body } },
    'svc-geocode, daily limit off': { origin: bench.nodeRedUrl, template: { method: 'POST', path: '/bench/geocode', body } },
    'svc-geocode, default config': { origin: bench.nodeRedUrl, template: { method: 'POST', path: defaultLimitGeocodePath(defaultFlow), body } },
    'raw undici': { origin: bench.sandboxUrl, template: GEOCODE_REQUEST },
  };
}

/** svc-geocode counting every message (countingGeocodeFlows): the request of the flow with the daily limit off, at its path. */
export function countingGeocode(dailyLimitOff: Target): Target {
  return { ...dailyLimitOff, template: { ...dailyLimitOff.template, path: COUNTING_GEOCODE_PATH } };
}

/** The sandbox's response to the bench's geocode request. */
async function geocodeResponse(bench: Bench): Promise<unknown> {
  const res = await request(`${bench.sandboxUrl}${GEOCODE_REQUEST.path}`, { method: 'POST', headers: GEOCODE_REQUEST.headers });
  return res.body.json();
}

async function nodeRedCpuMicros(bench: Bench): Promise<number> {
  const { user, system } = await bench.nodeRed.call('cpu', undefined);
  return user + system;
}

/** One slice of load on `target` (counted after `warmupMs`): the load generator's result, and the CPU Node-RED used meanwhile, µs. */
async function measureSlice(
  bench: Bench,
  { origin, template }: Target,
  concurrency: number,
  warmupMs: number,
  durationMs: number,
  ratePerSecond?: number,
): Promise<{ result: LoadResult; nodeRedMicros: number }> {
  const before = await nodeRedCpuMicros(bench);
  const result = await bench.load({ origin, templates: [template], concurrency, warmupMs, durationMs, ratePerSecond });
  return { result, nodeRedMicros: (await nodeRedCpuMicros(bench)) - before };
}

export async function cpuPerMessage(bench: Bench): Promise<CpuResult> {
  const loadStart = bench.loadAverage();
  const runs = bench.quick ? 2 : 5;
  // Issue 31's own figures were runs of 8 s at concurrency 64. On two cores shared with other work, the
  // machine's speed drifts over tens of seconds: a run gives each flow its time in slices of 2 s, taken
  // in turn, so that every flow of a run meets the same drift (runs of 2.5 s, one flow after the other,
  // put the same code at 1.04-1.23 × the limit).
  const slicesFor = (concurrency: number) => (bench.quick || concurrency < 64 ? 1 : 4);
  const sliceMs = (concurrency: number) => (bench.quick ? 1500 : concurrency < 64 ? 2500 : 2000);
  // A profile says where the time goes, in shares: 2.5 s is plenty, and its file stays small.
  const profileMs = bench.quick ? 1500 : 2500;
  // A default-config flow per slice, and one for the profile: at 7,000 req/s, a run's four slices send
  // more than the default limit's 50,000 a day, and a flow past its limit measures QUOTA_EXCEEDED. Each is
  // deployed just before its slice, replacing the one before ("flows": no other flow restarts), so that
  // every measured flow has the same few routes ahead of it in express's list, which a request tries in
  // order. Deployed all at once, the 26 of them stood ahead of the later ones and of the counting flow:
  // express's route matching cost the last of them 1.58 µs a message, and the least node 0.21.
  const fixedFlows = [
    ...throughputFlows(bench.sandboxUrl),
    ...sameResponseFloorFlows(await geocodeResponse(bench)),
    ...undiciFloorFlows(bench.sandboxUrl),
    ...leastNodeFlows(bench.sandboxUrl),
    ...countingGeocodeFlows(bench.sandboxUrl),
  ];
  await bench.deploy(fixedFlows);
  // Each flow responds before anything is measured, to as many requests at once as the most the bench
  // sends, so that it has its connections to the sandbox open. A default-config flow is warmed the same
  // way right after it is deployed, just before its slice.
  const warmCount = Math.max(...CONCURRENCIES);
  const warm = async (flow: string, { origin, template }: Target) => {
    const first = await bench.load({ origin, templates: [template], concurrency: warmCount, count: warmCount });
    if (first.statuses[200] !== warmCount) throw new Error(`${flow}: the first requests got ${JSON.stringify({ ...first.statuses, ...first.errors })}`);
  };
  // Every flow but the default config's is the same in each slice; the parts outside the interleaved runs reach them here.
  // The default config's flows are deployed and warmed by sliceTargets alone, each just before its slice.
  const defaultConfig: CpuFlow = 'svc-geocode, default config';
  const fixedTargets = templates(bench, 0);
  for (const flow of CPU_FLOWS) if (flow !== defaultConfig) await warm(flow, fixedTargets[flow]);
  const sliceTargets = async (defaultFlow: number) => {
    await bench.deploy([...fixedFlows, ...defaultLimitGeocodeFlow(bench.sandboxUrl, defaultFlow)], 'flows');
    const targets = templates(bench, defaultFlow);
    await warm(defaultConfig, targets[defaultConfig]);
    return targets;
  };
  const offTarget = fixedTargets['svc-geocode, daily limit off'];
  const countingTarget = countingGeocode(offTarget);
  await warm('svc-geocode, daily limit counted', countingTarget);
  const rows: CpuRow[] = [];
  const geocodeVsFloor: CpuResult['geocodeVsFloor'] = [];
  const overLimit: CpuResult['overLimit'] = [];
  let nextDefaultFlow = 0;
  for (const concurrency of CONCURRENCIES) {
    const measured = new Map<CpuFlow, { nodeRed: number[]; client: number[]; rate: number[]; failures: number }>(
      CPU_FLOWS.map((f) => [f, { nodeRed: [], client: [], rate: [], failures: 0 }]),
    );
    for (let run = 0; run < runs; run++) {
      const slices = new Map<CpuFlow, { nodeRed: number; client: number; responses: number; requests: number; durationMs: number }>(
        CPU_FLOWS.map((f) => [f, { nodeRed: 0, client: 0, responses: 0, requests: 0, durationMs: 0 }]),
      );
      for (let slice = 0; slice < slicesFor(concurrency); slice++) {
        const targets = await sliceTargets(nextDefaultFlow++);
        // Each run and slice starts one flow later, so that no flow always follows the same one.
        for (const flow of CPU_FLOWS.map((_flow, i) => CPU_FLOWS[(i + run + slice) % CPU_FLOWS.length])) {
          const { result, nodeRedMicros } = await measureSlice(bench, targets[flow], concurrency, 300, sliceMs(concurrency));
          const sum = slices.get(flow);
          const figures = measured.get(flow);
          if (!sum || !figures) continue;
          figures.failures += failures(result);
          sum.nodeRed += nodeRedMicros;
          sum.client += result.clientCpuMicros;
          sum.responses += result.responsesInAll;
          sum.requests += result.requests;
          sum.durationMs += result.durationMs;
        }
      }
      for (const [flow, sum] of slices) {
        const figures = measured.get(flow);
        if (!figures) continue;
        const responses = Math.max(1, sum.responses);
        figures.nodeRed.push(sum.nodeRed / responses);
        figures.client.push(sum.client / responses);
        figures.rate.push((sum.requests * 1000) / Math.max(1, sum.durationMs));
      }
    }
    for (const [flow, figures] of measured) {
      rows.push({
        flow,
        concurrency,
        nodeRedMicros: flow === 'raw undici' ? undefined : spread(figures.nodeRed),
        clientMicros: spread(figures.client),
        requestsPerSecond: spread(figures.rate),
        failures: figures.failures,
      });
    }
    const floor = measured.get('floor')?.nodeRed ?? [];
    const sameResponse = measured.get('floor with the response')?.nodeRed ?? [];
    const geocode = measured.get('svc-geocode, daily limit off')?.nodeRed ?? [];
    geocodeVsFloor.push({
      concurrency,
      ratio: spread(geocode.map((micros, run) => micros / floor[run])),
      ratioSameResponse: spread(geocode.map((micros, run) => micros / sameResponse[run])),
    });
    const figures = (flow: CpuFlow) => measured.get(flow) ?? { nodeRed: [], client: [], rate: [], failures: 0 };
    const floorRate = figures('floor').rate;
    const limits = floor.map((micros, run) => micros + figures('raw undici').client[run]);
    const sameResponseLimits = sameResponse.map((micros, run) => micros + figures('raw undici').client[run]);
    const overTheLimit = (flow: CpuFlow): LimitFigures => ({
      cpu: spread(figures(flow).nodeRed.map((micros, run) => micros / limits[run])),
      cpuSameResponse: spread(figures(flow).nodeRed.map((micros, run) => micros / sameResponseLimits[run])),
      throughput: spread(figures(flow).rate.map((rate, run) => rate / floorRate[run])),
      failures: figures(flow).failures,
    });
    const limitOff = figures('svc-geocode, daily limit off').nodeRed;
    const inProcess = figures('floor with undici');
    const overInProcess = (flow: CpuFlow): InProcessFigures => ({
      cpu: spread(figures(flow).nodeRed.map((micros, run) => micros / inProcess.nodeRed[run])),
      throughput: spread(figures(flow).rate.map((rate, run) => rate / inProcess.rate[run])),
    });
    overLimit.push({
      concurrency,
      defaultConfig: overTheLimit('svc-geocode, default config'),
      dailyLimitOff: overTheLimit('svc-geocode, daily limit off'),
      dailyLimitCost: spread(figures('svc-geocode, default config').nodeRed.map((micros, run) => micros / limitOff[run])),
      inProcess: {
        overLimit: spread(inProcess.nodeRed.map((micros, run) => micros / limits[run])),
        defaultConfig: overInProcess('svc-geocode, default config'),
        dailyLimitOff: overInProcess('svc-geocode, daily limit off'),
      },
      leastNode: {
        cpu: spread(figures('least node').nodeRed.map((micros, run) => micros / limits[run])),
        throughput: spread(figures('least node').rate.map((rate, run) => rate / floorRate[run])),
      },
    });
  }
  const atRate = await atItsRate(bench, runs, countingTarget, fixedTargets);
  const dailyLimitInPairs = await inPairs(bench, runs, countingTarget, offTarget, fixedTargets['least node']);
  const profiles: CpuResult['profiles'] = [];
  const targets = await sliceTargets(nextDefaultFlow);
  // Every flow through Node-RED (raw undici takes no part in it).
  for (const flow of CPU_FLOWS.filter((f) => f !== 'raw undici')) {
    const file = path.join(path.dirname(bench.logFile('x')), `${path.basename(bench.logFile(`profile-${flow}`), '.log')}.cpuprofile`);
    await bench.nodeRed.call('startProfile', undefined);
    const result = await bench.load({ origin: targets[flow].origin, templates: [targets[flow].template], concurrency: 64, durationMs: profileMs });
    const summary = await bench.nodeRed.call('stopProfile', file);
    profiles.push({ flow, file, summary, requests: result.responsesInAll });
  }
  return { runs, rows, geocodeVsFloor, overLimit, dailyLimitInPairs, atItsRate: atRate, profiles, loadAverage: { start: loadStart, end: bench.loadAverage() } };
}

/**
 * The limit adds the floor's CPU per message and raw undici's, each measured at its own top rate, where
 * every wake-up, read and write of a process serves more messages than at svc-geocode's lower rate. Here
 * the two parts are measured at svc-geocode's rate too: per run, svc-geocode (counting every message, as
 * in the pairs) back to back at concurrency 64, the floor and raw undici the same way, then the floor and
 * raw undici started at the rate svc-geocode reached (at most 64 under way). At that rate the floor's
 * Node-RED has idle moments that svc-geocode's has not, so this limit is an upper estimate where the
 * interleaved runs' is a lower one.
 */
async function atItsRate(bench: Bench, runs: number, geocode: Target, targets: Record<CpuFlow, Target>): Promise<SameRateFigures> {
  const sliceMs = bench.quick ? 1000 : 2000;
  let failed = 0;
  const slice = async (target: Target, ratePerSecond?: number) => {
    const { result, nodeRedMicros } = await measureSlice(bench, target, 64, 300, sliceMs, ratePerSecond);
    failed += failures(result);
    const responses = Math.max(1, result.responsesInAll);
    return { nodeRed: nodeRedMicros / responses, client: result.clientCpuMicros / responses, rate: result.requestsPerSecond };
  };
  const figures: Record<Exclude<keyof SameRateFigures, 'failures'>, number[]> = {
    overLimitAtItsRate: [],
    overLimit: [],
    floorAtItsRate: [],
    rawAtItsRate: [],
    rate: [],
  };
  for (let run = 0; run < runs; run++) {
    const svc = await slice(geocode);
    const floor = await slice(targets.floor);
    const raw = await slice(targets['raw undici']);
    const floorAtRate = await slice(targets.floor, svc.rate);
    const rawAtRate = await slice(targets['raw undici'], svc.rate);
    figures.overLimitAtItsRate.push(svc.nodeRed / (floorAtRate.nodeRed + rawAtRate.client));
    figures.overLimit.push(svc.nodeRed / (floor.nodeRed + raw.client));
    figures.floorAtItsRate.push(floorAtRate.nodeRed / floor.nodeRed);
    figures.rawAtItsRate.push(rawAtRate.client / raw.client);
    figures.rate.push(svc.rate);
  }
  return {
    overLimitAtItsRate: spread(figures.overLimitAtItsRate),
    overLimit: spread(figures.overLimit),
    floorAtItsRate: spread(figures.floorAtItsRate),
    rawAtItsRate: spread(figures.rawAtItsRate),
    rate: spread(figures.rate),
    failures: failed,
  };
}

/**
 * The daily limit's cost at concurrency 64, measured where the machine's drift cannot hide it: the
 * flow counting every message and the flow with the limit off in pairs of 1 s slices, the second
 * right after the first (which goes first alternating), each run's slices summed; then the flow with
 * the limit off against itself the same way, which says how small a difference such runs resolve;
 * then the counting flow against the least node, a difference of the same size.
 * Counting is the same work whatever the limit, so the counting flow's limit is one it never reaches.
 */
async function inPairs(bench: Bench, runs: number, counting: Target, off: Target, least: Target): Promise<PairedFigures> {
  const pairs = bench.quick ? 2 : 16;
  const sliceMs = bench.quick ? 500 : 1000;
  let failed = 0;
  const compare = async (first: Target, second: Target): Promise<Spread> => {
    const ratios: number[] = [];
    for (let run = 0; run < runs; run++) {
      const sums = [first, second].map(() => ({ cpu: 0, responses: 0 }));
      for (let pair = 0; pair < pairs; pair++) {
        for (const side of pair % 2 === 0 ? [0, 1] : [1, 0]) {
          const { result, nodeRedMicros } = await measureSlice(bench, side === 0 ? first : second, 64, 200, sliceMs);
          sums[side].cpu += nodeRedMicros;
          sums[side].responses += result.responsesInAll;
          failed += failures(result);
        }
      }
      const [a, b] = sums.map(({ cpu, responses }) => cpu / Math.max(1, responses));
      ratios.push(a / b);
    }
    return spread(ratios);
  };
  const onOff = await compare(counting, off);
  const itself = await compare(off, off);
  const overLeastNode = await compare(counting, least);
  return { pairs, sliceMs, onOff, itself, overLeastNode, failures: failed };
}
