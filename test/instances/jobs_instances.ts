import Redis from 'ioredis';
import should from 'should';
import { Sandbox, startSandbox } from '../../sandbox';
import { RedisServer } from '../support/redis-server';
import { Cluster, CONFIG_ID, ISOLINE_JOB, prefixed, showLogsOnFailure } from './cluster';
import { Collector, FLOW_SECRETS, reportingFlow, startMessage } from '../support/process-flows';
import { waitUntil, waitUntilAsync } from '../support/wait';

/**
 * Job ownership across instances: two Node-RED processes with the same flows and one Redis. A job
 * started on one is polled by it alone (it holds the job's lease); killed with SIGKILL, its lease
 * runs out, the other instance claims the job, finishes it and delivers it once. Redis restarted
 * empty, or not responding when a job finishes, loses and repeats nothing.
 */
describe('several Node-RED instances: a job outlives the instance that started it', function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let redis: RedisServer;
  let cluster: Cluster;
  const collector = new Collector();

  const { isoline, summary, request, jobsKey, resumes } = ISOLINE_JOB;

  before(async function () {
    if (!RedisServer.available()) throw new Error('redis-server is not installed: apt-get install -y redis-server (.ci/run does it)');
    sandbox = await startSandbox({ jobPolls: 10 });
    redis = await RedisServer.start();
    await collector.start();
    cluster = await Cluster.start(2);
    await cluster.deploy(reportingFlow(sandbox, collector.url, isoline, summary, { redisUrl: redis.url }));
  });

  showLogsOnFailure(() => cluster);

  after(async function () {
    await cluster?.stop();
    await redis?.remove();
    await collector.close();
    await sandbox?.close();
  });

  /**
   * Runs `test` with a Redis client of its own and jobs that take `polls` polls. Polls are paced by
   * the job's age (pollDelay: a quarter of it once past four intervals), so a job's n-th poll comes
   * about 0.8 s × 1.25^(n - 4) after it started: 8 polls take 2 s, 18 polls 18 s.
   */
  async function withJobs(polls: number, test: (client: Redis) => Promise<void>): Promise<void> {
    const jobPolls = sandbox.options.jobPolls;
    sandbox.options.jobPolls = polls;
    collector.reports.splice(0);
    const client = new Redis(redis.url);
    // Stands in for an operator's client: its reconnection attempts while Redis is away are expected.
    client.on('error', () => undefined);
    try {
      await test(client);
    } finally {
      client.disconnect();
      sandbox.options.jobPolls = jobPolls;
    }
  }

  it('Redis restarted empty (no persistence) loses no job: its runner registers it again from its own file and delivers it once', async function () {
    const [a, b] = cluster.instances;
    // Still running once Redis is back (about 5 s) and the next renewal has found it gone.
    await withJobs(18, async (client) => {
      const polls = sandbox.requests('isoline-job').length;
      await startMessage(b, 'after-reset', request);
      await waitUntil(() => sandbox.requests('isoline-job').length >= polls + 2, 'two polls of the job', 30_000);
      should(await client.hlen(jobsKey)).equal(1);
      // The job in Redis keeps only what a resumed flow needs of its message (issue 20 point 8).
      const [stored] = await client.hvals(jobsKey);
      should((JSON.parse(stored) as { msg?: unknown }).msg).eql({ tag: 'after-reset' });
      for (const secret of Object.values(FLOW_SECRETS)) should(stored).not.containEql(secret);
      await redis.restart();
      should(await client.hlen(jobsKey)).equal(0);
      const resumedBefore = resumes(a);
      // The runner's next lease renewal finds its job gone without a done marker and registers it again.
      await waitUntilAsync(async () => (await client.hlen(jobsKey)) === 1, 'the job registered again', 15_000);
      const [report] = await collector.waitFor(1, 60_000);
      should(report).have.properties({ resumed: false, tag: 'after-reset', polygons: 1 });
      // Registered again under its runner's lease: the other instance never took it.
      should(resumes(a)).equal(resumedBefore);
      await waitUntilAsync(async () => (await client.hlen(jobsKey)) === 0, 'the delivered job to leave Redis', 10_000);
      should(collector.reports).have.length(1);
    });
  });

  it('a job that finishes while Redis does not respond (paused) keeps its result, and delivers it once when Redis responds again; the other instance does not take it', async function () {
    const [a, b] = cluster.instances;
    await withJobs(6, async (client) => {
      const before = sandbox.requests('isoline-job').length;
      const warnings = () => b.log.filter((line) => line.includes('shared state unavailable')).length;
      const warned = warnings();
      const resumedBefore = resumes(a);
      await startMessage(b, 'through-outage', request);
      await waitUntil(() => sandbox.requests('isoline-job').length >= before + 1, 'a first poll of the job', 30_000);
      redis.pause();
      try {
        // The job's last poll (its result) and the outage noticed: the result waits for Redis.
        await waitUntil(() => sandbox.requests('isoline-job').length >= before + 6 && warnings() > warned, 'the result while Redis is paused', 30_000);
        should(collector.reports).eql([]);
        // A registered job is taken over only through Redis: the other instance cannot while it is paused.
        should(resumes(a)).equal(resumedBefore);
      } finally {
        redis.resume();
      }
      const [report] = await collector.waitFor(1, 30_000);
      should(report).have.properties({ tag: 'through-outage', polygons: 1 });
      should(report.error).be.undefined();
      await waitUntilAsync(async () => (await client.hlen(jobsKey)) === 0, 'the delivered job to leave Redis', 10_000);
      // Delivered: the job's done marker stands, so no copy of it can be claimed or delivered again.
      should(await client.keys(`${jobsKey}:done:*`)).not.be.empty();
      should(collector.reports).have.length(1);
    });
  });
  it('the platform responding with 503 and resetting connections for 20 s while isoline jobs and a bulk job run: every accepted job delivers its result once', async function () {
    this.timeout(300_000);
    const [a, b] = cluster.instances;
    // A second node on the same tab, the bulk geocoder, reached through POST /start-bulk.
    const bulk = { type: 'svc-bulk-geocode', batchSize: 10, parallel: 2, pollIntervalSec: 0.2, maxWait: 120 };
    const bulkSummary = '(m) => ({ rows: (m.payload || []).length, located: (m.payload || []).filter((r) => r.location).length })';
    const bulkFlow = reportingFlow(sandbox, collector.url, bulk, bulkSummary, { redisUrl: redis.url })
      .filter((node) => node.type !== 'tab' && node.id !== CONFIG_ID)
      .map((node) => prefixed(node, 'bulk-'));
    await cluster.deploy([...reportingFlow(sandbox, collector.url, isoline, summary, { redisUrl: redis.url }), ...bulkFlow]);
    const addresses = Array.from({ length: 20 }, (_v, i) => `${i + 1} Outage Street, Sandbox City`);
    await withJobs(8, async (client) => {
      sandbox.log.splice(0);
      const tags = ['iso-a1', 'iso-a2', 'iso-b1', 'iso-b2'];
      await Promise.all(tags.map((tag) => startMessage(tag.startsWith('iso-a') ? a : b, tag, request)));
      await startMessageAt(a, 'start-bulk', 'bulk', addresses);
      const accepted = (endpoint: string, status: number) => sandbox.requests(endpoint).filter((r) => r.status === status).length;
      // Every job accepted (4 isoline jobs, 2 bulk jobs) and polled once: the outage meets running jobs.
      await waitUntil(
        () => accepted('isoline', 200) === 4 && accepted('bulk-upload', 201) === 2 && accepted('isoline-job', 200) >= 4 && accepted('bulk-status', 200) >= 2,
        'every job accepted and polled',
        30_000,
      );
      let turn = 0;
      sandbox.setFault('*', { pick: () => (turn++ % 2 === 0 ? { status: 503 } : { reset: true }) });
      try {
        await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
        should(collector.reports).eql([]);
      } finally {
        sandbox.clearFaults();
      }
      const faulted = sandbox.log.filter((r) => r.status === 503 || (r.closedAt !== undefined && r.status === undefined)).length;
      // Polled a quarter of their age apart once Redis is back (about 7 s at 28 s old): the last of 8 polls comes about 70 s after the start.
      const reports = await collector.waitFor(5, 150_000);
      // A second delivery of any job would come within this.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      console.log(
        `      ${faulted} requests met the outage; all 5 results ${((Date.now() - sandbox.log[0].time) / 1000).toFixed(0)} s after the first request`,
      );
      for (const report of reports) should(report.error).be.undefined();
      should(reports.map((report) => report.tag).sort()).eql(['bulk', ...tags].sort());
      for (const report of reports.filter((r) => r.tag !== 'bulk')) should(report.polygons).equal(1);
      should(reports.find((report) => report.tag === 'bulk')).have.properties({ rows: 20, located: 20 });
      // No job was uploaded or computed again, and none is left in Redis.
      should(sandbox.requests('bulk-upload')).have.length(2);
      should(sandbox.requests('isoline')).have.length(4);
      await waitUntilAsync(async () => (await client.hlen(jobsKey)) === 0, 'the delivered jobs to leave Redis', 10_000);
    });
  });

  it('a job whose instance is killed (SIGKILL) is finished and delivered once by the other', async function () {
    const [a, b] = cluster.instances;
    await withJobs(8, async (client) => {
      const polls = sandbox.requests('isoline-job').length;
      const resumedBefore = resumes(b);
      await startMessage(a, 'shared-1', request);
      // Polled by the instance that holds the lease: the other leaves it alone.
      await waitUntil(() => sandbox.requests('isoline-job').length >= polls + 3, 'three polls of the job', 30_000);
      should(resumes(b)).equal(resumedBefore);
      should(await client.hlen(jobsKey)).equal(1);
      await a.kill();

      // Taken over once the lease runs out (10 s), then polled a quarter of the job's age apart: about 30 s.
      const [report] = await collector.waitFor(1, 120_000);
      should(report).have.properties({ resumed: true, tag: 'shared-1', polygons: 1, hasReq: false });
      should(report.error).be.undefined();
      should(resumes(b)).equal(resumedBefore + 1);
      should(await client.hlen(jobsKey)).equal(0);
      should(collector.reports).have.length(1);
    });
  });
});

const OUTAGE_MS = 20_000;

/** `startMessage` through another `http in` path of the flow. */
async function startMessageAt(instance: { url: string }, path: string, tag: string, payload: unknown): Promise<void> {
  const started = await fetch(`${instance.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tag, payload }),
  });
  if (started.status !== 202) throw new Error(`POST /${path} responded with ${started.status}`);
}
