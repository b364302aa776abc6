import { ErrorCode, SvcError } from '../util/errors';

/**
 * When a job is asked about next. The spec gives no hint of a job's length in its status (only
 * `status` and a free-text `message`), so the pace follows the job's age: the configured interval
 * while the job is young, then a quarter of its age, at most MAX_PACED_WAIT_MS. A long job gets few
 * polls (their count grows with the log of its length), and a result is seen at most a quarter of the
 * job's time late. A status response with Retry-After sets the next wait instead (never below the
 * configured interval). Failed requests about an accepted job back off on their own (`outageDelay`).
 */

/** The longest wait between polls paced by age (or the configured interval, when longer). */
export const MAX_PACED_WAIT_MS = 60_000;
/** Once past its first polls, a job is polled again after this share of its age. */
const AGE_SHARE = 0.25;
/** The longest wait after failed requests unless `Polling.maxIntervalMs` says otherwise. */
const DEFAULT_MAX_INTERVAL_MS = 10_000;
/** The first wait after a request about an accepted job failed for a reason that passes; it doubles with each failure in a row. */
const OUTAGE_FIRST_WAIT_MS = 1000;
/**
 * Failures the platform recovers from (5xx, connections reset or refused, no response in time, 429):
 * an accepted job is asked about again after them. Anything else ends it: a refused credential, a
 * 404 for the job, another 4xx, a response that cannot be read, a certificate problem.
 */
const PASSING_FAILURES = new Set<ErrorCode>(['SERVER', 'NETWORK', 'TIMEOUT', 'RATE_LIMITED']);

/**
 * The wait before the next poll of a job `ageMs` old (since the platform accepted it): what the last
 * status response's Retry-After asked (`retryAfterMs`), else a quarter of its age up to
 * MAX_PACED_WAIT_MS; never below the configured `intervalMs`.
 */
export function pollDelay(intervalMs: number, ageMs: number, retryAfterMs?: number): number {
  return Math.max(intervalMs, retryAfterMs ?? Math.min(MAX_PACED_WAIT_MS, ageMs * AGE_SHARE));
}

/**
 * The wait before asking about an accepted job again after `failures` failed requests in a row
 * (the last one `error`): 1 s, doubling, at most `maxIntervalMs` (10 s unless set, never below the
 * interval), or longer when a 429 asks for it; undefined when `error` ends the job.
 */
export function outageDelay(error: unknown, failures: number, polling: { intervalMs: number; maxIntervalMs?: number }): number | undefined {
  if (!(error instanceof SvcError) || !PASSING_FAILURES.has(error.code)) return undefined;
  const longest = Math.max(polling.intervalMs, polling.maxIntervalMs ?? DEFAULT_MAX_INTERVAL_MS);
  const backoff = Math.min(longest, OUTAGE_FIRST_WAIT_MS * 2 ** (failures - 1));
  return Math.max(backoff, error.retryAfterMs ?? 0);
}
