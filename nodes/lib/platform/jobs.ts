import { PlatformError } from '../util/errors';
import { Message, message } from '../util/messages';
import { sleep } from '../util/async';
import { PlatformClient, WaitEvent } from './client';

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
      throw new PlatformError('TIMEOUT', message('error.jobTimeout', { ms: options.maxWaitMs }));
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
export function jobFailed(status: unknown, reason: unknown): PlatformError {
  const detail = typeof reason === 'string' && reason !== '' ? `: ${reason}` : '';
  return new PlatformError('JOB_FAILED', message('error.jobFailed', { status: String(status), detail }));
}

/** How an asynchronous job is polled: first wait, growing by half each time, up to a limit. */
export interface Polling {
  intervalMs: number;
  maxWaitMs: number;
}

/** What a running job needs from its caller: cancellation, and where to report waits and progress. */
export interface JobContext {
  signal: AbortSignal;
  onWait: (event: WaitEvent) => void;
  onProgress: (text: Message) => void;
}

/** What polling a computation's job needs. */
export interface ComputationJob {
  client: PlatformClient;
  /** The status path of a job. */
  jobPath: (jobId: string) => string;
  /** True when an answer carries the finished result (for example an `isoline` member). */
  isResult: (body: unknown) => boolean;
  polling: Polling;
  context: JobContext;
}

export interface Computation extends ComputationJob {
  /** The POST path of the computation. */
  path: string;
  body: Record<string, unknown>;
  /** Called with the job id once the service answers with a job, before it is polled (to store it for a restart). */
  onJob?: (jobId: string) => Promise<void>;
}

export interface ComputationResult {
  body: unknown;
  statusCode: number;
  jobId?: string;
  polls: number;
}

/**
 * Runs a computation: the POST answer is the result, or a job handle `{jobId, status, message}`
 * that is polled until its answer carries the result, its status reads as failed, the wait runs out,
 * or the node closes.
 */
export async function compute(computation: Computation): Promise<ComputationResult> {
  const { client, context } = computation;
  const first = await client.request({
    auth: 'project',
    method: 'POST',
    path: computation.path,
    json: computation.body,
    retry: 'read',
    signal: context.signal,
    onWait: context.onWait,
  });
  if (computation.isResult(first.body)) return { body: first.body, statusCode: first.statusCode, polls: 0 };
  const handle = jobHandle(first.body);
  context.onProgress(handle.status === undefined ? message('status.jobAccepted') : message('status.job', { status: handle.status }));
  await computation.onJob?.(handle.jobId);
  return awaitComputation(computation, handle.jobId);
}

/** Polls a computation's job, started by `compute` or earlier (resumed after a restart), to its result. */
export async function awaitComputation(computation: ComputationJob, jobId: string): Promise<ComputationResult> {
  const { client, context } = computation;
  const { signal, onWait, onProgress } = context;
  let statusCode = 200;
  const { answer, polls } = await pollJob({
    signal,
    initialIntervalMs: computation.polling.intervalMs,
    maxWaitMs: computation.polling.maxWaitMs,
    poll: async (pollSignal) => {
      const res = await client.request({ auth: 'project', method: 'GET', path: computation.jobPath(jobId), retry: 'read', signal: pollSignal, onWait });
      statusCode = res.statusCode;
      return res.body;
    },
    result: (body) => {
      if (computation.isResult(body)) return body;
      const state = jobHandle(body, jobId);
      if (statusReadsAsFailed(state.status)) throw jobFailed(state.status, state.message);
      return undefined;
    },
    onPoll: (body, count) => {
      if (!computation.isResult(body)) {
        const { status } = jobHandle(body, jobId);
        onProgress(status === undefined ? message('status.jobRunningPoll', { poll: count }) : message('status.jobPoll', { status, poll: count }));
      }
    },
  });
  return { body: answer, statusCode, jobId, polls };
}

interface JobHandle {
  jobId: string;
  status?: string;
  message?: string;
}

/** Reads a job handle; a POST answer that is neither a result nor a handle is a bad response. */
function jobHandle(body: unknown, knownJobId?: string): JobHandle {
  const record = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const status = typeof record.status === 'string' ? record.status : undefined;
  const reason = typeof record.message === 'string' ? record.message : undefined;
  if (statusReadsAsFailed(status)) throw jobFailed(status, reason);
  const jobId = typeof record.jobId === 'string' || typeof record.jobId === 'number' ? String(record.jobId) : knownJobId;
  if (!jobId) {
    throw new PlatformError('BAD_RESPONSE', message('error.noJobHandle'), {
      body: JSON.stringify(body) ?? '',
    });
  }
  return { jobId, status, message: reason };
}

