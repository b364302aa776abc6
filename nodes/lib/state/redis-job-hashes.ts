import type { RedisClient } from './redis-deployment';
import type { KeySet } from './job-store';
import { RELEASE, ttl } from './redis-leases';

// KEYS of every job script: the records hash, the descriptions hash, the job's lease, the job's done
// marker; ARGV[1] is the job key. Each runs atomically, as the lease scripts do (redis-leases.ts).

/** Replaces stored jobs' descriptions (ARGV[2n-1] the key, ARGV[2n] the description), each only while the job itself is stored. */
const UPDATE_JOBS = `
for n = 1, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[n]) == 1 then redis.call('HSET', KEYS[2], ARGV[n], ARGV[n + 1]) end
end
return 1`;

/** Stores a job (again) under a lease for ARGV[4]: 1; -1 when its done marker says it is done (not brought back); 0 when leased to another. */
const REGISTER_JOB = `
if redis.call('EXISTS', KEYS[4]) == 1 then return -1 end
local holder = redis.call('GET', KEYS[3])
if holder and holder ~= ARGV[4] then return 0 end
redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[3])
redis.call('SET', KEYS[3], ARGV[4], 'PX', ARGV[5])
return 1`;

/**
 * Takes or extends the leases of stored jobs for ARGV[1], for ARGV[2] ms: KEYS[1] the records hash, then each job's lease
 * and done marker (KEYS[2n], KEYS[2n+1] for job key ARGV[n+2]). Per job: 1; 0 when another owner holds it; -1 when done;
 * -2 when gone without a done marker (Redis lost its data): the caller registers it again.
 */
const LEASE_JOBS = `
local results = {}
for n = 1, #ARGV - 2 do
  local key, lease, done = ARGV[n + 2], KEYS[2 * n], KEYS[2 * n + 1]
  if redis.call('HEXISTS', KEYS[1], key) == 0 then
    results[n] = redis.call('EXISTS', done) == 1 and -1 or -2
  else
    local holder = redis.call('GET', lease)
    if holder and holder ~= ARGV[1] then
      results[n] = 0
    else
      redis.call('SET', lease, ARGV[1], 'PX', ARGV[2])
      results[n] = 1
    end
  end
end
return results`;
/** Jobs read, renewed or updated by one command at most: a longer one would hold Redis up for other clients. */
const JOBS_PER_CALL = 500;

/**
 * The delivery claim, for ARGV[2]: removes the job and leaves a done marker naming the deliverer, unless another owner
 * holds its lease. A job already gone counts as this caller's when the marker names it (a reply lost) or there is none.
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
 * Moves one job from the names before the hash tag (KEYS[1], KEYS[2], KEYS[5]) to today's (KEYS[3], KEYS[4], KEYS[6]),
 * lease and time left included, unless today's done marker (KEYS[7]) says it is done. 1 when the job was there.
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

/** What a lease on a stored job came to (see LEASE_JOBS). */
export type JobLease = 'held' | 'taken' | 'done' | 'missing';
const LEASES: Record<number, JobLease> = { 1: 'held', 0: 'taken', [-1]: 'done', [-2]: 'missing' };

/**
 * Stored jobs in two hashes, `<name>` (records) and `<name>:job` (descriptions), so that an update never rewrites, or
 * brings back, a job's record; beside them each job's lease and, once delivered or cancelled, its done marker, which
 * tells a copy of a delivered job from a job Redis lost.
 *
 * Jobs stored under `earlierName` (releases before the hash tag) are moved here before the first listing, and their done
 * markers are read where they are. Instances of both kinds at once on one Redis are not supported.
 */
export class RedisJobHashes {
  constructor(
    private readonly redis: RedisClient,
    private readonly name: string,
    private readonly doneTtlMs: number,
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

  async all(): Promise<Array<{ record: string; job: string | undefined }>> {
    const [records, jobs] = await Promise.all([this.name, `${this.name}:job`].map((key) => this.redis.hgetall(key)));
    return Object.entries(records).map(([key, record]) => ({ record, job: jobs[key] }));
  }

  /** The stored jobs no one holds a lease on, except those in `skipped`, reading the records of those only (one may be leased again meanwhile). */
  async unleased(skipped: KeySet = new Set()): Promise<Array<{ record: string; job: string | undefined }>> {
    const keys = (await this.redis.hkeys(this.name)).filter((key) => !skipped.has(key));
    const free: string[] = [];
    for (let at = 0; at < keys.length; at += JOBS_PER_CALL) {
      const batch = keys.slice(at, at + JOBS_PER_CALL);
      const holders = await this.redis.mget(...batch.map((key) => this.keys(key)[2]));
      for (const [index, key] of batch.entries()) if (holders[index] === null) free.push(key);
    }
    if (free.length === 0) return [];
    const [records, jobs] = await Promise.all([this.redis.hmget(this.name, ...free), this.redis.hmget(`${this.name}:job`, ...free)]);
    return free.flatMap((_, index) => {
      const record = records[index];
      return record === null ? [] : [{ record, job: jobs[index] ?? undefined }];
    });
  }

  /** Stores a job under a lease for `owner`; false when it was delivered or cancelled already, or another owner holds it. */
  async register(key: string, record: string, job: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.eval(REGISTER_JOB, 4, ...this.keys(key), key, record, job, owner, ttl(ttlMs))) === 1;
  }

  /** Replaces the descriptions of stored jobs, `[key, description]` each, in scripts of JOBS_PER_CALL jobs. */
  async update(descriptions: Array<[string, string]>): Promise<void> {
    for (let at = 0; at < descriptions.length; at += JOBS_PER_CALL) {
      await this.redis.eval(UPDATE_JOBS, 2, this.name, `${this.name}:job`, ...descriptions.slice(at, at + JOBS_PER_CALL).flat());
    }
  }

  /** `missing` only when no done marker is found under either name: a job an earlier release delivered is `done`. */
  async lease(key: string, owner: string, ttlMs: number): Promise<JobLease> {
    return (await this.leases([key], owner, ttlMs))[0];
  }

  /** `lease` for many jobs in a few scripts (JOBS_PER_CALL each): what each came to, in the order of `keys`. */
  async leases(keys: string[], owner: string, ttlMs: number): Promise<JobLease[]> {
    const leases: JobLease[] = [];
    for (let at = 0; at < keys.length; at += JOBS_PER_CALL) {
      const batch = keys.slice(at, at + JOBS_PER_CALL);
      const jobKeys = batch.flatMap((key) => this.keys(key).slice(2));
      const codes = (await this.redis.eval(LEASE_JOBS, 1 + jobKeys.length, this.name, ...jobKeys, owner, ttl(ttlMs), ...batch)) as number[];
      leases.push(...codes.map((code) => LEASES[Number(code)]));
    }
    if (this.earlierName === undefined) return leases;
    for (const [index, lease] of leases.entries()) {
      if (lease === 'missing' && (await this.redis.exists(`${this.earlierName}:done:${keys[index]}`)) === 1) leases[index] = 'done';
    }
    return leases;
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
