import type { Node, NodeMessage, NodeMessageInFlow, OutputMessage } from './types';
import { SvcError, cancelled, describeCause } from '../util/errors';
import type { JobContext } from '../platform/jobs';
import type { JsonObject } from '../util/values';
import { NodeStatus } from './status';
import { failure } from './failure';
import { CatalogText, catalogText } from '../util/catalog-text';
import { ResumableJobs, StoredJobsOptions, TrackedJob } from './resumable';
import { MapBuilder, MapOutput, MapOutputDef, mapOutputOf, mapMessages } from './map-output';
import { drainOf } from './drain';
import { DueTimes } from '../util/due-times';
import { SYSTEM_CLOCK } from '../util/async';

/**
 * `signal` is aborted when the node closes (redeploy, shutdown), once the drain time is over: pass it to every request and wait.
 * `onWait` and `onProgress` (for platform requests and jobs) show queueing, retries and job progress in the status.
 */
export interface InputContext extends JobContext {
  status: NodeStatus;
  /** Stores this message's job description so that it resumes after a restart (only nodes given `resumable` store anything). */
  track: (job: JsonObject) => Promise<void>;
  /** Sends one of several messages for this input ahead of its outcome; the input is still done once, when the handler ends. */
  sendPart: (msg: OutputMessage, map?: MapBuilder) => void;
}

export interface HandlerResult {
  /** The output message; null when the handler sent its parts (`sendPart`) and nothing more goes out. */
  msg: OutputMessage | null;
  /** Shown after success; defaults to the HTTP status. */
  statusText?: CatalogText;
  /** What the result draws on the Map output; called only when the node has one. */
  map?: MapBuilder;
}

type InputHandler = (msg: NodeMessageInFlow, context: InputContext) => Promise<HandlerResult>;

/** A node whose jobs survive restarts: its kind, and how a stored job is polled to its output message. */
export interface Resumable extends StoredJobsOptions {
  /** Finishes a stored job as the input handler would, filling `msg` (the stored message, `resumed` set). */
  resume: (job: JsonObject, msg: OutputMessage, context: InputContext) => Promise<HandlerResult>;
}

interface InFlight {
  readonly controller: AbortController;
  running: boolean;
  /** Held back by the rate limit or the concurrency cap, counted in the status's waiting messages. */
  waiting: boolean;
  job?: TrackedJob;
}

/** A status lists the progress of at most this many runs at once, and counts more. */
const MAX_LISTED_RUNS = 3;

/** What one send carries: output 1's message, or one entry per output (the Map output's several messages an array). */
type Outputs = NodeMessage | Array<NodeMessage | NodeMessage[] | null>;
type Send = (msg: Outputs) => void;
type WithMap = (out: OutputMessage, map: MapBuilder | undefined) => Outputs;
type Done = (err?: Error) => void;
/** How an input's work ended: its result, or what it threw. */
type Outcome = { result: HandlerResult } | { error: unknown };

/** One input's outputs with the Map output: the layer cleared before its first map messages (when set), never again. */
function mapSender(output: MapOutput, input: NodeMessageInFlow): WithMap {
  let clear = output.clear;
  return (out, map) => {
    const messages = mapMessages(map, output, input, clear);
    clear = false;
    return [out, messages];
  };
}

/**
 * Wires a node's input to an async handler with Node-RED's send/done contract: exactly one output or one done(err) per
 * message, errors carrying `msg.statusCode` to Catch nodes, and everything under way aborted when the node closes, after
 * the config node's drain time (drain.ts). A stored job stops at the drain's start, as the next start carries it on.
 * With `resumable`, tracked jobs are stored and resumed when the node starts, each delivered at most once (ResumableJobs).
 * With a Map output, each result goes out in one send as `[output 1, map messages]`.
 */
export function handleInputs(node: Node, handler: InputHandler, def?: MapOutputDef, resumable?: Resumable): NodeStatus {
  const status = new NodeStatus(node);
  const mapOutput = mapOutputOf(def);
  let underWay = 0;
  /** Stops every message of the node when it closes: one controller for all, unless a stored job must stop alone (docs/performance.md). */
  const closing = new AbortController();
  const stored = resumable ? new ResumableJobs(node, resumable) : undefined;
  /** The messages under way with a controller of their own, stopped one by one at close; no set of every message, as its churn costs the collector. */
  const ownControllers = new Set<InFlight>();
  let removing = false;
  /** While the node drains: called as each message ends. */
  let draining: (() => void) | undefined;
  /** While several runs that report progress are under way, the status shows each one's last progress or outcome. */
  const runs = new Map<InFlight, CatalogText>();
  /** The waits of the node's jobs, timed in a heap of their own: its top is the node's next poll. */
  const jobTimers = new DueTimes(SYSTEM_CLOCK);
  /** Up to MAX_LISTED_RUNS runs are listed; more are counted, with the next poll when one is due. */
  const runsText = () => {
    if (runs.size <= MAX_LISTED_RUNS) return catalogText('status.runs', { count: runs.size, runs: [...runs.values()] });
    const count = runs.size.toLocaleString('en-US');
    const nextPoll = jobTimers.nextDueAt();
    if (nextPoll === undefined) return catalogText('status.manyRuns', { count });
    return catalogText('status.manyRunsNextPoll', { count, seconds: Math.max(0, Math.ceil((nextPoll - Date.now()) / 1000)) });
  };
  /** How many messages the rate limit or the concurrency cap holds back, shown after every status text. */
  let waiting = 0;
  const setWaiting = (message: InFlight, held: boolean, ratePerMinute?: number) => {
    if (message.waiting === held) return;
    message.waiting = held;
    waiting += held ? 1 : -1;
    status.waiting(waiting, ratePerMinute);
  };

  /** Runs one message (new or resumed) through `work`, then delivers its output or its error once. */
  function run(msg: NodeMessageInFlow, work: (context: InputContext) => Promise<HandlerResult>, send: Send, done: Done, key?: string): void {
    const controller = stored ? new AbortController() : closing;
    const job = stored?.job(msg, () => controller.abort(), key);
    const message: InFlight = { controller, running: true, waiting: false, job };
    underWay++;
    if (stored) ownControllers.add(message);
    status.underWay(underWay);
    status.requesting(underWay);
    const withMap = mapOutput && mapSender(mapOutput, msg);
    const context: InputContext = {
      signal: controller.signal,
      status,
      timers: jobTimers,
      onWait: (event) => {
        if (event.kind === 'queued') setWaiting(message, true, event.ratePerMinute);
        else if (event.kind === 'admitted') setWaiting(message, false);
        else if (event.kind === 'outage') status.outage(event.reason, event.delayMs);
        else status.retrying(event.attempt, event.reason);
      },
      onProgress: (text) => {
        runs.set(message, text);
        if (runs.size > 1) status.progressOfRuns(runsText);
        else status.progress(text);
      },
      track: async (description) => {
        await job?.track(description);
        // Stored while the node drains: the step that stored it is done, and the next start carries the job on.
        if (draining && job?.stored) controller.abort();
      },
      sendPart: (part, map) => send(withMap ? withMap(part, map) : part),
    };
    // Delivered once the work settles, with no async frame held meanwhile: a node may wait for thousands of jobs.
    // deliver() reports every failure of the message itself; what is left is a fault of the runner's own, logged rather than left unhandled.
    const deliverOutcome = (outcome: Outcome) =>
      deliver(msg, outcome, message, job, send, done, withMap).catch((err: unknown) => node.error(describeCause(err)));
    work(context).then(
      (result) => deliverOutcome({ result }),
      (error: unknown) => deliverOutcome({ error }),
    );
  }

  async function deliver(
    msg: NodeMessageInFlow,
    outcome: Outcome,
    message: InFlight,
    job: TrackedJob | undefined,
    send: Send,
    done: Done,
    withMap: WithMap | undefined,
  ): Promise<void> {
    const { controller } = message;
    try {
      if ('error' in outcome) {
        const err = outcome.error;
        throw controller.signal.aborted && !(err instanceof SvcError && err.code === 'INVALID_INPUT') ? cancelled('message') : err;
      }
      const { result } = outcome;
      if (controller.signal.aborted) throw cancelled('message');
      // Delivery is recorded before sending: a crash in between loses the result rather than sending it twice.
      if (job && !(await job.claimDelivery(controller.signal))) return done();
      const outputs = result.msg === null ? undefined : withMap ? withMap(result.msg, result.map) : result.msg;
      const statusCode = result.msg?.statusCode;
      const doneText = result.statusText ?? (typeof statusCode === 'number' ? String(statusCode) : 'ok');
      if (runs.size > 1 && runs.has(message) && typeof doneText !== 'string') {
        runs.set(message, doneText);
        const othersRunning = [...runs.keys()].some((other) => other !== message && other.running);
        if (othersRunning) status.progressOfRuns(runsText);
        else status.done(runsText());
      } else {
        runs.delete(message);
        status.done(doneText);
      }
      if (outputs) send(outputs);
      done();
    } catch (err) {
      if (controller.signal.aborted) {
        // A stored job interrupted by a restart or a deploy that keeps the node goes on in the next node: nothing to report here.
        if (!removing && job?.stored) return done();
      } else if (job && !(await job.claimDelivery(controller.signal))) {
        return done();
      }
      // The status of this failure, or none: never one an earlier node left on the message.
      const failed = msg as OutputMessage;
      if (err instanceof SvcError && err.statusCode !== undefined) failed.statusCode = err.statusCode;
      else delete failed.statusCode;
      const reported = failure(err);
      runs.delete(message);
      if (!controller.signal.aborted) status.error(reported);
      // An Error whose members Node-RED copies into msg.error are the failure's own (see failure.ts).
      done(reported);
    } finally {
      message.running = false;
      setWaiting(message, false);
      underWay--;
      status.underWay(underWay);
      ownControllers.delete(message);
      if (underWay === 0) runs.clear();
      job?.finished();
      draining?.();
    }
  }

  node.on('input', (msg, send, done) => run(msg, (context) => handler(msg, context), send, done));

  if (stored && resumable) {
    stored.resume((job, msg) =>
      run(
        msg,
        (context) => resumable.resume(job.job, msg, context),
        (out) => node.send(out),
        (err) => err && node.error(err, msg),
        job.key,
      ),
    );
  }

  /** Stops every message still under way, and resolves once the store is written (a store that cannot be written is reported). */
  function stop(): Promise<void> {
    draining = undefined;
    closing.abort();
    for (const { controller } of ownControllers) controller.abort();
    status.clear();
    const settled = stored ? stored.close(removing) : Promise.resolve();
    return settled.catch((err: unknown) => node.warn(describeCause(err)));
  }

  node.on('close', (removed: boolean, closeDone: () => void) => {
    removing = removed;
    stored?.stopResuming();
    const drain = drainOf(node);
    if (!drain || drain.ms === 0) return void stop().then(closeDone, closeDone);
    for (const { controller, job } of ownControllers) if (job?.stored) controller.abort();
    // The config node waits for this before it closes the client and shared state the messages use.
    const drained = new Promise<void>((resolve) => {
      const end = () => {
        clearTimeout(timer);
        resolve(stop());
      };
      const timer = setTimeout(end, drain.ms);
      draining = () => {
        if (underWay === 0) end();
        else status.show('yellow', 'ring', catalogText('status.draining', { count: underWay }));
      };
      draining();
    });
    drain.hold(drained);
    drained.then(closeDone, closeDone);
  });

  return status;
}
