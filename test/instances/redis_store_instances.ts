import Redis from 'ioredis';
import should from 'should';
import { RedisStore } from '../../nodes/lib/state/redis-store';
import { DEFAULT_KEY_PREFIX, SharedState } from '../../nodes/lib/state/shared-state';
import { MemoryStore } from '../../nodes/lib/state/store';
import { english } from '../support/english';
import { RedisServer } from '../support/redis-server';
import { withFallback } from '../support/fallback-store';

/**
 * The shared-state primitives on a real redis-server, several clients at once standing in for several
 * instances: leases for job ownership, the counter behind the daily limit and the rate schedule.
 */
describe('RedisStore on a real redis-server', function () {
  this.timeout(30_000);
  let redis: RedisServer;
  const clients: Redis[] = [];
  const storeOf = (prefix = 'test:', earlierNames = false) => {
    const client = new Redis(redis.url);
    // These clients only stand in for instances; their reconnection attempts while Redis is stopped are expected.
    client.on('error', () => undefined);
    clients.push(client);
    return new RedisStore(client, prefix, false, earlierNames);
  };

  before(async function () {
    if (!RedisServer.available()) throw new Error('redis-server is not installed: apt-get install -y redis-server (.ci/run does it)');
    redis = await RedisServer.start();
  });
  after(async function () {
    for (const client of clients.splice(0)) client.disconnect();
    await redis?.remove();
  });

  it('a lease has one owner across clients; renewed and released only by it; free again once it runs out', async function () {
    const [a, b] = [storeOf(), storeOf()];
    const claims = await Promise.all(Array.from({ length: 20 }, (_v, i) => (i % 2 ? a : b).claim('job:1', `owner-${i}`, 5000)));
    should(claims.filter(Boolean)).have.length(1);
    const owner = `owner-${claims.indexOf(true)}`;
    should(await a.claim('job:1', owner, 5000)).be.true();
    should(await b.renew('job:1', 'someone else', 5000)).be.false();
    should(await b.release('job:1', 'someone else')).be.false();
    should(await b.renew('job:1', owner, 100)).be.true();
    await new Promise((resolve) => setTimeout(resolve, 150));
    // The owner died (its lease ran out): another instance takes the job over.
    should(await a.claim('job:1', 'taker', 5000)).be.true();
    should(await b.renew('job:1', owner, 5000)).be.false();
    should(await a.release('job:1', 'taker')).be.true();
    should(await a.get('job:1')).be.undefined();
  });

  it("a webhook path's replay record: one claim per request across clients; an ended entry moves since, and nothing at or before it is claimed again, whatever window is asked for", async function () {
    const [a, b] = [storeOf('replays-test:'), storeOf('replays-test:')];
    const now = Date.now();
    const member = (t: number, name: string) => `${t} ${t}:${name}`;
    const claims = await Promise.all(Array.from({ length: 10 }, (_v, i) => (i % 2 ? a : b).claimReplay('/hook', member(now, 'first'), now, now + 2000, now)));
    should(claims.filter((claim) => claim === 'claimed')).have.length(1);
    should(claims.filter((claim) => claim === 'duplicate')).have.length(9);
    // Withdrawn (not delivered after all): claimed again.
    await a.withdrawReplay('/hook', member(now, 'first'));
    should(await b.claimReplay('/hook', member(now, 'first'), now, now + 2000, now)).equal('claimed');
    should(await b.claimReplay('/hook', member(now - 500, 'older'), now - 500, now + 60_000, now)).equal('claimed');
    // 3 s on (its 2 s window has ended), asked for with a 60 s window: forgotten, and so is anything not later.
    const later = now + 3000;
    should(await a.claimReplay('/hook', member(now, 'first'), now, now + 60_000, later)).equal('forgotten');
    should(await a.claimReplay('/hook', member(now - 1000, 'never seen'), now - 1000, now + 59_000, later)).equal('forgotten');
    // Held still (its window has not ended), and newer requests are claimed.
    should(await a.claimReplay('/hook', member(now - 500, 'older'), now - 500, now + 60_000, later)).equal('duplicate');
    should(await a.claimReplay('/hook', member(now + 1, 'newer'), now + 1, now + 60_001, later)).equal('claimed');
    // Two keys, one hash tag, neither expiring.
    const client = new Redis(redis.url);
    try {
      should((await client.keys('replays-test:*')).sort()).eql(['replays-test:replays:{/hook}', 'replays-test:replays:{/hook}:since']);
      should(await client.get('replays-test:replays:{/hook}:since')).equal(String(now));
      should(await client.pttl('replays-test:replays:{/hook}')).equal(-1);
    } finally {
      client.disconnect();
    }
  });

  it("a webhook path's replay record past its cap: new claims are full, nothing is dropped for room, copies (in either member form) stay duplicates", async function () {
    const store = storeOf('replays-cap:');
    const now = Date.now();
    const claim = (name: string, former = `${now} ${now}:${name}`) => store.claimReplay('/cap', `${now} ${name}`, now, now + 60_000, now, 3, former);
    for (const name of ['a', 'b', 'c']) should(await claim(name)).equal('claimed');
    should(await claim('d')).equal('full');
    should(await claim('a')).equal('duplicate');
    // An entry an earlier version claimed under its whole key is a copy too.
    const client = new Redis(redis.url);
    try {
      await client.zrem('replays-cap:replays:{/cap}', `${now} b`);
      await client.zadd('replays-cap:replays:{/cap}', now + 60_000, `${now} ${now}:b`);
      should(await claim('b')).equal('duplicate');
      should(await client.zcard('replays-cap:replays:{/cap}')).equal(3);
    } finally {
      client.disconnect();
    }
    // Once their window has ended they leave, and new requests are claimed.
    should(await store.claimReplay('/cap', `${now + 61_000} d`, now + 61_000, now + 121_000, now + 61_000, 3)).equal('claimed');
  });

  it('stored jobs: one delivery claim wins, the done marker keeps a delivered job from coming back, a lost job is told from a delivered one', async function () {
    const [a, b] = [storeOf('jobs-test:').jobHashes('jobs', 60_000), storeOf('jobs-test:').jobHashes('jobs', 60_000)];
    should(await a.register('j1', '{"key":"j1"}', '{}', 'owner-a', 5000)).be.true();
    should(await b.lease('j1', 'owner-b', 5000)).equal('taken');
    should(await a.lease('j1', 'owner-a', 5000)).equal('held');
    // Another instance never delivers a job whose lease it does not hold; the holder does, once.
    should(await b.deliver('j1', 'owner-b')).be.false();
    const claims = await Promise.all([a.deliver('j1', 'owner-a'), a.deliver('j1', 'owner-a')]);
    should(claims).eql([true, true]);
    should(await b.deliver('j1', 'owner-b')).be.false();
    should(await a.all()).eql([]);
    // A stale copy (in the file of an instance that was down) is not registered again.
    should(await b.lease('j1', 'owner-b', 5000)).equal('done');
    should(await b.register('j1', '{"key":"j1"}', '{}', 'owner-b', 5000)).be.false();
    // A job Redis never saw (or lost) reads as missing, and its holder registers it again.
    should(await b.lease('j2', 'owner-b', 5000)).equal('missing');
    should(await b.register('j2', '{"key":"j2"}', '{}', 'owner-b', 5000)).be.true();
    await b.cancel('j2');
    should(await a.lease('j2', 'owner-a', 5000)).equal('done');
  });

  it('leases of many jobs in one call, past one script: each outcome in the order asked; only unleased jobs are read for takeover', async function () {
    const [a, b] = [storeOf('batch-test:').jobHashes('jobs', 60_000), storeOf('batch-test:').jobHashes('jobs', 60_000)];
    const keys = Array.from({ length: 1203 }, (_v, i) => `j${i}`);
    for (const key of keys) should(await a.register(key, JSON.stringify({ key }), '{}', 'owner-a', 5000)).be.true();
    // j1 taken by b once its lease is gone, j2 delivered, j3 gone without a trace (Redis lost it).
    const client = new Redis(redis.url);
    clients.push(client);
    await client.del('batch-test:{jobs}:lease:j1');
    should(await b.lease('j1', 'owner-b', 5000)).equal('held');
    should(await a.deliver('j2', 'owner-a')).be.true();
    await client.hdel('batch-test:{jobs}', 'j3');
    const leases = await a.leases([...keys, 'j-unknown'], 'owner-a', 5000);
    should(leases).have.length(keys.length + 1);
    should(leases.slice(0, 5)).eql(['held', 'taken', 'done', 'missing', 'held']);
    should(leases[keys.length]).equal('missing');
    should(leases.filter((lease) => lease === 'held')).have.length(keys.length - 3);
    should(await a.unleased()).eql([]);
    // A lease that runs out leaves its job free for the next look, and only it.
    await client.del('batch-test:{jobs}:lease:j700');
    should(await b.unleased()).eql([{ record: '{"key":"j700"}', job: '{}' }]);
  });

  it("jobs stored under the names before the hash tag are moved to today's with their lease, and their done markers are read where they are", async function () {
    const client = new Redis(redis.url);
    clients.push(client);
    // As a release before the hash tag left them: two jobs (one leased for 5 s more), one job delivered.
    const earlier = 'upgrade-test:jobs:cfg';
    await client.hset(earlier, 'j1', '{"key":"j1"}', 'j2', '{"key":"j2"}');
    await client.hset(`${earlier}:job`, 'j1', '{"n":1}', 'j2', '{"n":2}');
    await client.set(`${earlier}:lease:j1`, 'old-owner', 'PX', 5000);
    await client.set(`${earlier}:done:j3`, 'old-owner', 'PX', 60_000);
    const [a, b] = [storeOf('upgrade-test:', true).jobHashes('jobs:cfg', 60_000), storeOf('upgrade-test:', true).jobHashes('jobs:cfg', 60_000)];
    // Two instances starting together: each job is moved once.
    should((await Promise.all([a.adoptEarlierJobs(), b.adoptEarlierJobs()])).reduce((x, y) => x + y)).equal(2);
    should(await client.exists(earlier, `${earlier}:job`, `${earlier}:lease:j1`)).equal(0);
    should((await a.all()).sort((x, y) => x.record.localeCompare(y.record))).eql([
      { record: '{"key":"j1"}', job: '{"n":1}' },
      { record: '{"key":"j2"}', job: '{"n":2}' },
    ]);
    // The lease moved with the time it had left: its holder's, not free before it runs out.
    should(await a.lease('j1', 'new-owner', 5000)).equal('taken');
    should(await client.pttl('upgrade-test:{jobs:cfg}:lease:j1')).be.within(1, 5000);
    should(await a.lease('j2', 'new-owner', 5000)).equal('held');
    // A copy of the job the earlier release delivered is not brought back; one no release saw is.
    should(await b.lease('j3', 'new-owner', 5000)).equal('done');
    should(await b.lease('j4', 'new-owner', 5000)).equal('missing');
    // Without earlier names (a Cluster), nothing is looked for.
    const cluster = storeOf('upgrade-test:').jobHashes('jobs:cfg', 60_000);
    should(await cluster.adoptEarlierJobs()).equal(0);
    should(await cluster.lease('j3', 'new-owner', 5000)).equal('missing');
  });

  it('a counter taken by many clients at once stops at exactly its limit', async function () {
    const stores = [storeOf(), storeOf(), storeOf()];
    const results = await Promise.all(Array.from({ length: 90 }, (_v, i) => stores[i % 3].take('quota', 50, 60_000)));
    should(results.filter((r) => r.taken)).have.length(50);
    should(Math.max(...results.map((r) => r.used))).equal(50);
  });

  it('the rate schedule hands every client a distinct slot, one interval apart', async function () {
    const stores = [storeOf(), storeOf()];
    const waits = await Promise.all(Array.from({ length: 10 }, (_v, i) => stores[i % 2].reserveSlot('rate', 100)));
    const sorted = waits.sort((x, y) => x - y);
    // Each reply is measured from its own moment on Redis's clock: consecutive slots lie 100 ms apart, less the time between the calls.
    for (let i = 1; i < sorted.length; i++) should(sorted[i] - sorted[i - 1]).be.within(80, 101);
  });

  it('the rate schedule books several slots in one call: the next caller gets the slot after all of them', async function () {
    const store = storeOf();
    const first = await store.reserveSlot('rate-batch', 100, 4);
    const next = await store.reserveSlot('rate-batch', 100);
    should(first).be.within(0, 1);
    should(next).be.within(380, 401);
  });

  it('a store through withShared: Redis while it responds, the local store while it is down, with one warning', async function () {
    const warnings: string[] = [];
    const state = new SharedState({ url: redis.url, log: { warn: (t) => warnings.push(english(t)), info: () => undefined } });
    try {
      const store = withFallback(state, new MemoryStore());
      await store.set('where', 'redis', 60_000);
      should(await storeOf(DEFAULT_KEY_PREFIX).get('where')).equal('redis');
      await redis.stop();
      await waitUntil(() => state.mode === 'unavailable');
      should(await store.get('where')).be.undefined();
      await store.set('where', 'memory', 60_000);
      should(await store.get('where')).equal('memory');
      await redis.launch();
      await waitUntil(() => state.mode === 'shared', 10_000);
      await store.set('where', 'redis again', 60_000);
      should(await store.get('where')).equal('redis again');
      should(warnings).have.length(1);
    } finally {
      state.close();
    }
  });

  it('a refusal that is no outage (a job script on a key of the wrong type) is served locally for that operation alone: no outage, no flapping, reported once', async function () {
    const warnings: string[] = [];
    const state = new SharedState({ url: redis.url, log: { warn: (t) => warnings.push(english(t)), info: () => undefined }, keyPrefix: 'refusal:' });
    try {
      should(await state.connected()).be.true();
      await storeOf('refusal:').set('{jobs:x}', 'not a hash', 60_000);
      const leases = [];
      for (let i = 0; i < 10; i++)
        leases.push(
          await state.withShared(
            (store) => store.jobHashes('jobs:x', 60_000).lease('job', 'me', 1000),
            () => 'local',
          ),
        );
      should(leases).eql(Array(10).fill('local'));
      should(state.mode).equal('shared');
      should(
        await state.withShared(
          (store) => store.take('count', 10, 60_000),
          () => undefined,
        ),
      ).eql({ taken: true, used: 1 });
      should(warnings).have.length(1);
      should(warnings[0]).match(/refused an operation \(WRONGTYPE/);
    } finally {
      state.close();
    }
  });

  it('a hung Redis (SIGSTOP) is unavailable after the first timeout: waiting operations go local at once, later ones never wait; a probe brings sharing back', async function () {
    const warnings: string[] = [];
    const recoveries: string[] = [];
    const log = {
      warn: (t: Parameters<typeof english>[0]) => warnings.push(english(t)),
      info: (t: Parameters<typeof english>[0]) => recoveries.push(english(t)),
    };
    const state = new SharedState({ url: redis.url, log, commandTimeoutMs: 1000 });
    try {
      const store = withFallback(state, new MemoryStore());
      await store.set('where', 'redis', 60_000);
      redis.pause();
      const timed = async <T>(operation: Promise<T>) => {
        const started = Date.now();
        const value = await operation;
        return { value, ms: Date.now() - started };
      };
      // One operation starts the wait; a second joins it half-way: both end when the first times out.
      const first = timed(store.get('where'));
      await new Promise((resolve) => setTimeout(resolve, 500));
      const second = timed(store.get('where'));
      const [a, b] = await Promise.all([first, second]);
      should(a.value).be.undefined();
      should(a.ms).be.within(900, 1600);
      should(b.ms).be.below(1100);
      should(state.mode).equal('unavailable');
      // Later operations go to local state without waiting, many of them.
      const later = await timed(Promise.all(Array.from({ length: 50 }, (_v, i) => store.take(`count-${i}`, 10, 60_000))));
      should(later.ms).be.below(200);
      should(warnings).have.length(1);
      should(warnings[0]).match(/Command timed out/);
      redis.resume();
      await waitUntil(() => state.mode === 'shared', 5000);
      should(await store.get('where')).equal('redis');
      // The recovery is told once Redis has worked for 5 s (a relapse before is the same outage).
      await waitUntil(() => recoveries.length === 1, 7000);
      should(warnings).have.length(1);
      should(recoveries).have.length(1);
    } finally {
      redis.resume();
      state.close();
    }
  });

  it('attempt tells a write sent to a hung Redis (unknown: it lands when Redis wakes) from one not sent (away) and one refused (READONLY), and only a probe refused that way counts as Redis refusing writes (issue 51)', async function () {
    const state = new SharedState({ url: redis.url, log: { warn: () => undefined, info: () => undefined }, commandTimeoutMs: 1000, keyPrefix: 'attempt:' });
    const admin = storeOf('attempt:');
    const client = clients[clients.length - 1];
    const write = (key: string) => state.attempt((store) => store.set(key, 'written', 60_000));
    try {
      should(await write('healthy')).eql({ outcome: 'done', value: undefined });
      redis.pause();
      const sent = write('while-hung');
      await new Promise((resolve) => setTimeout(resolve, 100));
      should(await write('joined')).eql({ outcome: 'unknown' });
      should(await sent).eql({ outcome: 'unknown' });
      should(await write('after')).eql({ outcome: 'away' });
      // Silence is not a refusal: the hung Redis may run what it was sent, or others' writes.
      should(state.refusingWritesSince).be.undefined();
      redis.resume();
      await waitUntil(() => state.mode === 'shared', 5000);
      // The write that timed out ran once Redis woke; the one never sent did not.
      should(await admin.get('while-hung')).equal('written');
      should(await admin.get('after')).be.undefined();
      await client.replicaof('127.0.0.1', 1);
      should(await write('read-only')).eql({ outcome: 'refused' });
      await waitUntil(() => state.refusingWritesSince !== undefined, 5000);
      should(await write('read-only')).eql({ outcome: 'away' });
      await client.replicaof('NO', 'ONE');
      await waitUntil(() => state.mode === 'shared', 10_000);
      should(state.refusingWritesSince).be.undefined();
    } finally {
      redis.resume();
      await client.replicaof('NO', 'ONE');
      state.close();
    }
  });

  it('a Redis hung before the first connection: the first operation waits one command timeout at most, then sharing starts when it responds', async function () {
    await storeOf(DEFAULT_KEY_PREFIX).set('early', 'redis', 60_000);
    redis.pause();
    const state = new SharedState({ url: redis.url, log: { warn: () => undefined, info: () => undefined }, commandTimeoutMs: 1000 });
    try {
      const store = withFallback(state, new MemoryStore());
      const started = Date.now();
      should(await store.get('early')).be.undefined();
      should(Date.now() - started).be.below(1600);
      redis.resume();
      await waitUntil(() => state.mode === 'shared', 10_000);
      should(await store.get('early')).equal('redis');
    } finally {
      redis.resume();
      state.close();
    }
  });
});

async function waitUntil(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
