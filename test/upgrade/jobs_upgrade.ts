import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import should from 'should';
import { Sandbox, startSandbox } from '../../sandbox';
import { CONFIG_ID, Fields, configNode, sandboxCredentials } from '../support/harness';
import { NodeRedProcess, installTarball, newUserDir, runtimeUnderTest } from '../support/node-red-process';
import { Collector, deploy, storedJobs } from '../support/process-flows';
import { RedisServer } from '../support/redis-server';
import { waitUntil } from '../support/wait';
import { packCurrent, packPreviousRelease } from './previous-release';

/**
 * `npm run test:upgrade`: jobs accepted by the previous release (PREVIOUS_COMMIT, before the stored
 * jobs' Redis keys moved) are delivered exactly once after this release is installed over it. Each
 * case: the previous release's tarball installed into a fresh user directory, an isoline job, a
 * sequence job and a bulk run started against a sandbox whose jobs take many polls, Node-RED stopped
 * (SIGTERM) or killed (SIGKILL) while they run, this release's tarball installed on the same user
 * directory (and the same Redis), Node-RED started: each job's result reaches the collector once.
 * Node-RED 4.1 (the dev dependency), or the Node-RED NODE_RED_PATH names (runtimeUnderTest).
 */

/**
 * Polls a sandbox job takes: 7.5 s from the nodes' first wait of 0.1 s growing 1.5 times a poll, so
 * every job is still running when the previous release stops, a second or two after it started them.
 */
const JOB_POLLS = 9;
const POLL = { pollIntervalSec: 0.1, maxWait: 120 };
const BULK_ROWS = 20;
const BULK_BATCH = 5;
const KINDS = ['isoline', 'sequence', 'bulk'] as const;
type Kind = (typeof KINDS)[number];

const NODES: Record<Kind, Fields> = {
  isoline: { type: 'svc-isoline', ...POLL },
  sequence: { type: 'svc-sequence', ...POLL },
  bulk: { type: 'svc-bulk-geocode', batchSize: BULK_BATCH, parallel: 2, ...POLL },
};
const PAYLOADS: Record<Kind, unknown> = {
  isoline: { async: true, origins: [{ lat: 52.52, lon: 13.405 }], range: { type: 'time', value: 600 } },
  sequence: { async: true, waypoints: [13.3, 13.34, 13.31, 13.33, 13.32].map((lon) => ({ lat: 52.5, lon })) },
  bulk: Array.from({ length: BULK_ROWS }, (_v, i) => `${i + 1} Main Street, Sandbox City`),
};
/** What each kind's complete result says of itself (see SUMMARY). */
const COMPLETE: Record<Kind, Fields> = {
  isoline: { polygons: 1 },
  sequence: { order: [0, 2, 4, 3, 1] },
  bulk: { rows: BULK_ROWS, located: BULK_ROWS },
};
/** What each result says of itself, posted to the collector (a function node's body reading `msg`). */
const SUMMARY = `({
  polygons: msg.geojson && msg.geojson.features ? msg.geojson.features.length : undefined,
  order: Array.isArray(msg.order) ? msg.order : undefined,
  rows: Array.isArray(msg.payload) ? msg.payload.length : undefined,
  located: Array.isArray(msg.payload) ? msg.payload.filter((r) => r.location).length : undefined,
})`;

/**
 * One flow for both releases: `POST /start/<kind>` with `{tag, payload}` sends the payload to that
 * kind's node with `msg.tag`; each output, and each error a catch node sees, is posted to the collector.
 */
function upgradeFlow(sandbox: Sandbox, collectorUrl: string, redisUrl: string): Fields[] {
  const flow: Fields[] = [
    { id: 'tab', type: 'tab', label: 'upgrade' },
    { ...configNode(sandbox), credentials: { ...sandboxCredentials()[CONFIG_ID], redisUrl } },
    {
      id: 'report',
      type: 'function',
      z: 'tab',
      func: `msg.payload = { ...${SUMMARY}, tag: msg.tag, resumed: msg.resumed === true, error: msg.error ? msg.error.message : undefined };\ndelete msg.req;\ndelete msg.res;\nmsg.headers = { 'content-type': 'application/json' };\nreturn msg;`,
      outputs: 1,
      wires: [['post']],
    },
    { id: 'post', type: 'http request', z: 'tab', method: 'POST', ret: 'txt', url: collectorUrl, wires: [] },
    { id: 'catch', type: 'catch', z: 'tab', scope: KINDS.map((kind) => `node-${kind}`), wires: [['report']] },
  ];
  for (const kind of KINDS) {
    flow.push(
      { id: `in-${kind}`, type: 'http in', z: 'tab', url: `/start/${kind}`, method: 'post', wires: [[`prepare-${kind}`, `reply-${kind}`]] },
      { id: `reply-${kind}`, type: 'http response', z: 'tab', statusCode: '202', wires: [] },
      {
        id: `prepare-${kind}`,
        type: 'function',
        z: 'tab',
        func: 'msg.tag = msg.payload.tag;\nmsg.payload = msg.payload.payload;\nreturn msg;',
        outputs: 1,
        wires: [[`node-${kind}`]],
      },
      { ...NODES[kind], id: `node-${kind}`, z: 'tab', server: CONFIG_ID, wires: [['report']] },
    );
  }
  // Flow nodes need a position: Node-RED takes a node without x and y for a config node.
  return flow.map((node, index) => (node.z ? { x: 100 + 20 * index, y: 100 + 40 * index, ...node } : node));
}

async function startJob(nodeRed: NodeRedProcess, kind: Kind, tag: string): Promise<void> {
  const response = await nodeRed.request(`/start/${kind}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ tag, payload: PAYLOADS[kind] }),
  });
  if (response.status !== 202) throw new Error(`POST /start/${kind} responded with ${response.status}`);
}

/** Reports per tag, in arrival order. */
function byTag(reports: Fields[]): Map<string, Fields[]> {
  const tags = new Map<string, Fields[]>();
  for (const report of reports) tags.set(String(report.tag), [...(tags.get(String(report.tag)) ?? []), report]);
  return tags;
}

describe('upgrade in place: jobs the previous release accepted are delivered once by this one', function () {
  let workDir: string;
  let previous: string;
  let current: string;
  let sandbox: Sandbox;
  let redis: RedisServer | undefined;
  const running: NodeRedProcess[] = [];
  const collector = new Collector();

  before(async function () {
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-upgrade-'));
    [previous, current] = await Promise.all([packPreviousRelease(workDir), packCurrent(workDir)]);
    sandbox = await startSandbox({ jobPolls: JOB_POLLS });
    await collector.start();
  });

  afterEach(async function () {
    for (const nodeRed of running.splice(0)) {
      if (this.currentTest?.state === 'failed') console.log(nodeRed.log.slice(-40).join('\n'));
      await nodeRed.stop(10_000);
    }
    if (this.currentTest?.state === 'failed') {
      console.log(`reports: ${JSON.stringify(collector.reports)}`);
    }
    await redis?.stop();
    redis = undefined;
  });

  after(async function () {
    await collector.close();
    await sandbox.close();
    if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
  });

  /** A user directory with `tarball` installed, and Node-RED started on it. */
  async function startOn(userDir: string, tarball: string): Promise<NodeRedProcess> {
    await installTarball(userDir, tarball);
    const nodeRed = await NodeRedProcess.start(userDir, runtimeUnderTest());
    running.push(nodeRed);
    return nodeRed;
  }

  /** Starts a job of each kind (`<name>-<kind>`) on the previous release in a new user directory; resolves once each is stored and polled. */
  async function jobsOnPreviousRelease(
    name: string,
    redisUrl: string,
    kinds: readonly Kind[] = KINDS,
  ): Promise<{ userDir: string; nodeRed: NodeRedProcess; tags: string[] }> {
    const userDir = newUserDir(workDir, name);
    const nodeRed = await startOn(userDir, previous);
    await deploy(nodeRed, upgradeFlow(sandbox, collector.url, redisUrl));
    const tags = kinds.map((kind) => `${name}-${kind}`);
    await Promise.all(kinds.map((kind, i) => startJob(nodeRed, kind, tags[i])));
    await waitUntil(
      () => {
        const stored = storedJobs(userDir);
        return stored.length === kinds.length && stored.every((job) => (redisUrl === '' ? true : job.registered === true));
      },
      `the previous release to store its ${kinds.length} jobs`,
      20_000,
    );
    const polls = () => sandbox.log.length;
    const before = polls();
    await waitUntil(() => polls() > before + 6, 'the jobs to be polled', 10_000);
    return { userDir, nodeRed, tags };
  }

  /**
   * Each tag's result, once and complete: waits for them, then a while longer for a second copy. This
   * release polls a resumed job a quarter of its age apart (pollDelay), and after a SIGKILL it resumes
   * only once the dead holder's lease has run out: the last of a job's polls can come about a minute
   * after the job started.
   */
  async function deliveredOnce(tags: string[]): Promise<void> {
    await waitUntil(() => tags.every((tag) => byTag(collector.reports).has(tag)), `a result for each of ${tags.join(', ')}`, 150_000);
    // Longer than a look for jobs to take over (3 s) and a lease (10 s) less the time the results took.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const reports = byTag(collector.reports);
    for (const tag of tags) {
      const results = reports.get(tag) ?? [];
      should(results).have.length(1, `${tag}: ${JSON.stringify(results)}`);
      should(results[0].error).be.undefined();
      should(results[0].resumed).be.true();
      should(results[0]).match(COMPLETE[tag.slice(tag.lastIndexOf('-') + 1) as Kind]);
    }
  }

  it('jobs only in the user directory (no Redis), Node-RED stopped with SIGTERM', async function () {
    const { userDir, nodeRed, tags } = await jobsOnPreviousRelease('file-sigterm', '');
    await nodeRed.stop(10_000, 'SIGTERM');
    await startOn(userDir, current);
    await deliveredOnce(tags);
    await waitUntil(() => storedJobs(userDir).length === 0, 'the delivered jobs to leave the store', 10_000);
  });

  it('jobs registered in Redis, Node-RED stopped with SIGTERM, started on the same user directory and Redis', async function () {
    redis = await RedisServer.start();
    const { userDir, nodeRed, tags } = await jobsOnPreviousRelease('redis-sigterm', redis.url);
    await nodeRed.stop(10_000, 'SIGTERM');
    await startOn(userDir, current);
    await deliveredOnce(tags);
    await waitUntil(() => storedJobs(userDir).length === 0, 'the delivered jobs to leave the store', 10_000);
  });

  it('jobs registered in Redis, Node-RED killed with SIGKILL, started on the same user directory and Redis', async function () {
    redis = await RedisServer.start();
    const { userDir, nodeRed, tags } = await jobsOnPreviousRelease('redis-sigkill', redis.url);
    await nodeRed.kill();
    await startOn(userDir, current);
    await deliveredOnce(tags);
    await waitUntil(() => storedJobs(userDir).length === 0, 'the delivered jobs to leave the store', 10_000);
  });

  it('jobs registered in Redis by an instance that never comes back are taken over by another instance on this release, and not delivered again when the first returns', async function () {
    redis = await RedisServer.start();
    const first = await jobsOnPreviousRelease('redis-takeover', redis.url);
    await first.nodeRed.kill();
    // A second instance, on this release, with its own user directory and the same flows and Redis.
    const secondDir = newUserDir(workDir, 'redis-takeover-second');
    const second = await startOn(secondDir, current);
    await deploy(second, upgradeFlow(sandbox, collector.url, redis.url));
    await deliveredOnce(first.tags);
    // The first instance comes back, upgraded: the jobs in its file were delivered meanwhile.
    await startOn(first.userDir, current);
    await waitUntil(() => storedJobs(first.userDir).length === 0, 'the jobs delivered elsewhere to leave the first store', 15_000);
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    for (const tag of first.tags) should(byTag(collector.reports).get(tag)).have.length(1, tag);
  });

  it('jobs the previous release delivered from another instance are not delivered again when the instance holding their copies is upgraded', async function () {
    redis = await RedisServer.start();
    // Isoline and sequence only: the done markers are the same for every kind, and a bulk run's two rounds would double the time.
    const first = await jobsOnPreviousRelease('redis-delivered', redis.url, ['isoline', 'sequence']);
    await first.nodeRed.kill();
    // A second instance of the previous release takes the jobs over and delivers them (its done markers under the earlier names).
    const second = await startOn(newUserDir(workDir, 'redis-delivered-second'), previous);
    await deploy(second, upgradeFlow(sandbox, collector.url, redis.url));
    await deliveredOnce(first.tags);
    await second.stop(10_000, 'SIGTERM');
    // The first instance, upgraded, still holds their copies in its file.
    should(storedJobs(first.userDir)).have.length(first.tags.length);
    await startOn(first.userDir, current);
    await waitUntil(() => storedJobs(first.userDir).length === 0, 'the jobs delivered elsewhere to leave the first store', 15_000);
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    for (const tag of first.tags) should(byTag(collector.reports).get(tag)).have.length(1, tag);
  });
});
