import { PlatformError } from './errors';
import { sleep } from './platform-client';

export interface PollOptions<T> {
  /** One status request. */
  poll: (signal: AbortSignal) => Promise<T>;
  /** The finished result, or undefined while the job runs. Throw to end the job with an error. */
  result: (answer: T) => unknown;
  signal: AbortSignal;
  /** First wait, then growing by `factor` up to `maxIntervalMs`. */
  initialIntervalMs?: number;
  maxIntervalMs?: number;
  factor?: number;
  /** Overall limit; past it the job ends with TIMEOUT. */
  maxWaitMs: number;
  onPoll?: (answer: T, polls: number) => void;
}

/** Polls a job with a growing interval until it yields a result, fails, times out or is cancelled. */
export async function pollJob<T>(options: PollOptions<T>): Promise<{ answer: T; polls: number }> {
  const started = Date.now();
  const factor = options.factor ?? 1.5;
  const maxInterval = options.maxIntervalMs ?? 10_000;
  let interval = options.initialIntervalMs ?? 500;
  for (let polls = 1; ; polls++) {
    const remaining = options.maxWaitMs - (Date.now() - started);
    if (remaining <= 0) {
      throw new PlatformError('TIMEOUT', `the job did not finish within ${options.maxWaitMs} ms`);
    }
    await sleep(Math.min(interval, remaining), options.signal);
    const answer = await options.poll(options.signal);
    options.onPoll?.(answer, polls);
    if (options.result(answer) !== undefined) return { answer, polls };
    interval = Math.min(maxInterval, interval * factor);
  }
}

const FAILED_STATUS = /fail|error|cancel|abort|reject|expire/i;

/** Job status names are not in the spec: any status that reads as a failure ends the job. */
export function statusReadsAsFailed(status: unknown): boolean {
  return typeof status === 'string' && FAILED_STATUS.test(status);
}

/** The error for a job the service reports as failed, carrying its status and message. */
export function jobFailed(status: unknown, message: unknown): PlatformError {
  const detail = typeof message === 'string' && message !== '' ? `: ${message}` : '';
  return new PlatformError('JOB_FAILED', `the job ended with status "${String(status)}"${detail}`);
}

/** Reads a member by dotted path (`payload.links.download`), for user-configured overrides. */
export function memberAt(value: unknown, path: string): unknown {
  let current = value;
  for (const key of path.split('.').filter(Boolean)) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
