import type { KeyValueStore } from './store';
import type { RedisClient } from './redis-deployment';

/**
 * Each operation that reads and then writes is one Lua script, which Redis runs atomically: two
 * instances can never both take the last unit of a quota, the same schedule slot or a free lease.
 */
const CLAIM = `
local current = redis.call('GET', KEYS[1])
if current and current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

const RENEW = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

const RELEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1`;

/**
 * A counter never counts below ARGV[3], what the caller knew it to be: a counter Redis lost (FLUSHALL,
 * an eviction, a restart without persistence) continues from there rather than from 0.
 */
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
 * Stored jobs (see RedisJobHashes). KEYS of every job script: the records hash, the descriptions
 * hash, the job's lease, the job's done marker; ARGV[1] is the job key.
 */
/** Replaces a stored job's description only while the job itself is stored. */
const UPDATE_JOB = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1`;

/**
 * Stores a job (again) under a lease for ARGV[4]: 1; -1 when its done marker says it was delivered or
 * cancelled already (it is not brought back); 0 when another owner holds its lease.
 */
const REGISTER_JOB = `
if redis.call('EXISTS', KEYS[4]) == 1 then return -1 end
local holder = redis.call('GET', KEYS[3])
if holder and holder ~= ARGV[4] then return 0 end
redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[3])
redis.call('SET', KEYS[3], ARGV[4], 'PX', ARGV[5])
return 1`;

/**
 * Takes or extends the lease of a stored job for ARGV[2]: 1; 0 when another owner holds it; -1 when
 * the job is gone and its done marker says it was delivered or cancelled; -2 when it is gone without
 * one (Redis lost its data): the caller registers it again from its own copy.
 */
const LEASE_JOB = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  if redis.call('EXISTS', KEYS[4]) == 1 then return -1 end
  return -2
end
local holder = redis.call('GET', KEYS[3])
if holder and holder ~= ARGV[2] then return 0 end
redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[3])
return 1`;

/**
 * The delivery claim, for ARGV[2]: removes the job and leaves a done marker naming the deliverer,
 * unless another owner holds its lease. A job already gone counts as this caller's when the marker
 * names it (its earlier claim went through but the reply was lost), or when there is no marker
 * (Redis lost its data while this owner ran the job: no one else can have delivered it since).
 */
const DELIVER_JOB = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  local done = redis.call('GET', KEYS[4])
  if not done then
    redis.call('SET', KEYS[4], ARGV[2], 'PX', ARGV[3])
    return 1
  end
  if done == ARGV[2] then return 1 end
  return 0
end
local holder = redis.call('GET', KEYS[3])
if holder and holder ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[3])
redis.call('SET', KEYS[4], ARGV[2], 'PX', ARGV[3])
return 1`;

/** Removes a job that will not be delivered, with a done marker so that no copy of it is registered again. */
const CANCEL_JOB = `
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[3])
redis.call('SET', KEYS[4], 'cancelled', 'PX', ARGV[2])
return 1`;

/**
 * Moves one job stored under the names of releases before the hash tag (`<prefix>jobs:<id>`: KEYS[1]
 * its records, KEYS[2] its descriptions, KEYS[5] its lease) to today's names (KEYS[3], KEYS[4],
 * KEYS[6]), unless today's done marker (KEYS[7]) says it was delivered or cancelled: its record and
 * description are kept where today's hold none, and its lease, with the time it had left. 1 when the
 * job was there.
 */
const ADOPT_JOB = `
local record = redis.call('HGET', KEYS[1], ARGV[1])
if not record then return 0 end
if redis.call('EXISTS', KEYS[7]) == 0 then
  redis.call('HSETNX', KEYS[3], ARGV[1], record)
  local job = redis.call('HGET', KEYS[2], ARGV[1])
  if job then redis.call('HSETNX', KEYS[4], ARGV[1], job) end
  local holder = redis.call('GET', KEYS[5])
  local left = redis.call('PTTL', KEYS[5])
  if holder and left > 0 then redis.call('SET', KEYS[6], holder, 'PX', left, 'NX') end
end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[5])
return 1`;

/**
 * The shared schedule of a rate limit: the key holds when the next free slot begins, on Redis's own
 * clock (TIME), so instances whose clocks differ still space their requests evenly. The script returns the
 * wait in microseconds, as an integer (Lua numbers would be truncated to integers anyway).
 */
const RESERVE_SLOT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local interval = tonumber(ARGV[1])
local slot = math.max(now, tonumber(redis.call('GET', KEYS[1]) or '0'))
local nextSlot = slot + interval
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

/**
 * A write through a script: it proves that Redis runs scripts (most operations of the pack are one)
 * and accepts writes. It also sets the caller's marker (KEYS[2], for ARGV[3] ms; see KEEP_MARKER).
 */
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

/**
 * A write that the connected replicas did not confirm in time: a failover now could lose it. Not an
 * outage (the master responds): the operation is served as when Redis refuses it, and the delivery
 * claim that needs it is tried again.
 */
export class NotReplicatedError extends Error {
  constructor(wanted: number) {
    super(`NOTREPLICATED no replica of ${wanted} confirmed the write within ${REPLICATION_TIMEOUT_MS} ms`);
  }
}

/**
 * `KeyValueStore` on a Redis connection (one Redis, one followed through Sentinel, or a Cluster);
 * every key gets `prefix`. Errors reach the caller. Keys that one script takes together share a
 * hash tag (`{…}`), so that a Cluster keeps them in one slot; every other key hashes on its own.
 */
export class RedisStore implements KeyValueStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    /** Whether `replicated` waits for a replica (under Sentinel, whose failover promotes one). */
    private readonly replicas = false,
    /**
     * Whether stored jobs may lie under the names of releases before the hash tag (see
     * RedisJobHashes): not on a Cluster, which those releases refused.
     */
    private readonly earlierNames = false,
  ) {}

  /**
   * Resolves once a replica holds every write this connection made so far, when the master has one
   * connected (ROLE); rejects with NotReplicatedError when none confirms it (WAIT) within a second.
   * For the writes whose loss in a failover would deliver a job twice or let a replay through (Redis
   * replicates asynchronously). A master without a connected replica (its replica down, or not yet
   * resynchronised after a failover) is not waited for: there is nothing a failover could promote.
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

  /**
   * Claims a delivered webhook request of the path `scope` (see CLAIM_REPLAY): `claimed`, `duplicate`,
   * `forgotten` (its t is at or before what the path vouches for) or `full` (the path holds `cap` entries).
   */
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

  /**
   * The stored jobs named `name` (below this store's prefix, as the hash tag of all their keys: every
   * job script takes the two hashes of its configuration); done markers live `doneTtlMs`.
   */
  jobHashes(name: string, doneTtlMs: number): RedisJobHashes {
    const earlier = this.earlierNames ? this.prefix + name : undefined;
    return new RedisJobHashes(this.redis, `${this.prefix}{${name}}`, doneTtlMs, () => this.replicated(), earlier);
  }

  /**
   * Reserves the next slot of an even schedule with one slot per `intervalMs` (no burst): resolves
   * how many milliseconds from now the reserved slot begins.
   */
  async reserveSlot(key: string, intervalMs: number): Promise<number> {
    const waitMicros = await this.redis.eval(RESERVE_SLOT, 1, this.prefix + key, Math.round(intervalMs * 1000));
    return Number(waitMicros) / 1000;
  }
}

/** What a lease on a stored job came to (see LEASE_JOB). */
export type JobLease = 'held' | 'taken' | 'done' | 'missing';
const LEASES: Record<number, JobLease> = { 1: 'held', 0: 'taken', [-1]: 'done', [-2]: 'missing' };

/**
 * Stored jobs in two hashes, `<name>` (each job's record) and `<name>:job` (each job's description,
 * replaced as the job progresses), so that an update never rewrites, or brings back, a job's
 * record; beside them each job's lease `<name>:lease:<key>` and, once it is delivered or cancelled,
 * its done marker `<name>:done:<key>` (kept `doneTtlMs`), which tells a copy of a delivered job
 * (in the file of an instance that was down meanwhile) from a job Redis lost.
 *
 * Releases before the hash tag stored the same keys under `earlierName` (`<prefix>jobs:<id>`, no
 * braces). After an upgrade in place their jobs are moved here (`adoptEarlierJobs`, before the jobs
 * are first listed), so that any instance can resume them, and their done markers are read where
 * they are (`lease`), so that a copy of a job they delivered is not brought back. Instances of both
 * kinds at once on one Redis are not supported: the earlier ones see neither name of the other.
 */
export class RedisJobHashes {
  constructor(
    private readonly redis: RedisClient,
    private readonly name: string,
    private readonly doneTtlMs: number,
    /** Resolves once the replicas hold the delivery or cancellation just made (RedisStore.replicated). */
    private readonly replicated: () => Promise<void>,
    /** The same jobs' name before the hash tag; undefined where there can be none (a Cluster). */
    private readonly earlierName?: string,
  ) {}

  private keys(key: string): [string, string, string, string] {
    return [this.name, `${this.name}:job`, `${this.name}:lease:${key}`, `${this.name}:done:${key}`];
  }

  /** Moves the jobs stored under the earlier name here (see ADOPT_JOB); resolves how many there were. */
  async adoptEarlierJobs(): Promise<number> {
    if (this.earlierName === undefined) return 0;
    const earlier = this.earlierName;
    let adopted = 0;
    for (const key of await this.redis.hkeys(earlier)) {
      const [records, jobs, lease, done] = this.keys(key);
      const moved = await this.redis.eval(ADOPT_JOB, 7, earlier, `${earlier}:job`, records, jobs, `${earlier}:lease:${key}`, lease, done, key);
      if (moved === 1) adopted++;
    }
    return adopted;
  }

  /** Every stored job: its record and its description, by job key. */
  async all(): Promise<Array<{ record: string; job: string | undefined }>> {
    const [records, jobs] = await Promise.all([this.name, `${this.name}:job`].map((key) => this.redis.hgetall(key)));
    return Object.entries(records).map(([key, record]) => ({ record, job: jobs[key] }));
  }

  /** Stores a job under a lease for `owner`; false when it was delivered or cancelled already, or another owner holds it. */
  async register(key: string, record: string, job: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.eval(REGISTER_JOB, 4, ...this.keys(key), key, record, job, owner, ttl(ttlMs))) === 1;
  }

  async update(key: string, job: string): Promise<void> {
    await this.redis.eval(UPDATE_JOB, 4, ...this.keys(key), key, job);
  }

  /** `missing` only when no done marker is found under either name: a job an earlier release delivered is `done`. */
  async lease(key: string, owner: string, ttlMs: number): Promise<JobLease> {
    const lease = LEASES[Number(await this.redis.eval(LEASE_JOB, 4, ...this.keys(key), key, owner, ttl(ttlMs)))];
    if (lease !== 'missing' || this.earlierName === undefined) return lease;
    return (await this.redis.exists(`${this.earlierName}:done:${key}`)) === 1 ? 'done' : 'missing';
  }

  async release(key: string, owner: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, this.keys(key)[2], owner);
  }

  /** Confirmed by the replicas: a delivery a failover forgot would let another instance deliver the job again. */
  async deliver(key: string, owner: string): Promise<boolean> {
    const delivered = (await this.redis.eval(DELIVER_JOB, 4, ...this.keys(key), key, owner, ttl(this.doneTtlMs))) === 1;
    await this.replicated();
    return delivered;
  }

  /** Confirmed by the replicas: a cancellation a failover forgot would let another instance run the job on. */
  async cancel(key: string): Promise<void> {
    await this.redis.eval(CANCEL_JOB, 4, ...this.keys(key), key, ttl(this.doneTtlMs));
    await this.replicated();
  }
}

function ttl(ms: number): number {
  return Math.max(1, Math.ceil(ms));
}
