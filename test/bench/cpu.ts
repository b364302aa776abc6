import path from 'node:path';
import { SANDBOX_DEFAULTS } from '../sandbox';
import { Bench } from './bench';
import { request } from 'undici';
import { BENCH_ADDRESS, sameResponseFloorFlows, throughputFlows } from './flows';
import type { RequestTemplate } from './loadgen';
import { failures } from './sections';
import type { ProfileSummary } from './profile';

/**
 * Issue 14 part 3: CPU time per message. Ways to a geocode response, measured in the same run,
 * interleaved so that other load on the machine falls on each alike:
 * - floor: `http in` → function → `http response` in Node-RED (no outgoing call);
 * - floor with the response: the same, the function returning the sandbox's geocode response (so the
 *   `http response` writes as much as in the svc-geocode flow);
 * - svc-geocode: `http in` → svc-geocode (against the sandbox) → `http response`;
 * - raw undici: a plain Node process (the load generator) straight to the sandbox, whose own CPU
 *   per request is what the outgoing exchange costs a client at the least.
 * CPU time, not wall time, so that the figures depend little on what else the machine runs.
 * Then a profile of Node-RED under each flow says where svc-geocode's extra time goes.
 */

export const CPU_FLOWS = ['floor', 'floor with the response', 'svc-geocode', 'raw undici'] as const;
type CpuFlow = (typeof CPU_FLOWS)[number];

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
  /** Self time of Node-RED under each flow at concurrency 64. */
  profiles: Array<{ flow: CpuFlow; file: string; summary: ProfileSummary; requests: number }>;
  loadAverage: { start: number[]; end: number[] };
}

const CONCURRENCIES = [1, 64];

export function spread(runs: number[]): Spread {
  const sorted = [...runs].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  const median = sorted.length % 2 === 1 ? sorted[Math.floor(middle)] : (sorted[middle - 1] + sorted[middle]) / 2;
  return { median, min: sorted[0], max: sorted[sorted.length - 1], runs };
}

const GEOCODE_REQUEST: RequestTemplate = {
  method: 'POST',
  path: `/v1/geocode?address=${encodeURIComponent(BENCH_ADDRESS)}`,
  headers: { accept: 'application/json', 'x-svc-project-id': SANDBOX_DEFAULTS.projectId, 'x-svc-api-key': SANDBOX_DEFAULTS.apiKey },
};

function templates(bench: Bench): Record<CpuFlow, { origin: string; template: RequestTemplate }> {
  const body = JSON.stringify({ address: BENCH_ADDRESS });
  return {
    floor: { origin: bench.nodeRedUrl, template: { method: 'POST', path: '/bench/floor', body } },
    'floor with the response': { origin: bench.nodeRedUrl, template: { method: 'POST', path: '/bench/floor-response', body } },
    'svc-geocode': { origin: bench.nodeRedUrl, template: { method: 'POST', path: '/bench/geocode', body } },
    'raw undici': { origin: bench.sandboxUrl, template: GEOCODE_REQUEST },
  };
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

export async function cpuPerMessage(bench: Bench): Promise<CpuResult> {
  const loadStart = bench.loadAverage();
  await bench.deploy([...throughputFlows(bench.sandboxUrl), ...sameResponseFloorFlows(await geocodeResponse(bench))]);
  const targets = templates(bench);
  const runs = bench.quick ? 2 : 5;
  const durationMs = bench.quick ? 1500 : 2500;
  for (const flow of CPU_FLOWS) {
    const first = await bench.load({ ...targets[flow], templates: [targets[flow].template], concurrency: 1, count: 1 });
    if (first.statuses[200] !== 1) throw new Error(`${flow}: the first request got ${JSON.stringify({ ...first.statuses, ...first.errors })}`);
  }
  const rows: CpuRow[] = [];
  const geocodeVsFloor: CpuResult['geocodeVsFloor'] = [];
  for (const concurrency of CONCURRENCIES) {
    const measured = new Map<CpuFlow, { nodeRed: number[]; client: number[]; rate: number[]; failures: number }>(
      CPU_FLOWS.map((f) => [f, { nodeRed: [], client: [], rate: [], failures: 0 }]),
    );
    for (let run = 0; run < runs; run++) {
      for (const flow of CPU_FLOWS) {
        const before = await nodeRedCpuMicros(bench);
        const result = await bench.load({ origin: targets[flow].origin, templates: [targets[flow].template], concurrency, warmupMs: 300, durationMs });
        const after = await nodeRedCpuMicros(bench);
        const responses = Math.max(1, result.responsesInAll);
        const figures = measured.get(flow);
        if (!figures) continue;
        figures.failures += failures(result);
        figures.nodeRed.push((after - before) / responses);
        figures.client.push(result.clientCpuMicros / responses);
        figures.rate.push(result.requestsPerSecond);
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
    const geocode = measured.get('svc-geocode')?.nodeRed ?? [];
    geocodeVsFloor.push({
      concurrency,
      ratio: spread(geocode.map((micros, run) => micros / floor[run])),
      ratioSameResponse: spread(geocode.map((micros, run) => micros / sameResponse[run])),
    });
  }
  const profiles: CpuResult['profiles'] = [];
  for (const flow of ['floor', 'floor with the response', 'svc-geocode'] as const) {
    const file = path.join(path.dirname(bench.logFile('x')), `${path.basename(bench.logFile(`profile-${flow}`), '.log')}.cpuprofile`);
    await bench.nodeRed.call('startProfile', undefined);
    const result = await bench.load({ origin: targets[flow].origin, templates: [targets[flow].template], concurrency: 64, durationMs });
    const summary = await bench.nodeRed.call('stopProfile', file);
    profiles.push({ flow, file, summary, requests: result.responsesInAll });
  }
  return { runs, rows, geocodeVsFloor, profiles, loadAverage: { start: loadStart, end: bench.loadAverage() } };
}
