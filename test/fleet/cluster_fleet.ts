import { Cluster as RedisCluster } from 'ioredis';
import should from 'should';
import { Sandbox, startSandbox } from '../sandbox';
import { nowSeconds, signatureHeader } from '../bench/webhook-signing';
import { Cluster, geocodeThrough, postWebhook, showLogsOnFailure } from '../instances/cluster';
import { Collector } from '../support/process-flows';
import { RedisClusterDeployment, adminClient, deploymentToolsAvailable } from '../support/redis-deployments';
import { RedisJobHashes, RedisStore } from '../../nodes/lib/state/redis-store';
import { DEFAULT_KEY_PREFIX } from '../../nodes/lib/state/shared-state';
import {
  JOBS_KEY,
  RECOVERY,
  REFUSED,
  SECRET,
  WARNING,
  expectJobsDeliveredOnce,
  expectRateWithinBounds,
  fleetFlows,
  lines,
  startJobs,
  steadyTraffic,
  testSharedState,
  webhookMessages,
} from './fleet';

/**
 * `npm run test:fleet`, Cluster: a real three-master Redis Cluster (`redis-server --cluster-enabled
 * yes`, created with `redis-cli --cluster create`) under two real Node-RED processes, and the slots
 * of the pack's keys migrated to other masters while geocode traffic flows and jobs run: ASK and
 * TRYAGAIN are followed, never an outage. Before that, every script of the store runs on the
 * cluster with its keys checked to share one slot.
 */
describe('several Node-RED instances on a Redis Cluster: a slot migration under traffic', function () {
  this.timeout(240_000);
  let sandbox: Sandbox;
  let redis: RedisClusterDeployment;
  let cluster: Cluster;
  const collector = new Collector();

  before(async function () {
    if (!deploymentToolsAvailable())
      throw new Error('redis-server, redis-sentinel and redis-cli are not all installed: apt-get install -y redis-server redis-sentinel (.ci/run does it)');
    redis = await RedisClusterDeployment.start();
  });

  after(async function () {
    await cluster?.stop();
    await redis?.remove();
    await collector.close();
    await sandbox?.close();
  });

  it('every script of the store keeps its keys in one hash slot (each call checked with CLUSTER KEYSLOT, and run on the cluster)', async function () {
    const client = new RedisCluster(redis.servers.map((s) => ({ host: '127.0.0.1', port: s.port })));
    client.on('error', () => undefined);
    const calls: string[][] = [];
    const evalOf = client.eval.bind(client) as (...args: Array<string | number>) => Promise<unknown>;
    // Every script call's keys, recorded on their way to the cluster.
    Object.assign(client, {
      eval: (script: string, count: number, ...rest: Array<string | number>) => {
        calls.push(rest.slice(0, count).map(String));
        return evalOf(script, count, ...rest);
      },
    });
    try {
      const store = new RedisStore(client, DEFAULT_KEY_PREFIX);
      const jobs = store.jobHashes('jobs:slot-test', 60_000);
      // Each method of both classes, once (the list is checked against their prototypes below; private helpers aside).
      const exercised: Record<string, () => Promise<unknown>> = {
        get: () => store.get('k'),
        set: () => store.set('k', 'v', 1000),
        delete: () => store.delete('k'),
        claim: () => store.claim('lease', 'a', 1000),
        renew: () => store.renew('lease', 'a', 1000),
        release: () => store.release('lease', 'a'),
        take: () => store.take('count', 5, 1000),
        reserveSlot: () => store.reserveSlot('rate', 100),
        replicated: () => store.replicated(),
        proveWritable: () => store.proveWritable('probe', 1000, 'alive:slot-test', 1000),
        keepMarker: () => store.keepMarker('alive:slot-test', 1000),
        jobHashes: async () => store.jobHashes('jobs:other', 1000),
        register: () => jobs.register('job-1', '{}', '{}', 'a', 1000),
        update: () => jobs.update('job-1', '{"n":1}'),
        lease: () => jobs.lease('job-1', 'a', 1000),
        all: () => jobs.all(),
        deliver: () => jobs.deliver('job-1', 'a'),
        cancel: () => jobs.cancel('job-2'),
      };
      const methods = [RedisStore, RedisJobHashes].flatMap((type) =>
        Object.getOwnPropertyNames(type.prototype).filter((name) => !['constructor', 'keys', 'markerKey'].includes(name)),
      );
      should(Object.keys(exercised).sort()).eql([...new Set(methods)].sort(), 'every method of RedisStore and RedisJobHashes is exercised here');
      for (const run of Object.values(exercised)) await run();
      // The job key written into the tag would not change the slot: every job of a configuration is in its slot.
      should(calls.filter((keys) => keys.length > 1)).have.length(6);
      for (const keys of calls) {
        const slots = await Promise.all(keys.map((key) => redis.slotOf(key)));
        should(new Set(slots).size).equal(1, `the keys ${keys.join(', ')} share one slot`);
      }
    } finally {
      client.disconnect();
    }
  });

  describe('two Node-RED instances', function () {
    before(async function () {
      sandbox = await startSandbox({ jobPolls: 10 });
      await collector.start();
      cluster = await Cluster.start(2);
      await cluster.deploy(fleetFlows(sandbox, collector.url, redis.url(), 1_000_000));
    });

    showLogsOnFailure(() => cluster, 40);

    /** The pack's keys on every master now (the geocode cache is off: quota, rate, replays, jobs and the probe's). */
    async function packKeys(): Promise<string[]> {
      const perServer = await Promise.all(
        redis.servers.map(async (server) => {
          const client = adminClient(server.port);
          try {
            return await client.keys(`${DEFAULT_KEY_PREFIX}*`);
          } finally {
            client.disconnect();
          }
        }),
      );
      return perServer.flat();
    }

    async function quotaCount(): Promise<number> {
      const key = (await packKeys()).find((k) => k.startsWith(`${DEFAULT_KEY_PREFIX}quota:`));
      if (!key) return 0;
      const owner = await redis.ownerOf(await redis.slotOf(key));
      const client = adminClient(owner.port);
      try {
        return Number(await client.get(key));
      } finally {
        client.disconnect();
      }
    }

    it('Test connection checks the cluster through its seed nodes: reached and writable, nothing left behind', async function () {
      const checked = await testSharedState(cluster.instances[0], redis.url());
      should(checked.shared).have.properties({ outcome: 'accepted', code: null });
      // The test's key was removed by the script that wrote it.
      should((await packKeys()).filter((key) => key.includes('{test}'))).eql([]);
    });

    it('the slots of the jobs, the daily count and the rate schedule migrated while traffic flows and jobs run: every message and job once, the count exact, no outage', async function () {
      const [a, b] = cluster.instances;
      for (const instance of [a, b]) should((await geocodeThrough(instance, 'Warm-up Cluster Road')).status).equal(200);
      collector.reports.splice(0);
      sandbox.log.splice(0);
      const countBefore = await quotaCount();
      const noticed = () => [a, b].map((instance) => [WARNING, RECOVERY, REFUSED].map((pattern) => lines(instance, pattern)));
      const noticedBefore = noticed();

      const tags = await startJobs(sandbox, [a, b]);
      const traffic = steadyTraffic(cluster, 3);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const reading = `before ${Date.now()}`;
      const body = JSON.stringify({ reading });
      const signature = signatureHeader(nowSeconds(), SECRET, body);
      should(await postWebhook(a, body, signature)).equal(200);
      // Each slot holding the pack's keys (jobs, count, schedule, replay) moves to the next master, key by key.
      const slots = [...new Set(await Promise.all((await packKeys()).map((key) => redis.slotOf(key))))];
      should(slots.map(String)).containEql(String(await redis.slotOf(JOBS_KEY)));
      let moved = 0;
      for (const slot of slots) {
        const from = await redis.ownerOf(slot);
        moved += await redis.migrateSlot(slot, redis.servers[(redis.servers.indexOf(from) + 1) % redis.servers.length], 50);
      }
      // Acknowledged as a duplicate (200), not delivered again.
      should(await postWebhook(b, body, signature)).equal(200);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      traffic.stop();
      const responses = await traffic.done;
      await expectJobsDeliveredOnce(sandbox, collector, tags);
      should(webhookMessages(collector, reading)).equal(1);

      should(responses.filter((response) => response.status !== 200)).eql([]);
      should(sandbox.requests('geocode')).have.length(responses.length);
      // No outage, no refusal: a migration is not one.
      should(noticed()).eql(noticedBefore);
      const rate = expectRateWithinBounds(
        sandbox.requests('geocode').map((r) => r.time),
        2,
      );
      // Never on local state: every request counted once in the cluster.
      should((await quotaCount()) - countBefore).equal(responses.length);
      const owner = await redis.ownerOf(await redis.slotOf(JOBS_KEY));
      const client = adminClient(owner.port);
      try {
        should(await client.hlen(JOBS_KEY)).equal(0);
      } finally {
        client.disconnect();
      }
      console.log(`      ${slots.length} slots migrated (${moved} keys) under ${responses.length} messages; ${rate}`);
    });
  });
});
