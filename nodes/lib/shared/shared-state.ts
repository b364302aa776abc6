import Redis from 'ioredis';
import type { KeyValueStore } from './store';
import { RedisStore } from './redis-store';
import { CircuitBreaker } from './breaker';
import { ConfigError, redact } from '../util/errors';
import { TextLog, catalogText } from '../util/catalog-text';

/**
 * `local`: no Redis configured, everything is this process's own (the embedded default).
 * `connecting`: Redis configured, first connection not made yet (local state meanwhile, no warning).
 * `shared`: Redis responds. `unavailable`: Redis lost or unreachable; local state until it is back.
 */
export type SharedMode = 'local' | 'connecting' | 'shared' | 'unavailable';

export interface SharedStateOptions {
  /** `redis://…` or `rediss://…`; none keeps every piece of state in this process. */
  url?: string;
  log: TextLog;
  /** A command with no reply within this is taken as an outage (every caller falls back to local state). */
  commandTimeoutMs?: number;
  /** How long the probe that looks for Redis responding again waits for its PING. */
  probeTimeoutMs?: number;
  /** Prefix of every key this pack writes to Redis. */
  keyPrefix?: string;
}

// Generous: a busy machine can hold up even a local Redis's reply for a second, and each timeout is an outage.
const DEFAULT_COMMAND_TIMEOUT_MS = 2000;
const RECONNECT_STEP_MS = 200;
const RECONNECT_MAX_MS = 2000;
const DEFAULT_PROBE_TIMEOUT_MS = 500;
export const DEFAULT_KEY_PREFIX = 'svc-location:';

/** Checks a Redis address; returns it without credentials, for logs and status texts. */
export function describeRedisUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(catalogText('error.shared.notUrl'));
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new ConfigError(catalogText('error.shared.notRedisUrl', { protocol: parsed.protocol }));
  }
  return `${parsed.protocol}//${parsed.host}`;
}

/** The password of a Redis URL, as given and percent-decoded (as ioredis sends it). */
function redisSecrets(url: string): string[] {
  const { password } = new URL(url);
  if (password === '') return [];
  try {
    return [password, decodeURIComponent(password)];
  } catch {
    return [password];
  }
}

/**
 * Owns the one Redis connection of a configuration (as an mqtt-broker node owns its connection) and
 * routes each operation to Redis while it responds, or to the caller's local fallback while it does not:
 * the nodes keep working through an outage. Reconnects by itself; reports each outage once (not per
 * operation) and each recovery; never throws or leaves a rejection unhandled because Redis is away.
 *
 * A Redis that hangs (stopped, overloaded: the connection stays open, nothing replies) is an outage
 * too: the first operation that fails or times out opens a circuit breaker, which sends every
 * operation waiting for Redis and every later one to local state at once, so no caller waits more
 * than one command timeout; a PING with a short timeout, repeated after a growing delay, closes it
 * when Redis responds again.
 */
export class SharedState {
  private readonly redis: Redis | undefined;
  private readonly store: RedisStore | undefined;
  private readonly breaker: CircuitBreaker;
  private readonly listeners = new Set<(mode: SharedMode) => void>();
  private currentMode: SharedMode;
  private lastError: string | undefined;
  private closed = false;
  /** Settles once the first connection attempt has succeeded or failed. */
  private firstAttempt: Promise<void> = Promise.resolve();
  /** The Redis address without credentials; empty without Redis. */
  readonly address: string;
  /** The password of the Redis URL: masked in every error text kept from Redis (a server may repeat what AUTH sent). */
  private readonly secrets: string[] = [];

  constructor(private readonly options: SharedStateOptions) {
    this.breaker = new CircuitBreaker({
      probe: () => this.probe(),
      onRecovered: () => this.available(),
      probeDelayMs: RECONNECT_STEP_MS,
      maxProbeDelayMs: RECONNECT_MAX_MS,
    });
    if (!options.url) {
      this.currentMode = 'local';
      this.address = '';
      return;
    }
    this.address = describeRedisUrl(options.url);
    this.secrets = redisSecrets(options.url);
    this.currentMode = 'connecting';
    this.redis = new Redis(options.url, {
      // Fail at once while disconnected instead of queueing: the caller then uses local state.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      connectTimeout: 5000,
      connectionName: 'node-red-location',
      retryStrategy: (attempt) => Math.min(attempt * RECONNECT_STEP_MS, RECONNECT_MAX_MS),
    });
    this.store = new RedisStore(this.redis, options.keyPrefix ?? DEFAULT_KEY_PREFIX);
    this.redis.on('ready', () => this.available());
    // Without an 'error' listener ioredis would print every failed reconnection attempt.
    this.redis.on('error', (err: Error) => {
      this.lastError = redact(err.message, this.secrets);
      this.outage();
    });
    this.redis.on('close', () => this.outage());
    const redis = this.redis;
    this.firstAttempt = new Promise((resolve) => {
      const settle = () => {
        clearTimeout(longest);
        redis.off('ready', settle);
        redis.off('close', settle);
        resolve();
      };
      // A first attempt that neither succeeds nor fails (packets dropped) is not waited for longer than a command.
      const longest = setTimeout(settle, options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS);
      longest.unref();
      redis.on('ready', settle);
      redis.on('close', settle);
    });
  }

  get mode(): SharedMode {
    return this.currentMode;
  }

  /** Whether a Redis connection is configured (whatever its state). */
  get configured(): boolean {
    return this.redis !== undefined;
  }

  /** Calls `listener` on every change of mode until the returned function is called. */
  onModeChange(listener: (mode: SharedMode) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Whether Redis responds now; right after a deploy, once the first connection attempt has settled. */
  async connected(): Promise<boolean> {
    if (this.currentMode === 'connecting') await this.firstAttempt;
    return this.usable();
  }

  /**
   * Runs `shared` on the Redis store while Redis responds, else `local`. A failing Redis operation,
   * or one with no reply within the command timeout, counts as an outage and is served by `local`
   * as well, and so is every operation still waiting for Redis when that happens.
   */
  async withShared<T>(shared: (store: RedisStore) => Promise<T>, local: () => T | Promise<T>): Promise<T> {
    // Right after a deploy, wait for the first connection rather than start on local state: two
    // instances would otherwise each send a first request on their own schedules.
    if (this.currentMode === 'connecting') await this.firstAttempt;
    if (!this.store || !this.usable()) return local();
    let outcome: { value: T } | undefined;
    try {
      outcome = await this.breaker.race(shared(this.store));
    } catch (err) {
      this.lastError = redact(err instanceof Error ? err.message : String(err), this.secrets);
      this.outage();
      return local();
    }
    // Undefined: another operation found Redis away while this one waited for it.
    if (!outcome) return local();
    this.available();
    return outcome.value;
  }

  /** A store that is Redis while it responds and `local` otherwise. */
  withFallback(local: KeyValueStore): KeyValueStore {
    // Each operation written once, for whichever store serves it.
    const either =
      <A extends unknown[], T>(operation: (store: KeyValueStore, ...args: A) => Promise<T>) =>
      (...args: A): Promise<T> =>
        this.withShared(
          (shared) => operation(shared, ...args),
          () => operation(local, ...args),
        );
    return {
      get: either((store, key) => store.get(key)),
      set: either((store, key, value, ttlMs) => store.set(key, value, ttlMs)),
      delete: either((store, key) => store.delete(key)),
      claim: either((store, key, owner, ttlMs) => store.claim(key, owner, ttlMs)),
      renew: either((store, key, owner, ttlMs) => store.renew(key, owner, ttlMs)),
      release: either((store, key, owner) => store.release(key, owner)),
      take: either((store, key, limit, ttlMs) => store.take(key, limit, ttlMs)),
    };
  }

  /** Closes the connection for good (no reconnection); the nodes' state is local from then on. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.breaker.stop();
    this.listeners.clear();
    this.redis?.disconnect(false);
  }

  /** Connected, and not found hung since (the breaker is closed). */
  private usable(): boolean {
    return this.redis !== undefined && !this.closed && this.redis.status === 'ready' && !this.breaker.isOpen;
  }

  /** The breaker's probe: a PING reply within the probe timeout (on a connection that is up at all). */
  private async probe(): Promise<boolean> {
    const redis = this.redis;
    if (!redis || this.closed || redis.status !== 'ready') return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), this.options.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS);
    });
    const pong = redis.ping().then(
      (reply) => reply === 'PONG',
      () => false,
    );
    try {
      return await Promise.race([pong, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  private available(): void {
    this.breaker.reset();
    if (this.closed || this.currentMode === 'shared') return;
    const wasDown = this.currentMode === 'unavailable';
    this.lastError = undefined;
    this.setMode('shared');
    if (wasDown) this.options.log.info(catalogText('log.sharedAvailableAgain', { address: this.address }));
  }

  private outage(): void {
    this.breaker.trip();
    if (this.closed || this.currentMode === 'unavailable') return;
    this.setMode('unavailable');
    const reason = this.lastError ? `: ${this.lastError}` : '';
    this.options.log.warn(catalogText('warn.shared.unavailable', { address: this.address, reason }));
  }

  private setMode(mode: SharedMode): void {
    this.currentMode = mode;
    for (const listener of this.listeners) listener(mode);
  }
}
