import Redis from 'ioredis';
import should from 'should';
import { RedisStore } from '../../nodes/lib/state/redis-store';
import { RedisServer } from '../support/redis-server';

const JOBS = 200;
const LEASE_MS = 1000;
const DONE_TTL_MS = 1500;

/**
 * Issue 59: the stored jobs of a config node in Redis grow by a bounded number of keys per job and
 * go with the job. Many jobs share two hashes (records, descriptions), each running job adds its
 * lease (which runs out unless renewed), and a delivered or cancelled job leaves only its done
 * marker, which expires. On a real redis-server.
 */
describe('stored jobs in Redis: keys per job bounded, expired with the job', function () {
  this.timeout(30_000);
  let redis: RedisServer;
  let client: Redis;

  before(async function () {
    if (!RedisServer.available()) throw new Error('redis-server is not installed: apt-get install -y redis-server (.ci/run does it)');
    redis = await RedisServer.start();
    client = new Redis(redis.url);
  });
  after(async function () {
    client?.disconnect();
    await redis?.remove();
  });

  const keysWithTtl = async () => {
    const keys = await client.keys('*');
    const ttls = await Promise.all(keys.map((key) => client.pttl(key)));
    return keys.map((key, i) => ({ key, ttl: ttls[i] }));
  };

  it('holds two hashes for all jobs and one lease per running job; a delivered job leaves one done marker that expires', async function () {
    const jobs = new RedisStore(client, 'keys-test:', false, false).jobHashes('jobs:cfg', DONE_TTL_MS);
    const keys = Array.from({ length: JOBS }, (_v, i) => `j${i}`);
    for (const key of keys) should(await jobs.register(key, JSON.stringify({ key }), '{"polls":0}', 'owner', LEASE_MS)).be.true();
    for (const key of keys) await jobs.update([[key, '{"polls":1}']]);

    let stored = await keysWithTtl();
    should(stored).have.length(2 + JOBS);
    // Only the two hashes have no expiry: they go once their last job does.
    should(
      stored
        .filter(({ ttl }) => ttl === -1)
        .map(({ key }) => key)
        .sort(),
    ).eql(['keys-test:{jobs:cfg}', 'keys-test:{jobs:cfg}:job']);
    should(stored.filter(({ key }) => key.includes(':lease:')).every(({ ttl }) => ttl > 0 && ttl <= LEASE_MS)).be.true();
    should(await client.hlen('keys-test:{jobs:cfg}')).equal(JOBS);

    // Half delivered, half cancelled: the hashes and leases go, a done marker each stays for its time.
    for (const [i, key] of keys.entries()) {
      if (i % 2) await jobs.cancel(key);
      else should(await jobs.deliver(key, 'owner')).be.true();
    }
    stored = await keysWithTtl();
    should(stored).have.length(JOBS);
    should(stored.every(({ key, ttl }) => key.includes(':done:') && ttl > 0 && ttl <= DONE_TTL_MS)).be.true();
    await new Promise((resolve) => setTimeout(resolve, DONE_TTL_MS + 200));
    should(await client.dbsize()).equal(0);
  });

  it('a running job whose runner stops renewing keeps only its two hash fields once the lease runs out', async function () {
    const jobs = new RedisStore(client, 'orphans-test:', false, false).jobHashes('jobs:cfg', DONE_TTL_MS);
    for (let i = 0; i < 10; i++) await jobs.register(`j${i}`, `{"key":"j${i}"}`, '{}', 'gone', LEASE_MS);
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 200));
    should((await client.keys('orphans-test:*')).sort()).eql(['orphans-test:{jobs:cfg}', 'orphans-test:{jobs:cfg}:job']);
    // Still stored, for whoever resumes it.
    should(await jobs.all()).have.length(10);
  });
});
