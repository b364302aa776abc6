import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Bench } from './bench';
import { Spread, Target, countingGeocode, spread, templates } from './cpu';
import { countingGeocodeFlows, leastNodeFlows, throughputFlows } from './flows';
import type { LoadResult, LoadgenMethods } from './loadgen';
import type { NodeRedMethods } from './nodered-process';
import { Child } from './rpc';
import { failures } from './sections';

/**
 * Issue 31, counted rather than timed (BENCH_ONLY=instructions): the instructions a message costs, as
 * valgrind's callgrind counts them. Time per message moves with the machine (the CPU part's runs spread
 * by more than the pack's own code costs); an instruction count does not, so differences of a few tenths
 * of a percent between flows show, run after run.
 *
 * A Node-RED process of its own runs under callgrind (the bench's own keeps its speed for the other
 * parts), with the floor, the least node and svc-geocode counting every message and with the daily limit
 * off; a load generator of its own runs under it too, for raw undici's client. Each flow is warmed, then
 * measured in windows of the same number of messages, the flows taken in turn (rotated window by window):
 * the count is zeroed before a window and read after it. Counted at concurrency 64, as the CPU part.
 *
 * A window's instructions are split by where they run (callgrind names native functions; the JIT's code
 * has no names): JavaScript, V8's builtins, V8's inline caches and maps, other native code, libc, the
 * young generation's collection, the other collections, and the JIT compilers. The other collections
 * (marking, sweeping, compacting the old generation) and the compilers run when the heap or the code's
 * feedback calls for them: a window that holds one pays the whole of it, so they make the windows differ
 * by up to 8 %. The figure compared, *per message*, leaves those two out; they are reported beside it.
 *
 * Under valgrind a process runs some fifty times slower, while the sandbox does not: each wake-up of
 * Node-RED finds more requests ready than at full speed, so the counts are those of a busy Node-RED, and
 * valid for comparing flows with each other, not as the native counts.
 */

export const INSTRUCTION_FLOWS = ['floor', 'least node', 'svc-geocode, counting', 'svc-geocode, daily limit off', 'raw undici'] as const;
export type InstructionFlow = (typeof INSTRUCTION_FLOWS)[number];

export const INSTRUCTION_PARTS = [
  'JavaScript',
  'builtins',
  'inline caches and maps',
  'other native',
  'libc',
  'young generation GC',
  'other GC',
  'JIT compilers',
] as const;
export type InstructionPart = (typeof INSTRUCTION_PARTS)[number];

/** The parts left out of the figure compared: they land in whichever window a collection or a compilation falls. */
const UNEVEN_PARTS: ReadonlySet<InstructionPart> = new Set<InstructionPart>(['other GC', 'JIT compilers']);

export interface InstructionRow {
  flow: InstructionFlow;
  /** Instructions per message, the uneven parts left out, window by window. */
  perMessage: Spread;
  /** Each part's instructions per message, the median over the windows. */
  parts: Record<InstructionPart, number>;
  failures: number;
}

export interface InstructionsResult {
  windows: number;
  messagesPerWindow: number;
  rows: InstructionRow[];
  /** Medians divided: svc-geocode counting over the least node, and over the floor's plus raw undici's (the limit, counted). */
  ratios: {
    countingOverLeastNode: number;
    countingOverLimit: number;
    dailyLimitOffOverLimit: number;
    leastNodeOverLimit: number;
    /** svc-geocode counting over the same with the daily limit off. */
    dailyLimitOnOverOff: number;
  };
  /** Where callgrind's files are kept, for callgrind_annotate. */
  files: string[];
}

/** Which part a native function of callgrind's report belongs to, by its name (the JIT's code has none). */
const PARTS_BY_NAME: Array<[InstructionPart, RegExp]> = [
  ['young generation GC', /Scaveng|SemiSpace|NewSpace|EvacuationAllocator/],
  // Marking, sweeping and compacting, and the walks over objects, code and roots that only they make.
  [
    'other GC',
    /Mark|Sweep|Compactor|Evacuat|heap::base|cppgc|Heap::|MemoryChunk|Pretenuring|RememberedSet|SlotSet|FreeList|PagedSpace|SizeFromMap|Reloc|Visitor|StringTableCleaner|RecordMigrated|IterateObjectCache|LiveObjectRange|BodyDescriptor/,
  ],
  ['JIT compilers', /compiler::|maglev::|baseline::|Zone/],
  [
    'inline caches and maps',
    /LookupIterator|StoreIC|LoadIC|KeyedStore|KeyedLoad|MigrateToMap|TransitionToDataProperty|DescriptorArray|Map::|FieldIndex|StubCache|FeedbackNexus|Prototype|IC::/,
  ],
  ['JavaScript', /^\?\?\?:0x/],
  ['builtins', /Builtins_/],
  ['libc', /libc\.so|ld-linux/],
];

function partOf(fn: string): InstructionPart {
  return PARTS_BY_NAME.find(([, pattern]) => pattern.test(fn))?.[0] ?? 'other native';
}

/** A dump's instructions by part, from `callgrind_annotate`'s list of every function's own instructions. */
function partsOf(file: string): Record<InstructionPart, number> {
  const report = execFileSync('callgrind_annotate', ['--threshold=100', file], { maxBuffer: 256 * 1024 * 1024 }).toString();
  const parts = Object.fromEntries(INSTRUCTION_PARTS.map((part) => [part, 0])) as Record<InstructionPart, number>;
  for (const line of report.split('\n')) {
    const match = /^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$/.exec(line);
    if (!match || match[2].startsWith('PROGRAM TOTALS')) continue;
    parts[partOf(match[2])] += Number(match[1].replace(/,/g, ''));
  }
  return parts;
}

/** A process of the bench's run under callgrind, counting only between `zero` and `dump`. */
class CallgrindCounter {
  private dumps = 0;

  constructor(
    private readonly pid: number,
    private readonly outFile: string,
  ) {}

  static wrapper(outFile: string): string[] {
    // JIT code is written and rewritten in memory: valgrind must look for changed code everywhere but in files.
    return ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--smc-check=all-non-file', `--callgrind-out-file=${outFile}`];
  }

  private control(...args: string[]): void {
    execFileSync('callgrind_control', [...args, String(this.pid)], { stdio: 'ignore' });
  }

  start(): void {
    this.control('--instr=on');
  }

  zero(): void {
    this.control('--zero');
  }

  /** Writes what was counted since `zero`; returns the file it went to. */
  dump(name: string): string {
    this.control(`--dump=${name}`);
    this.dumps++;
    return `${this.outFile}.${this.dumps}`;
  }
}

/** Whether valgrind can be run here. */
function valgrindAvailable(): boolean {
  return spawnSync('valgrind', ['--version']).status === 0 && spawnSync('callgrind_control', ['-h']).error === undefined;
}

export async function instructionsPerMessage(bench: Bench): Promise<InstructionsResult> {
  if (!valgrindAvailable()) throw new Error('valgrind is not installed: apt-get install -y valgrind');
  const windows = bench.quick ? 2 : 3;
  const messages = bench.quick ? 1000 : 3000;
  const warmCount = bench.quick ? 5000 : 15_000;
  const dir = path.dirname(bench.logFile('x'));
  const outFile = (name: string) => path.join(dir, `${path.basename(bench.logFile(`callgrind-${name}`), '.log')}.out`);
  const nodeRedOut = outFile('node-red');
  const loadgenOut = outFile('loadgen');
  let nodeRed: Child<NodeRedMethods, { url: string; adminUrl: string }> | undefined;
  let loadgen: Child<LoadgenMethods> | undefined;
  try {
    nodeRed = await Child.start<NodeRedMethods, { url: string; adminUrl: string }>('node-red-callgrind', path.join(__dirname, 'nodered-process.js'), {
      execArgv: ['--expose-gc'],
      logFile: bench.logFile('node-red-callgrind'),
      wrapper: CallgrindCounter.wrapper(nodeRedOut),
    });
    loadgen = await Child.start<LoadgenMethods>('loadgen-callgrind', path.join(__dirname, 'loadgen.js'), {
      logFile: bench.logFile('loadgen-callgrind'),
      wrapper: CallgrindCounter.wrapper(loadgenOut),
    });
    const countedBench = new Bench(bench.sandbox, nodeRed, bench.loadgen, bench.available, bench.quick, bench.logFile);
    // Of the throughput flows, the floor and svc-geocode with the daily limit off (and its config).
    const fixed = throughputFlows(bench.sandboxUrl).filter((node) => node.type === 'tab' || node.type === 'svc-config' || /^(floor|geocode)-/.test(node.id));
    await countedBench.deploy([...fixed, ...leastNodeFlows(bench.sandboxUrl), ...countingGeocodeFlows(bench.sandboxUrl)]);
    const nodeRedCounter = new CallgrindCounter(pidOf(nodeRed), nodeRedOut);
    const loadgenCounter = new CallgrindCounter(pidOf(loadgen), loadgenOut);
    const countedLoadgen = loadgen;
    // The CPU part's requests, sent to the counted Node-RED.
    const requests = templates(countedBench, 0);
    const throughNodeRed = ({ origin, template }: Target): CountedFlow => ({
      counter: nodeRedCounter,
      send: (count) => countedBench.load({ origin, templates: [template], concurrency: 64, count }),
    });
    const raw = requests['raw undici'];
    const targets: Record<InstructionFlow, CountedFlow> = {
      floor: throughNodeRed(requests.floor),
      'least node': throughNodeRed(requests['least node']),
      'svc-geocode, counting': throughNodeRed(countingGeocode(requests['svc-geocode, daily limit off'])),
      'svc-geocode, daily limit off': throughNodeRed(requests['svc-geocode, daily limit off']),
      // Raw undici's client is the counted load generator itself, straight to the sandbox.
      'raw undici': {
        counter: loadgenCounter,
        send: (count) => countedLoadgen.call('run', { origin: raw.origin, templates: [raw.template], concurrency: 64, count }),
      },
    };
    return await countWindows(targets, [nodeRedCounter, loadgenCounter], { windows, messages, warmCount });
  } finally {
    await Promise.all([loadgen?.stop(), nodeRed?.stop()]);
    // The dump each process writes as it exits holds only its shutdown, after the last window; the windows' dumps stay.
    for (const file of [nodeRedOut, loadgenOut]) fs.rmSync(file, { force: true });
  }
}

/** A flow measured: the process whose instructions it costs, and how its messages are sent. */
interface CountedFlow {
  counter: CallgrindCounter;
  send: (count: number) => Promise<LoadResult>;
}

function pidOf(child: { name: string; pid: number | undefined }): number {
  if (child.pid === undefined) throw new Error(`${child.name} has no process id`);
  return child.pid;
}

async function countWindows(
  targets: Record<InstructionFlow, CountedFlow>,
  counters: CallgrindCounter[],
  { windows, messages, warmCount }: { windows: number; messages: number; warmCount: number },
): Promise<InstructionsResult> {
  for (const flow of INSTRUCTION_FLOWS) {
    const first = await targets[flow].send(warmCount);
    if (failures(first) > 0) throw new Error(`${flow}: warming up got ${JSON.stringify({ ...first.statuses, ...first.errors })}`);
  }
  for (const counter of counters) counter.start();
  const measured = new Map<InstructionFlow, { perMessage: number[]; parts: Array<Record<InstructionPart, number>>; failures: number }>(
    INSTRUCTION_FLOWS.map((flow) => [flow, { perMessage: [], parts: [], failures: 0 }]),
  );
  const files: string[] = [];
  for (let window = 0; window < windows; window++) {
    for (const flow of INSTRUCTION_FLOWS.map((_flow, i) => INSTRUCTION_FLOWS[(i + window) % INSTRUCTION_FLOWS.length])) {
      const { counter, send } = targets[flow];
      // The flow's own state (its connections, its code's feedback) as in a run of it, not as the flow before left it.
      await send(500);
      counter.zero();
      const result = await send(messages);
      const file = counter.dump(`${flow}-${window}`.replace(/[^a-z0-9-]+/gi, '-'));
      files.push(file);
      const parts = partsOf(file);
      const figures = measured.get(flow);
      if (!figures) continue;
      figures.failures += failures(result);
      const responses = Math.max(1, result.responsesInAll);
      const perPart = Object.fromEntries(INSTRUCTION_PARTS.map((part) => [part, parts[part] / responses])) as Record<InstructionPart, number>;
      figures.parts.push(perPart);
      figures.perMessage.push(INSTRUCTION_PARTS.filter((part) => !UNEVEN_PARTS.has(part)).reduce((sum, part) => sum + perPart[part], 0));
    }
  }
  const rows: InstructionRow[] = INSTRUCTION_FLOWS.map((flow) => {
    const figures = measured.get(flow) ?? { perMessage: [], parts: [], failures: 0 };
    return {
      flow,
      perMessage: spread(figures.perMessage),
      parts: Object.fromEntries(INSTRUCTION_PARTS.map((part) => [part, spread(figures.parts.map((p) => p[part])).median])) as Record<InstructionPart, number>,
      failures: figures.failures,
    };
  });
  const median = (flow: InstructionFlow) => rows.find((row) => row.flow === flow)?.perMessage.median ?? Number.NaN;
  const limit = median('floor') + median('raw undici');
  return {
    windows,
    messagesPerWindow: messages,
    rows,
    ratios: {
      countingOverLeastNode: median('svc-geocode, counting') / median('least node'),
      countingOverLimit: median('svc-geocode, counting') / limit,
      dailyLimitOffOverLimit: median('svc-geocode, daily limit off') / limit,
      leastNodeOverLimit: median('least node') / limit,
      dailyLimitOnOverOff: median('svc-geocode, counting') / median('svc-geocode, daily limit off'),
    },
    files,
  };
}
