import type { Express } from 'express';
import type { IncomingMessage, Server } from 'node:http';
import { captureRawBody } from '../webhook/raw-body';

/** The parts of an express router layer that this pack reads; the same in express 4 and 5. */
export interface RouterLayer {
  route?: { path: unknown; methods: Record<string, boolean | undefined>; stack: Array<{ handle: unknown }> };
  /** Express's own matcher (case, trailing slash and `:params` as the router applies them). */
  match?: (path: string) => boolean;
}

/** The router's layers: `_router` in express 4, `router` in express 5 (express 4 throws on `router`). */
function routerStack(app: Express): RouterLayer[] {
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

/** Characters that make a route path a pattern in express 4 or 5. */
const ROUTE_SYNTAX = /[:*?+()[\]{}|^$\\!]/g;

/** The characters of `path` that would make it a route pattern rather than one fixed path, in order, once each; empty for a fixed path. */
export function routeSyntaxIn(path: string): string {
  return [...new Set(path.match(ROUTE_SYNTAX) ?? [])].join(' ');
}

/** The path of a request target as express routes it, also of an absolute-form target (`POST http://host/hook`); else undefined. */
export function targetPath(url: string): string | undefined {
  const absolute = /^[a-z][a-z\d+.-]*:\/\/[^/?#]*/i.exec(url);
  if (!url.startsWith('/') && !absolute) return undefined;
  const rest = absolute ? url.slice(absolute[0].length) : url;
  const end = rest.search(/[?#]/);
  const path = end < 0 ? rest : rest.slice(0, end);
  return path === '' ? '/' : path;
}

/** `path` below a mount point such as httpNodeRoot (`/` or `/api/`), as express strips it; undefined when outside. */
export function belowRoot(path: string, root: string): string | undefined {
  const prefix = root.replace(/\/+$/, '');
  if (prefix === '') return path;
  if (path.slice(0, prefix.length).toLowerCase() !== prefix.toLowerCase()) return undefined;
  const rest = path.slice(prefix.length);
  if (rest !== '' && !rest.startsWith('/')) return undefined;
  return rest === '' ? '/' : rest;
}

function handlesMethod(layer: RouterLayer, method: string): boolean {
  return !!layer.route && (!!layer.route.methods[method] || !!layer.route.methods._all);
}

/** Whether express would hand `path` to this layer; a path its params cannot decode goes to it too (express responds with 400 there). */
function layerMatches(layer: RouterLayer, path: string): boolean {
  try {
    return layer.match?.(path) ?? false;
  } catch {
    return true;
  }
}

/** The route layer that would handle `method path` first (core nodes' handlers never pass a request on), or one with the same path text. */
export function routeFor(app: Express, method: string, path: string): RouterLayer | undefined {
  return routerStack(app).find(
    (layer) =>
      handlesMethod(layer, method) &&
      (layerMatches(layer, path) || (typeof layer.route?.path === 'string' && normalisePath(layer.route.path) === normalisePath(path))),
  );
}

function routeHolds(layer: RouterLayer, handler: unknown): boolean {
  return !!layer.route?.stack.some((entry) => entry.handle === handler);
}

/** Removes the route layers that hold this handler, and only those. */
export function removeRoute(app: Express, handler: unknown): void {
  const stack = routerStack(app);
  for (let i = stack.length - 1; i >= 0; i--) {
    if (routeHolds(stack[i], handler)) stack.splice(i, 1);
  }
}

/** The first path segments of Node-RED's editor and admin API, whose sub-apps RED.httpAdmin's router does not show. */
const EDITOR_SEGMENTS = new Set([
  'auth',
  'comms',
  'context',
  'credentials',
  'diagnostics',
  'favicon.ico',
  'flow',
  'flows',
  'icons',
  'library',
  'locales',
  'nodes',
  'plugins',
  'projects',
  'red',
  'resources',
  'settings',
  'theme',
  'types',
  'vendor',
]);

/**
 * The editor path that a POST to `fullPath` (as the server sees it) would reach, when Node-RED's
 * editor serves it: the editor API sits in front of RED.httpNode, so a node route there is never
 * reached, and anything that reads the body first would break deploys and logins.
 */
export function editorPathOf(fullPath: string, adminRoot: string | false | undefined, httpAdmin: Express | undefined): string | undefined {
  if (adminRoot === false) return undefined;
  const below = belowRoot(fullPath, adminRoot ?? '/');
  if (below === undefined) return undefined;
  const segment = normalisePath(below).split('/')[1] ?? '';
  const served =
    segment === '' ||
    EDITOR_SEGMENTS.has(segment) ||
    (httpAdmin !== undefined && routerStack(httpAdmin).some((layer) => layer.route && layerMatches(layer, below)));
  return served ? fullPath : undefined;
}

/** Where node routes and the editor live on the server: RED.httpNode at httpNodeRoot, RED.httpAdmin at httpAdminRoot. */
export interface HttpMounts {
  app: Express;
  /** httpNodeRoot: where `app` is mounted on the server. */
  root: string;
  adminRoot: string | false | undefined;
  admin: Express | undefined;
}

interface Capture extends HttpMounts {
  /** The route handlers whose requests' raw bodies are kept, with their size limits. */
  handlers: Map<unknown, number>;
  listener: (req: IncomingMessage) => void;
}
const captures = new WeakMap<Server, Capture>();

/**
 * Keeps the exact bytes of the POSTs a route handler registered here takes, which the editor API's JSON parser would
 * otherwise read first (with the default roots, both "/"). A listener placed first on the server keeps a request's bytes
 * only when the router hands it to the handler's own route for exactly that fixed path, and no editor path: every other
 * request is left alone. Returns the function that unregisters the handler.
 */
export function keepRawBody(server: Server | undefined, mounts: HttpMounts, handler: unknown, limit: number): () => void {
  if (!server) return () => undefined;
  let capture = captures.get(server);
  if (!capture) {
    const handlers = new Map<unknown, number>();
    const created: Capture = { ...mounts, handlers, listener: (req) => capture_(created, req) };
    capture = created;
    captures.set(server, capture);
    server.prependListener('request', capture.listener);
  }
  capture.handlers.set(handler, limit);
  const owned = capture;
  return () => {
    owned.handlers.delete(handler);
    if (owned.handlers.size > 0) return;
    server.removeListener('request', owned.listener);
    captures.delete(server);
  };
}

function capture_(capture: Capture, req: IncomingMessage): void {
  if (req.method !== 'POST') return;
  const target = targetPath(req.url ?? '');
  const path = target === undefined ? undefined : belowRoot(target, capture.root);
  if (path === undefined) return;
  const layer = routeFor(capture.app, 'post', path);
  const limit = layer?.route?.stack.map((entry) => capture.handlers.get(entry.handle)).find((found) => found !== undefined);
  if (limit === undefined) return;
  // The receiver's own path exactly, and none the editor serves (an admin route added since its deploy included).
  const own = layer?.route?.path;
  if (typeof own !== 'string' || normalisePath(own) !== normalisePath(path)) return;
  if (editorPathOf(target ?? '', capture.adminRoot, capture.admin) !== undefined) return;
  captureRawBody(req, limit);
}
