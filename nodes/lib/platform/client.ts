import type { Dispatcher, FormData } from 'undici';
import type { ConnectionOptions } from 'node:tls';
import { PlatformError, cancelled, invalidInput } from '../util/errors';
import { Pacer, RequestGate } from './request-gate';
import { TokenManager, TokenResponse } from './token-manager';
import { sleep } from '../util/async';
import { isHeaderValue, trimTrailing } from '../util/text';
import { Message, message } from '../util/messages';
import { ConfigError, ConfigProblem, Requirement, configProblems } from './config-check';
import { createDispatcher } from './dispatcher';
import { readAnswer, readTokenResponse } from './answer';
import { retryDelay, toPlatformError } from './retry';
import { MAX_SEGMENT_LENGTH, hasDotSegment } from './paths';

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
 * `read`: reads and computations; retried on network errors, 5xx and 429.
 * `create`: requests that create or publish something; retried only on 429 and on failures
 * before the request was sent, so nothing is done twice.
 */
export type RetryPolicy = 'read' | 'create';

/** `json`: an API answer, within `maxResponseBytes`; `buffer`: a file (bulk results), within `maxFileBytes`. */
export type ResponseKind = 'json' | 'buffer';

export interface PlatformRequest {
  auth: AuthScheme;
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
  /**
   * Secrets this request carries in its body, query or path (a subscription's `SecretToken` and
   * `WebhookHeader` value, a download token). With the configured credentials and the token the client
   * adds, they are masked wherever the answer repeats them: in errors, excerpts and the answer itself.
   */
  secrets?: readonly string[];
  /** Called when the request has to wait for the rate limit or the concurrency cap, and when it retries. */
  onWait?: (event: WaitEvent) => void;
}

/** `outage`: an accepted job waits out a platform outage before its status or result is asked for again (see jobs.ts). */
export type WaitEvent =
  | { kind: 'queued'; position: number }
  | { kind: 'retry'; attempt: number; delayMs: number; reason: string }
  | { kind: 'outage'; delayMs: number; reason: string };

export interface PlatformResponse<T = unknown> {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
  contentType: string;
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

export interface ClientConfig {
  /** How a refused credential's error names the config node ("svc-config 'Sandbox platform': API key refused …"). */
  name?: string;
  baseUrl: string;
  authUrl: string;
  sandboxUrl: string;
  audience: string;
  projectId: string;
  credentials: ClientCredentials;
  /** Per attempt, from sending the request to the last byte of the answer. */
  timeoutMs: number;
  /** Largest JSON answer read; past it the request is aborted and fails with BAD_RESPONSE. */
  maxResponseBytes: number;
  /** Largest file (a `buffer` answer: bulk results) read, likewise. */
  maxFileBytes: number;
  ratePerMinute: number;
  maxConcurrency: number;
  maxQueue: number;
  /** The rate limit's schedule when it is shared with other instances; the gate's own otherwise. */
  pacer?: Pacer;
  maxRetries: number;
  tokenLifetimeSec: number;
  tls?: ConnectionOptions;
  proxy?: ProxySettings;
}

/**
 * The one way the pack talks to the platform: one keep-alive dispatcher per config node
 * (`dispatcher.ts`), the spec's headers per endpoint family, timeouts, retries (`retry.ts`), rate
 * limiting and typed errors; answers are read by `answer.ts`.
 */
export class PlatformClient {
  readonly tokens: TokenManager;
  readonly gate: RequestGate;
  private readonly dispatcher: Dispatcher;
  private readonly secrets: string[];
  /** Aborted by close(): ends the shared token fetch and retry waits that no caller's signal covers. */
  private readonly lifetime = new AbortController();
  private readonly problems = new Map<Requirement, ConfigProblem[]>();

  constructor(private readonly config: ClientConfig) {
    this.dispatcher = createDispatcher(config);
    this.gate = new RequestGate({
      ratePerMinute: config.ratePerMinute,
      maxConcurrency: config.maxConcurrency,
      maxQueue: config.maxQueue,
      pacer: config.pacer,
    });
    this.tokens = new TokenManager({
      // The shared fetch follows the client's life, not one caller's signal (TokenManager passes none).
      fetchToken: () => this.fetchToken(this.lifetime.signal),
      defaultLifetimeSec: config.tokenLifetimeSec,
    });
    const { clientSecret, apiKey, pubsubApiKey } = config.credentials;
    const { username, password } = config.proxy ?? {};
    const proxyAuthorization = password ? Buffer.from(`${username ?? ''}:${password}`).toString('base64') : undefined;
    this.secrets = [clientSecret, apiKey, pubsubApiKey, password, proxyAuthorization].filter((s): s is string => !!s);
  }

  get projectId(): string {
    return this.config.projectId;
  }

  /** `{base_url}`: links the service hands out are resolved against it and compared with its origin. */
  get baseUrl(): string {
    return this.config.baseUrl;
  }

  /** What keeps this configuration from serving a requirement; empty when it can (the configuration never changes: worked out once). */
  problemsFor(requirement: Requirement): ConfigProblem[] {
    let problems = this.problems.get(requirement);
    if (!problems) {
      problems = configProblems(this.config, requirement);
      this.problems.set(requirement, problems);
    }
    return problems;
  }

  /** Sends a request to the platform, with the retries its policy allows; CONFIG_INVALID at once when the configuration cannot serve it. */
  async request<T = unknown>(req: PlatformRequest): Promise<PlatformResponse<T>> {
    this.refuseUnless(req.auth);
    let refreshedAfter401 = false;
    for (let attempt = 0; ; attempt++) {
      // Outside the try: a failed token fetch has made its own retries and is not retried again.
      const headers = await this.headersFor(req);
      const secrets = this.secretsOf(req, headers);
      try {
        return await this.attempt<T>(req, headers, secrets);
      } catch (err) {
        const error = toPlatformError(err, secrets);
        const staleToken = req.auth === 'bearer' ? headers.authorization?.slice('Bearer '.length) : undefined;
        if (error.code === 'UNAUTHORIZED' && staleToken && !refreshedAfter401) {
          // The token may have been revoked or expired early: drop it, fetch one more, try once more.
          refreshedAfter401 = true;
          this.tokens.invalidate(staleToken);
          continue;
        }
        const delayMs = attempt < this.config.maxRetries ? retryDelay(error, req.retry, attempt) : undefined;
        if (delayMs === undefined) throw this.namingRefusal(error, req.auth);
        req.onWait?.({ kind: 'retry', attempt: attempt + 1, delayMs, reason: error.code });
        // close() must end a retry wait even for a caller that passed no signal.
        await sleep(delayMs, req.signal ? AbortSignal.any([req.signal, this.lifetime.signal]) : this.lifetime.signal);
      }
    }
  }

  /** Requests a new token from the token endpoint (also used by the editor's "Test connection"). */
  async fetchToken(signal?: AbortSignal): Promise<TokenResponse> {
    this.refuseUnless('token');
    const { clientId, clientSecret } = this.config.credentials;
    const url = joinUrl(this.config.authUrl, '/oauth/token');
    const body = {
      client_id: clientId,
      client_secret: clientSecret,
      audience: this.config.audience,
      grant_type: 'client_credentials',
    };
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await this.send<unknown>(url, 'POST', { 'content-type': 'application/json' }, JSON.stringify(body), 'json', signal, this.secrets);
        return readTokenResponse(res.body);
      } catch (err) {
        const error = toPlatformError(err, this.secrets);
        const delayMs = attempt < this.config.maxRetries ? retryDelay(error, 'read', attempt) : undefined;
        if (delayMs === undefined) {
          if (error.code === 'UNAUTHORIZED' || error.code === 'FORBIDDEN') {
            throw new PlatformError(error.code, message('error.tokenRefused', { config: this.configName(), statusCode: String(error.statusCode) }), {
              statusCode: error.statusCode,
              saysWhatToDo: true,
              body: error.bodyExcerpt,
            });
          }
          throw error;
        }
        await sleep(delayMs, signal);
      }
    }
  }

  /** Aborts queued requests and closes every connection. */
  async close(): Promise<void> {
    this.lifetime.abort();
    this.gate.close();
    await this.dispatcher.destroy();
  }

  /**
   * A credential of this configuration refused (401, as the spec says the platform answers): the
   * error names the config node and the field to fix; its code and status stay.
   */
  private namingRefusal(error: PlatformError, auth: AuthScheme): PlatformError {
    const credential = REFUSED_CREDENTIAL[auth];
    if (error.code !== 'UNAUTHORIZED' || !credential) return error;
    return new PlatformError(error.code, message(`error.refused.${credential}`, { config: this.configName(), statusCode: String(error.statusCode) }), {
      statusCode: error.statusCode,
      saysWhatToDo: true,
      body: error.bodyExcerpt,
      cause: error,
    });
  }

  /** "svc-config 'Sandbox platform'", or "svc-config" for a client made without a name. */
  private configName(): Message {
    return this.config.name ? message('error.configName', { name: this.config.name }) : message('error.configUnnamed');
  }

  private refuseUnless(requirement: Requirement): void {
    const problems = this.problemsFor(requirement);
    if (problems.length > 0) throw new ConfigError(problems);
  }

  /** Every secret one request carries: the configured credentials, its own (`req.secrets`) and its bearer token. */
  private secretsOf(req: PlatformRequest, headers: Record<string, string>): string[] {
    const secrets = [...this.secrets, ...(req.secrets ?? [])];
    if (headers.authorization) secrets.push(headers.authorization.slice('Bearer '.length));
    return secrets;
  }

  private async attempt<T>(req: PlatformRequest, headers: Record<string, string>, secrets: readonly string[]): Promise<PlatformResponse<T>> {
    const url = this.urlFor(req);
    let body: string | FormData | undefined;
    if (req.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(req.json);
    } else if (req.form) {
      body = req.form;
    }
    const release = await this.gate.acquire(req.signal, (position) => req.onWait?.({ kind: 'queued', position }));
    try {
      return await this.send<T>(url, req.method, headers, body, req.response ?? 'json', req.signal, secrets);
    } finally {
      release();
    }
  }

  private limitFor(kind: ResponseKind): number {
    return kind === 'buffer' ? this.config.maxFileBytes : this.config.maxResponseBytes;
  }

  private async headersFor(req: PlatformRequest): Promise<Record<string, string>> {
    const headers: Record<string, string> = { accept: 'application/json' };
    const { apiKey, pubsubApiKey } = this.config.credentials;
    switch (req.auth) {
      // request() has checked that the family's settings are there.
      case 'project':
        headers['x-svc-project-id'] = this.config.projectId;
        headers['x-svc-api-key'] = apiKey as string;
        break;
      case 'vpm':
        headers['x-svc-vpm-id'] = this.config.projectId;
        headers['x-svc-api-key'] = apiKey as string;
        break;
      case 'pubsub':
        headers.apikey = pubsubApiKey as string;
        break;
      case 'bearer':
        headers.authorization = `Bearer ${await this.tokens.getToken(req.signal)}`;
        break;
      case 'none':
        headers.accept = '*/*';
        break;
    }
    return headers;
  }

  private urlFor(req: PlatformRequest): URL {
    const base = req.auth === 'bearer' ? this.config.sandboxUrl : this.config.baseUrl;
    // The last check: a path whose values were not made segments by `pathSegment` (a stored job's) climbs nowhere.
    if (req.path && hasDotSegment(req.path)) {
      throw invalidInput(
        message('error.pathSegment', { what: message('value.requestPath'), value: JSON.stringify(req.path.slice(0, 80)), max: MAX_SEGMENT_LENGTH }),
      );
    }
    const url = req.url ? new URL(req.url) : joinUrl(base, req.path ?? '/');
    for (const [name, value] of Object.entries(req.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url;
  }

  /** One HTTP exchange with a timeout; turns every failure into a PlatformError. */
  private async send<T>(
    url: URL,
    method: string,
    headers: Record<string, string>,
    body: string | FormData | undefined,
    kind: ResponseKind,
    signal: AbortSignal | undefined,
    secrets: readonly string[],
  ): Promise<PlatformResponse<T>> {
    if (signal?.aborted) throw cancelled();
    // A header value with CR, LF or NUL would split or end the request's head: refused before anything is sent.
    for (const [name, value] of Object.entries(headers)) {
      if (!isHeaderValue(value)) throw invalidInput(message('error.headerValue', { name }));
    }
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.config.timeoutMs);
    const onAbort = () => controller.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const res = await settleOnAbort(
        this.dispatcher.request({
          origin: url.origin,
          path: url.pathname + url.search,
          method: method,
          headers,
          body,
          signal: controller.signal,
        }),
        controller.signal,
      );
      // A server may echo what it was sent: no secret of the request comes back out of its answer.
      return await readAnswer<T>(res, kind, this.limitFor(kind), secrets);
    } catch (err) {
      if (timedOut) {
        throw new PlatformError('TIMEOUT', message('error.timeout', { ms: this.config.timeoutMs }), { cause: err });
      }
      if (signal?.aborted) throw cancelled();
      throw err;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}

/** Which credential a 401 refuses, by endpoint family (`none`: a link carrying its own token, not a credential of ours). */
const REFUSED_CREDENTIAL: Record<AuthScheme, 'apiKey' | 'topicsKey' | 'bearer' | undefined> = {
  project: 'apiKey',
  vpm: 'apiKey',
  pubsub: 'topicsKey',
  bearer: 'bearer',
  none: undefined,
};

function joinUrl(base: string, path: string): URL {
  return new URL(trimTrailing(base, '/') + (path.startsWith('/') ? path : `/${path}`));
}

/**
 * undici applies an abort to a request only once it is written to a connection: one still waiting
 * for its connection (a proxy that never opens the tunnel, a host that never answers) would outlive
 * its timeout. This settles at the abort whatever undici does; an answer that still comes is dropped.
 */
function settleOnAbort(pending: Promise<Dispatcher.ResponseData>, signal: AbortSignal): Promise<Dispatcher.ResponseData> {
  const aborted = () => (signal.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError'));
  if (signal.aborted) return Promise.reject(aborted());
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      reject(aborted());
      pending.then(
        (late) => late.body.destroy(),
        () => undefined,
      );
    };
    signal.addEventListener('abort', onAbort, { once: true });
    pending.then(
      (res) => {
        signal.removeEventListener('abort', onAbort);
        resolve(res);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
