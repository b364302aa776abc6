import Redis from 'ioredis';
import type { KeyValueStore } from './store';
import { RedisStore } from './redis-store';
import { PlatformError } from '../util/errors';
import { MessageLog, message } from '../util/messages';

/**
 * `local`: no Redis configured, everything is this process's own (the embedded default).
 * `connecting`: Redis configured, first connection not made yet (local state meanwhile, no warning).
 * `shared`: Redis answers. `unavailable`: Redis lost or unreachable; local state until it is back.
 */
export type SharedMode = 'local' | 'connecting' | 'shared' | 'unavailable';

export interface SharedStateOptions {
  /** `redis://…` or `rediss://…`; none keeps every piece of state in this process. */
  url?: string;
  log: MessageLog;
  /** A command not answered within this is taken as an outage (the caller falls back to local state). */
  commandTimeoutMs?: number;
  /** Prefix of every key this pack writes to Redis. */
  keyPrefix?: string;
}

// Generous: a busy machine can hold a local answer for a second, and each timeout is an outage.
const DEFAULT_COMMAND_TIMEOUT_MS = 2000;
const RECONNECT_STEP_MS = 200;
const RECONNECT_MAX_MS = 2000;
export const DEFAULT_KEY_PREFIX = 'svc-location:';

/** Checks a Redis address; returns it without credentials, for logs and status texts. */
export function describeRedisUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new PlatformError('CONFIG_INVALID', message('error.shared.notUrl'));
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new PlatformError('CONFIG_INVALID', message('error.shared.notRedisUrl', { protocol: parsed.protocol }));
  }
  return `${parsed.protocol}//${parsed.host}`;
}

/**
 * Owns the one Redis connection of a configuration (as an mqtt-broker node owns its connection) and
 * routes each operation to Redis while it answers, or to the caller's local fallback while it does not:
 * the nodes keep working through an outage. Reconnects by itself; reports each outage once (not per
 * operation) and each recovery; never throws or leaves a rejection unhandled because Redis is away.
 */
export class SharedState {
  private readonly redis: Redis | undefined;
  private readonly store: RedisStore | undefined;
  private readonly listeners = new Set<(mode: SharedMode) => void>();
  private currentMode: SharedMode;
  private lastError: string | undefined;
  private closed = false;
  /** Settles once the first connection attempt has succeeded or failed. */
  private firstAttempt: Promise<void> = Promise.resolve();
  /** The Redis address without credentials; empty without Redis. */
  readonly address: string;

  constructor(private readonly options: SharedStateOptions) {
    if (!options.url) {
      this.currentMode = 'local';
      this.address = '';
      return;
    }
    this.address = describeRedisUrl(options.url);
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
      this.lastError = err.message;
      this.outage();
    });
    this.redis.on('close', () => this.outage());
    const redis = this.redis;
    this.firstAttempt = new Promise((resolve) => {
      const settle = () => {
        redis.off('ready', settle);
        redis.off('close', settle);
        resolve();
      };
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

  /** Whether Redis answers now; right after a deploy, once the first connection attempt has settled. */
  async connected(): Promise<boolean> {
    if (this.currentMode === 'connecting') await this.firstAttempt;
    return this.redis !== undefined && !this.closed && this.redis.status === 'ready';
  }

  /**
   * Runs `shared` on the Redis store while Redis is connected, else `local`; a failing Redis
   * operation counts as an outage and is answered by `local` as well.
   */
  async withShared<T>(shared: (store: RedisStore) => Promise<T>, local: () => T | Promise<T>): Promise<T> {
    // Right after a deploy, wait for the first connection rather than start on local state: two
    // instances would otherwise each send a first request on their own schedules.
    if (this.currentMode === 'connecting') await this.firstAttempt;
    if (!this.redis || !this.store || this.closed || this.redis.status !== 'ready') return local();
    let result: T;
    try {
      result = await shared(this.store);
    } catch (err) {
      this.lastError = err instanceof Error ? err.message : String(err);
      this.outage();
      return local();
    }
    this.available();
    return result;
  }

  /** A store that is Redis while it answers and `local` otherwise. */
  withFallback(local: KeyValueStore): KeyValueStore {
    // Each operation written once, for whichever store answers.
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
    this.listeners.clear();
    this.redis?.disconnect(false);
  }

  private available(): void {
    if (this.closed || this.currentMode === 'shared') return;
    const wasDown = this.currentMode === 'unavailable';
    this.lastError = undefined;
    this.setMode('shared');
    if (wasDown) this.options.log.info(message('log.sharedAvailableAgain', { address: this.address }));
  }

  private outage(): void {
    if (this.closed || this.currentMode === 'unavailable') return;
    this.setMode('unavailable');
    const reason = this.lastError ? `: ${this.lastError}` : '';
    this.options.log.warn(message('warn.shared.unavailable', { address: this.address, reason }));
  }

  private setMode(mode: SharedMode): void {
    this.currentMode = mode;
    for (const listener of this.listeners) listener(mode);
  }
}
