import type { Dispatcher, FormData } from 'undici';
import { ConnectionSettings, InputError, PlatformError, SvcError, cancelled } from '../util/errors';
import { RequestGate } from './request-gate';
import { TokenManager, TokenResponse } from './token-manager';
import { sleep, whenAborted } from '../util/async';
import { isHeaderValue } from '../util/text';
import { CatalogText, catalogText } from '../util/catalog-text';
import { configInvalid, ConfigProblem, Requirement, configProblems } from './config-check';
import { createDispatcher } from './dispatcher';
import { bodyPlan, readResponse, readTokenResponse } from './response';
import { receive } from './body';
import { retryDelay, toSvcError } from './retry';
import { AddressSetting, RequestTarget, RequestTargets, addressOf } from './targets';
import { RATE_FAMILIES, SECRET_CREDENTIALS } from './types';
import { ClientMetrics, endedWith, endpointFamily, outcomeOf } from './metrics';
import type { AuthScheme, ClientConfig, PlatformRequest, PlatformResponse, RateFamily, ResponseKind } from './types';

/** The one way the pack talks to the platform: one keep-alive dispatcher per config node, headers, timeouts, retries, rate limits. */
export class PlatformClient {
  readonly tokens: TokenManager;
  readonly metrics = new ClientMetrics();
  /** The queue of each rate family; one queue for all of them without `familyRates`. */
  private readonly gates: ReadonlyMap<RateFamily, RequestGate>;
  private readonly dispatcher: Dispatcher;
  private readonly secrets: readonly string[];
  /** Aborted by close(): ends the shared token fetch and retry waits that no caller's signal covers. */
  private readonly lifetime = new AbortController();
  private readonly problems = new Map<Requirement, ConfigProblem[]>();
  private readonly targets: RequestTargets;

  constructor(private readonly config: ClientConfig) {
    this.dispatcher = createDispatcher(config);
    this.gates = gatesFor(config);
    this.targets = new RequestTargets(config);
    this.tokens = new TokenManager({
      // The shared fetch follows the client's life, not one caller's signal (TokenManager passes none).
      fetchToken: () => this.fetchToken(this.lifetime.signal),
      defaultLifetimeSec: config.tokenLifetimeSec,
    });
    const { username, password } = config.proxy ?? {};
    const proxyAuthorization = password ? Buffer.from(`${username ?? ''}:${password}`).toString('base64') : undefined;
    // Frozen: passed as it is with most requests, and its masking forms found by the list itself (util/masking.ts).
    const secrets = [...SECRET_CREDENTIALS.map((name) => config.credentials[name]), password, proxyAuthorization];
    this.secrets = Object.freeze(secrets.filter((s): s is string => !!s));
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

  gateFor(family: RateFamily): RequestGate {
    return this.gates.get(family) as RequestGate;
  }

  /**
   * Sends a request to the platform, with the retries its policy allows; CONFIG_INVALID at once when the configuration
   * cannot serve it. One async frame for all its attempts, as a request waiting for a rate slot holds it all that time.
   */
  async request<T = unknown>(req: PlatformRequest): Promise<PlatformResponse<T>> {
    const family = endpointFamily(req);
    try {
      this.refuseUnless(req.auth);
      let refreshedAfter401 = false;
      for (let attempt = 0; ; attempt++) {
        // Outside the inner try: what it throws (QUOTA_EXCEEDED) ends the request; so does a failed token fetch, which has made its own retries.
        const counted = req.beforeAttempt?.();
        if (counted) await counted;
        const token = req.auth === 'bearer' ? await this.tokens.getToken(req.signal) : undefined;
        const headers = this.headersFor(req.auth, token, req.response ?? 'json');
        const secrets = this.secretsOf(req, token);
        try {
          const response = await this.attempt<T>(req, headers, secrets);
          this.metrics.ended(family, outcomeOf(response.statusCode, ''));
          return response;
        } catch (err) {
          const error = toSvcError(err, secrets, this.connectionTo(addressOf(req)));
          if (error.statusCode === 429) this.metrics.rateLimited(family);
          if (error.code === 'UNAUTHORIZED' && token && !refreshedAfter401) {
            // The token may have been revoked or expired early: drop it, fetch one more, try once more.
            refreshedAfter401 = true;
            this.tokens.invalidate(token);
            continue;
          }
          const delayMs = attempt < this.config.maxRetries ? retryDelay(error, req.retry, attempt) : undefined;
          if (delayMs === undefined) throw this.namingRefusal(error, req.auth);
          this.metrics.retried(family);
          req.onWait?.({ kind: 'retry', attempt: attempt + 1, delayMs, reason: error.code });
          // close() must end a retry wait even for a caller that passed no signal.
          await sleep(delayMs, req.signal ? AbortSignal.any([req.signal, this.lifetime.signal]) : this.lifetime.signal, this.config.clock);
        }
      }
    } catch (err) {
      this.metrics.ended(family, endedWith(err));
      throw err;
    }
  }

  /** The queues of this client, each once, labelled by rate family ('all' for the one queue of every family). */
  queues(): Array<[string, RequestGate]> {
    return this.config.familyRates ? [...this.gates] : [['all', this.gateFor('geocode')]];
  }

  /** Requests a new token from the token endpoint (also used by the editor's "Test connection"). */
  async fetchToken(signal?: AbortSignal): Promise<TokenResponse> {
    this.refuseUnless('token');
    const { clientId, clientSecret } = this.config.credentials;
    const url = this.targets.at('authUrl', '/oauth/token');
    const body = {
      client_id: clientId,
      client_secret: clientSecret,
      audience: this.config.audience,
      grant_type: 'client_credentials',
    };
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await this.send<unknown>(url, 'POST', { 'content-type': 'application/json' }, JSON.stringify(body), 'json', signal, this.secrets);
        const token = readTokenResponse(res.body);
        this.metrics.ended('token', outcomeOf(res.statusCode, ''));
        return token;
      } catch (err) {
        const error = toSvcError(err, this.secrets, this.connectionTo('authUrl'));
        if (error.statusCode === 429) this.metrics.rateLimited('token');
        const delayMs = attempt < this.config.maxRetries ? retryDelay(error, 'read', attempt) : undefined;
        if (delayMs !== undefined) this.metrics.retried('token');
        else this.metrics.ended('token', outcomeOf(error.statusCode, error.code));
        if (delayMs === undefined) {
          if (error.code === 'UNAUTHORIZED' || error.code === 'FORBIDDEN') {
            throw new PlatformError(error.code, catalogText('error.tokenRefused', { config: this.configName(), statusCode: String(error.statusCode) }), {
              statusCode: error.statusCode,
              saysWhatToDo: true,
              body: error.bodyExcerpt,
            });
          }
          throw error;
        }
        await sleep(delayMs, signal, this.config.clock);
      }
    }
  }

  async close(): Promise<void> {
    this.lifetime.abort();
    for (const gate of new Set(this.gates.values())) gate.close();
    await this.dispatcher.destroy();
  }

  /** A credential refused (401): the error names the config node and the field to fix; its code and status stay. */
  private namingRefusal(error: SvcError, auth: AuthScheme): SvcError {
    const credential = REFUSED_CREDENTIAL[auth];
    if (error.code !== 'UNAUTHORIZED' || !credential) return error;
    return new PlatformError(error.code, catalogText(`error.refused.${credential}`, { config: this.configName(), statusCode: String(error.statusCode) }), {
      statusCode: error.statusCode,
      saysWhatToDo: true,
      body: error.bodyExcerpt,
      cause: error,
    });
  }

  /** The settings a connection to the address of `setting` depends on: named when it fails (at run time and by Test connection). */
  private connectionTo(setting: AddressSetting): ConnectionSettings {
    return { address: catalogText(`field.${setting}`), proxy: this.config.proxy !== undefined };
  }

  /** "svc-config 'Sandbox platform'", or "svc-config" for a client made without a name. */
  private configName(): CatalogText {
    return this.config.name ? catalogText('error.configName', { name: this.config.name }) : catalogText('error.configUnnamed');
  }

  private refuseUnless(requirement: Requirement): void {
    const problems = this.problemsFor(requirement);
    if (problems.length > 0) throw configInvalid(problems);
  }

  /** Every secret one request carries; for most, the configured ones alone: the same list, whose masking forms are worked out once. */
  private secretsOf(req: PlatformRequest, token: string | undefined): readonly string[] {
    if (!req.secrets?.length && !token) return this.secrets;
    const secrets = [...this.secrets, ...(req.secrets ?? [])];
    if (token) secrets.push(token);
    return secrets;
  }

  /** One attempt: admitted by the rate gate, then sent. A request waiting in the gate's queue holds no async frame of its own. */
  private attempt<T>(req: PlatformRequest, headers: Record<string, string>, secrets: readonly string[]): Promise<PlatformResponse<T>> {
    const url = this.targets.of(req);
    let body: string | FormData | undefined;
    if (req.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(req.json);
    } else if (req.form) {
      body = req.form;
    }
    const send = (release: () => void) => this.send<T>(url, req.method, headers, body, req.response ?? 'json', req.signal, secrets).finally(release);
    const gate = this.gateFor(req.rate);
    const queue = this.config.familyRates ? req.rate : 'all';
    const release = gate.admitNow();
    if (release) {
      this.metrics.waited(queue, 0);
      return send(release);
    }
    const since = performance.now();
    let queued = false;
    const onQueued = (position: number) => {
      queued = true;
      req.onWait?.({ kind: 'queued', position, ratePerMinute: gate.ratePerMinute });
    };
    return gate.acquire(req.signal, onQueued).then((admitted) => {
      this.metrics.waited(queue, (performance.now() - since) / 1000);
      if (queued) req.onWait?.({ kind: 'admitted' });
      return send(admitted);
    });
  }

  private limitFor(kind: ResponseKind): number {
    return kind === 'buffer' ? this.config.maxFileBytes : this.config.maxResponseBytes;
  }

  /** The spec's headers of an endpoint family; a file is asked for as anything, as its format is read from its content type. */
  private headersFor(auth: AuthScheme, token: string | undefined, kind: ResponseKind): Record<string, string> {
    const headers: Record<string, string> = { accept: kind === 'buffer' ? '*/*' : 'application/json' };
    const { apiKey, pubsubApiKey } = this.config.credentials;
    switch (auth) {
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
        headers.authorization = `Bearer ${token as string}`;
        break;
      case 'none':
        // A link on another origin: no credentials.
        break;
    }
    return headers;
  }

  /** One HTTP exchange with a timeout; turns every failure into a PlatformError. */
  private async send<T>(
    target: RequestTarget,
    method: string,
    headers: Record<string, string>,
    body: string | FormData | undefined,
    kind: ResponseKind,
    signal: AbortSignal | undefined,
    secrets: readonly string[],
  ): Promise<PlatformResponse<T>> {
    if (signal?.aborted) throw cancelled();
    // A header value with CR, LF or NUL would split or end the request's head: refused before anything is sent.
    for (const name in headers) {
      if (!isHeaderValue(headers[name])) throw new InputError(catalogText('error.headerValue', { name }));
    }
    // The attempt ends at the timeout or the caller's abort: our own timer and a callback on the signal, each ending the
    // exchange itself (cheaper per message than AbortSignal.timeout, AbortSignal.any or a controller per attempt).
    const limit = this.limitFor(kind);
    const exchange = receive(this.dispatcher, { origin: target.origin, path: target.path, method, headers, body }, (statusCode, responseHeaders) =>
      bodyPlan(statusCode, responseHeaders, limit, secrets),
    );
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      exchange.abort(abortError());
    }, this.config.timeoutMs);
    const stopListening = signal ? whenAborted(signal, () => exchange.abort(abortError())) : undefined;
    try {
      const res = await exchange.response;
      // A server may echo what it was sent: no secret of the request comes back out of its response.
      return readResponse<T>(res, kind, limit, secrets);
    } catch (err) {
      if (timedOut) {
        throw new PlatformError('TIMEOUT', catalogText('error.timeout', { ms: this.config.timeoutMs }), { cause: err });
      }
      if (signal?.aborted) throw cancelled();
      throw err;
    } finally {
      clearTimeout(timer);
      stopListening?.();
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

/** A queue per rate family, each on its own schedule; or one for every family, at the geocode rate (see `ClientConfig`). */
function gatesFor(config: ClientConfig): Map<RateFamily, RequestGate> {
  const gate = (family: RateFamily, ratePerMinute: number) =>
    new RequestGate({ ratePerMinute, maxConcurrency: config.maxConcurrency, maxQueue: config.maxQueue, pacer: config.pacerFor?.(family) });
  const { familyRates } = config;
  if (!familyRates) {
    const one = gate('geocode', config.ratePerMinute);
    return new Map(RATE_FAMILIES.map((family) => [family, one]));
  }
  return new Map(RATE_FAMILIES.map((family) => [family, gate(family, family === 'geocode' ? config.ratePerMinute : familyRates[family])]));
}

/** The reason an exchange ends at the timeout or at the caller's abort, as an aborted fetch gives it. */
function abortError(): Error {
  return new DOMException('This operation was aborted', 'AbortError');
}
