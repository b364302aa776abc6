import { PlatformError, SvcError } from '../util/errors';
import { outageDelay, pollDelay } from './job-pacing';
import { redact } from '../util/masking';
import { CatalogText, catalogText } from '../util/catalog-text';
import { Clock, SYSTEM_CLOCK, sleep } from '../util/async';
import { DueTimes } from '../util/due-times';
import { Turns } from '../util/turns';
import type { RequestGate } from './request-gate';
import { isRecord, setMembers } from '../util/values';
import { PlatformClient } from './client';
import type { PlatformResponse, WaitEvent } from './types';
import { pathSegment } from './paths';

/** How a job is polled (paced as `pollDelay` says): the shortest wait between polls, and the overall limit. */
export interface Polling {
  intervalMs: number;
  maxWaitMs: number;
  /** The longest wait between requests after failed ones (10 s unless set; never below `intervalMs`; see `outageDelay`). */
  maxIntervalMs?: number;
}

/** What a running job needs from its caller: cancellation, and where to report waits and progress. */
export interface JobContext {
  signal: AbortSignal;
  onWait: (event: WaitEvent) => void;
  onProgress: (text: CatalogText) => void;
  /** Where the job's waits are timed (see `PollContext.timers`). */
  timers?: DueTimes;
}

/** The kinds of platform job; each has its own reader of status responses. */
export type JobKind = 'bulk-geocode' | 'isoline' | 'sequence';

/**
 * A platform job as plain JSON: everything needed to poll it, so that it can be stored and polled
 * again from this alone (after a restart, by another process). `pollJob` keeps it up to date.
 */
export interface JobState {
  kind: JobKind;
  jobId: string;
  statusPath: string;
  /** When the service accepted it (ms since the epoch): the wait limit counts from here. */
  createdAt: number;
  /** Status requests made so far (the wait between them grows with the job's age, see `pollDelay`). */
  polls: number;
  status?: string;
  /** The `message` of the job handle the service last reported, masked and short (see `jobMessage`), if any. */
  message?: string;
}

/** How one kind of job's status responses read. */
export interface JobReader<R> {
  /** What a finished job yields, for the timeout message ("a result", "a download link or token"). */
  awaiting: CatalogText;
  status(body: unknown): string | undefined;
  /** The message a response body reports about the job's progress, if this kind of job has one. */
  message?(body: unknown): string | undefined;
  /** The finished job's result, or undefined while it runs. Throws (JOB_FAILED) when the body says it failed. */
  result(body: unknown): R | undefined;
}

export interface PollContext {
  signal: AbortSignal;
  onWait: (event: WaitEvent) => void;
  /** Called after each status response, with the job state updated; the next poll waits for it. */
  onPoll?: (job: JobState) => void | Promise<void>;
  /** The time polls and waits go by; the system clock unless a test moves one by hand. */
  clock?: Clock;
  /** The heap the waits are timed in: a node's own, so that it can tell when its next poll is; else one shared per clock. */
  timers?: DueTimes;
}

interface Polled<R> {
  result: R;
  body: unknown;
  statusCode: number;
}

/** Every job's waits on one clock share one timer, a heap of due times (see DueTimes), unless given their own. */
const jobTimers = new WeakMap<Clock, DueTimes>();

function jobTimersOf(clock: Clock, given: DueTimes | undefined): DueTimes {
  if (given) return given;
  let timers = jobTimers.get(clock);
  if (!timers) {
    timers = new DueTimes(clock);
    jobTimers.set(clock, timers);
  }
  return timers;
}

/**
 * The one job poller: polls with a paced wait until the result, a failed status, the wait limit (counted from the job's
 * creation) or the signal. Works from the job state alone, so a stored job resumes; an outage does not end the job.
 */
export async function pollJob<R>(client: PlatformClient, job: JobState, reader: JobReader<R>, polling: Polling, context: PollContext): Promise<Polled<R>> {
  const clock = context.clock ?? SYSTEM_CLOCK;
  const deadline = job.createdAt + polling.maxWaitMs;
  const timers = jobTimersOf(clock, context.timers);
  // One async frame for the whole wait (not a wrapper around the loop): it is held for each job in flight.
  const ended = client.metrics.jobStarted(job.kind);
  try {
    /** The wait the last status response asked for (Retry-After), if any. */
    let askedMs: number | undefined;
    for (;;) {
      const now = clock.now();
      const remaining = deadline - now;
      if (remaining <= 0) throw jobTimedOut(job, reader.awaiting, polling);
      await sleep(Math.min(pollDelay(polling.intervalMs, now - job.createdAt, askedMs), remaining), context.signal, timers);
      const response = await askAboutJob(job, reader.awaiting, polling, context, () => fetchJobStatus(client, job, context));
      askedMs = response.retryAfterMs;
      job.polls++;
      job.status = reader.status(response.body) ?? job.status;
      job.message = reader.message?.(response.body) ?? job.message;
      await context.onPoll?.(job);
      const result = reader.result(response.body);
      if (result !== undefined) return { result, body: response.body, statusCode: response.statusCode };
    }
  } finally {
    ended();
  }
}

/**
 * A request about a job the platform has accepted, and may have charged for: a failure that passes (`outageDelay`) does
 * not end the job; it is made again after a growing wait until it succeeds, fails for good, or the wait limit runs out.
 */
export function askAboutJob<T>(job: JobState, awaiting: CatalogText, polling: Polling, context: PollContext, request: () => Promise<T>): Promise<T> {
  // No async frame until a request fails: a job whose request waits for a rate slot holds one less.
  return request().catch((err: unknown) => askAgain(err, job, awaiting, polling, context, request));
}

async function askAgain<T>(
  firstError: unknown,
  job: JobState,
  awaiting: CatalogText,
  polling: Polling,
  context: PollContext,
  request: () => Promise<T>,
): Promise<T> {
  const clock = context.clock ?? SYSTEM_CLOCK;
  const deadline = job.createdAt + polling.maxWaitMs;
  let err = firstError;
  for (let failures = 1; ; failures++) {
    const delayMs = outageDelay(err, failures, polling);
    if (delayMs === undefined || context.signal.aborted) throw err;
    const remaining = deadline - clock.now();
    if (remaining <= 0) throw jobTimedOut(job, awaiting, polling, err as SvcError);
    const wait = Math.min(delayMs, remaining);
    context.onWait({ kind: 'outage', reason: (err as SvcError).code, delayMs: wait });
    await sleep(wait, context.signal, jobTimersOf(clock, context.timers));
    try {
      return await request();
    } catch (next) {
      err = next;
    }
  }
}

function jobTimedOut(job: JobState, awaiting: CatalogText, polling: Polling, lastFailure?: SvcError): SvcError {
  const seen = lastFailure
    ? catalogText('value.lastFailure', { failure: lastFailure.text ?? lastFailure.message })
    : job.status === undefined
      ? catalogText('value.noStatusSeen')
      : catalogText('value.lastStatus', { status: job.status });
  return new PlatformError(
    'TIMEOUT',
    catalogText('error.jobTimedOut', { kind: job.kind, jobId: job.jobId, awaiting, seconds: polling.maxWaitMs / 1000, seen }),
    {
      cause: lastFailure,
    },
  );
}

const FAILED_STATUS = /fail|error|cancel|abort|reject|expire/i;

/**
 * Status requests under way (queued for a rate slot, or sent) per rate gate: enough to keep its concurrency busy. Polls
 * due beyond it wait for their turn in `Turns`, holding next to nothing rather than a queued request each, and new
 * requests are not queued behind them (docs/decisions.md, "Job polls take turns").
 */
const STATUS_REQUESTS_PER_GATE = 16;
const statusTurns = new WeakMap<RequestGate, Turns>();

/** One status request for a job, outside the polling loop too (a bulk job asked again for a fresh download link). */
export function fetchJobStatus(client: PlatformClient, job: JobState, context: PollContext): Promise<PlatformResponse> {
  // A job's status counts against the rate of the endpoint that started it.
  const rate = job.kind === 'bulk-geocode' ? 'bulk' : 'routing';
  const gate = client.gateFor(rate);
  let turns = statusTurns.get(gate);
  if (!turns) {
    turns = new Turns(STATUS_REQUESTS_PER_GATE);
    statusTurns.set(gate, turns);
  }
  return turns.run(context.signal, () =>
    client.request({ auth: 'project', rate, method: 'GET', path: job.statusPath, retry: 'read', signal: context.signal, onWait: context.onWait }),
  );
}

/** Job status names are not in the spec: any status that reads as a failure ends the job. */
export function statusReadsAsFailed(status: unknown): boolean {
  return typeof status === 'string' && FAILED_STATUS.test(status);
}

export function jobFailed(status: unknown, reason: unknown): SvcError {
  const detail = typeof reason === 'string' && reason !== '' ? `: ${reason}` : '';
  return new PlatformError('JOB_FAILED', catalogText('error.jobFailed', { status: String(status), detail }));
}

export interface ComputationJob {
  client: PlatformClient;
  kind: Exclude<JobKind, 'bulk-geocode'>;
  /** The status path of a job, given its id as one checked, percent-encoded path segment (see `pathSegment`). */
  jobPath: (jobSegment: string) => string;
  /** True when a response body carries the finished result (for example an `isoline` member). */
  isResult: (body: unknown) => boolean;
  polling: Polling;
  context: JobContext;
  /** Called with the job's state once accepted and after each poll, to store it: a resumed job keeps its deadline. */
  onJob?: (job: JobState) => Promise<void>;
}

export interface ComputationResult {
  body: unknown;
  statusCode: number;
  jobId?: string;
  polls: number;
  message?: string;
}

/** Runs a computation (POSTs `body` to `path`): the response's body is the result, or a job handle `{jobId, status, message}` polled to its result. */
export async function compute(computation: ComputationJob, path: string, body: Record<string, unknown>): Promise<ComputationResult> {
  const { client, context } = computation;
  const first = await client.request({
    auth: 'project',
    rate: 'routing',
    method: 'POST',
    path,
    json: body,
    retry: 'read',
    signal: context.signal,
    onWait: context.onWait,
  });
  if (computation.isResult(first.body)) return { body: first.body, statusCode: first.statusCode, polls: 0 };
  const jobId = handleJobId(first.body);
  const reader = computationReader(computation.isResult);
  const status = reader.status(first.body);
  const message = reader.message?.(first.body);
  context.onProgress(status === undefined ? catalogText('status.jobAccepted') : catalogText('status.job', { status: jobProgress(status, message) }));
  const job: JobState = {
    kind: computation.kind,
    jobId,
    statusPath: computation.jobPath(pathSegment(jobId, catalogText('label.jobId'), 'response')),
    createdAt: Date.now(),
    polls: 0,
    ...setMembers({ status, message }),
  };
  await computation.onJob?.(job);
  return awaitComputation(computation, job);
}

/** Polls a computation's job to its result, also a stored one resumed: its wait limit counts from when the service accepted it. */
export function awaitComputation(computation: ComputationJob, job: JobState): Promise<ComputationResult> {
  const { client, context } = computation;
  // Not an async frame of its own waiting for the poller: one less held for each job in flight.
  return pollJob(client, job, computationReader(computation.isResult), computation.polling, {
    signal: context.signal,
    onWait: context.onWait,
    timers: context.timers,
    onPoll: async (state) => {
      context.onProgress(
        state.status === undefined
          ? catalogText('status.jobRunningPoll', { poll: state.polls })
          : catalogText('status.jobPoll', { status: jobProgress(state.status, state.message), poll: state.polls }),
      );
      await computation.onJob?.(state);
    },
  }).then((polled) => ({ body: polled.body, statusCode: polled.statusCode, jobId: job.jobId, polls: job.polls, ...setMembers({ message: job.message }) }));
}

/** The longest job message kept (in `msg.jobs` and the stored job), and the longest shown in a status. */
const MAX_MESSAGE_LENGTH = 200;
const MAX_STATUS_MESSAGE_LENGTH = 40;

/** A job handle's `message` as the node passes it on: masked (the service may repeat a secret), on one line, shortened. */
export function jobMessage(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = redact(value).replace(/\s+/g, ' ').trim();
  return text === '' ? undefined : shortened(text, MAX_MESSAGE_LENGTH);
}

/** The job's status for its node's status, with its message shortened: "running: 40 % of the graph". */
function jobProgress(status: string, message: string | undefined): string {
  return message === undefined ? status : `${status}: ${shortened(message, MAX_STATUS_MESSAGE_LENGTH)}`;
}

function shortened(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** One reader per kind of result, made once: a job waiting for its next poll holds no reader of its own. */
const computationReaders = new WeakMap<(body: unknown) => boolean, JobReader<unknown>>();

/** Reads the status responses of an isoline or sequence job: `{jobId, status, message}` until one carries the result. */
export function computationReader(isResult: (body: unknown) => boolean): JobReader<unknown> {
  let reader = computationReaders.get(isResult);
  if (!reader) {
    reader = newComputationReader(isResult);
    computationReaders.set(isResult, reader);
  }
  return reader;
}

function newComputationReader(isResult: (body: unknown) => boolean): JobReader<unknown> {
  const member = (body: unknown, key: string) => (isRecord(body) && typeof body[key] === 'string' ? body[key] : undefined);
  return {
    awaiting: catalogText('value.result'),
    status: (body) => member(body, 'status'),
    message: (body) => jobMessage(member(body, 'message')),
    result: (body) => {
      if (isResult(body)) return body;
      const status = member(body, 'status');
      if (statusReadsAsFailed(status)) throw jobFailed(status, member(body, 'message'));
      return undefined;
    },
  };
}

/** The job id of a POST response that is not the result; a failed status or no id is an error. */
function handleJobId(body: unknown): string {
  const record = isRecord(body) ? body : {};
  if (statusReadsAsFailed(record.status)) throw jobFailed(record.status, record.message);
  if (typeof record.jobId === 'string' || typeof record.jobId === 'number') return String(record.jobId);
  throw new PlatformError('BAD_RESPONSE', catalogText('error.noJobHandle'), {
    body: JSON.stringify(body) ?? '',
  });
}
