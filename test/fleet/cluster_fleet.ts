import { Cluster as RedisCluster } from 'ioredis';
import should from 'should';
import { RedisClusterDeployment, adminClient } from '../support/redis-deployments';
import { RedisStore } from '../../nodes/lib/state/redis-store';
import { RedisJobHashes } from '../../nodes/lib/state/redis-job-hashes';
import { DEFAULT_KEY_PREFIX } from '../../nodes/lib/state/shared-state';
import { JOBS_KEY, expectNoJobsLeft, expectRateWithinBounds, notices, requireDeploymentTools, testSharedState, underTraffic, useFleet, warmUp } from './fleet';

/**
 * `npm run test:fleet`, Cluster: a real three-master Redis Cluster (`redis-server --cluster-enabled
 * yes`, created with `redis-cli --cluster create`) under two real Node-RED processes, and the slots
 * of the pack's keys migrated to other masters while geocode traffic flows and jobs run: ASK and
 * TRYAGAIN are followed, never an outage. Before that, every script of the store runs on the
 * cluster with its keys checked to share one slot.
 */
describe('several Node-RED instances on a Redis Cluster: a slot migration under traffic', function () {
  this.timeout(240_000);
  let redis: RedisClusterDeployment;

  before(async function () {
    requireDeploymentTools();
    redis = await RedisClusterDeployment.start();
  });

  after(async function () {
    await redis?.remove();
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
        claimReplay: () => store.claimReplay('/slot-test', '1000 1:identity', 1000, 2000, Date.now()),
        withdrawReplay: () => store.withdrawReplay('/slot-test', '1000 1:identity'),
        jobHashes: async () => store.jobHashes('jobs:other', 1000),
        register: () => jobs.register('job-1', '{}', '{}', 'a', 1000),
        update: () => jobs.update([['job-1', '{"n":1}']]),
        lease: () => jobs.lease('job-1', 'a', 1000),
        leases: () => jobs.leases(['job-1', 'job-2'], 'a', 1000),
        all: () => jobs.all(),
        unleased: () => jobs.unleased(),
        deliver: () => jobs.deliver('job-1', 'a'),
        cancel: () => jobs.cancel('job-2'),
        // No call on a Cluster: the releases before the hash tag refused Cluster URLs, so no job lies under their names.
        adoptEarlierJobs: () => jobs.adoptEarlierJobs(),
      };
      const methods = [RedisStore, RedisJobHashes].flatMap((type) =>
        Object.getOwnPropertyNames(type.prototype).filter((name) => !['constructor', 'keys', 'markerKey', 'replaysKey'].includes(name)),
      );
      should(Object.keys(exercised).sort()).eql([...new Set(methods)].sort(), 'every method of RedisStore and RedisJobHashes is exercised here');
      for (const run of Object.values(exercised)) await run();
      // The job key written into the tag would not change the slot: every job of a configuration is in its slot.
      should(calls.filter((keys) => keys.length > 1)).have.length(8);
      for (const keys of calls) {
        const slots = await Promise.all(keys.map((key) => redis.slotOf(key)));
        should(new Set(slots).size).equal(1, `the keys ${keys.join(', ')} share one slot`);
      }
    } finally {
      client.disconnect();
    }
  });

  describe('two Node-RED instances', function () {
    const fleet = useFleet(() => redis.url());

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
      const checked = await testSharedState(fleet().cluster.instances[0], redis.url());
      should(checked.shared).have.properties({ outcome: 'accepted', code: null });
      // The test's key was removed by the script that wrote it.
      should((await packKeys()).filter((key) => key.includes('{test}'))).eql([]);
    });

    it('the slots of the jobs, the daily count and the rate schedule migrated while traffic flows and jobs run: every message and job once, the count exact, no outage', async function () {
      const [a, b] = fleet().cluster.instances;
      await warmUp(fleet(), 'Warm-up Cluster Road');
      const countBefore = await quotaCount();
      const noticedBefore = notices([a, b]);

      const { disturbed, responses } = await underTraffic(fleet(), 2000, async () => {
        // Each slot holding the pack's keys (jobs, count, schedule, replay) moves to the next master, key by key.
        const slots = [...new Set(await Promise.all((await packKeys()).map((key) => redis.slotOf(key))))];
        should(slots.map(String)).containEql(String(await redis.slotOf(JOBS_KEY)));
        let moved = 0;
        for (const slot of slots) {
          const from = await redis.ownerOf(slot);
          moved += await redis.migrateSlot(slot, redis.servers[(redis.servers.indexOf(from) + 1) % redis.servers.length], 50);
        }
        return { slots, moved };
      });
      const { slots, moved } = disturbed;

      // No outage, no refusal: a migration is not one.
      should(notices([a, b])).eql(noticedBefore);
      const rate = expectRateWithinBounds(
        fleet()
          .sandbox.requests('geocode')
          .map((r) => r.time),
        2,
      );
      // Never on local state: every request counted once in the cluster.
      should((await quotaCount()) - countBefore).equal(responses.length);
      await expectNoJobsLeft((await redis.ownerOf(await redis.slotOf(JOBS_KEY))).port);
      console.log(`      ${slots.length} slots migrated (${moved} keys) under ${responses.length} messages; ${rate}`);
    });
  });
});
