import type { Node, NodeAPI, OutputMessage } from './types';
import { clientFor } from './config';
import { jobStoreFor } from './resumable';
import { PollDefaults, PollSettings, pollingOf } from './settings';
import type { HandlerResult, InputContext, Resumable } from './runner';
import type { PlatformClient } from '../platform/client';
import type { JsonObject } from '../util/values';
import { ComputationJob, ComputationResult, JobState, awaitComputation, compute } from '../platform/jobs';

/** What tells one asynchronous computation (isoline, sequence) from another. */
interface ComputationKind {
  kind: ComputationJob['kind'];
  /** The status path of a job, given its id as one checked, percent-encoded path segment. */
  jobPath: (platform: PlatformClient, jobSegment: string) => string;
  /** True when a response body carries the finished result. */
  isResult: (body: unknown) => boolean;
}

/** A stored computation job: its state (job id, status path, when it was accepted, polls) and what its output needs. */
type StoredComputation<Output extends object> = Output & { state: JobState };

/**
 * The part every computation node shares: its client and polling, the request whose job is stored
 * (state and `output`, what building the output needs) as soon as the service accepts it and after
 * each poll, and the resuming of a stored job, which keeps its original wait limit. `defaults` are
 * the node's (defaults.ts).
 */
export function computationNode(RED: NodeAPI, node: Node, def: PollSettings & { server?: string }, defaults: PollDefaults, kind: ComputationKind) {
  const client = clientFor(RED, node, def.server, 'project');
  const polling = pollingOf(def, defaults);
  const jobOf = (platform: PlatformClient, context: InputContext, output: JsonObject): ComputationJob => ({
    client: platform,
    kind: kind.kind,
    jobPath: (jobSegment) => kind.jobPath(platform, jobSegment),
    isResult: kind.isResult,
    polling,
    context,
    // Built member by member: a spread with a member added gives each job's description a hidden class of its own in V8.
    onJob: (state) => context.track(Object.assign({}, output, { state: { ...state } })),
  });
  return {
    client,
    /** POSTs `body` to `path`; the response's body is the result, or a job that is stored with `output` and polled to it. */
    compute: (platform: PlatformClient, context: InputContext, path: string, body: Record<string, unknown>, output: JsonObject): Promise<ComputationResult> =>
      compute(jobOf(platform, context, output), path, body),
    /** How the node resumes a stored job: `finish` builds the output from the stored members and the job's result. */
    resumable: <Output extends object>(
      finish: (stored: StoredComputation<Output>, msg: OutputMessage, result: Promise<ComputationResult>) => Promise<HandlerResult>,
    ): Resumable => ({
      kind: kind.kind,
      store: jobStoreFor(RED, def.server),
      resume: (job, msg, context) => {
        const stored = job as unknown as StoredComputation<Output>;
        const { state, ...output } = stored;
        return finish(stored, msg, awaitComputation(jobOf(client(), context, output as JsonObject), { ...state }));
      },
    }),
  };
}
