import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { serve } from './rpc';
import { latencySummary, LatencySummary } from './measure';
import { nowSeconds, signatureHeader } from './webhook-signing';

/**
 * The external load generator (its own process): `concurrency` workers, each on its own keep-alive
 * connection, send requests back to back and time them.
 */

export interface RequestTemplate {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  /** JSON text sent as the body. */
  body?: string;
  /**
   * Sign every request with this secret as the platform signs webhooks; the body is made unique per
   * request (`{"nonce":n,"data":<body>}`) so that no two requests look like a replay.
   */
  signWith?: string;
}

export interface LoadSpec {
  origin: string;
  /** Used in turn, one per request. */
  templates: RequestTemplate[];
  concurrency: number;
  /** Sent but not counted, so that connections, JIT and caches are warm when counting starts. */
  warmupMs?: number;
  /** How long to count; alternatively `count` requests in all, or until `stop` is called. */
  durationMs?: number;
  count?: number;
  untilStopped?: boolean;
  /** A request without a complete response within this is counted as an error. */
  timeoutMs?: number;
  /**
   * Open loop: requests start at this rate, at most `concurrency` under way, instead of each worker
   * sending its next request as soon as its last one has its response.
   */
  ratePerSecond?: number;
}

export interface LoadResult extends LatencySummary {
  /** Requests with a response within the counted phase. */
  requests: number;
  /** Responses in all, warm-up included (to share out CPU time measured around the whole run). */
  responsesInAll: number;
  durationMs: number;
  requestsPerSecond: number;
  /** Responses by HTTP status, and failures without a response by error code. */
  statuses: Record<string, number>;
  errors: Record<string, number>;
  /** CPU time this load generator used for the whole run (warm-up included), microseconds: the client side's cost. */
  clientCpuMicros: number;
}

let stopRunning: (() => void) | undefined;

async function run(spec: LoadSpec): Promise<LoadResult> {
  const timeoutMs = spec.timeoutMs ?? 30_000;
  const cpuBefore = process.cpuUsage();
  const pool = new Pool(spec.origin, {
    connections: spec.concurrency,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const errors: Record<string, number> = {};
  let counting = !(spec.warmupMs && spec.warmupMs > 0);
  let countingSince = performance.now();
  let countingUntil = Number.POSITIVE_INFINITY;
  let issued = 0;
  let responsesInAll = 0;
  let stopped = false;
  const pace = spec.ratePerSecond ? pacer(spec.ratePerSecond) : undefined;

  const more = () => !stopped && (spec.count === undefined || issued < spec.count);
  const worker = async () => {
    while (more()) {
      if (pace) {
        await pace.next();
        // The run may have stopped, or another worker sent the last request, while this one waited its turn.
        if (!more()) break;
      }
      const n = issued++;
      const { path, method, headers, body } = materialize(spec.templates[n % spec.templates.length], n);
      const started = performance.now();
      let outcome: { status?: number; error?: string };
      try {
        const res = await pool.request({ path, method, headers, body });
        await res.body.arrayBuffer();
        outcome = { status: res.statusCode };
      } catch (err) {
        const { code, name } = err as Error & { code?: string };
        outcome = { error: code ?? name };
      }
      const finished = performance.now();
      if (outcome.status !== undefined) responsesInAll++;
      if (!counting || started < countingSince || finished > countingUntil) continue;
      if (outcome.status !== undefined) {
        latencies.push(finished - started);
        statuses[outcome.status] = (statuses[outcome.status] ?? 0) + 1;
      } else {
        errors[outcome.error as string] = (errors[outcome.error as string] ?? 0) + 1;
      }
    }
  };

  const workers = Array.from({ length: spec.concurrency }, worker);
  if (!counting) {
    await sleep(spec.warmupMs as number);
    counting = true;
    countingSince = performance.now();
  }
  const stop = () => {
    countingUntil = performance.now();
    stopped = true;
    pace?.stop();
  };
  if (spec.untilStopped) {
    await new Promise<void>((resolve) => {
      stopRunning = resolve;
    });
    stop();
  } else if (spec.durationMs !== undefined) {
    await sleep(spec.durationMs);
    stop();
  }
  await Promise.all(workers);
  pace?.stop();
  if (countingUntil === Number.POSITIVE_INFINITY) countingUntil = performance.now();
  await pool.close();
  const cpuUsed = process.cpuUsage(cpuBefore);
  const durationMs = countingUntil - countingSince;
  return {
    requests: latencies.length,
    responsesInAll,
    durationMs,
    requestsPerSecond: latencies.length / (durationMs / 1000),
    ...latencySummary(latencies),
    statuses,
    errors,
    clientCpuMicros: cpuUsed.user + cpuUsed.system,
  };
}

/** Tickets at `ratePerSecond`, handed every 2 ms to the workers waiting for one: one timer, not one per request. */
function pacer(ratePerSecond: number): { next(): Promise<void>; stop(): void } {
  const waiting: Array<() => void> = [];
  const start = performance.now();
  let released = 0;
  const tick = setInterval(() => {
    const due = Math.floor(((performance.now() - start) * ratePerSecond) / 1000);
    while (released < due && waiting.length > 0) {
      released++;
      waiting.shift()?.();
    }
  }, 2);
  return {
    next: () => new Promise<void>((resolve) => waiting.push(resolve)),
    stop: () => {
      clearInterval(tick);
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

function materialize(template: RequestTemplate, n: number): { path: string; method: 'GET' | 'POST'; headers: Record<string, string>; body?: string } {
  const headers: Record<string, string> = { ...template.headers };
  if (template.body !== undefined) headers['content-type'] = 'application/json';
  if (!template.signWith) return { path: template.path, method: template.method, headers, body: template.body };
  const body = `{"nonce":${n},"data":${template.body ?? '{}'}}`;
  headers['svc-signature'] = signatureHeader(nowSeconds(), template.signWith, body);
  return { path: template.path, method: template.method, headers, body };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const methods = {
  run,
  stop: () => {
    stopRunning?.();
    stopRunning = undefined;
  },
};

export type LoadgenMethods = typeof methods;

if (require.main === module) serve(methods);
