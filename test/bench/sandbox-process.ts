import { Fault, LoggedRequest, Sandbox, startSandbox } from '../../sandbox';
import { expireAllTokens } from '../../sandbox/endpoints/auth';
import { bulkJobs } from '../../sandbox/endpoints/bulk';
import { addTopic } from '../../sandbox/pubsub-state';
import { runChild, serve } from './rpc';

/**
 * The sandbox platform in its own process. Its request log would grow by tens of thousands of
 * entries a second under load, so it is drained into counters; only the endpoints being traced
 * keep their entries (times, paths and bodies) for the benchmark to read.
 */

/** Responses per endpoint and HTTP status. */
export type StatusCounts = Record<string, Record<string, number>>;

export interface TracedRequest {
  time: number;
  endpoint: string;
  path: string;
  status: number;
}

export interface BulkJobTiming {
  jobId: string;
  rows: number;
  /** When the upload that created the job arrived. */
  uploadedAt: number;
  /** When the status poll that found the job complete arrived. */
  readyAt: number;
}

const DRAIN_INTERVAL_MS = 200;
/** A request without a response this long was reset or hung by a fault: forget it. */
const FORGET_WITHOUT_RESPONSE_MS = 120_000;

/** What the benchmark may ask of the sandbox; the log is drained on a timer from the moment this is called. */
function benchMethods(sandbox: Sandbox) {
  const counts: StatusCounts = {};
  const tracing = new Set<string>();
  const traced: LoggedRequest[] = [];

  const drain = () => {
    const now = Date.now();
    const waiting: LoggedRequest[] = [];
    for (const entry of sandbox.log) {
      if (entry.status === undefined) {
        if (now - entry.time < FORGET_WITHOUT_RESPONSE_MS) waiting.push(entry);
        continue;
      }
      const byStatus = (counts[entry.endpoint] ??= {});
      byStatus[entry.status] = (byStatus[entry.status] ?? 0) + 1;
      if (tracing.has(entry.endpoint)) traced.push(entry);
    }
    sandbox.log.splice(0, sandbox.log.length, ...waiting);
  };
  setInterval(drain, DRAIN_INTERVAL_MS).unref();

  return {
    configure: (options: { tokenLifetimeSec?: number }) => {
      if (options.tokenLifetimeSec !== undefined) sandbox.options.tokenLifetimeSec = options.tokenLifetimeSec;
    },
    setFault: ({ endpoint, fault }: { endpoint: string; fault: Fault }) => sandbox.setFault(endpoint, fault),
    clearFaults: () => sandbox.clearFaults(),
    expireTokens: () => expireAllTokens(sandbox),
    addTopic: (name: string) => addTopic(sandbox, name).id,
    /** Counts so far (responses up to now included). */
    counts: (): StatusCounts => {
      drain();
      return counts;
    },
    /** Keeps the requests of these endpoints from now on, until `traced` hands them over. */
    trace: (endpoints: string[]) => {
      drain();
      tracing.clear();
      traced.splice(0);
      for (const endpoint of endpoints) tracing.add(endpoint);
    },
    traced: (): TracedRequest[] => {
      drain();
      return traced.map(({ time, endpoint, path, status }) => ({ time, endpoint, path, status: status as number }));
    },
    /** When each bulk job was uploaded and when it was found complete, from the traced requests. */
    bulkJobTimings: (): BulkJobTiming[] => {
      drain();
      const uploadByFirstAddress = new Map<string, number>();
      for (const entry of traced.filter((e) => e.endpoint === 'bulk-upload' && e.status === 201)) {
        const start = entry.body.indexOf('address\r\n');
        if (start < 0) continue;
        const first = entry.body.slice(start + 'address\r\n'.length, entry.body.indexOf('\r\n', start + 'address\r\n'.length));
        uploadByFirstAddress.set(first, entry.time);
      }
      const lastPoll = new Map<string, number>();
      for (const entry of traced.filter((e) => e.endpoint === 'bulk-status' && e.status === 200)) {
        lastPoll.set(decodeURIComponent(entry.path.split('/').pop() as string), entry.time);
      }
      return [...bulkJobs(sandbox).values()].flatMap((job) => {
        const uploadedAt = uploadByFirstAddress.get(job.addresses[0]);
        const readyAt = lastPoll.get(job.id);
        return uploadedAt === undefined || readyAt === undefined ? [] : [{ jobId: job.id, rows: job.addresses.length, uploadedAt, readyAt }];
      });
    },
  };
}

export type SandboxMethods = ReturnType<typeof benchMethods>;

/** Starts the sandbox and serves the bench's methods; gives what stops it. */
async function main(): Promise<() => Promise<void>> {
  // BENCH_SANDBOX_JOBS (jobs.ts): routing jobs run by the clock for longer than the run, and this many are kept per family.
  const jobs = Number(process.env.BENCH_SANDBOX_JOBS);
  const sandbox = await startSandbox(jobs > 0 ? { jobTimeScale: 100_000, maxRoutingJobs: jobs } : { jobPolls: 2 });
  serve(benchMethods(sandbox), { url: sandbox.url });
  return () => sandbox.close();
}

if (require.main === module) runChild(main);
