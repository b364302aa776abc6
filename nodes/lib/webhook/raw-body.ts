import type { IncomingMessage } from 'node:http';
import { SvcError } from '../util/errors';
import { catalogText } from '../util/catalog-text';

/** The body's exact bytes, or why there are none: past the size limit, or read by some other body parser first. */
export type RawBody = Buffer | 'too large' | 'consumed';

/**
 * The sender hung up before its body was complete (CLIENT_CLOSED): nothing to respond to. Never
 * reported to a flow: the receiving node counts it with the requests that failed.
 */
export class ClientClosedError extends SvcError {
  /** `cause`: the stream's own error (Node's `aborted`, ECONNRESET), when it gave one. */
  constructor(cause?: unknown) {
    super('CLIENT_CLOSED', catalogText('error.webhook.clientClosed'), { cause });
  }
}

/** A request whose body `captureRawBody` is reading; `_body` is the mark body-parser (and Node-RED's raw parser) skip a request by. */
type CapturedRequest = IncomingMessage & { svcRawBody?: Promise<Buffer | 'too large'>; _body?: boolean; body?: unknown };

/** Starts reading the body now, before any body parser, and marks the request as read so that every parser skips it. */
export function captureRawBody(req: IncomingMessage, limit: number): void {
  const captured = req as CapturedRequest;
  captured._body = true;
  const body = readBody(req, limit);
  // Handled here too: the route may never run (refused by httpNodeAuth, say).
  body.catch(() => undefined);
  captured.svcRawBody = body;
}

/**
 * The body's exact bytes: kept by `captureRawBody`, read here from the stream, or `consumed` when
 * some other body parser read it first. Rejects with a ClientClosedError when the sender hangs up.
 */
export function rawBodyOf(req: IncomingMessage, limit: number): Promise<RawBody> {
  const captured = req as CapturedRequest;
  if (captured.svcRawBody !== undefined) return captured.svcRawBody;
  if (Buffer.isBuffer(captured.body)) return Promise.resolve(captured.body.length > limit ? 'too large' : captured.body);
  if (captured._body || req.readableEnded) return Promise.resolve('consumed');
  return readBody(req, limit);
}

/** Past the limit the rest is read and dropped (as express does) so the client sees a 413, not a reset. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = Number(req.headers['content-length']) > limit;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      if (tooLarge) chunks.length = 0;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(tooLarge ? 'too large' : Buffer.concat(chunks)));
    // An incomplete request ends in `error` (Node's `aborted`) and `close`, or in `close` alone: either way the sender hung up.
    req.on('error', (err) => reject(req.complete ? err : new ClientClosedError(err)));
    req.on('close', () => {
      if (!req.complete) reject(new ClientClosedError());
    });
  });
}
