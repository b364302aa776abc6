import should from 'should';
import { SentinelDeployment, adminClient, sharedStateConnections } from '../support/redis-deployments';
import type { RedisServer } from '../support/redis-server';
import { waitUntil, waitUntilAsync } from '../support/wait';
import { expectNoJobsLeft, expectRateWithinBounds, notices, requireDeploymentTools, testSharedState, underTraffic, useFleet, warmUp } from './fleet';

/**
 * `npm run test:fleet`, Sentinel: two real Node-RED processes on a real Sentinel deployment (Debian's
 * redis-server and redis-sentinel: one master, one replica, three Sentinels on loopback ports), a
 * failover under steady geocode traffic while isoline and bulk jobs run, once asked for (SENTINEL
 * FAILOVER) and once by the master's death. Every message gets one response, every job is
 * delivered once, the rate and the daily count stay within what the README states, and each
 * instance logs one warning and one recovery per failover.
 */
describe('several Node-RED instances on a Redis Sentinel deployment: a failover under traffic', function () {
  this.timeout(240_000);
  let sentinel: SentinelDeployment;

  before(async function () {
    requireDeploymentTools();
    sentinel = await SentinelDeployment.start();
  });

  const fleet = useFleet(() => sentinel.url());

  after(async function () {
    await sentinel?.remove();
  });

  afterEach(function () {
    for (const instance of fleet().cluster.instances) {
      should(instance.log.filter((line) => /Unhandled|uncaught|FATAL|TypeError/i.test(line))).eql([], 'no crash or unhandled rejection');
    }
  });

  /** The day's shared count on the master the Sentinels name now. */
  async function sharedCount(): Promise<number> {
    const client = adminClient(await sentinel.masterPort());
    try {
      const [key] = await client.keys('svc-location:quota:*');
      return key === undefined ? 0 : Number(await client.get(key));
    } finally {
      client.disconnect();
    }
  }

  /** `failover` under traffic while jobs run; `followWithinMs`, when given, bounds the time from its start to both instances using the new master. */
  async function rideThrough(failover: () => Promise<number>, followWithinMs?: number): Promise<void> {
    const [a, b] = fleet().cluster.instances;
    await warmUp(fleet(), 'Warm-up Fleet Road');
    const countBefore = await sharedCount();
    const noticedBefore = notices([a, b]);

    const { disturbed, responses } = await underTraffic(fleet(), 3000, async () => {
      const from = Date.now();
      const newMaster = await failover();
      // Followed: both instances' connections are on the new master.
      await waitUntilAsync(async () => (await sharedStateConnections(newMaster)) >= 2, 'both instances on the new master', 30_000);
      const to = Date.now();
      await waitUntil(
        () => notices([a, b]).every(({ recoveries }, i) => recoveries > noticedBefore[i].recoveries),
        'both instances to report shared state available again',
        30_000,
      );
      // Followed when a Sentinel announces the switch, about a second after it is asked for: not when
      // the old master is reconfigured as a replica (about ten seconds later), which is what ioredis
      // without its failover detector waited for, writing meanwhile to a master about to be demoted.
      if (followWithinMs !== undefined) should(to - from).be.below(followWithinMs);
      return { from, to, newMaster };
    });
    const { from, to, newMaster } = disturbed;

    // One warning and one recovery per instance, nothing refused.
    should(notices([a, b])).eql(noticedBefore.map(({ warnings, recoveries, refusals }) => ({ warnings: warnings + 1, recoveries: recoveries + 1, refusals })));
    // The rate: the promise away from the switch, the outage allowance (per instance) around it.
    const arrivals = fleet()
      .sandbox.requests('geocode')
      .map((r) => r.time);
    const rate = expectRateWithinBounds(arrivals, 2, { from, to });
    // The daily count: every request counted on the new master but those sent on local state during the switch.
    const duringSwitch = arrivals.filter((t) => t >= from && t <= to + 1000).length;
    const counted = (await sharedCount()) - countBefore;
    should(counted).be.belowOrEqual(responses.length);
    should(counted).be.aboveOrEqual(responses.length - duringSwitch);
    await expectNoJobsLeft(newMaster);
    console.log(
      `      switch followed in ${to - from} ms; ${responses.length} messages, ${duringSwitch} platform requests around the switch, ${counted} counted on the new master; ${rate}`,
    );
  }

  it('Test connection checks the Sentinel deployment: reached, authenticated, writable, nothing left behind; a replica named directly is read-only', async function () {
    const [a] = fleet().cluster.instances;
    const master = adminClient(await sentinel.masterPort());
    try {
      const good = await testSharedState(a, sentinel.url());
      should(good.message).endWith('shared state ✓');
      should(good.shared).have.properties({ outcome: 'accepted', code: null });
      // The test's key was removed by the script that wrote it.
      should(await master.keys('*{test}*')).eql([]);
      const replica = sentinel.servers.find((server) => server.port !== Number(master.options.port)) as RedisServer;
      should((await testSharedState(a, `redis://127.0.0.1:${replica.port}`)).shared).have.properties({ outcome: 'failed', code: 'READONLY' });
      should((await testSharedState(a, sentinel.url().replace('svc-master', 'no-such-master'))).shared).have.properties({ outcome: 'failed', code: 'NETWORK' });
    } finally {
      master.disconnect();
    }
  });

  it('SENTINEL FAILOVER: followed at +switch-master; every message and job once; rate, count and replays hold; one warning and one recovery each', async function () {
    await rideThrough(() => sentinel.failover(), 5000);
  });

  it('the master killed: the Sentinels promote the replica and both instances follow; the same holds', async function () {
    await rideThrough(async () => {
      const before = await sentinel.masterPort();
      await sentinel.server(before).stop();
      return sentinel.switched(before);
    });
  });
});
