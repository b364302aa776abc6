import type { Node, NodeMessageInFlow, OutputMessage } from './inputs';
import { PlatformError, cancelled, describeCause } from '../util/errors';
import type { JobContext } from '../platform/jobs';
import { NodeStatus } from './status';
import { MapBuilder, MapOutputDef, mapLayerOf, mapMessage } from './map-output';

/**
 * `signal` is aborted when the node closes (redeploy, shutdown): pass it to every request and wait.
 * `onWait` and `onProgress` (for platform requests and jobs) show queueing, retries and job progress in the status.
 */
export interface InputContext extends JobContext {
  status: NodeStatus;
}

export interface HandlerResult {
  msg: OutputMessage;
  /** Short status text shown after success; defaults to the HTTP status. */
  statusText?: string;
  /** What the result draws on the Map output; called only when the node has one. */
  map?: MapBuilder;
}

export type InputHandler = (msg: NodeMessageInFlow, context: InputContext) => Promise<HandlerResult>;

/**
 * Wires a node's input to an async handler with Node-RED's send/done contract:
 * exactly one output or one done(err) per message, errors carrying `msg.statusCode` to Catch nodes,
 * status while requesting, and every request, wait and poll of the node aborted when it closes.
 * With a Map output (`def.worldmap`), each result goes out in the same one send as
 * `[output 1, map message]`.
 */
export function handleInputs(node: Node, handler: InputHandler, def?: MapOutputDef): NodeStatus {
  const status = new NodeStatus(node);
  const mapLayer = mapLayerOf(def);
  const inFlight = new Set<AbortController>();

  node.on('input', (msg, send, done) => {
    const controller = new AbortController();
    inFlight.add(controller);
    status.requesting(inFlight.size);
    const context: InputContext = {
      signal: controller.signal,
      status,
      onWait: (event) => {
        if (event.kind === 'queued') status.queued(event.position);
        else status.retrying(event.attempt, event.reason);
      },
      onProgress: (text) => status.progress(text),
    };
    handler(msg, context)
      .then(
        (result) => {
          if (controller.signal.aborted) throw cancelled('message');
          const outputs = mapLayer === undefined ? result.msg : [result.msg, mapMessage(result.map, mapLayer)];
          status.done(result.statusText ?? String(result.msg.statusCode ?? 'ok'));
          send(outputs);
          done();
        },
        (err: unknown) => {
          throw controller.signal.aborted && !(err instanceof PlatformError && err.code === 'INVALID_INPUT') ? cancelled('message') : err;
        },
      )
      .catch((err: unknown) => {
        // The status of this failure, or none: never one an earlier node left on the message.
        const failed = msg as OutputMessage;
        if (err instanceof PlatformError && err.statusCode !== undefined) failed.statusCode = err.statusCode;
        else delete failed.statusCode;
        if (!controller.signal.aborted) status.error(err);
        done(err instanceof Error ? err : new Error(describeCause(err)));
      })
      .finally(() => inFlight.delete(controller));
  });

  node.on('close', (_removed: boolean, closeDone: () => void) => {
    for (const controller of inFlight) controller.abort();
    status.clear();
    closeDone();
  });

  return status;
}
