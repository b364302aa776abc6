import Redis from 'ioredis';
import should from 'should';
import { Sandbox, startSandbox } from '../sandbox';
import { RedisServer } from '../support/redis-server';
import { Cluster, CONFIG_ID } from './cluster';
import { Collector, reportingFlow, startMessage, until } from '../restart/support';

/**
 * Job ownership across instances: two Node-RED processes with the same flows and one Redis. A job
 * started on one is polled by it alone (it holds the job's lease); killed with SIGKILL, its lease
 * runs out, the other instance claims the job, finishes it and delivers it once.
 */
describe('several Node-RED instances: a job outlives the instance that started it', function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let redis: RedisServer;
  let cluster: Cluster;
  const collector = new Collector();

  before(async function () {
    if (!RedisServer.available()) throw new Error('redis-server is not installed: apt-get install -y redis-server (.ci/run does it)');
    sandbox = await startSandbox({ jobPolls: 10 });
    redis = await RedisServer.start();
    await collector.start();
    cluster = await Cluster.start(2);
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') {
      for (const instance of cluster?.instances ?? []) console.log(`--- ${instance.url} ---\n${instance.log.slice(-12).join('\n')}`);
    }
  });

  after(async function () {
    await cluster?.stop();
    await redis?.remove();
    await collector.close();
    await sandbox?.close();
  });

  it('a job whose instance is killed (SIGKILL) is finished and delivered once by the other', async function () {
    const [a, b] = cluster.instances;
    const isoline = { type: 'svc-isoline', pollIntervalSec: 0.2, maxWait: 120 };
    const summary = '(m) => ({ polygons: m.geojson ? m.geojson.features.length : 0 })';
    await cluster.deploy(reportingFlow(sandbox, collector.url, isoline, summary, { redisUrl: redis.url }));
    const request = { async: true, origins: [{ lat: 52.52, lon: 13.405 }], range: { type: 'time', value: 600 } };
    await startMessage(a, 'shared-1', request);

    // Polled by the instance that holds the lease: the other leaves it alone.
    await until(() => sandbox.requests('isoline-job').length >= 3, 'three polls of the job', 30_000);
    should(b.log.filter((line) => line.includes('resuming isoline job'))).eql([]);
    const client = new Redis(redis.url);
    try {
      should(await client.hlen(`svc-location:jobs:${CONFIG_ID}`)).equal(1);
      await a.kill();

      const [report] = await collector.waitFor(1, 60_000);
      should(report).have.properties({ resumed: true, tag: 'shared-1', polygons: 1, hasReq: false });
      should(report.error).be.undefined();
      should(b.log.filter((line) => line.includes('resuming isoline job'))).have.length(1);
      should(await client.hlen(`svc-location:jobs:${CONFIG_ID}`)).equal(0);
      should(collector.reports).have.length(1);
    } finally {
      client.disconnect();
    }
  });
});
