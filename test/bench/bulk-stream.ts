import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import type { Bench } from './bench';
import { FlowNode, catchTo500, configNode, functionNode, httpIn, httpResponse, tab } from './flows';

/**
 * Issue 14: addresses file → file through svc-bulk-geocode (Output: rows to a file) at several sizes,
 * each with its own memory watch, so that the peak RSS growth can be compared across sizes.
 * BENCH_BULK_SIZES=100000,300000 picks the sizes, BENCH_BULK_RUNS=3 the runs of each (one of 1M
 * takes minutes).
 */

/**
 * 4 jobs at once: twice the node's default, and enough that the sandbox's job time dominates; at 8
 * the batches held (input rows, result files and their records) and the garbage they leave before a
 * collection took Node-RED past 100 MB.
 */
const SETTINGS = { batchSize: 1000, parallel: 4, pollIntervalSec: 0.1 };

export interface BulkStreamRun {
  addresses: number;
  rows: number;
  inOrder: boolean;
  located: number;
  jobs: number;
  wallMs: number;
  /** Mean time from a job's upload to the status poll that found it complete, at the sandbox. */
  meanJobMs: number;
  /** The wall time if nothing but the sandbox's job time counted: jobs in rounds of `parallel`. */
  jobBoundMs: number;
  peakRssGrowthMb: number;
  peakHeapGrowthMb: number;
}

export interface BulkStreamResult {
  batchSize: number;
  parallel: number;
  runs: BulkStreamRun[];
}

function bulkFileFlows(sandboxUrl: string, outputFile: string): FlowNode[] {
  const z = 'bench-bulk-file';
  return [
    tab(z, 'bulk file'),
    configNode('bulk-file-cfg', sandboxUrl),
    httpIn('bulk-file-in', z, '/bench/bulk-file', 'bulk-file-name'),
    functionNode('bulk-file-name', z, 'msg.filename = msg.payload.filename; msg.payload = null; return msg;', [['bulk-file-node']]),
    {
      id: 'bulk-file-node',
      type: 'svc-bulk-geocode',
      z,
      name: '',
      server: 'bulk-file-cfg',
      ...SETTINGS,
      maxWait: 600,
      output: 'file',
      outputFile,
      x: 300,
      y: 100,
      wires: [['bulk-file-out']],
    },
    httpResponse('bulk-file-out', z),
    ...catchTo500('bulk-file', z, ['bulk-file-node']),
  ];
}

/** The addresses file: CSV with the column `address`, written as a stream. */
async function writeAddresses(file: string, count: number): Promise<void> {
  const out = fs.createWriteStream(file);
  out.write('address\n');
  for (let i = 0; i < count; i++) {
    if (!out.write(`Row ${i} Station Road\n`)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
}

/** Reads the output CSV line by line: the rows must be numbered 0, 1, 2 … with their own address. */
async function checkOutput(file: string): Promise<{ rows: number; inOrder: boolean; located: number }> {
  const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  let rows = 0;
  let inOrder = true;
  let located = 0;
  let header = true;
  for await (const line of lines) {
    if (header) {
      header = false;
      continue;
    }
    const [index, address, latitude] = line.split(',', 3);
    if (Number(index) !== rows || address !== `Row ${rows} Station Road`) inOrder = false;
    if (latitude !== '') located++;
    rows++;
  }
  return { rows, inOrder, located };
}

export async function bulkStream(bench: Bench): Promise<BulkStreamResult> {
  const sizes = process.env.BENCH_BULK_SIZES
    ? process.env.BENCH_BULK_SIZES.split(',').map(Number)
    : bench.quick
      ? [10_000, 30_000]
      : [100_000, 300_000, 1_000_000];
  const repeats = Number(process.env.BENCH_BULK_RUNS ?? 1);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-bulk-'));
  const input = path.join(dir, 'addresses.csv');
  const output = path.join(dir, 'geocoded.csv');
  const runs: BulkStreamRun[] = [];
  try {
    await bench.deploy(bulkFileFlows(bench.sandboxUrl, output));
    for (const addresses of sizes.flatMap((size) => Array<number>(repeats).fill(size))) {
      if (!fs.existsSync(input) || runs.at(-1)?.addresses !== addresses) await writeAddresses(input, addresses);
      await bench.sandbox.call('trace', ['bulk-upload', 'bulk-status']);
      await bench.nodeRed.call('watchMemory', undefined);
      const started = Date.now();
      const response = await bench.call('POST', '/bench/bulk-file', { filename: input });
      const wallMs = Date.now() - started;
      const memory = await bench.nodeRed.call('memoryPeak', undefined);
      const timings = await bench.sandbox.call('bulkJobTimings', undefined);
      await bench.sandbox.call('trace', []);
      if (response.status !== 200) throw new Error(`bulk file run responded with ${response.status}: ${JSON.stringify(response.body)}`);
      const summary = response.body as { rows: number; jobs: number };
      const checked = await checkOutput(output);
      const meanJobMs = timings.reduce((sum, t) => sum + (t.readyAt - t.uploadedAt), 0) / Math.max(1, timings.length);
      const mb = (bytes: number) => bytes / 1024 / 1024;
      runs.push({
        addresses,
        ...checked,
        inOrder: checked.inOrder && summary.rows === addresses,
        jobs: summary.jobs,
        wallMs,
        meanJobMs,
        jobBoundMs: Math.ceil(summary.jobs / SETTINGS.parallel) * meanJobMs,
        peakRssGrowthMb: mb(memory.peakRssBytes - memory.baselineRssBytes),
        peakHeapGrowthMb: mb(memory.peakHeapBytes - memory.baselineHeapBytes),
      });
      process.stderr.write(`[bench] bulk-file ${addresses}: ${JSON.stringify(runs[runs.length - 1])}\n`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return { batchSize: SETTINGS.batchSize, parallel: SETTINGS.parallel, runs };
}
