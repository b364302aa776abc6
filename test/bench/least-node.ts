import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import type { Node, NodeAPI, NodeDef, OutputMessage } from '../../nodes/lib/node-red/types';

/**
 * The least node (issue 31): a node of the bench's own that sends the bench's geocode request on one
 * undici pool with `dispatch()`, parses the response's JSON into `msg.payload` and sends the message on.
 * Nothing else: no input check, no timer, no status, no limit of any kind, no retry. It is what the
 * exchange itself costs a node in Node-RED, where the limit adds costs measured in two other processes.
 * The bench's Node-RED loads it from its user directory's `nodes` folder (see nodered-process.ts).
 */

export const LEAST_NODE_TYPE = 'bench-least-node';

interface LeastNodeDef extends NodeDef {
  origin: string;
  path: string;
  /** The request's headers, as JSON. */
  headers: string;
}

export function register(RED: NodeAPI): void {
  function LeastNode(this: Node, def: LeastNodeDef): void {
    RED.nodes.createNode(this, def);
    const pool = new Pool(def.origin);
    const options: Dispatcher.DispatchOptions = { path: def.path, method: 'POST', headers: JSON.parse(def.headers) as Record<string, string> };
    this.on('input', (msg, send, done) => {
      const chunks: Buffer[] = [];
      pool.dispatch(options, {
        // undici reads a handler without onRequestStart as one written to its older interface.
        onRequestStart: () => undefined,
        onResponseStart: () => undefined,
        onResponseData: (_controller, chunk: Buffer) => void chunks.push(chunk),
        onResponseEnd: () => {
          (msg as OutputMessage).payload = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
          send(msg);
          done();
        },
        onResponseError: (_controller, err) => done(err),
      });
    });
    this.on('close', (closed: () => void) => void pool.close().then(closed, closed));
  }
  RED.nodes.registerType(LEAST_NODE_TYPE, LeastNode);
}
