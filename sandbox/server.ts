import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { JOB_RESULT_TTL_MS, MAX_ROUTING_JOBS } from './job-clock';

/**
 * The sandbox platform: a strict local implementation of the location platform interface
 * (../shared/spec/location-platform-interface.md) for tests, examples and `npm start`.
 * Each endpoint family lives in its own module and registers its routes here.
 */

/** How a route authenticates, as the spec's endpoint families do. */
export type AuthFamily = 'project' | 'vpm' | 'pubsub' | 'bearer' | 'none';

/** What an API key may call; a key lacking the permission gets 401, as the spec says. */
export type Permission = 'geocode' | 'bulk' | 'isoline' | 'sequence' | 'routing' | 'pubsub';

export interface Fault {
  /** Respond with this status instead of handling the request. */
  status?: number;
  /** Body sent with `status` (JSON error body by default). */
  body?: string;
  /** Retry-After header sent with `status` (seconds, or an HTTP date). */
  retryAfter?: string;
  /** More headers sent with `status` (a `location`, say). */
  headers?: Record<string, string>;
  /**
   * A platform that repeats what it was sent: responds with `status` (400 unless set) and the JSON text
   * this returns from the request as it arrived (its path, query, headers and body).
   */
  echo?: (request: EchoedRequest) => string;
  /** Wait before responding. */
  delayMs?: number;
  /** Destroy the connection without responding. */
  reset?: boolean;
  /** Never respond (until the sandbox closes). */
  hang?: boolean;
  /** Respond with 200 and a truncated, invalid JSON body. */
  malformedJson?: boolean;
  /** Send the body slowly: this many milliseconds between chunks. */
  slowBodyMs?: number;
  /** 429 with Retry-After beyond this many requests in any sliding minute. */
  rateLimitPerMinute?: number;
  /** Apply to this many requests only, then clear. */
  times?: number;
  /** Respond as the handler would (status, headers, declared length), but cut the connection halfway through the body. */
  truncateBody?: boolean;
  /** Respond with 200 and a JSON body of this many bytes, as fast as the client reads it (chunked unless `declareLength`). */
  hugeBodyBytes?: number;
  /** With `hugeBodyBytes`: state the size in Content-Length, as most servers do. */
  declareLength?: boolean;
  /** Respond with 200 and a JSON body that never ends, as fast as the client reads it. */
  endlessBody?: boolean;
  /** Respond with 200, then one byte of body every this many milliseconds, never ending. */
  dripMs?: number;
  /** Respond as the handler would, the body compressed in this Content-Encoding (its Content-Length adjusted). */
  contentEncoding?: ContentCoding;
  /** Respond with 200 and a compression bomb: a small body in this Content-Encoding that decodes to `bombBytes` of JSON filler. */
  compressionBomb?: ContentCoding;
  /** The decoded size of `compressionBomb` (64 MB by default). */
  bombBytes?: number;
  /** Respond with 200 declaring `Content-Encoding: gzip`, with a body that is not gzip. */
  brokenEncoding?: boolean;
  /** Chooses the fault for each request (none: handled normally), in place of this fault's own fields. */
  pick?: (endpoint: string) => Fault | undefined;
}

export type ContentCoding = 'gzip' | 'deflate' | 'br';

export interface EchoedRequest {
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface LoggedRequest {
  /** When the request reached the sandbox (its headers, before its body is read), by the sandbox's clock. */
  time: number;
  endpoint: string;
  method: string;
  path: string;
  query: Record<string, string>;
  /** The request target as it was sent: the path and its query, percent-encoded as the client wrote them. */
  target: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  status?: number;
  /** Body bytes a huge, endless or drip fault handed to the connection (the client read at most these). */
  faultBodyBytes?: number;
  /** When the connection of the response closed (for a fault body: when the client stopped reading). */
  closedAt?: number;
}

export interface RouteContext {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  url: URL;
  params: Record<string, string>;
  body: Buffer;
  sandbox: Sandbox;
  /** Parses the body as JSON, responding with 415 when the content type is not JSON and 400 when the body is not, and then returning undefined. */
  json(): unknown;
}

export type RouteHandler = (ctx: RouteContext) => void | Promise<void>;

interface RouteSpec {
  endpoint: string;
  auth: AuthFamily;
  permission?: Permission;
  /** The largest body the route reads (`SANDBOX_LIMITS.bodyBytes` unless given); a larger one gets 413. */
  maxBodyBytes?: number;
}

interface Route extends RouteSpec {
  method: string;
  pattern: RegExp;
  keys: string[];
  handler: RouteHandler;
}

/**
 * The sandbox's caps where the spec shows none (docs/sandbox.md lists them), so that no caller can make
 * it costly: beyond them a request is refused with the sandbox's JSON error body.
 */
export const SANDBOX_LIMITS = {
  /** Request bodies (JSON), bytes: 413 beyond. */
  bodyBytes: 1024 * 1024,
  /** Requests kept in `Sandbox.log` (the oldest are dropped), and the bodies they keep, bytes in all. */
  logEntries: 10_000,
  logBodyBytes: 64 * 1024 * 1024,
  /** Bearer and download tokens kept (each kind). */
  tokens: 10_000,
} as const;

/** Makes room for one more entry in `map` (at most `max`): forgets the stale entries, then the oldest. */
export function makeRoomIn<K, V>(map: Map<K, V>, max: number, stale: (value: V) => boolean): void {
  if (map.size < max) return;
  for (const [key, value] of map) if (stale(value)) map.delete(key);
  for (const key of map.keys()) {
    if (map.size < max) break;
    map.delete(key);
  }
}

/**
 * How closely the sandbox behaves like the platform beyond its interface: the spec's typical durations
 * and its limits for single geocode. All off unless asked for (`npm start` turns the durations on; see
 * `modes.ts` for the environment variables).
 */
export interface SandboxModes {
  /** Single geocodes take the spec's typical durations: 100–200 ms for a standard address, 700–800 ms for a descriptive one (landmark-based). */
  typicalDurations?: boolean;
  /** 429 with Retry-After beyond this many single geocodes per API key in any sliding minute (the spec recommends 80). */
  geocodeRatePerMinute?: number;
  /** 429 with Retry-After (until the next midnight UTC) beyond this many single geocodes per API key in a UTC day, by the sandbox's clock (the spec's limit is 50,000). */
  geocodeDailyLimit?: number;
}

/** The spec's limits for single geocode. */
export const SPEC_GEOCODE_LIMITS = { perMinute: 80, perDay: 50_000 } as const;

export interface SandboxOptions extends SandboxModes {
  port?: number;
  host?: string;
  clientId?: string;
  clientSecret?: string;
  audience?: string;
  projectId?: string;
  /** API keys for geocoding and routing, each with what it may call. */
  apiKeys?: Record<string, Permission[]>;
  pubsubApiKey?: string;
  /** Lifetime of issued tokens, seconds. */
  tokenLifetimeSec?: number;
  /** The time issued tokens (bearer and download) expire by; the system clock unless a test moves one by hand. */
  clock?: { now(): number };
  /** Which members the token response carries (the spec does not show them). */
  tokenResponse?: 'standard' | 'jwt-only' | 'opaque-no-expiry';
  /**
   * A test knob: jobs complete on their `jobPolls`-th status request instead of by the clock. Unset (the
   * default), jobs take a time that grows with their size (`job-clock.ts`) whether polled or not.
   */
  jobPolls?: number;
  /** Requests kept in `log`, the oldest dropped first (`SANDBOX_LIMITS.logEntries` unless given). */
  logLimit?: number;
  /** Multiplies every job's duration (1, the default: the sandbox's durations; 0: complete at once). */
  jobTimeScale?: number;
  /** How long a completed job's results are kept, ms (24 hours). */
  jobResultTtlMs?: number;
  /** Asynchronous routing jobs kept per family (isoline, sequence) before a new one gets 429 (`MAX_ROUTING_JOBS`; the jobs bench keeps 10,000). */
  maxRoutingJobs?: number;
  /** Where the sandbox says what it failed to do (each failed webhook attempt): one line each. Silent unless given. */
  warn?: (line: string) => void;
  /** Where the sandbox says what it did that no request shows (each webhook delivered): one line each. Silent unless given. */
  info?: (line: string) => void;
  /** Serve HTTPS with this key and certificate instead of plain HTTP (for the TLS option tests). */
  tls?: { key: string | Buffer; cert: string | Buffer };
}

export type SandboxModule = (sandbox: Sandbox) => void;

export const SANDBOX_DEFAULTS = {
  clientId: 'sandbox-client',
  clientSecret: 'sandbox-client-secret',
  audience: 'https://api.sandbox.svc/location',
  projectId: 'sandbox-project',
  apiKey: 'sandbox-api-key',
  geocodeOnlyApiKey: 'sandbox-geocode-only-key',
  pubsubApiKey: 'sandbox-pubsub-key',
} as const;

const ALL_PERMISSIONS: Permission[] = ['geocode', 'bulk', 'isoline', 'sequence', 'routing', 'pubsub'];

export class Sandbox {
  readonly options: Required<Omit<SandboxOptions, 'port' | 'host' | 'tls' | 'clock' | 'logLimit' | 'jobPolls' | 'warn' | 'info' | keyof SandboxModes>> & {
    jobPolls: number | undefined;
  };
  /** Says one line about something the sandbox failed to do (see `SandboxOptions.warn`). */
  readonly warn: (line: string) => void;
  /** Says one line about something the sandbox did (see `SandboxOptions.info`). */
  readonly info: (line: string) => void;
  readonly modes: SandboxModes;
  /** The time issued tokens expire by. */
  readonly clock: { now(): number };
  readonly log: LoggedRequest[] = [];
  /** Shared state for the endpoint modules (jobs, topics, issued tokens …), keyed by module. */
  readonly state = new Map<string, unknown>();
  url = '';
  private readonly routes: Route[] = [];
  private readonly faults = new Map<string, Fault>();
  private readonly hits = new Map<string, number[]>();
  /** Single geocodes per API key: their times in the last minute, and the day and count of the daily limit. */
  private readonly geocodeCounts = new Map<string, { times: number[]; day: string; count: number }>();
  /** The server `listen()` creates; none while the sandbox only serves through `handle` (mounted in another server). */
  private server?: http.Server | https.Server;
  private readonly logLimit: number;
  /** The body characters of the requests in `log`. */
  private logBodyBytes = 0;
  private readonly tls?: { key: string | Buffer; cert: string | Buffer };
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly closeHooks: Array<() => void | Promise<void>> = [];

  constructor(options: SandboxOptions = {}) {
    this.options = {
      clientId: options.clientId ?? SANDBOX_DEFAULTS.clientId,
      clientSecret: options.clientSecret ?? SANDBOX_DEFAULTS.clientSecret,
      audience: options.audience ?? SANDBOX_DEFAULTS.audience,
      projectId: options.projectId ?? SANDBOX_DEFAULTS.projectId,
      apiKeys: options.apiKeys ?? {
        [SANDBOX_DEFAULTS.apiKey]: ALL_PERMISSIONS,
        [SANDBOX_DEFAULTS.geocodeOnlyApiKey]: ['geocode'],
      },
      pubsubApiKey: options.pubsubApiKey ?? SANDBOX_DEFAULTS.pubsubApiKey,
      tokenLifetimeSec: options.tokenLifetimeSec ?? 3600,
      tokenResponse: options.tokenResponse ?? 'standard',
      jobPolls: options.jobPolls,
      jobTimeScale: options.jobTimeScale ?? 1,
      jobResultTtlMs: options.jobResultTtlMs ?? JOB_RESULT_TTL_MS,
      maxRoutingJobs: options.maxRoutingJobs ?? MAX_ROUTING_JOBS,
    };
    this.warn = options.warn ?? (() => undefined);
    this.info = options.info ?? (() => undefined);
    this.modes = {
      typicalDurations: options.typicalDurations ?? false,
      geocodeRatePerMinute: options.geocodeRatePerMinute,
      geocodeDailyLimit: options.geocodeDailyLimit,
    };
    this.clock = options.clock ?? { now: () => Date.now() };
    this.tls = options.tls;
    this.logLimit = options.logLimit ?? SANDBOX_LIMITS.logEntries;
  }

  /**
   * Handles one request, its path relative to the sandbox's root (`/v1/geocode`, say): what the server of
   * `listen()` calls, and what another server mounts to serve the sandbox below a path of its own. The
   * body is read from the request stream, so nothing may have read it before.
   */
  readonly handle = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    this.dispatch(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: 'internal', message: String(err) });
    });
  };

  /** Registers a route; `:name` segments become `params.name`. */
  route(method: string, path: string, spec: RouteSpec, handler: RouteHandler): void {
    const keys: string[] = [];
    const pattern = new RegExp(
      '^' +
        path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\/:(\w+)/g, (_m, key: string) => {
          keys.push(key);
          return '/([^/]+)';
        }) +
        '$',
    );
    this.routes.push({ method, pattern, keys, handler, ...spec });
  }

  use(module: SandboxModule): this {
    module(this);
    return this;
  }

  /** Switches a fault on for one endpoint name (see each module), or for every endpoint with `*`. */
  setFault(endpoint: string, fault: Fault): void {
    this.faults.set(endpoint, { ...fault });
  }

  clearFaults(): void {
    this.faults.clear();
    this.hits.clear();
  }

  /** Requests logged for one endpoint name. */
  requests(endpoint?: string): LoggedRequest[] {
    return endpoint ? this.log.filter((r) => r.endpoint === endpoint) : this.log;
  }

  /** Module state, created on first use. */
  stateOf<T>(key: string, create: () => T): T {
    if (!this.state.has(key)) this.state.set(key, create());
    return this.state.get(key) as T;
  }

  /** A timer the sandbox clears when it closes. */
  later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
  }

  /** Resolves after `ms` (or never, once the sandbox closes). */
  pause(ms: number): Promise<void> {
    return new Promise((resolve) => this.later(ms, resolve));
  }

  onClose(hook: () => void | Promise<void>): void {
    this.closeHooks.push(hook);
  }

  /** Creates the sandbox's own server (HTTPS with the `tls` option) and listens; resolves with its URL. */
  async listen(port = 0, host = '127.0.0.1'): Promise<string> {
    const server = this.tls ? https.createServer(this.tls, this.handle) : http.createServer(this.handle);
    server.keepAliveTimeout = 60_000;
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    const address = server.address() as AddressInfo;
    this.url = `${this.tls ? 'https' : 'http'}://${host}:${address.port}`;
    return this.url;
  }

  /** Stops the timers, runs the close hooks and closes the server of `listen()`, if any. */
  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const hook of this.closeHooks) await hook();
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Checks the credentials a family requires; responds with 401 and returns false when they are wrong. */
  authorize(ctx: RouteContext, auth: AuthFamily, permission?: Permission): boolean {
    const header = (name: string) => {
      const value = ctx.req.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const deny = (message: string) => {
      sendJson(ctx.res, 401, { error: 'unauthorized', message });
      return false;
    };
    switch (auth) {
      case 'project':
      case 'vpm': {
        const idHeader = auth === 'project' ? 'x-svc-project-id' : 'x-svc-vpm-id';
        if (header(idHeader) !== this.options.projectId) return deny(`missing or unknown ${idHeader}`);
        const key = header('x-svc-api-key');
        if (!key || !this.options.apiKeys[key]) return deny('missing or unknown x-svc-api-key');
        if (permission && !this.options.apiKeys[key].includes(permission)) {
          return deny(`this API key may not call the ${permission} endpoints`);
        }
        return true;
      }
      case 'pubsub':
        return header('apikey') === this.options.pubsubApiKey || deny('missing or unknown apikey');
      case 'bearer': {
        const match = /^Bearer (.+)$/.exec(header('authorization') ?? '');
        const tokens = this.stateOf('tokens', () => new Map<string, number>());
        const expiresAt = match ? tokens.get(match[1]) : undefined;
        if (expiresAt === undefined) return deny('missing or unknown bearer token');
        if (this.clock.now() >= expiresAt) return deny('token expired');
        return true;
      }
      case 'none':
        return true;
    }
  }

  private async dispatch(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const arrived = Date.now();
    const url = new URL(req.url ?? '/', 'http://sandbox');
    let params: Record<string, string> = {};
    const route = this.routes.find((r) => {
      if (r.method !== req.method) return false;
      const match = r.pattern.exec(url.pathname);
      if (!match) return false;
      params = Object.fromEntries(r.keys.map((key, i) => [key, decodeURIComponent(match[i + 1])]));
      return true;
    });
    const maxBodyBytes = route?.maxBodyBytes ?? SANDBOX_LIMITS.bodyBytes;
    const body = await readBody(req, maxBodyBytes);
    const entry: LoggedRequest = {
      time: arrived,
      endpoint: route?.endpoint ?? 'unknown',
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      target: req.url ?? '/',
      headers: req.headers,
      body: body === 'too large' ? '' : body.toString('utf8'),
    };
    this.keep(entry);
    res.on('finish', () => {
      entry.status = res.statusCode;
    });
    res.on('close', () => {
      entry.closedAt = Date.now();
    });
    if (body === 'too large') {
      // The rest of the body is not kept: once the refusal is sent the connection is ended, what still
      // arrives is dropped (a reset at once could discard the refusal before the client read it), and
      // it is cut after a second.
      res.setHeader('connection', 'close');
      res.on('finish', () => {
        req.resume();
        req.socket.end();
        this.later(1000, () => req.socket.destroy());
      });
      sendJson(res, 413, { error: 'payload_too_large', message: `the request body is larger than ${maxBodyBytes} bytes` });
      return;
    }
    if (!route) {
      const pathKnown = this.routes.some((r) => r.pattern.test(url.pathname));
      sendJson(res, pathKnown ? 405 : 404, { error: pathKnown ? 'method_not_allowed' : 'not_found', message: `${req.method} ${url.pathname}` });
      return;
    }
    const ctx: RouteContext = {
      req,
      res,
      url,
      params,
      body,
      sandbox: this,
      json: () => {
        // As a real service: a body is read as JSON only when its content type says so.
        if (!JSON_CONTENT_TYPE.test(req.headers['content-type'] ?? '')) {
          sendJson(res, 415, { error: 'unsupported_media_type', message: 'Content-Type must be application/json' });
          return undefined;
        }
        try {
          return JSON.parse(body.toString('utf8')) as unknown;
        } catch {
          sendJson(res, 400, { error: 'bad_request', message: 'body is not valid JSON' });
          return undefined;
        }
      },
    };
    // Credentials are checked first, as a real service's gateway does: a wrong key never meets an injected fault.
    if (!this.authorize(ctx, route.auth, route.permission)) return;
    if (route.endpoint === 'geocode' && this.overGeocodeLimits(ctx)) return;
    if (await this.applyFault(route.endpoint, ctx, entry)) return;
    await route.handler(ctx);
  }

  /** Logs a request, dropping the oldest beyond `logLimit` entries or `SANDBOX_LIMITS.logBodyBytes` of bodies. */
  private keep(entry: LoggedRequest): void {
    this.log.push(entry);
    this.logBodyBytes += entry.body.length;
    while (this.log.length > this.logLimit || (this.logBodyBytes > SANDBOX_LIMITS.logBodyBytes && this.log.length > 1)) {
      this.logBodyBytes -= (this.log.shift() as LoggedRequest).body.length;
    }
  }

  /**
   * The recommended rate and the daily limit of single geocode, when their modes are on: responds with
   * 429 and Retry-After (and returns true) beyond them. Refused requests are not counted.
   */
  private overGeocodeLimits(ctx: RouteContext): boolean {
    const { geocodeRatePerMinute: perMinute, geocodeDailyLimit: perDay } = this.modes;
    if (perMinute === undefined && perDay === undefined) return false;
    const now = this.clock.now();
    const day = new Date(now).toISOString().slice(0, 10);
    const key = String(ctx.req.headers['x-svc-api-key']);
    const counts = this.geocodeCounts.get(key) ?? { times: [], day, count: 0 };
    this.geocodeCounts.set(key, counts);
    counts.times = counts.times.filter((t) => t > now - 60_000);
    if (counts.day !== day) Object.assign(counts, { day, count: 0 });
    const refuse = (retryAfterMs: number, error: string, message: string) => {
      ctx.res.setHeader('retry-after', String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
      sendJson(ctx.res, 429, { error, message });
      return true;
    };
    if (perDay !== undefined && counts.count >= perDay) {
      return refuse(Date.parse(`${day}T00:00:00Z`) + 86_400_000 - now, 'daily_limit_exceeded', `more than ${perDay} geocode requests today (UTC)`);
    }
    if (perMinute !== undefined && counts.times.length >= perMinute) {
      return refuse(counts.times[0] + 60_000 - now, 'rate_limited', `more than ${perMinute} geocode requests per minute`);
    }
    counts.times.push(now);
    counts.count++;
    return false;
  }

  /** Returns true when a fault responded to (or swallowed) the request. */
  private async applyFault(endpoint: string, ctx: RouteContext, entry: LoggedRequest): Promise<boolean> {
    const configured = this.faults.get(endpoint) ?? this.faults.get('*');
    if (!configured) return false;
    if (configured.times !== undefined) {
      configured.times--;
      if (configured.times <= 0) this.faults.delete(this.faults.get(endpoint) === configured ? endpoint : '*');
    }
    const fault = configured.pick ? configured.pick(endpoint) : configured;
    if (!fault) return false;
    if (fault.rateLimitPerMinute !== undefined) {
      const now = Date.now();
      const hits = (this.hits.get(endpoint) ?? []).filter((t) => t > now - 60_000);
      if (hits.length >= fault.rateLimitPerMinute) {
        this.hits.set(endpoint, hits);
        const retryAfter = Math.max(1, Math.ceil((hits[0] + 60_000 - now) / 1000));
        ctx.res.setHeader('retry-after', String(retryAfter));
        sendJson(ctx.res, 429, { error: 'rate_limited', message: `more than ${fault.rateLimitPerMinute} requests per minute` });
        return true;
      }
      hits.push(now);
      this.hits.set(endpoint, hits);
    }
    if (fault.delayMs) await new Promise<void>((resolve) => this.later(fault.delayMs as number, resolve));
    if (fault.hang) return true;
    if (fault.reset) {
      ctx.req.socket.destroy();
      return true;
    }
    if (fault.contentEncoding) compressResponse(ctx.res, fault.contentEncoding);
    if (fault.echo) {
      ctx.res.writeHead(fault.status ?? 400, { 'content-type': 'application/json', ...fault.headers });
      ctx.res.end(fault.echo({ path: entry.path, query: entry.query, headers: ctx.req.headers, body: entry.body }));
      return true;
    }
    if (fault.status !== undefined) {
      if (fault.retryAfter !== undefined) ctx.res.setHeader('retry-after', fault.retryAfter);
      ctx.res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
      ctx.res.end(fault.body ?? JSON.stringify({ error: 'fault', message: `injected ${fault.status}` }));
      return true;
    }
    if (fault.hugeBodyBytes !== undefined || fault.endlessBody || fault.dripMs !== undefined) {
      streamFaultBody(ctx.res, fault, entry, (ms, fn) => this.later(ms, fn));
      return true;
    }
    if (fault.compressionBomb) {
      const body = await compressionBomb(fault.compressionBomb, fault.bombBytes ?? 64 * 1024 * 1024);
      entry.faultBodyBytes = body.length;
      ctx.res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': fault.compressionBomb, 'content-length': body.length });
      ctx.res.end(body);
      return true;
    }
    if (fault.brokenEncoding) {
      ctx.res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      ctx.res.end('{"this": "is not gzip"}');
      return true;
    }
    if (fault.malformedJson) {
      ctx.res.writeHead(200, { 'content-type': 'application/json' });
      ctx.res.end('{"type":"FeatureCollection","features":[{"type":"Feat');
      return true;
    }
    if (fault.truncateBody) {
      ctx.res.end = ((chunk?: unknown) => {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.isBuffer(chunk) ? chunk : Buffer.alloc(0);
        ctx.res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => ctx.req.socket.destroy());
        return ctx.res;
      }) as typeof ctx.res.end;
    }
    if (fault.slowBodyMs) {
      const original = ctx.res.end.bind(ctx.res);
      const slowEnd = (chunk?: unknown): http.ServerResponse => {
        const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : '';
        let offset = 0;
        const step = () => {
          if (ctx.res.destroyed) return;
          if (offset >= text.length) {
            original();
            return;
          }
          ctx.res.write(text.slice(offset, offset + 16));
          offset += 16;
          this.later(fault.slowBodyMs as number, step);
        };
        step();
        return ctx.res;
      };
      ctx.res.end = slowEnd as typeof ctx.res.end;
    }
    return false;
  }
}

const COMPRESSORS: Record<ContentCoding, () => zlib.Gzip | zlib.Deflate | zlib.BrotliCompress> = {
  gzip: () => zlib.createGzip({ level: 9 }),
  deflate: () => zlib.createDeflate({ level: 9 }),
  // Quality 5 keeps making the bomb fast; it is still about 100 bytes for 64 MB.
  br: () => zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } }),
};

/** The response's body (as the handler ends it) compressed, with Content-Encoding set and Content-Length adjusted. */
function compressResponse(res: http.ServerResponse, coding: ContentCoding): void {
  const writeHead = res.writeHead.bind(res) as (status: number, headers?: http.OutgoingHttpHeaders) => http.ServerResponse;
  const end = res.end.bind(res) as (chunk?: unknown) => http.ServerResponse;
  let status = 200;
  let headers: http.OutgoingHttpHeaders = {};
  res.writeHead = ((code: number, given?: http.OutgoingHttpHeaders) => {
    status = code;
    headers = { ...given };
    return res;
  }) as typeof res.writeHead;
  res.end = ((chunk?: unknown) => {
    const plain = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.isBuffer(chunk) ? chunk : Buffer.alloc(0);
    const compressor = COMPRESSORS[coding]();
    const parts: Buffer[] = [];
    compressor.on('data', (part: Buffer) => parts.push(part));
    compressor.on('end', () => {
      const body = Buffer.concat(parts);
      delete headers['content-length'];
      writeHead(status, { ...headers, 'content-encoding': coding, 'content-length': body.length });
      end(body);
    });
    compressor.end(plain);
    return res;
  }) as typeof res.end;
}

const bombs = new Map<string, Promise<Buffer>>();

/** JSON filler of `bytes` compressed in `coding`, made once per size and coding (64 MB of gzip is 64 KB, of br 100 bytes). */
function compressionBomb(coding: ContentCoding, bytes: number): Promise<Buffer> {
  const key = `${coding}:${bytes}`;
  let bomb = bombs.get(key);
  if (!bomb) {
    bomb = new Promise((resolve, reject) => {
      const compressor = COMPRESSORS[coding]();
      const parts: Buffer[] = [];
      compressor.on('data', (part: Buffer) => parts.push(part));
      compressor.on('end', () => resolve(Buffer.concat(parts)));
      compressor.on('error', reject);
      compressor.write(FILLER_OPEN);
      for (let left = bytes - FILLER_OPEN.length - FILLER_CLOSE.length; left > 0; left -= FILLER_CHUNK.length) {
        compressor.write(left < FILLER_CHUNK.length ? FILLER_CHUNK.subarray(0, left) : FILLER_CHUNK);
      }
      compressor.end(FILLER_CLOSE);
    });
    bombs.set(key, bomb);
  }
  return bomb;
}

/** A JSON text of filler: `{"filler":"xxx…"}`; endless ones never reach the closing `"}`. */
const FILLER_OPEN = Buffer.from('{"filler":"');
const FILLER_CLOSE = Buffer.from('"}');
const FILLER_CHUNK = Buffer.alloc(64 * 1024, 'x');

/**
 * Streams a huge, endless or dripping body, writing only as fast as the client reads (so the sandbox
 * holds no more than one chunk), and counts in `entry` the bytes handed to the connection.
 */
function streamFaultBody(res: http.ServerResponse, fault: Fault, entry: LoggedRequest, later: (ms: number, fn: () => void) => void): void {
  const size = fault.hugeBodyBytes;
  const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json' };
  if (size !== undefined && fault.declareLength) headers['content-length'] = size;
  res.writeHead(200, headers);
  let sent = 0;
  const write = (bytes: Buffer): boolean => {
    sent += bytes.length;
    entry.faultBodyBytes = sent;
    return res.write(bytes);
  };
  write(FILLER_OPEN);
  if (fault.dripMs !== undefined) {
    const drip = () => {
      if (res.destroyed) return;
      write(FILLER_CHUNK.subarray(0, 1));
      later(fault.dripMs as number, drip);
    };
    later(fault.dripMs, drip);
    return;
  }
  const pump = () => {
    while (!res.destroyed) {
      const left = size === undefined ? Infinity : size - FILLER_CLOSE.length - sent;
      if (left <= 0) {
        write(FILLER_CLOSE);
        res.end();
        return;
      }
      if (!write(left < FILLER_CHUNK.length ? FILLER_CHUNK.subarray(0, left) : FILLER_CHUNK)) {
        res.once('drain', pump);
        return;
      }
    }
  };
  pump();
}

/** `application/json` or a `+json` type, with or without parameters. */
const JSON_CONTENT_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;

export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * Whether an `Accept` header admits a response of media type `type` (RFC 9110, 12.5.1): no header, or an
 * empty one, admits anything; otherwise the most specific range that matches (`text/csv`, then
 * `text/*`, then `*\/*`) must have a quality above 0.
 */
export function accepts(header: string | undefined, type: string): boolean {
  if (header === undefined || header.trim() === '') return true;
  const [main, sub] = type.split(';')[0].trim().toLowerCase().split('/');
  let specificity = -1;
  let quality = 0;
  for (const range of header.split(',')) {
    const [media, ...params] = range.split(';');
    const [rangeMain, rangeSub] = media.trim().toLowerCase().split('/');
    const level = rangeMain === main && rangeSub === sub ? 2 : rangeMain === main && rangeSub === '*' ? 1 : rangeMain === '*' && rangeSub === '*' ? 0 : -1;
    if (level <= specificity) continue;
    const q = params.map((param) => param.trim().toLowerCase()).find((param) => param.startsWith('q='));
    specificity = level;
    quality = q === undefined ? 1 : Number(q.slice(2));
  }
  return specificity >= 0 && quality > 0;
}

/** 406 with the sandbox's JSON error body: the response would be of `type`, which the request's `Accept` does not admit. */
export function notAcceptable(res: http.ServerResponse, type: string, accept: string | undefined): void {
  sendJson(res, 406, { error: 'not_acceptable', message: `this response is ${type.split(';')[0]}; the request accepts only ${accept ?? ''}` });
}

/** 400 with the sandbox's JSON error body; returns false so validators can `return badRequest(...)`. */
export function badRequest(res: http.ServerResponse, message: string): false {
  sendJson(res, 400, { error: 'bad_request', message });
  return false;
}

/** The request's body, or 'too large' (nothing more kept) as soon as it is declared or found larger than `max` bytes. */
function readBody(req: http.IncomingMessage, max: number): Promise<Buffer | 'too large'> {
  if (Number(req.headers['content-length'] ?? 0) > max) return Promise.resolve('too large');
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        req.off('data', onData);
        req.pause();
        chunks.length = 0;
        resolve('too large');
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
