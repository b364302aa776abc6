import { randomInt } from 'node:crypto';
import util from 'node:util';
import type { Fault, Sandbox } from '../../sandbox';
import { SANDBOX_DEFAULTS, helper, Fields } from './harness';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * What the fault suites share: a seeded random source (the seed is printed, so a failure can be
 * replayed with FAULT_SEED=<seed>), the menu of platform faults, a ledger of every message's
 * outcomes, a watch on unhandled rejections and uncaught exceptions, and a scan for secrets.
 */

export type Random = () => number;

/** mulberry32: a small seeded generator; the same seed gives the same sequence of choices. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FAULT_SEED when set (to replay a failure), else a fresh one; printed either way. */
export function suiteSeed(suite: string): number {
  const seed = process.env.FAULT_SEED ? Number(process.env.FAULT_SEED) : randomInt(0, 2 ** 31);
  console.log(`      ${suite}: seed ${seed} (replay with FAULT_SEED=${seed})`);
  return seed;
}

export function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)];
}

export function integer(random: Random, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

export interface NamedFault {
  name: string;
  fault: Fault;
}

/**
 * The faults a platform endpoint may show, as the issue lists them. `timeoutMs` is the config
 * node's request timeout: hangs and slow responses go past it.
 */
export function platformFaults(timeoutMs: number): NamedFault[] {
  return [
    { name: 'connection reset', fault: { reset: true } },
    { name: 'hang past the timeout', fault: { hang: true } },
    { name: 'delay past the timeout', fault: { delayMs: timeoutMs + 100 } },
    { name: 'delay within the timeout', fault: { delayMs: Math.floor(timeoutMs / 3) } },
    { name: '500', fault: { status: 500 } },
    { name: '502 with an HTML body', fault: { status: 502, body: '<html><body>Bad Gateway</body></html>' } },
    { name: '503', fault: { status: 503 } },
    { name: '429 with Retry-After in seconds', fault: { status: 429, retryAfter: '1' } },
    { name: '429 with Retry-After 0', fault: { status: 429, retryAfter: '0' } },
    { name: '429 with Retry-After as a date', fault: { status: 429, retryAfter: new Date(Date.now() + 1000).toUTCString() } },
    { name: '429 without Retry-After', fault: { status: 429 } },
    { name: 'malformed JSON', fault: { malformedJson: true } },
    { name: 'truncated body', fault: { truncateBody: true } },
    { name: 'slow body', fault: { slowBodyMs: 15 } },
    { name: 'slow body past the timeout', fault: { slowBodyMs: Math.ceil(timeoutMs / 4) } },
    { name: '401', fault: { status: 401 } },
  ];
}

/** The token endpoint down, in every way it can be. */
export function tokenEndpointFaults(timeoutMs: number): NamedFault[] {
  return [
    { name: 'token endpoint resets', fault: { reset: true } },
    { name: 'token endpoint hangs', fault: { hang: true } },
    { name: 'token endpoint 503', fault: { status: 503 } },
    { name: 'token endpoint 500 HTML', fault: { status: 500, body: '<html>down</html>' } },
    { name: 'token endpoint malformed JSON', fault: { malformedJson: true } },
    { name: 'token endpoint truncated', fault: { truncateBody: true } },
    { name: 'token endpoint slow past the timeout', fault: { delayMs: timeoutMs + 100 } },
    { name: 'token endpoint 429', fault: { status: 429, retryAfter: '1' } },
  ];
}

/**
 * Injects random faults on `endpoints`: each request there gets a fault from `menu` with probability
 * `rate`. Counts in `chosen` how often each fault is chosen, for the report of a failing run.
 */
export function stormFaults(
  sandbox: Sandbox,
  endpoints: string[],
  menu: NamedFault[],
  random: Random,
  rate: number,
  chosen = new Map<string, number>(),
): Map<string, number> {
  for (const endpoint of endpoints) {
    sandbox.setFault(endpoint, {
      pick: () => {
        if (random() >= rate) return undefined;
        const named = pick(random, menu);
        chosen.set(named.name, (chosen.get(named.name) ?? 0) + 1);
        return named.fault;
      },
    });
  }
  return chosen;
}

export interface ErrorOutcome {
  error: Error & Fields;
  msg: Fields | undefined;
}

/** The error's code as the node set it, else its class name. */
function codeOf(error: Error & Fields): string {
  return typeof error.code === 'string' ? error.code : error.name;
}

/**
 * Every output and every error of one node, by the `faultId` the test put on each message.
 * Errors reach it as Node-RED reports them: `done(err)` calls `node.error(err, msg)`.
 */
export class OutcomeLedger {
  readonly outputs = new Map<number, Fields[]>();
  readonly errors = new Map<number, ErrorOutcome[]>();
  /** Errors reported without the message, or with a message the test did not send. */
  readonly strayErrors: ErrorOutcome[] = [];
  private readonly detachers: Array<() => void> = [];

  constructor(nodeId: string, outId = 'out') {
    const node = helper.getNode(nodeId);
    const out = helper.getNode(outId);
    const onOutput = (msg: Fields) => {
      const id = msg.faultId;
      if (typeof id === 'number') this.outputs.set(id, [...(this.outputs.get(id) ?? []), msg]);
    };
    const onError = (call: { args: unknown[] }) => {
      const outcome: ErrorOutcome = { error: call.args[0] as Error & Fields, msg: call.args[1] as Fields | undefined };
      const id = outcome.msg?.faultId;
      if (typeof id === 'number') this.errors.set(id, [...(this.errors.get(id) ?? []), outcome]);
      else this.strayErrors.push(outcome);
    };
    out.on('input', onOutput);
    node.on('call:error', onError);
    this.detachers.push(
      () => out.removeListener('input', onOutput),
      () => node.removeListener('call:error', onError),
    );
  }

  count(id: number): number {
    return (this.outputs.get(id)?.length ?? 0) + (this.errors.get(id)?.length ?? 0);
  }

  /** Ids of `ids` without any outcome yet. */
  waiting(ids: number[]): number[] {
    return ids.filter((id) => this.count(id) === 0);
  }

  /** Every breach of "exactly one output or one error, never both, never neither". */
  violations(ids: number[]): string[] {
    const found: string[] = [];
    for (const id of ids) {
      const outputs = this.outputs.get(id)?.length ?? 0;
      const errors = this.errors.get(id) ?? [];
      if (outputs + errors.length === 1) continue;
      const what = errors.map((e) => `${codeOf(e.error)}: ${e.error.message}`).join('; ');
      found.push(`message ${id}: ${outputs} output(s), ${errors.length} error(s)${what ? ` (${what})` : ''}`);
    }
    for (const stray of this.strayErrors) found.push(`an error without its message: ${stray.error?.message ?? String(stray.error)}`);
    return found;
  }

  /** The errors and outputs, as `userVisibleTexts` takes them. */
  visible(): Array<{ where: string; value: unknown }> {
    const errors = [...this.errors.values()].flat().map(({ error }) => ({ where: 'error', value: error }));
    const strays = this.strayErrors.map(({ error }) => ({ where: 'error', value: error }));
    const outputs = [...this.outputs.values()].flat().map((msg) => ({ where: 'output', value: msg }));
    return [...errors, ...strays, ...outputs];
  }

  /** Error codes seen, for the report. */
  errorCodes(): Record<string, number> {
    const codes: Record<string, number> = {};
    for (const outcomes of this.errors.values()) {
      for (const { error } of outcomes) {
        const code = codeOf(error);
        codes[code] = (codes[code] ?? 0) + 1;
      }
    }
    return codes;
  }

  detach(): void {
    for (const detach of this.detachers.splice(0)) detach();
  }
}

/** Unhandled promise rejections and uncaught exceptions in this process while watched. */
export class ProcessFailures {
  readonly seen: string[] = [];
  private readonly onRejection = (reason: unknown) => this.seen.push(`unhandled rejection: ${describeError(reason)}`);
  private readonly onException = (err: unknown) => this.seen.push(`uncaught exception: ${describeError(err)}`);

  start(): void {
    process.on('unhandledRejection', this.onRejection);
    process.on('uncaughtException', this.onException);
  }

  stop(): void {
    process.removeListener('unhandledRejection', this.onRejection);
    process.removeListener('uncaughtException', this.onException);
  }
}

function describeError(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : util.inspect(err);
}

/** Everything a user could see: text written to stdout and stderr while captured. */
export class ConsoleCapture {
  readonly chunks: string[] = [];
  private restore: Array<() => void> = [];

  start(): void {
    for (const stream of [process.stdout, process.stderr]) {
      const original = stream.write.bind(stream);
      stream.write = (chunk: unknown, ...rest: unknown[]) => {
        this.chunks.push(typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk));
        return (original as (...args: unknown[]) => boolean)(chunk, ...rest);
      };
      this.restore.push(() => {
        stream.write = original;
      });
    }
  }

  stop(): void {
    for (const restore of this.restore.splice(0)) restore();
  }
}

/** The sandbox's credentials and every token it issued: none may appear anywhere a user can see. */
export function sandboxSecrets(sandbox: Sandbox): string[] {
  const tokens = sandbox.stateOf('tokens', () => new Map<string, number>());
  return [SANDBOX_DEFAULTS.clientSecret, SANDBOX_DEFAULTS.apiKey, SANDBOX_DEFAULTS.geocodeOnlyApiKey, SANDBOX_DEFAULTS.pubsubApiKey, ...tokens.keys()];
}

/** Renders a value the way a log or a debug sidebar would show it, error causes and all. */
export function visible(value: unknown): string {
  return util.inspect(value, { depth: 10, breakLength: Infinity, maxArrayLength: 10_000, maxStringLength: 1_000_000 });
}

/**
 * Texts the storm produced where a user could see them: Node-RED log lines, status texts of every
 * node, the console, and `seen` (errors and messages).
 */
export function userVisibleTexts(console: ConsoleCapture, seen: Array<{ where: string; value: unknown }>): Array<{ where: string; text: string }> {
  const texts: Array<{ where: string; text: string }> = [];
  const logSpy = helper.log() as unknown as { getCalls(): Array<{ args: unknown[] }> };
  for (const call of logSpy.getCalls()) texts.push({ where: 'log line', text: visible(call.args[0]) });
  // The helper spies on the Node prototype: this spy holds the status calls of every node.
  const statusSpy = helper.getNode('out').status as unknown as { getCalls(): Array<{ args: unknown[] }> };
  for (const call of statusSpy.getCalls()) texts.push({ where: 'status', text: visible(call.args[0]) });
  for (const chunk of console.chunks) texts.push({ where: 'console', text: chunk });
  for (const { where, value } of seen) texts.push({ where, text: visible(value) });
  return texts;
}

/** Where a secret shows up, e.g. `status: ...sandbox-api-key...`. */
export function leaks(texts: Array<{ where: string; text: string }>, secrets: string[]): string[] {
  const found: string[] = [];
  for (const { where, text } of texts) {
    for (const secret of secrets) {
      const at = text.indexOf(secret);
      if (at >= 0) found.push(`${where}: …${text.slice(Math.max(0, at - 80), at + secret.length + 40)}…`);
    }
  }
  return found;
}

/** Waits until `done()` holds, polling; resolves false at the deadline instead of throwing. */
export async function settle(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) return false;
    await sleep(25);
  }
  return true;
}
