import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { Bench } from './bench';
import type { LoadgenMethods } from './loadgen';
import { formatNumber, markdownTable, promisedBusiest } from './measure';
import type { NodeRedMethods } from './nodered-process';
import { Child } from './rpc';
import type { SandboxMethods } from './sandbox-process';
import {
  BulkResult,
  RateLimitResult,
  SoakResult,
  SoakRun,
  ThroughputResult,
  TokenStormVariant,
  WebhookResult,
  bulk,
  rateLimit,
  redeploySoak,
  throughput,
  tokenStorm,
  webhooks,
} from './sections';
import { NODE_RED_DIR, REPO_ROOT, packageVersion } from '../support/paths';
import { SharedRatePhase, SharedRateResult, sharedRate } from './shared-rate';
import { BulkStreamResult, bulkStream } from './bulk-stream';
import { CpuResult, Spread, cpuPerMessage } from './cpu';
import { FamilyFigures, FamilyRatesResult, familyRates } from './families';
import { INSTRUCTION_PARTS, InstructionsResult, instructionsPerMessage } from './instructions';

/**
 * `npm run bench`: the measurements of issue 7 in one run, on loopback. Node-RED, the sandbox and
 * the load generator run in three processes. Prints a markdown report and writes the figures to
 * test/bench/results/bench-<time>.json.
 *
 * BENCH_QUICK=1 shortens every measurement (for trying it out; not the issue's figures).
 * BENCH_WEBHOOK_FILL_SECONDS=<s> fills svc-webhook-in's replay record for that long before its measurement (sections.ts).
 * BENCH_ONLY=throughput,cpu,instructions,storm,bulk,bulk-file,webhooks,rate,families,shared,soak runs only those.
 * BENCH_NODE_FLAGS="--max-old-space-size=256" adds Node flags to Node-RED's process (that one is what
 * Node-RED's Raspberry Pi start script, node-red-pi, passes on small hosts).
 */

const RESULTS_DIR = path.join(REPO_ROOT, 'test', 'bench', 'results');
/** The whole run takes about 25 minutes (the CPU per message, its instruction counts and the 1M-address file run included); past this something is stuck. */
const WATCHDOG_MS = 35 * 60_000;

interface Report {
  startedAt: string;
  finishedAt?: string;
  quick: boolean;
  machine: { cpus: number; cpuModel?: string; memoryGb: number; platform: string; node: string; nodeRed: string; undici: string; nodeTypes?: string[] };
  /** Node flags given to Node-RED's process beside --expose-gc. */
  nodeRedFlags: string[];
  /** Load averages (1, 5, 15 min) as each measurement began: other work on the machine skews figures. */
  loadAverage: Record<string, number[]>;
  throughput?: ThroughputResult;
  cpu?: CpuResult;
  instructions?: InstructionsResult;
  tokenStorm?: TokenStormVariant[];
  bulk?: BulkResult;
  bulkStream?: BulkStreamResult;
  webhooks?: WebhookResult | { skipped: string };
  rateLimit?: RateLimitResult;
  familyRates?: FamilyRatesResult;
  sharedRate?: SharedRateResult;
  soak?: SoakResult;
  failures: Record<string, string>;
}

type Section = {
  key: keyof Omit<Report, 'startedAt' | 'finishedAt' | 'quick' | 'machine' | 'loadAverage' | 'failures'>;
  name: string;
  run: (bench: Bench) => Promise<unknown>;
};

const SECTIONS: Section[] = [
  { key: 'throughput', name: 'throughput', run: throughput },
  { key: 'cpu', name: 'cpu', run: cpuPerMessage },
  { key: 'instructions', name: 'instructions', run: instructionsPerMessage },
  { key: 'tokenStorm', name: 'storm', run: tokenStorm },
  { key: 'bulk', name: 'bulk', run: bulk },
  { key: 'bulkStream', name: 'bulk-file', run: bulkStream },
  {
    key: 'webhooks',
    name: 'webhooks',
    run: (bench) => (bench.available.has('svc-webhook-in') ? webhooks(bench) : Promise.resolve({ skipped: 'svc-webhook-in is not installed' })),
  },
  { key: 'rateLimit', name: 'rate', run: rateLimit },
  { key: 'familyRates', name: 'families', run: familyRates },
  { key: 'sharedRate', name: 'shared', run: sharedRate },
  { key: 'soak', name: 'soak', run: redeploySoak },
];

/** The version of `module` as this repository resolves it. */
function version(module: string): string {
  return packageVersion(path.dirname(require.resolve(`${module}/package.json`, { paths: [REPO_ROOT] })));
}

/** Node types Node-RED has loaded, from the admin API (teammates' nodes may not be there yet). */
async function loadedTypes(adminUrl: string): Promise<Set<string>> {
  const res = await request(`${adminUrl}/nodes`, { headers: { accept: 'application/json' } });
  const sets = (await res.body.json()) as Array<{ types: string[]; enabled: boolean; err?: string }>;
  return new Set(sets.filter((set) => set.enabled && !set.err).flatMap((set) => set.types));
}

async function main(): Promise<void> {
  const quick = process.env.BENCH_QUICK === '1';
  const only = (process.env.BENCH_ONLY ?? '').split(',').filter(Boolean);
  const nodeRedFlags = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const logFile = (name: string) => path.join(RESULTS_DIR, `${stamp}-${name}.log`);
  const report: Report = {
    startedAt: new Date().toISOString(),
    quick,
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      memoryGb: Math.round(os.totalmem() / 1024 ** 3),
      platform: `${os.platform()} ${os.release()}`,
      node: process.version,
      nodeRed: packageVersion(NODE_RED_DIR),
      undici: version('undici'),
    },
    nodeRedFlags,
    loadAverage: {},
    failures: {},
  };

  const sandbox = await Child.start<SandboxMethods, { url: string }>('sandbox', path.join(__dirname, 'sandbox-process.js'), { logFile: logFile('sandbox') });
  const nodeRed = await Child.start<NodeRedMethods, { url: string; adminUrl: string }>('node-red', path.join(__dirname, 'nodered-process.js'), {
    execArgv: ['--expose-gc', ...nodeRedFlags],
    logFile: logFile('node-red'),
  });
  const loadgen = await Child.start<LoadgenMethods>('loadgen', path.join(__dirname, 'loadgen.js'), { logFile: logFile('loadgen') });
  const stopChildren = () => Promise.all([loadgen.stop(), nodeRed.stop(), sandbox.stop()]);
  // A stuck measurement must not hold a CI machine: report what there is and stop.
  const watchdog = setTimeout(() => {
    report.failures.watchdog = `the benchmark did not finish within ${WATCHDOG_MS / 60_000} minutes`;
    const finish = () => {
      writeReport(report, stamp);
      process.exit(1);
    };
    stopChildren().then(finish, (err: unknown) => {
      console.error(err);
      finish();
    });
  }, WATCHDOG_MS);
  try {
    const available = await loadedTypes(nodeRed.info.adminUrl);
    const bench = new Bench(sandbox, nodeRed, loadgen, available, quick, logFile);
    report.machine.nodeTypes = [...available].filter((type) => type.startsWith('svc-')).sort();
    for (const section of SECTIONS) {
      if (only.length > 0 && !only.includes(section.name)) continue;
      report.loadAverage[section.name] = bench.loadAverage();
      process.stderr.write(`[bench] ${section.name} (load average ${report.loadAverage[section.name].join(' ')}) ...\n`);
      try {
        (report as unknown as Record<string, unknown>)[section.key] = await section.run(bench);
      } catch (err) {
        report.failures[section.name] = err instanceof Error ? (err.stack ?? err.message) : String(err);
        process.stderr.write(`[bench] ${section.name} failed: ${report.failures[section.name]}\n`);
        await bench.deploy([]).catch(() => undefined);
      }
    }
    report.loadAverage.end = bench.loadAverage();
  } finally {
    clearTimeout(watchdog);
    await stopChildren();
  }
  writeReport(report, stamp);
  if (Object.keys(report.failures).length > 0) process.exitCode = 1;
}

/** Writes the JSON figures and prints the markdown report. */
function writeReport(report: Report, stamp: string): void {
  report.finishedAt = new Date().toISOString();
  const jsonFile = path.join(RESULTS_DIR, `bench-${stamp}.json`);
  fs.writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${markdown(report)}\n\nFigures: ${path.relative(process.cwd(), jsonFile)}\n`);
}

const n0 = (value: number) => formatNumber(value, 0);
const n1 = (value: number) => formatNumber(value, 1);
const n2 = (value: number) => formatNumber(value, 2);
const yesNo = (met: boolean, miss = '') => (met ? 'yes' : `**no**${miss ? ` (${miss})` : ''}`);
/** Whether a flow's figure meets its target; neither when the flow had failures, since the figure then measures them. */
const verdict = (met: boolean, failures: number) => (failures > 0 ? `**not valid** (${n0(failures)} requests failed)` : yesNo(met));

/** `median (min–max)`. */
function range(figure: Spread, format: (value: number) => string): string {
  return `${format(figure.median)} (${format(figure.min)}–${format(figure.max)})`;
}

/** Issue 14 part 3: the CPU table and the profiles' shares. */
function cpuMarkdown(cpu: CpuResult): string[] {
  const out = [
    `### CPU per message (${cpu.runs} runs, median (min–max); load average ${cpu.loadAverage.start.join('/')} → ${cpu.loadAverage.end.join('/')})`,
    '',
    markdownTable(
      ['flow', 'concurrency', 'Node-RED CPU µs/message', 'client CPU µs/request', 'req/s', 'failed'],
      cpu.rows.map((r) => [
        r.flow,
        r.concurrency,
        r.nodeRedMicros ? range(r.nodeRedMicros, n0) : '–',
        range(r.clientMicros, n0),
        range(r.requestsPerSecond, n0),
        r.failures,
      ]),
    ),
  ];
  for (const profile of cpu.profiles) {
    out.push(
      '',
      `Profile of Node-RED, ${profile.flow} at concurrency 64 (${n0(profile.requests)} messages; the profiler slows the process, so shares, not times): ${path.basename(profile.file)}`,
      '',
      markdownTable(
        ['self time in', '%'],
        profile.summary.byPart.map((p) => [p.name, n1(p.percent)]),
      ),
      '',
      markdownTable(
        ['function (top self time)', '%'],
        profile.summary.topFunctions.map((f) => [f.name, n1(f.percent)]),
      ),
    );
  }
  return out;
}

/** Issue 31 counted: instructions per message under callgrind, and where they run. */
function instructionsMarkdown(counted: InstructionsResult): string[] {
  const { ratios } = counted;
  return [
    `### Instructions per message (callgrind; ${counted.windows} windows of ${n0(counted.messagesPerWindow)} messages a flow, concurrency 64; per message: median (min–max), the old generation's GC and the JIT compilers left out)`,
    '',
    markdownTable(
      ['flow', 'per message', ...INSTRUCTION_PARTS, 'failed'],
      counted.rows.map((row) => [row.flow, range(row.perMessage, n0), ...INSTRUCTION_PARTS.map((part) => n0(row.parts[part])), row.failures]),
    ),
    '',
    `svc-geocode counting ÷ the least node ${formatNumber(ratios.countingOverLeastNode, 3)}; ÷ the limit (the floor's + raw undici's) ${formatNumber(ratios.countingOverLimit, 3)}, with the daily limit off ${formatNumber(ratios.dailyLimitOffOverLimit, 3)}; the least node ÷ the limit ${formatNumber(ratios.leastNodeOverLimit, 3)}; daily limit on ÷ off ${formatNumber(ratios.dailyLimitOnOverOff, 3)}.`,
  ];
}

/** The report as markdown: the machine, the throughput table, then every target with its result. */
function markdown(report: Report): string {
  const out: string[] = [];
  const m = report.machine;
  out.push(
    `## Benchmark ${report.startedAt}${report.quick ? ' (BENCH_QUICK: shortened, not the issue’s figures)' : ''}`,
    '',
    `${m.cpus} × ${m.cpuModel}, ${m.memoryGb} GB, ${m.platform}; Node.js ${m.node}, Node-RED ${m.nodeRed}, undici ${m.undici}; Node-RED's flags: ${['--expose-gc', ...report.nodeRedFlags].join(' ')}.`,
    `Load average (1/5/15 min) at the start of each part: ${Object.entries(report.loadAverage)
      .map(([name, load]) => `${name} ${load.join('/')}`)
      .join('; ')}.`,
  );
  if (report.throughput) {
    const t = report.throughput;
    out.push(
      '',
      '### 1. Throughput and latency: `http in` → X → `http response` (raw undici: straight to the sandbox)',
      '',
      markdownTable(
        ['X', 'concurrency', 'req/s', 'p50 ms', 'p99 ms', 'failed', 'Node-RED CPU %', 'Node-RED CPU µs/request'],
        t.rows.map((r) => [
          r.flow,
          r.concurrency,
          n0(r.requestsPerSecond),
          n2(r.p50Ms),
          n2(r.p99Ms),
          r.failures,
          r.nodeRedCpuPercent ? n0(r.nodeRedCpuPercent) : '–',
          r.nodeRedCpuMicrosPerRequest ? n0(r.nodeRedCpuMicrosPerRequest) : '–',
        ]),
      ),
    );
  }
  if (report.cpu) out.push('', ...cpuMarkdown(report.cpu));
  if (report.instructions) out.push('', ...instructionsMarkdown(report.instructions));
  const targets: Array<[string, string, string, string]> = [];
  if (report.cpu) {
    for (const { concurrency, ratio, ratioSameResponse } of report.cpu.geocodeVsFloor) {
      targets.push([
        '14',
        `Node-RED CPU per message, svc-geocode / floor, concurrency ${concurrency} (${report.cpu.runs} runs)`,
        '≤ 1.3',
        `${range(ratio, n2)} ${yesNo(ratio.median <= 1.3)}; over the floor returning the same geocode response: ${range(ratioSameResponse, n2)}`,
      ]);
    }
  }
  for (const { concurrency, defaultConfig, dailyLimitOff, dailyLimitCost, inProcess, leastNode } of report.cpu?.overLimit ?? []) {
    const at64 = concurrency === 64;
    const runs = `concurrency ${concurrency}, ${report.cpu?.runs} interleaved runs`;
    targets.push([
      '31',
      `svc-geocode, default config (daily limit on): Node-RED CPU per message ÷ the limit (floor + raw undici's client CPU), ${runs}`,
      at64 ? '≤ 1.05' : '–',
      `${range(defaultConfig.cpu, n2)}${at64 ? ` ${verdict(defaultConfig.cpu.median <= 1.05, defaultConfig.failures)}` : ''}; daily limit off: ${range(dailyLimitOff.cpu, n2)}; over the floor with the response + raw undici: ${range(defaultConfig.cpuSameResponse, n2)}, limit off ${range(dailyLimitOff.cpuSameResponse, n2)}`,
    ]);
    targets.push([
      '31',
      `svc-geocode, default config: req/s ÷ the floor's, ${runs}`,
      at64 ? '≥ 0.8' : '–',
      `${range(defaultConfig.throughput, n2)}${at64 ? ` ${verdict(defaultConfig.throughput.median >= 0.8, defaultConfig.failures)}` : ''}; daily limit off: ${range(dailyLimitOff.throughput, n2)}`,
    ]);
    targets.push([
      '31',
      `daily limit on ÷ off, Node-RED CPU per message, ${runs}`,
      '–',
      `${range(dailyLimitCost, n2)}${at64 ? '; in pairs of slices below' : ''}`,
    ]);
    targets.push([
      '31',
      `the limit made inside Node-RED (floor with undici: a function node's pooled undici request): Node-RED CPU per message ÷ the limit, ${runs}`,
      '–',
      range(inProcess.overLimit, n2),
    ]);
    targets.push([
      '31',
      `svc-geocode, default config ÷ the floor with undici: Node-RED CPU per message; req/s, ${runs}`,
      '–',
      `${range(inProcess.defaultConfig.cpu, n2)}; req/s ${range(inProcess.defaultConfig.throughput, n2)}; daily limit off: ${range(inProcess.dailyLimitOff.cpu, n2)}; req/s ${range(inProcess.dailyLimitOff.throughput, n2)}`,
    ]);
    targets.push([
      '31',
      `the least node (the exchange with undici's dispatch(), JSON parsed, nothing else): Node-RED CPU per message ÷ the limit; req/s ÷ the floor's, ${runs}`,
      '–',
      `${range(leastNode.cpu, n2)}; req/s ${range(leastNode.throughput, n2)}`,
    ]);
  }
  const paired = report.cpu?.dailyLimitInPairs;
  if (paired) {
    targets.push([
      '31',
      `daily limit on (every message counted, against 10,000,000 a day) ÷ off, Node-RED CPU per message, concurrency 64, ${report.cpu?.runs} runs of ${paired.pairs} pairs of ${paired.sliceMs / 1000} s slices, one flow right after the other`,
      '≤ 1.02',
      `${range(paired.onOff, n2)} ${verdict(paired.onOff.median <= 1.02, paired.failures)}; the daily limit off against itself: ${range(paired.itself, n2)}`,
    ]);
    targets.push([
      '31',
      `svc-geocode counting every message ÷ the least node, Node-RED CPU per message, concurrency 64, measured in pairs the same way`,
      '–',
      range(paired.overLeastNode, n2),
    ]);
  }
  const atRate = report.cpu?.atItsRate;
  if (atRate) {
    targets.push([
      '31',
      `svc-geocode counting every message ÷ the limit with its two parts measured at svc-geocode's rate (${range(atRate.rate, n0)} req/s; the floor and raw undici started at that rate, at most 64 under way), Node-RED CPU per message, concurrency 64, ${report.cpu?.runs} runs`,
      '–',
      `${range(atRate.overLimitAtItsRate, n2)}; ÷ the limit with both parts at their own top rate, in the same runs: ${range(atRate.overLimit, n2)}; the floor at svc-geocode's rate ÷ at its own: ${range(atRate.floorAtItsRate, n2)}; raw undici's client: ${range(atRate.rawAtItsRate, n2)}${atRate.failures > 0 ? `; ${atRate.failures} failed` : ''}`,
    ]);
  }
  if (report.throughput) {
    const t = report.throughput;
    targets.push([
      '1',
      'svc-geocode / floor at concurrency 64',
      '≥ 0.75',
      `${n2(t.geocodeVsFloor)} ${yesNo(t.geocodeVsFloor >= 0.75, `${n0(100 * (1 - t.geocodeVsFloor / 0.75))}% short`)}`,
    ]);
    targets.push(['1', 'Node-RED CPU per message at concurrency 64: floor / svc-geocode (less dependent on other load)', '–', n2(t.floorVsGeocodeCpu)]);
    targets.push([
      '1',
      'svc-geocode / core http request at concurrency 64',
      '≈ 1.4',
      `${n2(t.geocodeVsHttpRequest)} ${yesNo(t.geocodeVsHttpRequest >= 1.4, `${n0(100 * (1 - t.geocodeVsHttpRequest / 1.4))}% short`)}`,
    ]);
  }
  for (const storm of report.tokenStorm ?? []) {
    const ok = storm.tokenRequests === 1 && storm.outputs === storm.messages && storm.errors === 0;
    targets.push([
      '2',
      `token storm, ${storm.variant}: ${storm.messages} messages`,
      '1 token request, an output for every message',
      `${storm.tokenRequests} token request(s), ${storm.outputs} outputs, ${storm.errors} errors in ${n0(storm.durationMs)} ms ${yesNo(ok)}`,
    ]);
  }
  if (report.bulk) {
    const b = report.bulk;
    targets.push([
      '3',
      `bulk: ${n0(b.addresses)} addresses, rows in order`,
      'in order',
      `${n0(b.rows)} rows, ${b.inOrder ? 'in order' : 'NOT in order'}, ${n0(b.located)} located ${yesNo(b.inOrder && b.rows === b.addresses)}`,
    ]);
    // RSS does not shrink after a GC, so pages left resident by earlier parts can hide growth: the larger of the two counts.
    const growthMb = Math.max(b.peakRssGrowthMb, b.peakHeapGrowthMb);
    targets.push([
      '3',
      'bulk: peak memory growth of Node-RED (RSS; heap, which RSS left resident by earlier parts can hide)',
      '< 150 MB',
      `RSS ${n0(b.peakRssGrowthMb)} MB, heap ${n0(b.peakHeapGrowthMb)} MB ${yesNo(growthMb < 150, `${n0(growthMb - 150)} MB over`)}`,
    ]);
    targets.push([
      '3',
      `bulk: wall time vs the sandbox's job time (${b.jobs} jobs of ${b.batchSize}, ${b.parallel} in parallel, ${b.pollIntervalMs} ms first poll)`,
      'dominated by job time',
      `wall ${n1(b.wallMs / 1000)} s, jobs alone ${n1(b.jobBoundMs / 1000)} s (${n0(b.meanJobMs)} ms each): ${n0((100 * b.jobBoundMs) / b.wallMs)}% of the wall time`,
    ]);
  }
  if (report.bulkStream) {
    const s = report.bulkStream;
    for (const run of s.runs) {
      targets.push([
        '14',
        `bulk file → file: ${n0(run.addresses)} addresses (${run.jobs} jobs of ${s.batchSize}, ${s.parallel} in parallel)`,
        'RSS growth < 100 MB, flat; rows in order; wall ≈ job time',
        `RSS +${n0(run.peakRssGrowthMb)} MB, heap +${n0(run.peakHeapGrowthMb)} MB ${yesNo(run.peakRssGrowthMb < 100)}; ${n0(run.rows)} rows ${run.inOrder ? 'in order' : 'NOT in order'}; wall ${n1(run.wallMs / 1000)} s, jobs alone ${n1(run.jobBoundMs / 1000)} s`,
      ]);
    }
  }
  if (report.webhooks) {
    const w = report.webhooks;
    if ('skipped' in w) targets.push(['4', 'webhooks', '≥ 0.8 × core http in', `skipped: ${w.skipped}`]);
    else {
      targets.push([
        '4',
        `signed webhooks at concurrency ${w.concurrency}: svc-webhook-in vs core http in`,
        '≥ 0.8',
        `${n0(w.webhookIn.requestsPerSecond)} vs ${n0(w.coreHttpIn.requestsPerSecond)} req/s = ${n2(w.ratio)} (p99 ${n2(w.webhookIn.p99Ms)} vs ${n2(w.coreHttpIn.p99Ms)} ms, ${w.webhookIn.failures} refused${w.filled ? `; after ${n0(w.filled.accepted)} deliveries in ${n0(w.filled.seconds)} s: ${JSON.stringify(w.filled.statuses)}` : ''}) ${yesNo(w.ratio >= 0.8 && w.webhookIn.failures === 0, `${n0(100 * (1 - w.ratio / 0.8))}% short`)}`,
      ]);
    }
  }
  if (report.rateLimit) {
    const r = report.rateLimit;
    targets.push(['5', `rate limit ${r.ratePerMinute}/min over ${r.windowMinutes} min: 429s`, '0', `${r.tooManyRequests} ${yesNo(r.tooManyRequests === 0)}`]);
    targets.push([
      '5',
      'rate limit: throughput',
      `within 2% of ${r.ratePerMinute}/min`,
      `${n2(r.measuredPerMinute)}/min (${r.deviationPercent >= 0 ? '+' : ''}${n2(r.deviationPercent)}%) ${yesNo(Math.abs(r.deviationPercent) <= 2)}`,
    ]);
  }
  if (report.familyRates) {
    const r = report.familyRates;
    const rate = (f: FamilyFigures) =>
      `${n1(f.measuredPerMinute)}/min (${f.deviationPercent >= 0 ? '+' : ''}${n2(f.deviationPercent)}%, ${f.tooManyRequests} × 429)`;
    const met = (f: FamilyFigures) => Math.abs(f.deviationPercent) <= 2 && f.tooManyRequests === 0;
    targets.push([
      '28',
      `publishing at ${r.publish.ratePerMinute}/min beside geocoding at ${r.geocode.ratePerMinute}/min, one config node, over ${r.windowMinutes} min`,
      'each within 2% of its rate, no 429',
      `publish ${rate(r.publish)}, geocode ${rate(r.geocode)} ${yesNo(met(r.publish) && met(r.geocode))}`,
    ]);
  }
  if (report.sharedRate) {
    const r = report.sharedRate;
    const allowed = (seconds: number) => (r.ratePerMinute * seconds) / 60;
    const promised = (seconds: number) => promisedBusiest(r.ratePerMinute, seconds * 1000);
    const row = (p: SharedRatePhase) =>
      `${n1(p.measuredPerMinute)}/min (${p.deviationPercent >= 0 ? '+' : ''}${n2(p.deviationPercent)}%) over ${p.seconds} s; busiest 1 s ${p.busiestSecond} (as sent, promised ≤ ${promised(1)}), 10 s ${p.busiestTenSeconds} (promised ≤ ${promised(10)}); gap error p50 ${n1(p.gapErrorP50Ms)} ms, p99 ${n1(p.gapErrorP99Ms)} ms`;
    const met = r.shared.deviationPercent <= 2 && r.shared.busiestTenSeconds <= allowed(10) * 1.05;
    targets.push([
      '7',
      `shared rate limit ${r.ratePerMinute}/min, ${r.instances} instances, one Redis`,
      'at most the rate: total ≤ +2 %, no 10 s window more than 5 % over',
      `${row(r.shared)} ${yesNo(met)}`,
    ]);
    targets.push(['7', 'the same two instances without Redis (each its own limit)', '–', row(r.independent)]);
  }
  if (report.soak) {
    const { pack, control, redeploys } = report.soak;
    const kb = (run: SoakRun) => `${n1(run.start.heapUsedMb)} → ${n1(run.end.heapUsedMb)} MB, slope ${n1(run.heapSlopeKbPerRedeploy)} KB/redeploy`;
    targets.push([
      '6',
      `redeploy soak: ${redeploys} full redeploys of ${report.soak.nodeTypes.length} node types (${n0(pack.meanDeployMs)} ms each), heap after GC`,
      'slope ≈ 0',
      `${kb(pack)}; core-only control flow: ${kb(control)}`,
    ]);
    const descriptors =
      pack.start.socketDescriptors === undefined
        ? ''
        : `; all open sockets ${pack.start.socketDescriptors} → ${pack.end.socketDescriptors} (slope ${n2(pack.socketDescriptorSlopePerRedeploy)})`;
    const handlesBack =
      pack.end.sockets <= pack.start.sockets &&
      pack.end.timers <= pack.start.timers &&
      (pack.end.socketDescriptors ?? 0) <= (pack.start.socketDescriptors ?? 0);
    targets.push([
      '6',
      'redeploy soak: open handles',
      'back to start',
      `active sockets ${pack.start.sockets} → ${pack.end.sockets}, timers ${pack.start.timers} → ${pack.end.timers} (slopes ${n2(pack.socketSlopePerRedeploy)}, ${n2(pack.timerSlopePerRedeploy)} per redeploy)${descriptors} ${yesNo(handlesBack)}`,
    ]);
    targets.push([
      '6',
      'redeploy soak: RED.httpNode routes',
      'back to start',
      `${pack.start.routes} → ${pack.end.routes} ${yesNo(pack.end.routes === pack.start.routes)}`,
    ]);
    const traffic = (run: SoakRun) =>
      `${n0(run.traffic.requests)} requests (${Object.entries({ ...run.traffic.statuses, ...run.traffic.errors })
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ')})`;
    targets.push(['6', 'redeploy soak: traffic during the redeploys', '–', `${traffic(pack)}; control: ${traffic(control)}`]);
    const broken = report.soak.brokenRoutes;
    if (broken.length > 0) targets.push(['6', 'nodes that failed their first request', 'none', broken.map((b) => `${b.type} → ${b.status}`).join(', ')]);
  }
  out.push('', '### Targets', '', markdownTable(['#', 'measurement', 'target', 'result, met'], targets));
  for (const [name, failure] of Object.entries(report.failures)) out.push('', `**${name} failed:** ${failure.split('\n')[0]}`);
  return out.join('\n');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
