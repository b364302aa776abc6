import fs from 'node:fs';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import should from 'should';
import { ResponseCache } from '../../../nodes/lib/state/response-cache';
import { CoalescedWriter, readJson } from '../../../nodes/lib/state/json-file';
import { CounterFile, DailyQuota } from '../../../nodes/lib/state/quota';
import { SharedMode, SharedState } from '../../../nodes/lib/state/shared-state';
import { redisDeployment } from '../../../nodes/lib/state/redis-deployment';
import { MemoryStore } from '../../../nodes/lib/state/store';
import type { CatalogText } from '../../../nodes/lib/util/catalog-text';
import { english } from '../../support/english';
import { ManualClock } from '../../support/clock';
import { rejectionOf } from '../../support/platform-client';
import { waitUntil } from '../../support/wait';
import { REFUSED_AUTH, startEchoingRedis } from '../../support/echoing-redis';

/** A shared-state URL without credentials, for logs and status texts. */
const describeRedisUrl = (url: string): string => redisDeployment(url).address;

/** A log that keeps what it is told, in English. */
function recordingLog() {
  const lines: Array<{ level: 'warn' | 'info'; text: string }> = [];
  const record = (level: 'warn' | 'info') => (text: CatalogText) => lines.push({ level, text: english(text) });
  return { lines, log: { warn: record('warn'), info: record('info') } };
}

describe('shared state without Redis (one instance)', function () {
  let dir: string;
  beforeEach(function () {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-shared-test-'));
  });
  afterEach(function () {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('MemoryStore', function () {
    it('leases: one owner at a time, renewed and released only by its owner, free again after the TTL', async function () {
      const clock = new ManualClock();
      const store = new MemoryStore({ clock });
      should(await store.claim('job:1', 'a', 1000)).be.true();
      should(await store.claim('job:1', 'b', 1000)).be.false();
      should(await store.claim('job:1', 'a', 1000)).be.true();
      should(await store.renew('job:1', 'b', 1000)).be.false();
      should(await store.release('job:1', 'b')).be.false();
      should(await store.renew('job:1', 'a', 1000)).be.true();
      should(await store.release('job:1', 'a')).be.true();
      should(await store.claim('job:1', 'b', 30)).be.true();
      await clock.advance(29);
      should(await store.claim('job:1', 'a', 1000)).be.false();
      await clock.advance(1);
      should(await store.renew('job:1', 'b', 1000)).be.false();
      should(await store.claim('job:1', 'a', 1000)).be.true();
    });

    it('counts up to a limit and no further', async function () {
      const store = new MemoryStore();
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await store.take('count', 3, 60_000));
      should(results).eql([
        { taken: true, used: 1 },
        { taken: true, used: 2 },
        { taken: true, used: 3 },
        { taken: false, used: 3 },
      ]);
    });

    it('forgets the least recently used entries beyond its bounds, and keeps no entry larger than the bound', async function () {
      const store = new MemoryStore({ maxEntries: 3, maxChars: 100 });
      for (const key of ['a', 'b', 'c']) await store.set(key, 'x', 60_000);
      await store.get('a');
      await store.set('d', 'x', 60_000);
      should(await store.get('b')).be.undefined();
      should(await store.get('a')).equal('x');
      await store.set('huge', 'y'.repeat(200), 60_000);
      should(await store.get('huge')).be.undefined();
      await store.set('e', 'z'.repeat(98), 60_000);
      should(store.size).equal(1);
    });

    it('changes a counter in place, keeping the order of use and the size it counts', async function () {
      const store = new MemoryStore({ maxEntries: 3, maxChars: 8 });
      for (const key of ['a', 'b', 'c']) await store.set(key, '1', 60_000);
      for (let i = 0; i < 3; i++) store.takeNow('a', 100, 60_000);
      await store.set('d', '1', 60_000);
      should(await store.get('b')).be.undefined();
      should(await store.get('a')).equal('4');
      for (let i = 0; i < 6; i++) store.takeNow('a', 100, 60_000);
      should(await store.get('c')).equal('1');
      should(store.takeNow('d', 100, 60_000)).eql({ taken: true, used: 2 });
      // 'a' (now '10', three characters) was used longest ago: the next entry past the bound of 8 pushes it out.
      await store.set('e', '1', 60_000);
      should(await store.get('a')).be.undefined();
      should([await store.get('c'), await store.get('d'), await store.get('e')]).eql(['1', '2', '1']);
      should(store.size).equal(3);
    });
  });

  describe('the counter file', function () {
    /** A writer of `{ value }` (state.value) to state.json in the test's folder; state.writes counts the states it took to write. */
    function valueWriter(): { file: string; state: { value: number; writes: number }; writer: CoalescedWriter } {
      const file = path.join(dir, 'state.json');
      const state = { value: 0, writes: 0 };
      const writer = new CoalescedWriter(
        file,
        () => (state.writes++, { value: state.value }),
        (err) => should.fail(err, undefined, err.message),
      );
      return { file, state, writer };
    }

    it('writes atomically, coalesces a burst of changes and keeps the last state', async function () {
      const { file, state, writer } = valueWriter();
      for (let i = 0; i < 100; i++) {
        state.value = i;
        writer.changed();
      }
      await writer.flushed();
      should(readJson(file)).eql({ value: 99 });
      should(state.writes).be.belowOrEqual(2);
      should(fs.readdirSync(dir)).eql(['state.json']);
    });

    it('writes at most once a second however often the value changes, and each change is on disk within a second or so unflushed', async function () {
      this.timeout(10_000);
      const { file, state, writer } = valueWriter();
      // A change every 2 ms for 1.5 s: the rate of a busy flow, spread out so that writes finish between changes.
      const until = Date.now() + 1500;
      while (Date.now() < until) {
        state.value++;
        writer.changed();
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      should(state.writes).be.belowOrEqual(2);
      // Not flushed: the last change reaches the file by itself once the second since the last write is over.
      const last = state.value;
      await waitUntil(() => (readJson(file) as { value?: number } | undefined)?.value === last, 'the last change on disk', 3000);
      should(state.writes).be.belowOrEqual(3);
      await writer.flushed();
    });

    it('a daily quota counts per instance without Redis, survives a restart and stops at exactly the limit', async function () {
      const file = path.join(dir, 'svc-location-quota.json');
      const state = new SharedState({ log: recordingLog().log });
      const quota = new DailyQuota(
        state,
        CounterFile.at(file, (err) => should.fail(err, undefined, err.message)),
        'scope',
        3,
      );
      should(await quota.take()).equal(1);
      should(await quota.take()).equal(2);
      await CounterFile.at(file, () => undefined).flushed();
      // A restarted Node-RED reads the file: a copy of it at a new path is a process that has not seen it yet.
      const restartedFile = path.join(dir, 'restarted.json');
      fs.copyFileSync(file, restartedFile);
      const restarted = new DailyQuota(
        state,
        CounterFile.at(restartedFile, () => undefined),
        'scope',
        3,
      );
      should(await restarted.take()).equal(3);
      const refused = await rejectionOf((async () => restarted.take())());
      should(refused.code).equal('QUOTA_EXCEEDED');
      should(refused.notSent).be.true();
      should(refused.statusDetail).equal('3/3');
      should(refused.message).match(/daily limit of 3 requests is used up \(3\/3\)/);
      await CounterFile.at(restartedFile, () => undefined).flushed();
    });

    it('counts each UTC day on its own', async function () {
      const counters = CounterFile.at(path.join(dir, 'q.json'), () => undefined);
      const quota = new DailyQuota(new SharedState({ log: recordingLog().log }), counters, 'scope', 1);
      should(await quota.take(Date.parse('2026-01-01T23:59:00Z'))).equal(1);
      should((await rejectionOf((async () => quota.take(Date.parse('2026-01-01T23:59:30Z')))())).code).equal('QUOTA_EXCEEDED');
      should(await quota.take(Date.parse('2026-01-02T00:00:01Z'))).equal(1);
      await counters.flushed();
    });
  });

  it('the response cache serves an identical query within its TTL, from memory without Redis', async function () {
    const clock = new ManualClock();
    const cache = new ResponseCache(new SharedState({ log: recordingLog().log }), 'scope', 50, clock);
    should(await cache.get('1 Main Street')).be.undefined();
    cache.set('1 Main Street', { statusCode: 200, body: { items: [1] } });
    should(await cache.get('1 Main Street')).eql({ statusCode: 200, body: { items: [1] } });
    should(await cache.get('2 Main Street')).be.undefined();
    await clock.advance(49);
    should(await cache.get('1 Main Street')).eql({ statusCode: 200, body: { items: [1] } });
    await clock.advance(1);
    should(await cache.get('1 Main Street')).be.undefined();
  });

  describe('Redis configured but unreachable', function () {
    it('serves from local state, says so once, and never rejects', async function () {
      const { lines, log } = recordingLog();
      // Resets every connection at once, as a host that refuses them does, and counts the attempts.
      let attempts = 0;
      const refusing = net.createServer((socket) => {
        attempts++;
        socket.resetAndDestroy();
      });
      await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
      const { port } = refusing.address() as AddressInfo;
      const state = new SharedState({ url: `redis://:secret-password@127.0.0.1:${port}`, log });
      const modes: SharedMode[] = [];
      state.onModeChange((mode) => modes.push(mode));
      try {
        should(state.address).equal(`redis://127.0.0.1:${port}`);
        await waitUntil(() => state.mode === 'unavailable', 'the outage to be seen');
        for (let i = 0; i < 20; i++)
          should(
            await state.withShared(
              async () => 'shared',
              () => 'local',
            ),
          ).equal('local');
        // Several reconnection attempts fail meanwhile: still one warning for the outage.
        await waitUntil(() => attempts >= 3, 'two reconnection attempts');
        const warnings = lines.filter((line) => line.level === 'warn');
        should(warnings).have.length(1);
        should(warnings[0].text).match(/shared state unavailable \(Redis at redis:\/\/127\.0\.0\.1:\d+/);
        should(warnings[0].text).not.match(/secret-password/);
        should(modes).eql(['unavailable']);
      } finally {
        state.close();
        await new Promise((resolve) => refusing.close(resolve));
      }
    });

    it('never repeats the Redis password, even when the server does (issue 20 point 1)', async function () {
      const password = 'redis-secret/pw+9';
      const server = await startEchoingRedis('latin1');
      const { lines, log } = recordingLog();
      const state = new SharedState({ url: `redis://:${encodeURIComponent(password)}@127.0.0.1:${(server.address() as AddressInfo).port}`, log });
      try {
        await waitUntil(() => lines.some((line) => line.level === 'warn'), 'the outage to be reported');
        const warning = lines.find((line) => line.level === 'warn')?.text ?? '';
        should(warning).match(REFUSED_AUTH);
        for (const form of [password, encodeURIComponent(password)]) should(lines.map((line) => line.text).join('\n')).not.containEql(form);
      } finally {
        state.close();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });

    it('refuses an address that is not one of the three forms (one Redis, Sentinel, Cluster)', function () {
      should(() => describeRedisUrl('http://127.0.0.1:6379')).throw(/must start with redis:\/\/, rediss:\/\/, redis-sentinel:\/\//);
      should(() => describeRedisUrl('not a url')).throw(/not a URL/);
      should(describeRedisUrl('rediss://user:pw@cache.example:6380/2')).equal('rediss://cache.example:6380');
      should(() => describeRedisUrl('redis-sentinel://s1:26379,s2:26379')).throw(/names no master/);
      should(() => describeRedisUrl('redis-sentinel://s1:26379/m?password=x')).throw(/^query parameter 1 of the Redis Sentinel URL is not one it takes/);
      should(() => describeRedisUrl('redis-sentinel://s1:26379/m?db=x')).throw(/^the db parameter of the Redis Sentinel URL is not a database number$/);
      should(() => describeRedisUrl('redis-sentinel://s1:26379,/m')).throw(/^host 2 of the Redis URL is not host:port/);
      should(() => describeRedisUrl('redis-cluster://n1:7000,n2:port')).throw(/^host 2 of the Redis URL is not host:port/);
      should(() => describeRedisUrl('redis-cluster://n1:7000/1')).throw(/takes no path or parameters/);
    });

    it('reads a Sentinel and a Cluster address: several hosts, default ports, no credentials in what it shows, every secret known', function () {
      const sentinel = redisDeployment('rediss-sentinel://app:p%40ss@s1.example,s2.example:26380,[::1]:26381/my%20master?db=2&sentinelPassword=s3cret');
      should(sentinel).have.properties({
        kind: 'sentinel',
        address: 'rediss-sentinel://s1.example:26379,s2.example:26380,[::1]:26381/my%20master',
        replicas: true,
      });
      should(sentinel.secrets).eql(['p%40ss', 'p@ss', 's3cret']);
      const cluster = redisDeployment('redis-cluster://:pw@10.0.0.1,10.0.0.2:7001');
      should(cluster).have.properties({ kind: 'cluster', address: 'redis-cluster://10.0.0.1:6379,10.0.0.2:7001', replicas: false });
      should(cluster.secrets).eql(['pw']);
      should(redisDeployment('redis://127.0.0.1:6379')).have.properties({ kind: 'single', address: 'redis://127.0.0.1:6379', replicas: false });
    });
  });
});
