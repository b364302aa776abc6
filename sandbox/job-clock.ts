/**
 * How long the sandbox's jobs (bulk geocode, asynchronous isoline and sequence) take and keep their
 * results, by the sandbox's clock, as a platform's do: a job runs whether it is polled or not, takes
 * a time that grows with its size, and its results expire `JOB_RESULT_TTL_MS` after it completes.
 * Tests may scale the durations (`jobTimeScale`) or count polls instead (`jobPolls`, a test knob).
 */

/** Asynchronous routing jobs kept per family (isoline, sequence) unless the sandbox's `maxRoutingJobs` says otherwise; see `makeRoom`. */
export const MAX_ROUTING_JOBS = 1000;

/** How long a job's results are kept once it has completed: 24 hours. */
export const JOB_RESULT_TTL_MS = 24 * 60 * 60_000;

/**
 * Each family's duration: `baseMs` plus `perItemMs` for each item (bulk: rows; isoline: polygons,
 * that is origins × ranges; sequence: waypoints). A 10-row bulk job takes 0.25 s, a 1,000-row one
 * 0.65 s, a 100,000-row one 40 s; an isoline of one range 0.5 s; a sequence of 10 waypoints 1.3 s.
 */
export const JOB_DURATIONS = {
  bulk: { baseMs: 250, perItemMs: 0.4 },
  isoline: { baseMs: 300, perItemMs: 200 },
  sequence: { baseMs: 300, perItemMs: 100 },
} as const;

type JobFamily = keyof typeof JOB_DURATIONS;

/** When a job was created and is (or was) ready, by the sandbox's clock, and the polls it had. */
export interface JobTiming {
  createdAt: number;
  /** When the job completes by the clock; unused when the job counts polls. */
  readyAt: number;
  polls: number;
  /** Set when the job completes on its polls (the `jobPolls` test knob) rather than by the clock. */
  pollsNeeded?: number;
  /** When the job completed: `readyAt`, or the time of its last needed poll. */
  completedAt?: number;
}

/** What the job clock reads of a sandbox: its clock and its job options (the Sandbox is one). */
interface JobClockHost {
  readonly clock: { now(): number };
  readonly options: { jobTimeScale: number; jobPolls?: number; jobResultTtlMs: number };
}

type JobPhase = { phase: 'running'; fraction: number } | { phase: 'complete' } | { phase: 'expired' };

/** The timing of a job of `items` items created now. */
export function newTiming(sandbox: JobClockHost, family: JobFamily, items: number): JobTiming {
  const { baseMs, perItemMs } = JOB_DURATIONS[family];
  const createdAt = sandbox.clock.now();
  const timing: JobTiming = { createdAt, readyAt: createdAt + Math.round((baseMs + perItemMs * items) * sandbox.options.jobTimeScale), polls: 0 };
  if (sandbox.options.jobPolls !== undefined) timing.pollsNeeded = sandbox.options.jobPolls;
  return timing;
}

/**
 * Where a job stands now. `poll` counts a status request first; `pollsNeeded` (a test's count of
 * polls) overrides the one the job was created with.
 */
export function phaseOf(sandbox: JobClockHost, timing: JobTiming, options: { poll?: boolean; pollsNeeded?: number } = {}): JobPhase {
  const now = sandbox.clock.now();
  if (options.poll) timing.polls++;
  const pollsNeeded = options.pollsNeeded ?? timing.pollsNeeded;
  if (timing.completedAt === undefined) {
    if (pollsNeeded !== undefined) {
      if (timing.polls < pollsNeeded) return { phase: 'running', fraction: timing.polls / pollsNeeded };
      timing.completedAt = now;
    } else {
      if (now < timing.readyAt) return { phase: 'running', fraction: (now - timing.createdAt) / Math.max(1, timing.readyAt - timing.createdAt) };
      timing.completedAt = timing.readyAt;
    }
  }
  return now >= timing.completedAt + sandbox.options.jobResultTtlMs ? { phase: 'expired' } : { phase: 'complete' };
}

/** Whether a job is still running, without counting a poll (for the state kept across restarts). */
function isRunning(sandbox: JobClockHost, timing: JobTiming, pollsNeeded?: number): boolean {
  return phaseOf(sandbox, { ...timing }, { pollsNeeded }).phase === 'running';
}

/** Whether a job's results have expired (it may then be forgotten). */
export function isExpired(sandbox: JobClockHost, timing: JobTiming, pollsNeeded?: number): boolean {
  return phaseOf(sandbox, { ...timing }, { pollsNeeded }).phase === 'expired';
}

/** The 410 body of a job whose results have expired. */
export function expiredBody(sandbox: JobClockHost, jobId: string): { error: string; message: string } {
  const hours = sandbox.options.jobResultTtlMs / 3_600_000;
  return { error: 'job_expired', message: `the results of job ${jobId} have expired (they are kept ${hours} hours after the job completes)` };
}

/**
 * Makes room for one more job among `jobs` (at most `max` kept): forgets expired jobs, then the
 * oldest completed ones. False when every kept job is still running (the caller refuses with 429).
 */
export function makeRoom<T extends JobTiming>(sandbox: JobClockHost, jobs: Map<string, T>, max: number, pollsNeeded?: number): boolean {
  for (const [id, job] of jobs) if (isExpired(sandbox, job, pollsNeeded)) jobs.delete(id);
  for (const [id, job] of jobs) {
    if (jobs.size < max) break;
    if (!isRunning(sandbox, job, pollsNeeded)) jobs.delete(id);
  }
  return jobs.size < max;
}

/** Responds 429 (too many jobs running) with the sandbox's error shape. */
export const TOO_MANY_JOBS = (max: number) => ({
  error: 'too_many_jobs',
  message: `at most ${max} jobs of this kind are kept; wait for running ones to complete`,
});
