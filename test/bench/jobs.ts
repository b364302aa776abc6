import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { Pool } from 'undici';
import { SANDBOX_DEFAULTS } from '../../sandbox';
import { RedisServer } from '../support/redis-server';
import { REPO_ROOT } from '../support/paths';
import { deployTo, sleep, waitFor } from './bench';
import { FlowNode, configNode, functionNode, httpIn, httpResponse, tab } from './flows';
import { busiestWindow, formatNumber, markdownTable, median } from './measure';
import type { NodeRedMethods } from './nodered-process';
import { Child } from './rpc';
import type { SandboxMethods, StatusCounts } from './sandbox-process';

/**
 * `npm run bench:jobs`: issue 59's jobs in flight. JOBS asynchronous jobs (half isoline, half
 * sequence) sent at once to one Node-RED, against a sandbox whose jobs outlast the run; svc-config
 * with a Routing rate of 12,000/min, Queue size 20,000, Concurrency 8, each job node with Max wait one
 * day. Each run measures the time until all are in flight (against the time the rate allows), the
 * heap per job beyond its message, Node-RED's CPU per poll against a bare keep-alive poll of the
 * same URL from this process (back to back, and paced as Node-RED's polls come), the job store's writes per submission and per poll, and the time a
 * restart takes to poll every job again (and the busiest second and ten seconds of routing requests
 * meanwhile). Runs alternate between the store alone and the store with a redis-server started here
 * (Redis: also its keys per job and commands per submission and per poll).
 *
 * BENCH_RUNS (5) runs of each; BENCH_JOBS (10,000) jobs; BENCH_JOBS_REDIS=0 leaves Redis out,
 * BENCH_JOBS_REDIS=only runs the Redis path alone; BENCH_JOBS_HEAP=<folder> writes Node-RED's heap snapshots
 * before and after the submissions there (compare them with heap-diff.ts); BENCH_JOBS_PROFILE=<folder>
 * writes a CPU profile of Node-RED's steady polling there and prints where its time goes.
 * Prints a markdown report and writes the figures to test/bench/results/jobs-<time>.json.
 */

const JOBS = Number(process.env.BENCH_JOBS ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const WITH_REDIS = process.env.BENCH_JOBS_REDIS !== '0';
const PATHS = process.env.BENCH_JOBS_REDIS === 'only' ? [true] : WITH_REDIS ? [false, true] : [false];
const HEAP_FOLDER = process.env.BENCH_JOBS_HEAP;
const PROFILE_FOLDER = process.env.BENCH_JOBS_PROFILE;
const RATE_PER_MINUTE = 12_000;
const CONFIG_ID = 'jobs-cfg';
const PATH = '/bench/jobs';
/** Past this many times the time the rate allows, the jobs not yet in flight are counted and the run goes on. */
const IN_FLIGHT_TIMEOUT_FACTOR = 6;
const STEADY_SECONDS = 20;
const BARE_POLLS = 2000;
const BARE_ROUNDS = 3;
/** Polls in a paced round: 5 s at the 200 a second the routing rate allows. */
const BARE_PACED_POLLS = 1000;
const BARE_CONCURRENCY = 8;
const RESTART_TIMEOUT_MS = 300_000;
const SUBMISSIONS = ['isoline', 'sequence'];
const POLLS = ['isoline-job', 'sequence-job'];
const RESULTS_DIR = path.join(REPO_ROOT, 'test', 'bench', 'results');

type NodeRedChild = Child<NodeRedMethods, { url: string; adminUrl: string }>;
type SandboxChild = Child<SandboxMethods, { url: string }>;

export interface JobsRun {
  redis: boolean;
  loadAverage: number[];
  inFlight: number;
  errors: number;
  firstError: string;
  /** From the burst to the last job accepted, s; and that ÷ the time the rate allows (JOBS ÷ rate). */
  inFlightSeconds: number;
  inFlightFactor: number;
  messageBytes: number;
  heapPerJobBytes: number;
  pollsPerSecond: number;
  cpuPerPollUs: number;
  bareCpuPerPollUs: number;
  cpuPerPollFactor: number;
  /** A bare poll sent at Node-RED's pace (see BarePoll), and Node-RED's CPU per poll ÷ that. */
  pacedBareCpuPerPollUs: number;
  cpuPerPacedPollFactor: number;
  writesPerSubmission: number;
  writesPerPoll: number;
  /** CPU time of Node-RED's and the sandbox's processes while the jobs were submitted, s (who holds the submissions up). */
  submitCpuNodeRedSeconds: number;
  submitCpuSandboxSeconds: number;
  restartSeconds: number;
  resumed: number;
  /** The most routing requests (submissions and polls) in any 1 s and 10 s after the restart; the rate allows 200 and 2,000. */
  restartBusiestSecond: number;
  restartBusiestTenSeconds: number;
  redisKeys?: number;
  redisCommandsPerSubmission?: number;
  redisCommandsPerPoll?: number;
}

/** A line on stderr while the bench runs (the report goes to stdout). */
function progress(line: string): void {
  console.error(`${new Date().toISOString().slice(11, 19)} ${line}`);
}

function sum(counts: StatusCounts, endpoints: string[], ok = true): number {
  let total = 0;
  for (const endpoint of endpoints) {
    for (const [status, count] of Object.entries(counts[endpoint] ?? {})) if (!ok || status.startsWith('2')) total += count;
  }
  return total;
}

/** CPU time a process has used, s, from /proc (NaN where there is none). */
function processCpuSeconds(pid: number | undefined): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // utime and stime, fields 14 and 15 of stat (12 and 13 after the command).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

function cpuMicros(usage: { user: number; system: number }): number {
  return usage.user + usage.system;
}

/** The flow: POST {count, hold} sends `count` jobs (or, with hold, keeps the same messages in flow context); GET reports errors. */
function jobsFlows(sandboxUrl: string, redisUrl: string | undefined): FlowNode[] {
  const z = 'bench-jobs';
  const config = configNode(CONFIG_ID, sandboxUrl, { rateLimit: RATE_PER_MINUTE, maxQueue: 20_000, maxConcurrency: 8 }, redisUrl ? { redisUrl } : {});
  // Small jobs: the sandbox draws each isoline and sequence as it accepts it, and its CPU is the machine's too.
  const waypoints = JSON.stringify([13.3, 13.301].map((lon) => ({ lat: 52.5, lon })));
  const fan = `const { count, hold } = msg.payload; const isolines = []; const sequences = [];
for (let i = 0; i < count; i++) {
  if (i % 2 === 0) isolines.push({ payload: { async: true, origins: [{ lat: 52.52, lon: 13.405 }] }, n: i });
  else sequences.push({ payload: { async: true, waypoints: ${waypoints} }, n: i });
}
msg.payload = { started: count };
if (hold) { flow.set('held', isolines.concat(sequences)); return [null, null, msg]; }
flow.set('held', []);
return [isolines, sequences, msg];`;
  const job = { server: CONFIG_ID, z, maxWait: 86_400, x: 300, y: 100, wires: [[]] };
  // The editor's defaults for an isoline's range (a flow deployed through the admin API carries only what it says).
  const range = { rangeType: 'time', rangeTypeType: 'fixed', rangeValue: '60', rangeValueType: 'num' };
  return [
    tab(z, 'jobs in flight'),
    config,
    httpIn(`${z}-start`, z, PATH, `${z}-fan`),
    functionNode(`${z}-fan`, z, fan, [[`${z}-isoline`], [`${z}-sequence`], [`${z}-ack`]]),
    httpResponse(`${z}-ack`, z),
    { id: `${z}-isoline`, type: 'svc-isoline', name: '', ...range, ...job },
    { id: `${z}-sequence`, type: 'svc-sequence', name: '', ...job },
    { id: `${z}-catch`, type: 'catch', z, name: '', scope: null, uncaught: false, x: 100, y: 200, wires: [[`${z}-errors`]] },
    functionNode(
      `${z}-errors`,
      z,
      "const s = flow.get('errors') || { count: 0, first: '' }; s.count++; if (!s.first) s.first = String(msg.error && msg.error.message); flow.set('errors', s); return null;",
      [],
    ),
    httpIn(`${z}-report-in`, z, PATH, `${z}-report`, 'get'),
    functionNode(`${z}-report`, z, "msg.payload = flow.get('errors') || { count: 0, first: '' }; return msg;", [[`${z}-report-out`]]),
    httpResponse(`${z}-report-out`, z),
  ];
}

async function post(nodeRed: NodeRedChild, body: unknown): Promise<void> {
  const pool = new Pool(nodeRed.info.url);
  try {
    const res = await pool.request({
      path: PATH,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${PATH} responded with ${res.statusCode}`);
  } finally {
    await pool.close();
  }
}

async function errorsOf(nodeRed: NodeRedChild): Promise<{ count: number; first: string }> {
  const pool = new Pool(nodeRed.info.url);
  try {
    const res = await pool.request({ path: PATH, method: 'GET' });
    return (await res.body.json()) as { count: number; first: string };
  } finally {
    await pool.close();
  }
}

function startNodeRed(userDir: string, logFile: string): Promise<NodeRedChild> {
  return Child.start<NodeRedMethods, { url: string; adminUrl: string }>('node-red', path.join(__dirname, 'nodered-process.js'), {
    execArgv: ['--expose-gc'],
    env: { BENCH_USER_DIR: userDir },
    logFile,
  });
}

/** CPU of this plain Node process per keep-alive GET of `jobPath` (a job the sandbox keeps running), µs, two ways. */
interface BarePoll {
  /** BARE_CONCURRENCY at a time, back to back: the cost of the exchange alone. */
  backToBackUs: number;
  /** One every 1 / `pollsPerSecond` s, each sent from its own timer: the pace Node-RED's polls come at, each waking the event loop. */
  pacedUs: number;
}

/** Each the median of BARE_ROUNDS rounds after one to warm up (one round alone varied 48–162 µs between runs). */
async function barePoll(sandboxUrl: string, jobPath: string, pollsPerSecond: number): Promise<BarePoll> {
  const pool = new Pool(sandboxUrl, { connections: BARE_CONCURRENCY });
  const headers = { accept: 'application/json', 'x-svc-project-id': SANDBOX_DEFAULTS.projectId, 'x-svc-api-key': SANDBOX_DEFAULTS.apiKey };
  const poll = async () => {
    const res = await pool.request({ path: jobPath, method: 'GET', headers });
    await res.body.json();
    if (res.statusCode !== 200) throw new Error(`a bare poll of ${jobPath} responded with ${res.statusCode}`);
  };
  const backToBack = async (): Promise<void> => {
    let left = BARE_POLLS;
    await Promise.all(
      Array.from({ length: BARE_CONCURRENCY }, async () => {
        while (left-- > 0) await poll();
      }),
    );
  };
  const paced = async (): Promise<void> => {
    const intervalMs = 1000 / pollsPerSecond;
    const startedAt = performance.now();
    const polls: Array<Promise<void>> = [];
    for (let i = 0; i < BARE_PACED_POLLS; i++) {
      const waitMs = startedAt + i * intervalMs - performance.now();
      if (waitMs > 0) await sleep(waitMs);
      polls.push(poll());
    }
    await Promise.all(polls);
  };
  const cpuPerPoll = async (round: () => Promise<void>, count: number): Promise<number> => {
    // Warm: connections open and the code compiled.
    await round();
    const rounds: number[] = [];
    for (let i = 0; i < BARE_ROUNDS; i++) {
      const before = process.cpuUsage();
      await round();
      rounds.push(cpuMicros(process.cpuUsage(before)) / count);
    }
    return median(rounds);
  };
  try {
    return { backToBackUs: await cpuPerPoll(backToBack, BARE_POLLS), pacedUs: await cpuPerPoll(paced, BARE_PACED_POLLS) };
  } finally {
    await pool.close();
  }
}

async function redisCommands(client: Redis): Promise<number> {
  const info = await client.info('stats');
  const match = /total_commands_processed:(\d+)/.exec(info);
  return match ? Number(match[1]) : 0;
}

async function oneRun(withRedis: boolean, index: number, logFile: (name: string) => string): Promise<JobsRun> {
  const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-jobs-'));
  const redis = withRedis ? await RedisServer.start() : undefined;
  const client = redis ? new Redis(redis.url) : undefined;
  let sandbox: SandboxChild | undefined;
  let nodeRed: NodeRedChild | undefined;
  const allowedSeconds = JOBS / (RATE_PER_MINUTE / 60);
  try {
    sandbox = await Child.start<SandboxMethods, { url: string }>('sandbox', path.join(__dirname, 'sandbox-process.js'), {
      env: { BENCH_SANDBOX_JOBS: String(JOBS) },
      logFile: logFile(`sandbox-${index}`),
    });
    nodeRed = await startNodeRed(userDir, logFile(`node-red-${index}`));
    await deployTo(nodeRed, jobsFlows(sandbox.info.url, redis?.url));
    const loadAverage = os.loadavg().map((value) => Math.round(value * 100) / 100);

    // The messages alone, held in flow context: what a job's message costs the heap.
    const base = await nodeRed.call('snapshot', undefined);
    await post(nodeRed, { count: JOBS, hold: true });
    const held = await nodeRed.call('snapshot', undefined);
    await post(nodeRed, { count: 0, hold: true });
    const messageBytes = (held.heapUsedBytes - base.heapUsedBytes) / JOBS;
    const empty = await nodeRed.call('snapshot', undefined);
    if (HEAP_FOLDER) await nodeRed.call('heapSnapshot', path.resolve(HEAP_FOLDER, `jobs-${withRedis ? 'redis-' : ''}${index}-before.heapsnapshot`));

    await sandbox.call('trace', SUBMISSIONS);
    const writesBefore = await nodeRed.call('jobStoreWrites', CONFIG_ID);
    const commandsBefore = client ? await redisCommands(client) : 0;
    const cpuBefore = [processCpuSeconds(nodeRed.pid), processCpuSeconds(sandbox.pid)];
    const startedAt = Date.now();
    await post(nodeRed, { count: JOBS });
    const sandboxRef = sandbox;
    const nodeRedRef = nodeRed;
    const accepted = async () => sum(await sandboxRef.call('counts', undefined), SUBMISSIONS);
    const failed = async () => (await errorsOf(nodeRedRef)).count;
    await waitFor(
      'the jobs to be in flight',
      async () => ((await accepted()) + (await failed()) >= JOBS ? true : undefined),
      allowedSeconds * IN_FLIGHT_TIMEOUT_FACTOR * 1000,
      500,
    ).catch(() => undefined);
    const cpuAfter = [processCpuSeconds(nodeRed.pid), processCpuSeconds(sandbox.pid)];
    const traced = (await sandbox.call('traced', undefined)).filter((entry) => entry.status === 200);
    const inFlight = traced.length;
    const lastAccepted = Math.max(...traced.map((entry) => entry.time));
    const inFlightSeconds = (lastAccepted - startedAt) / 1000;
    const writesAfterSubmissions = await nodeRed.call('jobStoreWrites', CONFIG_ID);
    const commandsAfterSubmissions = client ? await redisCommands(client) : 0;
    const pollsDuringSubmissions = sum(await sandbox.call('counts', undefined), POLLS, false);
    await sandbox.call('trace', []);
    progress(
      `run ${index}${withRedis ? ' (Redis)' : ''}: ${inFlight} in flight after ${inFlightSeconds.toFixed(1)} s, ${pollsDuringSubmissions} polls meanwhile`,
    );

    const loaded = await nodeRed.call('snapshot', undefined);
    const heapPerJobBytes = (loaded.heapUsedBytes - empty.heapUsedBytes) / Math.max(1, inFlight) - messageBytes;
    if (HEAP_FOLDER) await nodeRed.call('heapSnapshot', path.resolve(HEAP_FOLDER, `jobs-${withRedis ? 'redis-' : ''}${index}-in-flight.heapsnapshot`));

    // Steady polling.
    await sleep(3000);
    const cpu0 = await nodeRed.call('cpu', undefined);
    const polls0 = sum(await sandbox.call('counts', undefined), POLLS, false);
    const writes0 = await nodeRed.call('jobStoreWrites', CONFIG_ID);
    const commands0 = client ? await redisCommands(client) : 0;
    const t0 = Date.now();
    if (PROFILE_FOLDER) await nodeRed.call('startProfile', undefined);
    await sleep(STEADY_SECONDS * 1000);
    const cpu1 = await nodeRed.call('cpu', undefined);
    if (PROFILE_FOLDER) {
      const file = path.resolve(PROFILE_FOLDER, `jobs-${withRedis ? 'redis-' : ''}${index}-polling.cpuprofile`);
      progress(JSON.stringify(await nodeRed.call('stopProfile', file), null, 1));
    }
    const polls1 = sum(await sandbox.call('counts', undefined), POLLS, false);
    const writes1 = await nodeRed.call('jobStoreWrites', CONFIG_ID);
    const commands1 = client ? await redisCommands(client) : 0;
    const seconds = (Date.now() - t0) / 1000;
    const polls = Math.max(1, polls1 - polls0);
    const cpuPerPollUs = (cpuMicros(cpu1) - cpuMicros(cpu0)) / polls;

    progress(`run ${index}: ${polls} polls in ${seconds.toFixed(1)} s, ${(cpuMicros(cpu1) - cpuMicros(cpu0)) / 1e6} s of CPU`);
    const redisKeys = client ? await client.dbsize() : undefined;

    // A bare poll of one of the same jobs.
    await sandbox.call('trace', POLLS);
    const sandboxNow = sandbox;
    // None while submissions still fill the rate's queue (the polls wait behind them): NaN then.
    const aPoll = await waitFor(
      'a job to be polled',
      async () => (await sandboxNow.call('traced', undefined)).find((entry) => entry.status === 200),
      30_000,
      500,
    ).catch(() => undefined);
    const bare = aPoll ? await barePoll(sandbox.info.url, aPoll.path, polls / seconds) : { backToBackUs: NaN, pacedUs: NaN };

    // A restart: stopped as Node-RED stops, started on the same user directory; every job polled again.
    await sandbox.call('trace', [...SUBMISSIONS, ...POLLS]);
    await nodeRed.stop();
    const restartedAt = Date.now();
    nodeRed = await startNodeRed(userDir, logFile(`node-red-${index}-restarted`));
    const firstPolls = new Map<string, number>();
    const routing: number[] = [];
    const collect = async () => {
      routing.splice(0);
      for (const entry of await sandboxNow.call('traced', undefined)) {
        if (entry.time < restartedAt) continue;
        routing.push(entry.time);
        if (POLLS.includes(entry.endpoint) && entry.status === 200 && !firstPolls.has(entry.path)) firstPolls.set(entry.path, entry.time);
      }
      return firstPolls.size >= inFlight ? true : undefined;
    };
    await waitFor('every job to be polled after the restart', collect, RESTART_TIMEOUT_MS, 2000).catch(() => undefined);
    const resumedTimes = [...firstPolls.values()];
    const restartSeconds = (Math.max(...resumedTimes) - restartedAt) / 1000;
    await sandbox.call('trace', []);
    const errors = await errorsOf(nodeRed);

    return {
      redis: withRedis,
      loadAverage,
      inFlight,
      errors: errors.count,
      firstError: errors.first,
      inFlightSeconds,
      inFlightFactor: inFlightSeconds / allowedSeconds,
      submitCpuNodeRedSeconds: cpuAfter[0] - cpuBefore[0],
      submitCpuSandboxSeconds: cpuAfter[1] - cpuBefore[1],
      messageBytes,
      heapPerJobBytes,
      pollsPerSecond: polls / seconds,
      cpuPerPollUs,
      bareCpuPerPollUs: bare.backToBackUs,
      cpuPerPollFactor: cpuPerPollUs / bare.backToBackUs,
      pacedBareCpuPerPollUs: bare.pacedUs,
      cpuPerPacedPollFactor: cpuPerPollUs / bare.pacedUs,
      writesPerSubmission: (writesAfterSubmissions - writesBefore) / Math.max(1, inFlight),
      writesPerPoll: (writes1 - writes0) / polls,
      restartSeconds,
      resumed: firstPolls.size,
      restartBusiestSecond: busiestWindow(routing, 1000),
      restartBusiestTenSeconds: busiestWindow(routing, 10_000),
      ...(client
        ? {
            redisKeys,
            redisCommandsPerSubmission: (commandsAfterSubmissions - commandsBefore) / Math.max(1, inFlight + pollsDuringSubmissions),
            redisCommandsPerPoll: (commands1 - commands0) / polls,
          }
        : {}),
    };
  } finally {
    await nodeRed?.stop();
    await sandbox?.stop();
    client?.disconnect();
    await redis?.remove();
    fs.rmSync(userDir, { recursive: true, force: true });
  }
}

/** Median and range of one figure over the runs. */
function spread(values: number[], digits: number): string {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  const median = sorted.length % 2 ? sorted[Math.floor(mid)] : (sorted[mid - 1] + sorted[mid]) / 2;
  return `${formatNumber(median, digits)} (${formatNumber(sorted[0], digits)}–${formatNumber(sorted[sorted.length - 1], digits)})`;
}

function report(runs: JobsRun[]): string {
  const rows: Array<[string, string, (run: JobsRun) => number, number]> = [
    ['jobs in flight', `${formatNumber(JOBS)}`, (run) => run.inFlight, 0],
    ['time to get there ÷ the time the rate allows', '≤ 1.1', (run) => run.inFlightFactor, 2],
    ['(Node-RED CPU while they were submitted, s)', '–', (run) => run.submitCpuNodeRedSeconds, 0],
    ['(the sandbox CPU meanwhile, s)', '–', (run) => run.submitCpuSandboxSeconds, 0],
    ['heap per job beyond its message, bytes', '≤ 2,048', (run) => run.heapPerJobBytes, 0],
    ['(its message, bytes)', '–', (run) => run.messageBytes, 0],
    ['Node-RED CPU per poll ÷ a bare keep-alive poll', '≤ 3', (run) => run.cpuPerPollFactor, 2],
    ['(Node-RED CPU per poll, µs)', '–', (run) => run.cpuPerPollUs, 0],
    ['(bare poll CPU, µs)', '–', (run) => run.bareCpuPerPollUs, 0],
    ['Node-RED CPU per poll ÷ a bare poll at the same pace', '≤ 3', (run) => run.cpuPerPacedPollFactor, 2],
    ['(bare poll at the same pace, CPU µs)', '–', (run) => run.pacedBareCpuPerPollUs, 0],
    ['(polls per second)', '–', (run) => run.pollsPerSecond, 0],
    ['store writes per submission', '≤ 0.05', (run) => run.writesPerSubmission, 3],
    ['store writes per poll', '≤ 0.05', (run) => run.writesPerPoll, 3],
    ['restart: every job polled again, s', '≤ 120', (run) => run.restartSeconds, 1],
    ['restart: busiest 1 s of routing requests', '≤ 201', (run) => run.restartBusiestSecond, 0],
    ['restart: busiest 10 s of routing requests', '≤ 2,001', (run) => run.restartBusiestTenSeconds, 0],
    ['errors', '0', (run) => run.errors, 0],
    ['Redis keys', `≤ 2 + ${formatNumber(JOBS)}`, (run) => run.redisKeys ?? NaN, 0],
    ['Redis commands per submission', '–', (run) => run.redisCommandsPerSubmission ?? NaN, 2],
    ['Redis commands per poll', '–', (run) => run.redisCommandsPerPoll ?? NaN, 2],
  ];
  const file = runs.filter((run) => !run.redis);
  const redis = runs.filter((run) => run.redis);
  const column = (group: JobsRun[], figure: (run: JobsRun) => number, digits: number) => {
    const values = group.map(figure).filter((value) => !Number.isNaN(value));
    return values.length ? spread(values, digits) : '–';
  };
  return markdownTable(
    ['Figure', 'Target', `Store alone (${file.length} runs)`, `With Redis (${redis.length} runs)`],
    rows.map(([name, target, figure, digits]) => [name, target, column(file, figure, digits), column(redis, figure, digits)]),
  );
}

async function main(): Promise<void> {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const logFile = (name: string) => path.join(RESULTS_DIR, `${stamp}-jobs-${name}.log`);
  if (WITH_REDIS && !RedisServer.available()) throw new Error('redis-server is not installed: apt-get install -y redis-server (or BENCH_JOBS_REDIS=0)');
  const runs: JobsRun[] = [];
  const startedAt = new Date().toISOString();
  for (let i = 0; i < RUNS; i++) {
    for (const withRedis of PATHS) {
      const run = await oneRun(withRedis, runs.length, logFile);
      runs.push(run);
      console.error(JSON.stringify(run));
    }
  }
  const file = path.join(RESULTS_DIR, `jobs-${stamp}.json`);
  fs.writeFileSync(
    file,
    JSON.stringify(
      { startedAt, finishedAt: new Date().toISOString(), jobs: JOBS, cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, node: process.version, runs },
      null,
      2,
    ),
  );
  console.log(`## Jobs in flight (${formatNumber(JOBS)} jobs, ${startedAt})\n\n${report(runs)}\n\nFigures: ${path.relative(REPO_ROOT, file)}`);
}

if (require.main === module) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
