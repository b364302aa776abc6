import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { FaultInjector, type Fault } from './faults';
import { GeocodeLimits } from './geocode-limits';
import { jsonBody, readBody, sendJson } from './http';
import { JOB_RESULT_TTL_MS, MAX_ROUTING_JOBS } from './job-clock';
import { SANDBOX_DEFAULTS, SANDBOX_LIMITS, type AuthFamily, type LoggedRequest, type Permission, type SandboxModes, type SandboxOptions } from './options';

/**
 * The sandbox platform: a strict local implementation of the location platform interface
 * (../shared/spec/location-platform-interface.md) for tests, examples and `npm start`.
 * Each endpoint family lives in its own module and registers its routes here.
 */

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

export type SandboxModule = (sandbox: Sandbox) => void;

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
  private readonly faults = new FaultInjector((ms, fn) => this.later(ms, fn));
  private readonly geocodeLimits: GeocodeLimits;
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
    this.geocodeLimits = new GeocodeLimits(this.modes, this.clock);
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
    this.faults.set(endpoint, fault);
  }

  clearFaults(): void {
    this.faults.clear();
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
      json: () => jsonBody(req, res, body),
    };
    // Credentials are checked first, as a real service's gateway does: a wrong key never meets an injected fault.
    if (!this.authorize(ctx, route.auth, route.permission)) return;
    if (route.endpoint === 'geocode' && this.geocodeLimits.exceeded(req, res)) return;
    if (await this.faults.apply(route.endpoint, req, res, entry)) return;
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
}
