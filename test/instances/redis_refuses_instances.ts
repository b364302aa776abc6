import Redis from 'ioredis';
import should from 'should';
import { Sandbox, startSandbox } from '../../sandbox';
import { RedisServer } from '../support/redis-server';
import { DelayProxy } from '../support/delay-proxy';
import { freePort } from '../support/node-red-process';
import { Collector, reportingFlow, startMessage } from '../support/process-flows';
import { waitUntil } from '../support/wait';
import { Cluster, CONFIG_ID, FlowNode, geocodeThrough, sharedFlows, showLogsOnFailure } from './cluster';
import { busiestWindow, promisedBusiest } from '../bench/measure';

/**
 * `npm run test:instances` (issue 27 points 4 and 5): two real Node-RED processes and a real
 * redis-server that responds but refuses (switched to a replica: READONLY; full with noeviction:
 * OOM), loses its keys (FLUSHALL), or replies slowly (through a proxy that holds back each reply).
 * A refusing Redis is one outage, reported once, and loses no job; a slow one costs a message one
 * round trip and one rate slot, and is reported once.
 */

const lines = (log: string[], pattern: RegExp) => log.filter((line) => pattern.test(line)).length;
const UNAVAILABLE = /shared state unavailable \(Redis/;
const AVAILABLE_AGAIN = /shared state available again/;

describe('several Node-RED instances on a Redis that refuses, loses its keys or replies slowly', function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let redis: RedisServer;
  let client: Redis;
  let cluster: Cluster;
  const collector = new Collector();
  const [a, b] = [0, 1].map((i) => () => cluster.instances[i]);

  before(async function () {
    if (!RedisServer.available()) throw new Error('redis-server is not installed: apt-get install -y redis-server (.ci/run does it)');
    sandbox = await startSandbox({ jobPolls: 10 });
    redis = await RedisServer.start();
    client = new Redis(redis.url);
    await collector.start();
    cluster = await Cluster.start(2);
  });

  beforeEach(async function () {
    await client.flushall();
    collector.reports.splice(0);
  });

  afterEach(async function () {
    // A test stopped half-way leaves a Redis that accepts writes behind.
    await client.replicaof('NO', 'ONE');
    await client.config('SET', 'maxmemory', '0');
    for (const instance of cluster?.instances ?? []) {
      should(lines(instance.log, /Unhandled|uncaught|FATAL|TypeError/i)).equal(0, 'no crash or unhandled rejection');
    }
  });

  showLogsOnFailure(() => cluster, 40);

  after(async function () {
    client?.disconnect();
    await cluster?.stop();
    await redis?.remove();
    await collector.close();
    await sandbox?.close();
  });

  /** Isoline jobs through `POST /start` (see reportingFlow) and geocodes through `POST /geocode`, on one config node with Redis. */
  function jobsAndGeocodes(): FlowNode[] {
    const isoline = { type: 'svc-isoline', pollIntervalSec: 0.2, maxWait: 120 };
    const jobs = reportingFlow(sandbox, collector.url, isoline, '(m) => ({ polygons: m.geojson ? m.geojson.features.length : 0 })', { redisUrl: redis.url });
    const geocodes = sharedFlows({ sandboxUrl: sandbox.url, redisUrl: redis.url })
      .filter((node) => ['in', 'geocode', 'catch', 'failure', 'response'].includes(String(node.id)))
      .map((node) => (node.id === 'catch' ? { ...node, id: 'geocode-catch' } : node));
    return [...jobs, ...geocodes];
  }

  const request = { async: true, origins: [{ lat: 52.52, lon: 13.405 }], range: { type: 'time', value: 600 } };
  const jobsKey = `svc-location:{jobs:${CONFIG_ID}}`;

  /**
   * Redis made to refuse writes (`refuse`) while a job runs on instance a (registered before) and
   * one starts on instance b (while it refuses), under geocode traffic into both for 8 s; then `accept`.
   */
  async function refusingRedis(refuse: () => Promise<void>, accept: () => Promise<void>, refusal: RegExp): Promise<void> {
    await cluster.deploy(jobsAndGeocodes());
    for (const instance of [a(), b()]) should((await geocodeThrough(instance, 'Warm-up Road')).status).equal(200);
    const warned = [a(), b()].map((instance) => lines(instance.log, UNAVAILABLE));
    const recovered = [a(), b()].map((instance) => lines(instance.log, AVAILABLE_AGAIN));
    sandbox.options.jobPolls = 8;
    try {
      const polls = () => sandbox.requests('isoline-job').length;
      const pollsBefore = polls();
      await startMessage(a(), 'registered-before', request);
      await waitUntil(() => polls() >= pollsBefore + 2, 'two polls of the first job', 30_000);
      should(await client.hlen(jobsKey)).equal(1);
      // The job gone from Redis as well (the replica never had it; the full Redis lost it before it
      // filled up): its runner's renewal finds it missing and Redis refuses it back.
      await client.del(jobsKey, `${jobsKey}:job`, ...(await client.keys(`${jobsKey}:lease:*`)));
      await refuse();
      await startMessage(b(), 'started-while-refused', request);
      const until = Date.now() + 8000;
      for (let n = 0; Date.now() < until; n++) {
        const responses = await Promise.all([a(), b()].map((instance) => geocodeThrough(instance, `${n} Refused Road`)));
        for (const response of responses) should(response.status).equal(200);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      // The job started while Redis refused is its instance's own (in its file), delivered there while
      // Redis still refuses; the one registered before is delivered at the latest once Redis accepts
      // writes again (its delivery claim waits for Redis, as through any outage).
      await waitUntil(() => collector.reports.some((report) => report.tag === 'started-while-refused'), 'the job started while Redis refused', 60_000);
      // One outage each, reported once, with Redis's reason; no recovery while Redis refuses.
      for (const [i, instance] of [a(), b()].entries()) {
        should(lines(instance.log, UNAVAILABLE)).equal(warned[i] + 1);
        should(instance.log.filter((line) => UNAVAILABLE.test(line)).pop()).match(refusal);
        should(lines(instance.log, AVAILABLE_AGAIN)).equal(recovered[i]);
      }
      await accept();
      await waitUntil(
        () => [a(), b()].every((instance, i) => lines(instance.log, AVAILABLE_AGAIN) === recovered[i] + 1),
        'one recovery line per instance',
        20_000,
      );
      await new Promise((resolve) => setTimeout(resolve, 2000));
      for (const [i, instance] of [a(), b()].entries()) {
        should(lines(instance.log, UNAVAILABLE)).equal(warned[i] + 1);
        should(lines(instance.log, AVAILABLE_AGAIN)).equal(recovered[i] + 1);
      }
      const reports = await collector.waitFor(2, 60_000);
      should(reports.map((report) => report.tag).sort()).eql(['registered-before', 'started-while-refused']);
      for (const report of reports) {
        should(report.polygons).equal(1);
        should(report.error).be.undefined();
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
      should(collector.reports).have.length(2);
    } finally {
      sandbox.options.jobPolls = 10;
    }
  }

  // First: the counts in each instance's file start from 0 (the later tests count too).
  it('FLUSHALL: one warning and one recovery line each, and the daily count continues from what each instance knew, not from 0', async function () {
    await cluster.deploy(sharedFlows({ sandboxUrl: sandbox.url, redisUrl: redis.url, dailyLimit: 6 }));
    const before = sandbox.requests('geocode').length;
    const lost = /lost its keys \(FLUSHALL/;
    const recovered = [a(), b()].map((instance) => lines(instance.log, AVAILABLE_AGAIN));
    for (let n = 0; n < 4; n++) should((await geocodeThrough(a(), `${n} Counted Road`)).status).equal(200);
    await client.flushall();
    const after = [];
    for (let n = 0; n < 4; n++) after.push(await geocodeThrough(a(), `${n} Flushed Road`));
    should(after.map((response) => response.status)).eql([200, 200, 500, 500]);
    should(after[3].body.code).equal('QUOTA_EXCEEDED');
    should(sandbox.requests('geocode').length - before).equal(6);
    // Told by each instance (its marker gone), traffic or not: one warning, then one recovery line.
    await waitUntil(
      () => [a(), b()].every((instance, i) => lines(instance.log, lost) === 1 && lines(instance.log, AVAILABLE_AGAIN) === recovered[i] + 1),
      'one warning and one recovery line each',
      15_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 2500));
    for (const [i, instance] of [a(), b()].entries()) {
      should(lines(instance.log, lost)).equal(1);
      should(lines(instance.log, AVAILABLE_AGAIN)).equal(recovered[i] + 1);
    }
  });

  it('switched to a replica (REPLICAOF: READONLY): one outage, one warning and one recovery line each, and no job lost', async function () {
    const deadPrimary = await freePort();
    await refusingRedis(
      async () => {
        await client.replicaof('127.0.0.1', deadPrimary);
      },
      async () => {
        await client.replicaof('NO', 'ONE');
      },
      /READONLY/,
    );
  });

  it('filled to maxmemory with noeviction (OOM): one outage, one warning and one recovery line each, and no job lost', async function () {
    await refusingRedis(
      async () => {
        // Filled up to a limit 1 MB above what it held, then the limit lowered by half of that: writes
        // are refused from then on, also once the few keys with an expiry have gone.
        const used = Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1]);
        await client.config('SET', 'maxmemory-policy', 'noeviction');
        await client.config('SET', 'maxmemory', String(used + 1024 * 1024));
        const filler = 'x'.repeat(16 * 1024);
        for (let n = 0; ; n++) {
          should(n).be.below(1000, 'Redis full');
          if ((await client.set(`filler:${n}`, filler).catch((err: Error) => err.message)) !== 'OK') break;
        }
        await client.config('SET', 'maxmemory', String(used + 512 * 1024));
      },
      async () => {
        await client.config('SET', 'maxmemory', '0');
      },
      /OOM/,
    );
  });

  it('replies held back 1.5 s (a delaying proxy): a message waits one round trip and books one rate slot; reported slow once, and in time again once', async function () {
    const proxy = await DelayProxy.start(redis.port);
    const monitor = await client.monitor();
    try {
      await cluster.deploy(sharedFlows({ sandboxUrl: sandbox.url, redisUrl: proxy.url, rateLimit: 600, dailyLimit: 50_000 }));
      for (const instance of [a(), b()]) should((await geocodeThrough(instance, 'Warm-up Slow Road')).status).equal(200);
      const slow = /has replied slower than 250 ms for 10 s/;
      const fast = /replies in time again/;
      const warned = [a(), b()].map((instance) => lines(instance.log, UNAVAILABLE));
      let reservations = 0;
      monitor.on('monitor', (_time: string, args: string[]) => {
        if (args[0]?.toLowerCase() === 'eval' && args[1]?.includes("redis.call('TIME')")) reservations++;
      });
      proxy.delayMs = SLOW_MS;
      const before = sandbox.requests('geocode').length;
      const latencies: number[] = [];
      const until = Date.now() + 13_000;
      await Promise.all(
        [a(), b()].map(async (instance, i) => {
          for (let n = 0; Date.now() < until; n++) {
            const sentAt = Date.now();
            should((await geocodeThrough(instance, `${n} Slow ${i} Road`)).status).equal(200);
            latencies.push(Date.now() - sentAt);
          }
        }),
      );
      const requests = sandbox.requests('geocode').length - before;
      console.log(
        `      ${latencies.length} messages, ${reservations} rate slots booked, each ${Math.min(...latencies)}-${Math.max(...latencies)} ms through Node-RED`,
      );
      should(requests).equal(latencies.length);
      should(reservations).equal(latencies.length);
      // One round trip (1.5 s) and the request; two round trips in series would be 3 s at least.
      for (const ms of latencies) should(ms).be.below(2 * SLOW_MS);
      for (const [i, instance] of [a(), b()].entries()) {
        should(lines(instance.log, slow)).equal(1);
        should(lines(instance.log, UNAVAILABLE)).equal(warned[i]);
      }
      proxy.delayMs = 0;
      // Replies held back before the change still come late: messages until every instance has had a fast one.
      for (let n = 0; ![a(), b()].every((instance) => lines(instance.log, fast) === 1); n++) {
        should(n).be.below(50, 'a line from each instance: Redis in time again');
        for (const instance of [a(), b()]) should((await geocodeThrough(instance, `${n} Fast Again Road`)).status).equal(200);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      for (const instance of [a(), b()]) should(lines(instance.log, slow)).equal(1);
    } finally {
      monitor.disconnect();
      // The next deploy leaves the proxy: the instances use the server itself again.
      await cluster.deploy(sharedFlows({ sandboxUrl: sandbox.url, redisUrl: redis.url }));
      await proxy.close();
    }
  });

  it('replies held back 1.5 s: twelve geocodes sent together book their rate slots together, so all finish within about two round trips, and the rate holds (issue 51)', async function () {
    const proxy = await DelayProxy.start(redis.port);
    try {
      await cluster.deploy(sharedFlows({ sandboxUrl: sandbox.url, redisUrl: proxy.url, rateLimit: 600, dailyLimit: 50_000 }));
      should((await geocodeThrough(a(), 'Warm-up Together Road')).status).equal(200);
      proxy.delayMs = SLOW_MS;
      const before = sandbox.requests('geocode').length;
      const sentAt = Date.now();
      const { result: latencies, lateness } = await cluster.measureLateness(() =>
        Promise.all(
          Array.from({ length: 12 }, async (_v, n) => {
            should((await geocodeThrough(a(), `${n} Together Road`)).status).equal(200);
            return Date.now() - sentAt;
          }),
        ),
      );
      const times = sandbox
        .requests('geocode')
        .slice(before)
        .map((r) => r.time);
      console.log(
        `      12 messages done in ${Math.min(...latencies)}-${Math.max(...latencies)} ms; busiest second ${busiestWindow(times, 1000)} requests (allowed ${promisedBusiest(600, 1000, lateness.totalMs)})`,
      );
      should(times).have.length(12);
      // One reservation at a time took one round trip per message ahead (18 s for the twelfth); the
      // concurrency cap (8) lets 8 book together, the other 4 once the first are done: two round trips and the requests.
      should(Math.max(...latencies)).be.below(3 * SLOW_MS + 1000);
      // The shared rate (600 per minute) still holds: slots booked together keep their spacing.
      should(busiestWindow(times, 1000)).not.be.above(promisedBusiest(600, 1000, lateness.totalMs));
    } finally {
      proxy.delayMs = 0;
      await cluster.deploy(sharedFlows({ sandboxUrl: sandbox.url, redisUrl: redis.url }));
      await proxy.close();
    }
  });
});

const SLOW_MS = 1500;
