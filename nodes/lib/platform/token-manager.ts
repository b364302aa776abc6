import { cancelled } from '../util/errors';
import { raceAbort } from '../util/async';

export interface TokenResponse {
  token: string;
  /** Lifetime in seconds as the server stated it, if it did. */
  expiresIn?: number;
}

interface TokenManagerOptions {
  /** Performs the token request; the platform client supplies it. */
  fetchToken: (signal?: AbortSignal) => Promise<TokenResponse>;
  /** Used when neither `expires_in` nor a JWT `exp` claim says how long a token lives (seconds). */
  defaultLifetimeSec: number;
  now?: () => number;
}

/** Fraction of a token's life after which it is renewed, so no request is sent with a dying token. */
const REFRESH_AT_FRACTION = 0.9;
/** Never renew more than this far ahead, so long-lived tokens are still used for most of their life. */
const MAX_REFRESH_AHEAD_MS = 60_000;

/**
 * Holds one OAuth2 client-credentials token per config node.
 * However many messages ask at once, at most one token request is in flight.
 */
export class TokenManager {
  private token: string | undefined;
  private refreshAt = 0;
  private expiresAt = 0;
  private inFlight: Promise<string> | undefined;
  private readonly now: () => number;
  /** When the current token was issued (0: none); tokens fetched so far; whether the last fetch failed. For metrics and health. */
  issuedAt = 0;
  refreshes = 0;
  failing = false;

  constructor(private readonly options: TokenManagerOptions) {
    this.now = options.now ?? Date.now;
  }

  /** A valid token; waits for a new one only when there is none or the current one has expired. */
  getToken(signal?: AbortSignal): Promise<string> {
    // A caller cancelled already must not start a token request nobody else asked for.
    if (signal?.aborted) return Promise.reject(cancelled());
    const now = this.now();
    if (this.token && now < this.refreshAt) return Promise.resolve(this.token);
    if (this.token && now < this.expiresAt) {
      // Due for renewal but still valid: renew in the background, so no message waits for it and a
      // failed renewal costs nothing while the current token lasts (the next caller tries again).
      this.refresh().catch(() => undefined);
      return Promise.resolve(this.token);
    }
    return this.refresh(signal);
  }

  /** Forgets `token` after the server refused it, unless a newer one has already replaced it. */
  invalidate(token: string): void {
    if (this.token === token) {
      this.token = undefined;
      this.refreshAt = 0;
      this.expiresAt = 0;
    }
  }

  /** Milliseconds until the current token expires (0 when there is none). */
  get remainingMs(): number {
    return this.token ? Math.max(0, this.expiresAt - this.now()) : 0;
  }

  private refresh(signal?: AbortSignal): Promise<string> {
    if (!this.inFlight) {
      // The shared request is not tied to one caller's signal: one message being cancelled
      // must not fail the token fetch that the others are waiting on.
      this.inFlight = this.options
        .fetchToken()
        .then(
          (response) => this.store(response),
          (err: unknown) => {
            this.failing = true;
            throw err;
          },
        )
        .finally(() => {
          this.inFlight = undefined;
        });
    }
    return signal ? raceAbort(this.inFlight, signal) : this.inFlight;
  }

  private store(response: TokenResponse): string {
    const issuedAt = this.now();
    const defaultSec = this.options.defaultLifetimeSec;
    const lifetimeMs = lifetimeSeconds(response) * 1000;
    this.token = response.token;
    this.issuedAt = issuedAt;
    this.refreshes++;
    this.failing = false;
    this.expiresAt = issuedAt + lifetimeMs;
    this.refreshAt = issuedAt + Math.max(lifetimeMs * REFRESH_AT_FRACTION, lifetimeMs - MAX_REFRESH_AHEAD_MS);
    return response.token;

    function lifetimeSeconds(r: TokenResponse): number {
      if (r.expiresIn !== undefined && Number.isFinite(r.expiresIn) && r.expiresIn > 0) return r.expiresIn;
      const exp = jwtExpiry(r.token);
      // An `exp` already past says more about clock skew than about the token: use the default.
      const untilExp = exp === undefined ? 0 : exp - Math.floor(issuedAt / 1000);
      if (untilExp > 0) return untilExp;
      return defaultSec;
    }
  }
}

/** Reads the `exp` claim (seconds since the epoch) of a JWT, if the token is one. */
export function jwtExpiry(token: string): number | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    if (claims && typeof claims === 'object' && 'exp' in claims && typeof claims.exp === 'number') return claims.exp;
  } catch {
    // Not a JWT after all: the caller falls back to the default lifetime.
  }
  return undefined;
}
