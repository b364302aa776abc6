import type { CatalogText } from '../util/catalog-text';
import type { FormData } from 'undici';
import type { ConnectionOptions } from 'node:tls';
import type { Pacer } from './request-gate';
import type { Clock } from '../util/async';

/** The platform client's types only, so every module of the layer can name them without importing the client. */

/**
 * How a request authenticates, one per endpoint family of the spec:
 * - `project`: `x-svc-project-id` + `x-svc-api-key` (geocoding, bulk, isoline, sequence)
 * - `vpm`: `x-svc-vpm-id` + `x-svc-api-key` (standard routing)
 * - `pubsub`: `apikey` (data topics and subscriptions)
 * - `bearer`: `Authorization: Bearer <token>` (cell-words lookup)
 * - `none`: no credentials (following a download link that carries its own token)
 */
export type AuthScheme = 'project' | 'vpm' | 'pubsub' | 'bearer' | 'none';

/**
 * Which rate limit a request counts against: the spec's recommended rate is for single geocodes, so each other endpoint
 * family has its own (docs/configuration.md, Rate limits); `routing` and `bulk` include the status requests of their jobs.
 */
export type RateFamily = 'geocode' | 'words' | 'routing' | 'bulk' | 'topics';

export const RATE_FAMILIES: readonly RateFamily[] = ['geocode', 'words', 'routing', 'bulk', 'topics'];

/**
 * `read`: reads and computations; retried on network errors, 5xx and 429. `create`: requests that create or publish
 * something; retried only on 429 and on failures before the request was sent, so nothing is done twice.
 */
export type RetryPolicy = 'read' | 'create';

/** `json`: an API response, within `maxResponseBytes`; `buffer`: a file (bulk results), within `maxFileBytes`. */
export type ResponseKind = 'json' | 'buffer';

export interface PlatformRequest {
  auth: AuthScheme;
  rate: RateFamily;
  method: 'GET' | 'POST' | 'DELETE';
  /** Path below the base address (`baseUrl`, or `sandboxUrl` for `bearer`), already percent-encoded. */
  path?: string;
  /** Absolute address, used instead of `path` (for example a download link given by the service). */
  url?: string;
  query?: Record<string, string | number | boolean | undefined>;
  json?: unknown;
  form?: FormData;
  retry: RetryPolicy;
  /** `json` parses the body (empty body gives `undefined`); `buffer` returns the raw bytes. */
  response?: ResponseKind;
  signal?: AbortSignal;
  /** Secrets this request carries in its body, query or path: masked, as the credentials are, wherever the response repeats them. */
  secrets?: readonly string[];
  /** Called when the request has to wait for the rate limit or the concurrency cap, and when it retries. */
  onWait?: (event: WaitEvent) => void;
  /**
   * Called before every attempt is queued, as the platform counts each (the daily limit). What it throws ends the request,
   * unsent; when it returns nothing, the attempt goes on in the same turn.
   */
  beforeAttempt?: () => void | Promise<void>;
}

/** `outage`: an accepted job waits out a platform outage before its status or result is asked for again (see jobs.ts). */
export type WaitEvent =
  /** Held back by the rate limit (`ratePerMinute`, 0 for none) or the concurrency cap; `admitted` once it may go. */
  | { kind: 'queued'; position: number; ratePerMinute: number }
  | { kind: 'admitted' }
  | { kind: 'retry'; attempt: number; delayMs: number; reason: string }
  | { kind: 'outage'; delayMs: number; reason: string };

export interface PlatformResponse<T = unknown> {
  statusCode: number;
  body: T;
  /** The headers the pack reads, masked as the body is (see `redactHeader`); `''` when absent. */
  contentType: string;
  /** Where a created resource is (a bulk job's upload may say only there). */
  location: string;
  /** The wait a Retry-After header asks for, if any (a job's status response may say when to ask again). */
  retryAfterMs?: number;
}

export interface ProxySettings {
  url: string;
  noProxy?: string[];
  username?: string;
  password?: string;
}

export interface ClientCredentials {
  clientId?: string;
  clientSecret?: string;
  apiKey?: string;
  pubsubApiKey?: string;
}

/** The credentials that are secrets (a client id is not): masked wherever a response repeats them, never shown. */
export const SECRET_CREDENTIALS = ['clientSecret', 'apiKey', 'pubsubApiKey'] as const satisfies ReadonlyArray<keyof ClientCredentials>;
export type SecretCredential = (typeof SECRET_CREDENTIALS)[number];

export interface ClientConfig {
  /** How a refused credential's error names the config node ("svc-config 'Sandbox platform': API key refused …"). */
  name?: string;
  baseUrl: string;
  authUrl: string;
  sandboxUrl: string;
  audience: string;
  projectId: string;
  credentials: ClientCredentials;
  /** Why the built-in sandbox this configuration uses cannot be served by this Node-RED: a problem of every requirement. */
  sandboxUnavailable?: CatalogText;
  /** Per attempt, from sending the request to the last byte of the response. */
  timeoutMs: number;
  /** Largest JSON response read; past it the request is aborted and fails with BAD_RESPONSE. */
  maxResponseBytes: number;
  /** Largest file (a `buffer` response: bulk results) read, likewise. */
  maxFileBytes: number;
  /** Requests per minute (0 = off): single geocodes, or every request when `familyRates` is not given. */
  ratePerMinute: number;
  /** The rates of the other families (0 = off), each its own queue; without them every request goes through one queue at `ratePerMinute`. */
  familyRates?: Record<Exclude<RateFamily, 'geocode'>, number>;
  /** In flight at once, per queue. */
  maxConcurrency: number;
  /** Waiting at most, per queue. */
  maxQueue: number;
  /** A rate limit's schedule when it is shared with other instances (`geocode`'s for the one queue); the gate's own otherwise. */
  pacerFor?: (family: RateFamily) => Pacer;
  maxRetries: number;
  tokenLifetimeSec: number;
  clock?: Clock;
  tls?: ConnectionOptions;
  proxy?: ProxySettings;
}
