import type { Express } from 'express';
import type { IncomingMessage, Server } from 'node:http';
import { PlatformError } from '../util/errors';
import { message } from '../util/messages';

/** The parts of an express router that adding and removing a route touch; the same in express 4 and 5. */
export interface RouterLayer {
  route?: { path: unknown; methods: Record<string, boolean | undefined>; stack: Array<{ handle: unknown }> };
}

/** The router's layers: `_router` in express 4, `router` in express 5 (express 4 throws on `router`). */
export function routerStack(app: Express): RouterLayer[] {
  const holder = app as unknown as { _router?: { stack: RouterLayer[] }; router?: { stack: RouterLayer[] } };
  try {
    return (holder._router ?? holder.router)?.stack ?? [];
  } catch {
    return [];
  }
}

/** Express matches paths ignoring case and a trailing slash by default. */
export function normalisePath(path: string): string {
  return path
    .replace(/\/{2,}/g, '/')
    .replace(/(.)\/$/, '$1')
    .toLowerCase();
}

export type RawBody = Buffer | 'too large' | 'consumed';

/** A request whose raw body is being kept by `keepRawBody`. */
type CapturedRequest = IncomingMessage & { svcRawBody?: Promise<Buffer | 'too large'>; _body?: boolean; body?: unknown };

interface Capture {
  /** Full paths (as the server sees them) whose raw body is kept, with their size limits. */
  paths: Map<string, number>;
  listener: (req: IncomingMessage) => void;
}
const captures = new WeakMap<Server, Capture>();

/**
 * Node-RED serves its editor API in front of RED.httpNode, and with the default roots (both "/") the
 * editor API's JSON parser reads every JSON request before any node route: the exact bytes are gone
 * by the time a route on RED.httpNode runs, and nodes cannot reach that parser. A receiver whose
 * signature covers those bytes registers its full path here; a listener placed first on the HTTP
 * server marks such requests as read (so every body parser skips them) and keeps their bytes.
 * Returns the function that unregisters the path; the listener goes with the last path.
 */
export function keepRawBody(server: Server | undefined, fullPath: string, limit: number): () => void {
  if (!server) return () => undefined;
  let capture = captures.get(server);
  if (!capture) {
    const paths = new Map<string, number>();
    capture = { paths, listener: captureListener(paths) };
    captures.set(server, capture);
    server.prependListener('request', capture.listener);
  }
  const key = normalisePath(fullPath);
  capture.paths.set(key, limit);
  const owned = capture;
  return () => {
    owned.paths.delete(key);
    if (owned.paths.size > 0) return;
    server.removeListener('request', owned.listener);
    captures.delete(server);
  };
}

function captureListener(paths: Map<string, number>): (req: IncomingMessage) => void {
  return (req) => {
    const limit = req.method === 'POST' ? paths.get(normalisePath((req.url ?? '').split('?')[0])) : undefined;
    if (limit === undefined) return;
    const captured = req as CapturedRequest;
    // body-parser (and the core nodes' raw parser) skip a request already marked as read.
    captured._body = true;
    const body = readBody(req, limit);
    // Handled here too: the route may never run (refused by httpNodeAuth, say).
    body.catch(() => undefined);
    captured.svcRawBody = body;
  };
}

/**
 * The body's exact bytes, or why there are none: kept by `keepRawBody`, read here from the stream,
 * or already consumed by some other body parser.
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
    req.on('error', reject);
    req.on('close', () => {
      if (!req.complete) reject(new PlatformError('NETWORK', message('error.webhook.clientClosed')));
    });
  });
}
