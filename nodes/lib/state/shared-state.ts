import { randomUUID } from 'node:crypto';
import { NotReplicatedError, RedisStore } from './redis-store';
import { CircuitBreaker } from './breaker';
import { isRedisOutage, refusalOf, unsent } from './redis-errors';
import { DEFAULT_COMMAND_TIMEOUT_MS, RECONNECT_MAX_MS, RECONNECT_STEP_MS, connectRedis, firstAttemptSettled, reconnectDelayMs } from './redis-connection';
import { MARKER_CHECK_MS, MARKER_TTL_MS, OutageLog, ReplyTimes, SLOW_FOR_MS, SLOW_REPLY_MS, probeWrites } from './redis-health';
import { type RedisClient, redisDeployment } from './redis-deployment';
import { redact } from '../util/masking';
import { CatalogText, TextLog, catalogText } from '../util/catalog-text';

/**
 * `local`: no Redis configured. `connecting`: first connection not made yet (local state meanwhile, no warning).
 * `shared`: Redis responds. `unavailable`: Redis lost or unreachable; local state until it is back.
 */
export type SharedMode = 'local' | 'connecting' | 'shared' | 'unavailable';

interface SharedStateOptions {
  /** `redis://…`, `redis-sentinel://…` or `redis-cluster://…` (`rediss…` with TLS; see redisDeployment); none keeps every piece of state in this process. */
  url?: string;
  log: TextLog;
  /** A command with no reply within this is taken as an outage (every caller falls back to local state). */
  commandTimeoutMs?: number;
  /** How long the probe that looks for Redis accepting writes again waits for its reply; the command timeout unless given. */
  probeTimeoutMs?: number;
  keyPrefix?: string;
}

export const DEFAULT_KEY_PREFIX = 'svc-location:';

/**
 * What became of an operation Redis did not reply to: `away`, not sent; `refused`, Redis replied with an error, so
 * nothing was written; `unknown`, sent without a reply: Redis may have run it, now or once it wakes up.
 */
export type Unanswered = 'away' | 'refused' | 'unknown';
type Attempt<T> = { outcome: 'done'; value: T } | { outcome: Unanswered };

/**
 * Owns the one Redis connection of a configuration and routes each operation to Redis while it responds, else to the
 * caller's local fallback, so the nodes keep working through an outage. Reconnects by itself; reports each outage once
 * and each recovery; never throws or leaves a rejection unhandled because Redis is away.
 *
 * A Redis that hangs or refuses (see `isRedisOutage`) is an outage too: the first operation that fails or times out opens
 * a circuit breaker, which sends every waiting and later operation to local state, so no caller waits more than one
 * command timeout. Redis is used again only once it has accepted a write (the probe), as replying to a PING is not enough.
 */
export class SharedState {
  private readonly redis: RedisClient | undefined;
  private readonly store: RedisStore | undefined;
  private readonly breaker: CircuitBreaker;
  private readonly listeners = new Set<(mode: SharedMode) => void>();
  private currentMode: SharedMode;
  private lastError: string | undefined;
  private closed = false;
  private readonly replies = new ReplyTimes();
  private readonly marker = `alive:${randomUUID()}`;
  private markerTimer: NodeJS.Timeout | undefined;
  /** Pending while a connection ioredis gave up on waits to be made again (see connectAgain). */
  private connectingAgain: NodeJS.Timeout | undefined;
  /** How many times in a row ioredis has given up, since the last ready connection. */
  private gaveUp = 0;
  /** Settles once the first connection attempt has succeeded or failed. */
  private firstAttempt: Promise<void> = Promise.resolve();
  /** The Redis address without credentials; empty without Redis. */
  readonly address: string;
  /** The passwords of the Redis URL: masked in every error text kept from Redis (a server may repeat what AUTH sent). */
  private readonly secrets: string[] = [];
  private readonly outages: OutageLog;
  /** Since when the probe has been refused with WRITES_REFUSED, with no silence and no write accepted in between. */
  private refusingSince: number | undefined;
  /** When Redis was found accepting writes again after an outage (0: no outage since the first connection). */
  private backSince = 0;

  constructor(private readonly options: SharedStateOptions) {
    this.outages = new OutageLog(options.log);
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
    const deployment = redisDeployment(options.url);
    this.address = deployment.address;
    this.secrets = deployment.secrets;
    this.currentMode = 'connecting';
    this.redis = connectRedis(deployment, this.commandTimeoutMs);
    this.store = new RedisStore(this.redis, options.keyPrefix ?? DEFAULT_KEY_PREFIX, deployment.replicas, deployment.kind !== 'cluster');
    this.redis.on('ready', () => {
      this.gaveUp = 0;
      this.proveWritable();
    });
    this.redis.on('end', () => this.connectAgain());
    // Without an 'error' listener ioredis would print every failed reconnection attempt.
    this.redis.on('error', (err: Error) => {
      this.lastError = redact(err.message, this.secrets);
      this.refusingSince = undefined;
      this.outage();
    });
    // A close keeps a refusal: ioredis closes after each READONLY to reconnect to the master the deployment names now, which the probe tries again.
    this.redis.on('close', () => this.outage());
    this.firstAttempt = firstAttemptSettled(this.redis, this.commandTimeoutMs, (settle) => this.onModeChange(settle));
  }

  get mode(): SharedMode {
    return this.currentMode;
  }

  /** Whether Redis is in use but its replies have stayed slow (see ReplyTimes). */
  get slow(): boolean {
    return this.replies.slow;
  }

  /** Milliseconds the last operation that replied took (metrics); undefined before one. */
  get lastRoundTripMs(): number | undefined {
    return this.replies.lastMs;
  }

  private get commandTimeoutMs(): number {
    return this.options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  }

  /** Whether the circuit breaker is open: operations go to local state at once until the probe succeeds. */
  get breakerOpen(): boolean {
    return this.breaker.isOpen;
  }

  get configured(): boolean {
    return this.redis !== undefined;
  }

  /** Calls `listener` on every change of mode, and of `slow`, until the returned function is called. */
  onModeChange(listener: (mode: SharedMode) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Since when Redis has taken no write from anyone (see WRITES_REFUSED), as the probe found, or undefined. A Redis that
   * is silent is not refusing: it may be running what it was sent, or another instance's writes.
   */
  get refusingWritesSince(): number | undefined {
    return this.currentMode === 'unavailable' ? this.refusingSince : undefined;
  }

  /** Whether Redis has accepted writes for `ms` since its last outage: time for the others to record what they did meanwhile. */
  settledFor(ms: number): boolean {
    return this.usable() && (this.backSince === 0 || Date.now() - this.backSince >= ms);
  }

  /** Whether Redis responds now; right after a deploy, once the first connection attempt has settled. */
  async connected(): Promise<boolean> {
    if (this.currentMode === 'connecting') await this.firstAttempt;
    return this.usable();
  }

  /** Runs `shared` on the Redis store while Redis responds, else `local`; `local` also serves an operation an outage interrupts. */
  withShared<T>(shared: (store: RedisStore) => Promise<T>, local: () => T | Promise<T>): Promise<T> {
    return this.run(shared, local);
  }

  /** `withShared` telling what became of an operation Redis did not reply to: a write that timed out is not one refused. */
  attempt<T>(shared: (store: RedisStore) => Promise<T>): Promise<Attempt<T>> {
    return this.run(
      async (store): Promise<Attempt<T>> => ({ outcome: 'done', value: await shared(store) }),
      (outcome) => ({ outcome }),
    );
  }

  private async run<T>(shared: (store: RedisStore) => Promise<T>, local: (outcome: Unanswered) => T | Promise<T>): Promise<T> {
    // Right after a deploy, wait for the first connection: two instances would otherwise each send a first request.
    if (this.currentMode === 'connecting') await this.firstAttempt;
    if (!this.store || !this.usable()) return local('away');
    let outcome: { value: T } | undefined;
    const startedAt = Date.now();
    try {
      outcome = await this.breaker.race(shared(this.store));
    } catch (err) {
      const reason = redact(err instanceof Error ? err.message : String(err), this.secrets);
      const refusal = err instanceof Error ? refusalOf(err) : '';
      // Written on the master but not confirmed by a replica: it may or may not outlive a failover.
      const unanswered: Unanswered = err instanceof NotReplicatedError ? 'unknown' : refusal ? 'refused' : unsent(err) ? 'away' : 'unknown';
      // A cluster's redirection, a script error …: this one operation is served locally, reported once.
      if (!isRedisOutage(err)) {
        this.refused(refusal, reason);
        return local(unanswered);
      }
      this.lastError = reason;
      // Silence forgets a refusal; a refusal itself counts once the probe, on the master named now, meets it too.
      if (!refusal) this.refusedWrites(false);
      this.outage();
      return local(unanswered);
    }
    // Undefined: another operation found Redis away while this one waited for it (it was sent).
    if (!outcome) return local('unknown');
    this.replied(startedAt);
    return outcome.value;
  }

  /** `withShared` for an operation no message waits for: started now, its outcome left to `shared` and `local`. */
  background(shared: (store: RedisStore) => Promise<unknown>, local: () => unknown): void {
    // Neither path rejects (a failing Redis operation is served by `local`); a `local` that throws is dropped here.
    this.withShared(shared, local).catch(() => undefined);
  }

  /** Closes the connection for good (no reconnection); the nodes' state is local from then on. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.outages.stop();
    clearTimeout(this.connectingAgain);
    clearInterval(this.markerTimer);
    this.breaker.stop();
    this.listeners.clear();
    this.redis?.disconnect(false);
  }

  /**
   * ioredis ends a connection for good, without asking its retry strategy, when Sentinel announces a failover while
   * asked for the master; until closed, the connection is made again on ioredis's own reconnection schedule.
   */
  private connectAgain(): void {
    const redis = this.redis;
    if (!redis || this.closed || this.connectingAgain) return;
    this.connectingAgain = setTimeout(() => {
      this.connectingAgain = undefined;
      // A failed attempt ends the connection again, which comes back here.
      if (!this.closed) redis.connect().catch(() => undefined);
    }, reconnectDelayMs(++this.gaveUp));
    this.connectingAgain.unref();
  }

  /** Connected, found accepting writes, and not found hung or refusing since (the breaker is closed). */
  private usable(): boolean {
    return this.currentMode === 'shared' && !this.closed && this.redis?.status === 'ready' && !this.breaker.isOpen;
  }

  /** On each (re)connection: Redis is used once it has accepted a write, else it is (still) an outage. */
  private proveWritable(): void {
    // The probe never rejects.
    this.probe().then(
      (written) => (written ? this.available() : this.outage()),
      () => this.outage(),
    );
  }

  /** The breaker's probe (see probeWrites), on a connection that is up at all. */
  private async probe(): Promise<boolean> {
    const redis = this.redis;
    if (!redis || !this.store || this.closed || redis.status !== 'ready') return false;
    const result = await probeWrites(this.store, this.marker, this.options.probeTimeoutMs ?? this.commandTimeoutMs);
    if (result.outcome === 'refused') this.lastError = redact(result.reason, this.secrets);
    // No reply within the probe timeout: a Redis that hangs, not one that refuses.
    if (result.outcome !== 'written') this.refusedWrites(result.outcome === 'refused' && result.refusingWrites);
    return result.outcome === 'written';
  }

  /** A reply to an operation started at `startedAt`: Redis works; a slow one counts towards reporting Redis slow. */
  private replied(startedAt: number): void {
    this.available();
    const change = this.replies.record(startedAt, Date.now());
    if (change === 'slow') this.options.log.warn(catalogText('warn.shared.slow', { address: this.address, ms: SLOW_REPLY_MS, seconds: SLOW_FOR_MS / 1000 }));
    else if (change === 'fast') this.options.log.info(catalogText('log.sharedFastAgain', { address: this.address }));
    if (change) this.setMode(this.currentMode);
  }

  private available(): void {
    this.breaker.reset();
    if (this.closed || this.currentMode === 'shared') return;
    const wasDown = this.currentMode === 'unavailable';
    this.lastError = undefined;
    this.refusingSince = undefined;
    if (wasDown) this.backSince = Date.now();
    this.setMode('shared');
    this.markerTimer ??= setInterval(() => this.checkMarker(), MARKER_CHECK_MS).unref();
    if (wasDown) this.outages.back(this.address);
  }

  /** Redis lost this connection's marker, so its keys (see MARKER_CHECK_MS): an outage until the probe has set it again. */
  private checkMarker(): void {
    if (!this.usable()) return;
    this.background(
      async (store) => {
        if (!(await store.keepMarker(this.marker, MARKER_TTL_MS))) this.outage(catalogText('warn.shared.keysLost', { address: this.address }));
      },
      () => undefined,
    );
  }

  /** Redis is away or refuses: local state until the probe succeeds; one warning per outage (`warning` or the usual one). */
  private outage(warning?: CatalogText): void {
    this.breaker.trip();
    if (this.closed || this.currentMode === 'unavailable') return;
    this.setMode('unavailable');
    const reason = this.lastError ? `: ${this.lastError}` : '';
    this.outages.down(warning ?? catalogText('warn.shared.unavailable', { address: this.address, reason }));
  }

  /** Redis's latest news: a reply refusing every write (`refusing`), or anything else that is not a write accepted. */
  private refusedWrites(refusing: boolean): void {
    if (!refusing) this.refusingSince = undefined;
    else this.refusingSince ??= Date.now();
  }

  /** An operation Redis refused without being away (NOT_OUTAGES): reported once per kind of refusal. */
  private refused(kind: string, reason: string): void {
    if (!this.closed) this.outages.refused(kind, this.address, reason);
  }

  private setMode(mode: SharedMode): void {
    this.currentMode = mode;
    for (const listener of this.listeners) listener(mode);
  }
}
