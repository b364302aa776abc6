import type http from 'node:http';

/**
 * What a sandbox is made with: its options and their defaults, the caps it keeps, and the types its
 * modules share. Imports nothing of the sandbox.
 */

/** How a route authenticates, as the spec's endpoint families do. */
export type AuthFamily = 'project' | 'vpm' | 'pubsub' | 'bearer' | 'none';

/** What an API key may call; a key lacking the permission gets 401, as the spec says. */
export type Permission = 'geocode' | 'bulk' | 'isoline' | 'sequence' | 'routing' | 'pubsub';

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

export const SANDBOX_DEFAULTS = {
  clientId: 'sandbox-client',
  clientSecret: 'sandbox-client-secret',
  audience: 'https://api.sandbox.svc/location',
  projectId: 'sandbox-project',
  apiKey: 'sandbox-api-key',
  geocodeOnlyApiKey: 'sandbox-geocode-only-key',
  pubsubApiKey: 'sandbox-pubsub-key',
} as const;
