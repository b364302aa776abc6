import Redis from 'ioredis';
import should from 'should';
import { Sandbox, startSandbox } from '../../sandbox';
import { RedisServer } from '../support/redis-server';
import { NodeRedProcess, freePort } from '../support/node-red-process';
import { Cluster, ISOLINE_JOB, showLogsOnFailure } from './cluster';
import { Collector, reportingFlow, startMessage } from '../support/process-flows';
import { waitUntil, waitUntilAsync } from '../support/wait';

/**
 * Exactly once through a Redis that hangs or turns read-only (issue 51 point 3): two Node-RED
 * processes with the same flows and one real redis-server, stopped with SIGSTOP or made a replica of
 * a dead master (REPLICAOF: every write is refused with READONLY).
 */
describe('several Node-RED instances: a job is delivered once through a Redis that hangs or refuses writes', function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let redis: RedisServer;
  let client: Redis;
  let cluster: Cluster;
  const collector = new Collector();

  const { isoline, summary, request, jobsKey, resumes } = ISOLINE_JOB;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** Gone from Redis with its done marker: the delivery recorded. */
  const recorded = async () => (await client.hlen(jobsKey)) === 0 && (await client.keys(`${jobsKey}:done:*`)).length === 1;

  before(async function () {
    if (!RedisServer.available()) throw new Error('redis-server is not installed: apt-get install -y redis-server (.ci/run does it)');
    sandbox = await startSandbox({ jobPolls: 10 });
    redis = await RedisServer.start();
    client = new Redis(redis.url);
    // Stands in for an operator's client: its reconnection attempts while Redis is away are expected.
    client.on('error', () => undefined);
    await collector.start();
    cluster = await Cluster.start(2);
    await cluster.deploy(reportingFlow(sandbox, collector.url, isoline, summary, { redisUrl: redis.url }));
  });

  beforeEach(async function () {
    // The jobs' keys only: a FLUSHALL would be an outage of its own (each instance's marker lost).
    const keys = await client.keys(`${jobsKey}*`);
    if (keys.length > 0) await client.del(...keys);
    collector.reports.splice(0);
  });

  afterEach(async function () {
    sandbox.options.jobPolls = 10;
    redis.resume();
    await client.replicaof('NO', 'ONE');
  });

  showLogsOnFailure(() => cluster, 40);

  after(async function () {
    client?.disconnect();
    await cluster?.stop();
    await redis?.remove();
    await collector.close();
    await sandbox?.close();
  });

  it('a job sent while Redis hangs (SIGSTOP, 10 s): its registration, sent and not replied to, is unknown, not refused; it lands when Redis wakes and the job is delivered once, by its runner', async function () {
    const [a, b] = cluster.instances;
    sandbox.options.jobPolls = 6;
    const resumedBefore = resumes(a);
    const accepted = sandbox.requests('isoline').length;
    let duringHang: number | undefined;
    // The platform takes a second to accept the job: Redis freezes meanwhile, so the job's registration
    // is sent to a Redis that hangs, before either instance has noticed (as a job sent a tenth of a
    // second before the freeze), and runs when it wakes.
    sandbox.setFault('isoline', { delayMs: 1000, times: 1 });
    await startMessage(b, 'through-hang', request);
    await waitUntil(() => sandbox.requests('isoline').length > accepted, 'the job requested', 10_000);
    redis.pause();
    try {
      await sleep(10_000);
      duringHang = collector.reports.length;
    } finally {
      redis.resume();
    }
    const [report] = await collector.waitFor(1, 30_000);
    should(report).have.properties({ tag: 'through-hang', resumed: false, polygons: 1 });
    await waitUntilAsync(recorded, 'the delivery recorded in Redis', 30_000);
    // Before, the runner delivered it from its file, and the other instance took the registration
    // that landed over once its lease ran out (10 s, then a look every 3 s) and delivered it again.
    await sleep(16_000);
    should(collector.reports).have.length(1);
    should(resumes(a)).equal(resumedBefore);
    // The job finished during the hang; its result waited for Redis to settle who delivers it.
    should(duringHang).equal(0);
  });

  it('a registered job that finishes while Redis refuses writes (REPLICAOF: READONLY) is delivered by its runner at once; the delivery is recorded once Redis takes writes again, after the runner was killed and started again meanwhile, and no one delivers it again', async function () {
    const [a, b] = cluster.instances;
    sandbox.options.jobPolls = 8;
    const resumedBefore = resumes(a);
    const polls = () => sandbox.requests('isoline-job').length;
    const pollsBefore = polls();
    await startMessage(b, 'through-readonly', request);
    await waitUntil(() => polls() >= pollsBefore + 2, 'two polls of the job', 30_000);
    should(await client.hlen(jobsKey)).equal(1);
    await client.replicaof('127.0.0.1', String(await freePort()));
    // Before, the result waited for Redis to take writes again, for good if it never did.
    const [report] = await collector.waitFor(1, 30_000);
    should(report).have.properties({ tag: 'through-readonly', resumed: false, polygons: 1 });
    // Still in Redis, which takes no write; the delivery is in the runner's file, which a restart keeps.
    should(await client.hlen(jobsKey)).equal(1);
    await b.kill();
    const restarted = await NodeRedProcess.start(b.userDir, undefined, 90_000);
    cluster.instances[1] = restarted;
    await sleep(4000);
    should(collector.reports).have.length(1);
    await client.replicaof('NO', 'ONE');
    await waitUntilAsync(recorded, 'the delivery recorded in Redis', 20_000);
    // Past the job's lease and the other instance's wait after the outage: nobody took it over.
    await sleep(14_000);
    should(collector.reports).have.length(1);
    should(resumes(a)).equal(resumedBefore);
    should(resumes(restarted)).equal(0);
  });
});
