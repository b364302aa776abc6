import type { KeyValueStore } from './store';
import type { RedisClient } from './redis-deployment';
import { CLAIM, RELEASE, RENEW, ttl } from './redis-leases';
import { RedisJobHashes } from './redis-job-hashes';

// Each script reads and writes in one step, which Redis runs atomically (see redis-leases.ts).

/** A counter never counts below ARGV[3], what the caller knew it to be: one Redis lost continues from there rather than from 0. */
const TAKE = `
local stored = tonumber(redis.call('GET', KEYS[1]) or '-1')
local used = math.max(stored, tonumber(ARGV[3]))
if used >= tonumber(ARGV[1]) then return {0, used} end
if stored < 0 then
  redis.call('SET', KEYS[1], used + 1, 'PX', ARGV[2])
else
  redis.call('INCRBY', KEYS[1], used + 1 - stored)
end
return {1, used + 1}`;

/**
 * The shared schedule of a rate limit: reserves ARGV[2] slots, ARGV[1] µs apart, from the next free one, on Redis's own
 * clock (TIME), so instances whose clocks differ still space their requests evenly. Returns the wait for the first in
 * microseconds, as an integer.
 */
const RESERVE_SLOT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local interval = tonumber(ARGV[1])
local slot = math.max(now, tonumber(redis.call('GET', KEYS[1]) or '0'))
local nextSlot = slot + interval * tonumber(ARGV[2])
redis.call('SET', KEYS[1], string.format('%.0f', nextSlot), 'PX', math.ceil((nextSlot - now) / 1000) + 1000)
return string.format('%.0f', slot - now)`;

/**
 * A webhook path's delivered requests (see ReplayMemory): KEYS[1] a sorted set of its entries (member
 * `<t ms> <key>`, score the end of its window), KEYS[2] its `since`. Entries whose window ended before
 * ARGV[4] (now) are forgotten first, `since` moving up to their newest t; then ARGV[1] (t ARGV[2],
 * window to ARGV[3]; ARGV[6] the same entry as an earlier version named it) is 0 when held, -1 when
 * its t is at or before `since`, -2 when the set holds ARGV[5] entries already (nothing is forgotten
 * for room), else added: 1. Neither key expires: what they drop they drop through `since`.
 */
const CLAIM_REPLAY = `
local ended = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[4])
if #ended > 0 then
  local newest = tonumber(redis.call('GET', KEYS[2]) or '-1e308')
  for _, member in ipairs(ended) do
    newest = math.max(newest, tonumber(string.match(member, '^%S+')))
  end
  redis.call('SET', KEYS[2], string.format('%.17g', newest))
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[4])
end
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZSCORE', KEYS[1], ARGV[6]) then return 0 end
local since = redis.call('GET', KEYS[2])
if since and tonumber(ARGV[2]) <= tonumber(since) then return -1 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[5]) then return -2 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1`;

/** A write through a script, proving that Redis runs scripts and accepts writes; also sets the caller's marker (KEYS[2], ARGV[3] ms). */
const PROBE = `
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return redis.call('SET', KEYS[2], '1', 'PX', ARGV[3])`;

/** 1 and the marker's life extended while it is there; 0 when Redis lost it (and it is set again). */
const KEEP_MARKER = `
if redis.call('PEXPIRE', KEYS[1], ARGV[1]) == 1 then return 1 end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
return 0`;

/** How long a write waits for its replicas (WAIT) before it counts as not confirmed. */
const REPLICATION_TIMEOUT_MS = 1000;

/** A write the connected replicas did not confirm in time, which a failover could lose: served as a refusal, not an outage. */
export class NotReplicatedError extends Error {
  constructor(wanted: number) {
    super(`NOTREPLICATED no replica of ${wanted} confirmed the write within ${REPLICATION_TIMEOUT_MS} ms`);
  }
}

/**
 * `KeyValueStore` on a Redis connection; every key gets `prefix`, and errors reach the caller. Keys that one script
 * takes together share a hash tag (`{…}`), so that a Cluster keeps them in one slot.
 */
export class RedisStore implements KeyValueStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    /** Whether `replicated` waits for a replica (under Sentinel, whose failover promotes one). */
    private readonly replicas = false,
    /** Whether stored jobs may lie under the names of releases before the hash tag: not on a Cluster, which they refused. */
    private readonly earlierNames = false,
  ) {}

  /**
   * Resolves once a replica holds every write this connection made so far, or at once when the master has none connected
   * (nothing a failover could promote); rejects with NotReplicatedError when none confirms it in time. For the writes
   * whose loss in a failover would deliver a job twice or let a replay through.
   */
  async replicated(): Promise<void> {
    if (!this.replicas) return;
    const [, , connected] = (await this.redis.role()) as [string, number, unknown[] | undefined];
    if (!Array.isArray(connected) || connected.length === 0) return;
    if ((await this.redis.wait(1, REPLICATION_TIMEOUT_MS)) < 1) throw new NotReplicatedError(connected.length);
  }

  async get(key: string): Promise<string | undefined> {
    return (await this.redis.get(this.prefix + key)) ?? undefined;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    await this.redis.set(this.prefix + key, value, 'PX', Math.max(1, Math.ceil(ttlMs)));
  }

  async delete(key: string): Promise<void> {
    await this.redis.del(this.prefix + key);
  }

  async claim(key: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.eval(CLAIM, 1, this.prefix + key, owner, ttl(ttlMs))) === 1;
  }

  async renew(key: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.eval(RENEW, 1, this.prefix + key, owner, ttl(ttlMs))) === 1;
  }

  async release(key: string, owner: string): Promise<boolean> {
    return (await this.redis.eval(RELEASE, 1, this.prefix + key, owner)) === 1;
  }

  /** Claims a delivered webhook request of the path `scope` (see CLAIM_REPLAY). */
  async claimReplay(
    scope: string,
    member: string,
    t: number,
    expiresAt: number,
    now: number,
    cap = Number.MAX_SAFE_INTEGER,
    formerMember = member,
  ): Promise<'claimed' | 'duplicate' | 'forgotten' | 'full'> {
    const name = this.replaysKey(scope);
    const outcome = Number(await this.redis.eval(CLAIM_REPLAY, 2, name, `${name}:since`, member, t, expiresAt, now, cap, formerMember));
    return outcome === 1 ? 'claimed' : outcome === 0 ? 'duplicate' : outcome === -1 ? 'forgotten' : 'full';
  }

  /** Removes a claimed request that was not delivered after all (`since` stays). */
  async withdrawReplay(scope: string, member: string): Promise<void> {
    await this.redis.zrem(this.replaysKey(scope), member);
  }

  /** The path as the hash tag of both keys of its replay record: one slot in a Cluster. */
  private replaysKey(scope: string): string {
    return `${this.prefix}replays:{${scope}}`;
  }

  /** `KeyValueStore.take`, counting from at least `known` (see TAKE). */
  async take(key: string, limit: number, ttlMs: number, known = 0): Promise<{ taken: boolean; used: number }> {
    const [taken, used] = (await this.redis.eval(TAKE, 1, this.prefix + key, limit, ttl(ttlMs), known)) as [number, number];
    return { taken: taken === 1, used };
  }

  /** Writes `key` for `ttlMs` and sets `marker` for `markerTtlMs` through a script; rejects as Redis refuses (READONLY, OOM, MISCONF…). */
  async proveWritable(key: string, ttlMs: number, marker: string, markerTtlMs: number): Promise<void> {
    // The probe's key beside the marker (the marker as hash tag of both): one slot in a Cluster.
    await this.redis.eval(PROBE, 2, `${this.prefix}${key}:{${marker}}`, this.markerKey(marker), String(Date.now()), ttl(ttlMs), ttl(markerTtlMs));
  }

  private markerKey(marker: string): string {
    return `${this.prefix}{${marker}}`;
  }

  /** Whether `marker` (set by `proveWritable`) is still there, its life extended; false when Redis lost it (set again then). */
  async keepMarker(marker: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.eval(KEEP_MARKER, 1, this.markerKey(marker), ttl(ttlMs))) === 1;
  }

  /** The stored jobs named `name`, the hash tag of all their keys as every job script takes both hashes; done markers live `doneTtlMs`. */
  jobHashes(name: string, doneTtlMs: number): RedisJobHashes {
    const earlier = this.earlierNames ? this.prefix + name : undefined;
    return new RedisJobHashes(this.redis, `${this.prefix}{${name}}`, doneTtlMs, () => this.replicated(), earlier);
  }

  /** Reserves the next `count` slots of an even schedule, one per `intervalMs` (no burst); resolves how many ms from now the first begins. */
  async reserveSlot(key: string, intervalMs: number, count = 1): Promise<number> {
    const waitMicros = await this.redis.eval(RESERVE_SLOT, 1, this.prefix + key, Math.round(intervalMs * 1000), count);
    return Number(waitMicros) / 1000;
  }
}
