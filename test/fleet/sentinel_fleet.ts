import should from 'should';
import { Sandbox, startSandbox } from '../sandbox';
import { nowSeconds, signatureHeader } from '../bench/webhook-signing';
import { Cluster, postWebhook, showLogsOnFailure, geocodeThrough } from '../instances/cluster';
import { Collector } from '../support/process-flows';
import { SentinelDeployment, adminClient, deploymentToolsAvailable } from '../support/redis-deployments';
import { waitUntil, waitUntilAsync } from '../support/wait';
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
import type { RedisServer } from '../support/redis-server';

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
  let sandbox: Sandbox;
  let sentinel: SentinelDeployment;
  let cluster: Cluster;
  const collector = new Collector();

  before(async function () {
    if (!deploymentToolsAvailable())
      throw new Error('redis-server, redis-sentinel and redis-cli are not all installed: apt-get install -y redis-server redis-sentinel (.ci/run does it)');
    sandbox = await startSandbox({ jobPolls: 10 });
    await collector.start();
    sentinel = await SentinelDeployment.start();
    cluster = await Cluster.start(2);
    await cluster.deploy(fleetFlows(sandbox, collector.url, sentinel.url(), 1_000_000));
  });

  showLogsOnFailure(() => cluster, 40);

  after(async function () {
    await cluster?.stop();
    await sentinel?.remove();
    await collector.close();
    await sandbox?.close();
  });

  afterEach(function () {
    for (const instance of cluster?.instances ?? []) {
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
    const [a, b] = cluster.instances;
    for (const instance of [a, b]) should((await geocodeThrough(instance, 'Warm-up Fleet Road')).status).equal(200);
    collector.reports.splice(0);
    sandbox.log.splice(0);
    const countBefore = await sharedCount();
    const warnings = () => [a, b].map((instance) => lines(instance, WARNING));
    const recoveries = () => [a, b].map((instance) => lines(instance, RECOVERY));
    const [warningsBefore, recoveriesBefore] = [warnings(), recoveries()];
    const refusalsBefore = [a, b].map((instance) => lines(instance, REFUSED));

    const tags = await startJobs(sandbox, [a, b]);
    const traffic = steadyTraffic(cluster, 3);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    // Accepted by one instance just before the failover: the other refuses it as a replay after it.
    const reading = `before ${Date.now()}`;
    const body = JSON.stringify({ reading });
    const signature = signatureHeader(nowSeconds(), SECRET, body);
    should(await postWebhook(a, body, signature)).equal(200);
    const from = Date.now();
    const newMaster = await failover();
    // Followed: both instances' connections (named node-red-location) are on the new master.
    const master = adminClient(newMaster);
    try {
      await waitUntilAsync(
        async () => ((await master.client('LIST')) as string).split('\n').filter((line) => line.includes('name=node-red-location ')).length >= 2,
        'both instances on the new master',
        30_000,
      );
    } finally {
      master.disconnect();
    }
    const to = Date.now();
    await waitUntil(() => recoveries().every((count, i) => count > recoveriesBefore[i]), 'both instances to report shared state available again', 30_000);
    // Followed when a Sentinel announces the switch, about a second after it is asked for: not when
    // the old master is reconfigured as a replica (about ten seconds later), which is what ioredis
    // without its failover detector waited for, writing meanwhile to a master about to be demoted.
    if (followWithinMs !== undefined) should(to - from).be.below(followWithinMs);
    // Acknowledged as a duplicate (200), not delivered again.
    should(await postWebhook(b, body, signature)).equal(200);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    traffic.stop();
    const responses = await traffic.done;
    await expectJobsDeliveredOnce(sandbox, collector, tags);
    should(webhookMessages(collector, reading)).equal(1);

    // Every message: one response, none failed.
    should(responses.filter((response) => response.status !== 200)).eql([]);
    should(sandbox.requests('geocode')).have.length(responses.length);
    // One warning and one recovery per instance, nothing refused.
    should(warnings()).eql(warningsBefore.map((count) => count + 1));
    should(recoveries()).eql(recoveriesBefore.map((count) => count + 1));
    should([a, b].map((instance) => lines(instance, REFUSED))).eql(refusalsBefore);
    // The rate: the promise away from the switch, the outage allowance (per instance) around it.
    const arrivals = sandbox.requests('geocode').map((r) => r.time);
    const rate = expectRateWithinBounds(arrivals, 2, { from, to });
    // The daily count: every request counted on the new master but those sent on local state during the switch.
    const duringSwitch = arrivals.filter((t) => t >= from && t <= to + 1000).length;
    const counted = (await sharedCount()) - countBefore;
    should(counted).be.belowOrEqual(responses.length);
    should(counted).be.aboveOrEqual(responses.length - duringSwitch);
    const client = adminClient(newMaster);
    try {
      should(await client.hlen(JOBS_KEY)).equal(0);
    } finally {
      client.disconnect();
    }
    console.log(
      `      switch followed in ${to - from} ms; ${responses.length} messages, ${duringSwitch} platform requests around the switch, ${counted} counted on the new master; ${rate}`,
    );
  }

  it('Test connection checks the Sentinel deployment: reached, authenticated, writable, nothing left behind; a replica named directly is read-only', async function () {
    const [a] = cluster.instances;
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
