import type Redis from 'ioredis';
import type { KeyValueStore } from './store';

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

const TAKE = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used >= tonumber(ARGV[1]) then return {0, used} end
used = redis.call('INCR', KEYS[1])
if used == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {1, used}`;

/** Replaces a stored job's description only while the job itself is stored (KEYS: jobs, descriptions). */
const UPDATE_JOB = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return 1`;

/** Removes a stored job and its description; 1 for the one caller that removed it. */
const TAKE_JOB = `
local taken = redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return taken`;

/**
 * The shared schedule of a rate limit: the key holds when the next free slot begins, on Redis's own
 * clock (TIME), so instances whose clocks differ still space their requests evenly. The answer is the
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

/** `KeyValueStore` on a Redis connection; every key gets `prefix`. Errors reach the caller. */
export class RedisStore implements KeyValueStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

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

  async take(key: string, limit: number, ttlMs: number): Promise<{ taken: boolean; used: number }> {
    const [taken, used] = (await this.redis.eval(TAKE, 1, this.prefix + key, limit, ttl(ttlMs))) as [number, number];
    return { taken: taken === 1, used };
  }

  /** The stored jobs named `name` (below this store's prefix). */
  jobHashes(name: string): RedisJobHashes {
    return new RedisJobHashes(this.redis, this.prefix + name);
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

/**
 * Stored jobs in two hashes, `<name>` (each job's record) and `<name>:job` (each job's description,
 * replaced as the job progresses), so that an update never rewrites, or brings back, a job's record.
 */
export class RedisJobHashes {
  constructor(
    private readonly redis: Redis,
    private readonly name: string,
  ) {}

  private get keys(): [string, string] {
    return [this.name, `${this.name}:job`];
  }

  /** Every stored job: its record and its description, by job key. */
  async all(): Promise<Array<{ record: string; job: string | undefined }>> {
    const [records, jobs] = await Promise.all(this.keys.map((key) => this.redis.hgetall(key)));
    return Object.entries(records).map(([key, record]) => ({ record, job: jobs[key] }));
  }

  async put(key: string, record: string, job: string): Promise<void> {
    await this.redis.multi().hset(this.keys[0], key, record).hset(this.keys[1], key, job).exec();
  }

  async update(key: string, job: string): Promise<void> {
    await this.redis.eval(UPDATE_JOB, 2, ...this.keys, key, job);
  }

  async take(key: string): Promise<boolean> {
    return (await this.redis.eval(TAKE_JOB, 2, ...this.keys, key)) === 1;
  }
}

function ttl(ms: number): number {
  return Math.max(1, Math.ceil(ms));
}
