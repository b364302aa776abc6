/**
 * Leases, a key holding its owner's id: claimed, renewed and released by one Lua script each. Every
 * operation of the Redis store that reads and then writes is one script, which Redis runs atomically:
 * two instances can never both take the last unit of a quota, the same schedule slot or a free lease.
 */
export const CLAIM = `
local current = redis.call('GET', KEYS[1])
if current and current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;

export const RENEW = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

export const RELEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1`;

/** Milliseconds as Redis's PX takes them: a whole number, at least 1. */
export function ttl(ms: number): number {
  return Math.max(1, Math.ceil(ms));
}
