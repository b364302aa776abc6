import fs from 'node:fs';
import path from 'node:path';
import Redis from 'ioredis';
import should from 'should';
import { NODE_RED_4, NodeRedRuntime } from '../support/node-red-process';
import { NODE_RED_5_NODE_22 } from '../support/node-red-5';
import { RedisServer } from '../support/redis-server';
import { Fields, WebhookRig, postSigned, reportingTab, webhookNodes } from '../support/webhook-process';
import { SANDBOX_DEFAULTS } from '../../sandbox';
import { webhookDigest } from '../bench/webhook-signing';

/**
 * The webhook replay cache has one scope, the path, with and without Redis: the same event delivered
 * to two paths with one secret (two subscriptions) is delivered once on each, a copy on either is
 * acknowledged (200) without a message, and with Redis that still holds after a restart and on
 * another instance. Real Node-RED 4.1 and 5 processes, a real redis-server.
 */

const SECRET = 'replay-scope-secret';
const TAB = { id: 'tab-replays', label: 'Replays' };

function configNode(redisUrl: string): Fields {
  return {
    id: 'cfg',
    type: 'svc-config',
    name: 'shared state',
    baseUrl: 'http://127.0.0.1:9',
    authUrl: 'http://127.0.0.1:9',
    audience: SANDBOX_DEFAULTS.audience,
    projectId: SANDBOX_DEFAULTS.projectId,
    timeout: 2000,
    rateLimit: 0,
    maxConcurrency: 8,
    maxQueue: 100,
    maxRetries: 0,
    tokenLifetime: 3600,
    credentials: { clientId: 'unused', clientSecret: 'unused', redisUrl },
  };
}

for (const runtime of [NODE_RED_4, NODE_RED_5_NODE_22] as NodeRedRuntime[]) {
  describe(`webhook replay scope with and without Redis, ${runtime.title}`, function () {
    this.timeout(180_000);
    let redis: RedisServer;
    let rig: WebhookRig;

    before(async function () {
      runtime.prepare();
      redis = await RedisServer.start();
      rig = new WebhookRig({}, runtime);
      await rig.start();
    });
    after(async function () {
      await rig?.stop();
      await redis?.stop();
    });

    const flows = (redisUrl: string | undefined, tolerance = 300): Fields[] => [
      ...(redisUrl ? [configNode(redisUrl)] : []),
      ...reportingTab(
        TAB,
        rig.collector.url,
        ['a', 'b'].flatMap((name) =>
          webhookNodes(TAB.id, { id: `hook-${name}`, url: `/scope-${name}`, tolerance, server: redisUrl ? 'cfg' : '', credentials: { secret: SECRET } }),
        ),
      ),
    ];

    /** The same event to both paths, then again to both: the four statuses. */
    async function deliverTwiceToBoth(event: string): Promise<number[]> {
      const t = String(Math.floor(Date.now() / 1000));
      const statuses: number[] = [];
      for (const name of ['a', 'b', 'a', 'b']) statuses.push((await postSigned(rig.nodeRed, `/scope-${name}`, event, SECRET, t)).status);
      return statuses;
    }

    /** Messages with this payload's event, by webhook. */
    const delivered = (instance: WebhookRig, event: string) =>
      ['hook-a', 'hook-b'].map((id) => instance.messagesOf(id).filter((m) => (m.payload as { event?: string }).event === event).length);
    const quiet = () => new Promise((resolve) => setTimeout(resolve, 500));

    it('delivers one event once per path and acknowledges copies on each without a message, the same with Redis as without', async function () {
      should(await rig.deploy(flows(undefined))).be.within(200, 299);
      should(await deliverTwiceToBoth('{"event":"local"}')).eql([200, 200, 200, 200]);
      should(await rig.deploy(flows(redis.url))).be.within(200, 299);
      should(await deliverTwiceToBoth('{"event":"shared"}')).eql([200, 200, 200, 200]);
      await quiet();
      should(delivered(rig, 'local')).eql([1, 1]);
      should(delivered(rig, 'shared')).eql([1, 1]);
      const client = new Redis(redis.url);
      const keys = await client.keys('svc-location:replays:*');
      client.disconnect();
      // One record per path, its hash tag the path.
      should(keys.filter((key) => !key.endsWith(':since')).sort()).eql(['svc-location:replays:{/scope-a}', 'svc-location:replays:{/scope-b}']);
    });

    it('with Redis, acknowledges a copy without a message after a restart (SIGKILL) that lost the local replay file, and on another instance', async function () {
      should(await rig.deploy(flows(redis.url))).be.within(200, 299);
      const t = String(Math.floor(Date.now() / 1000));
      should((await postSigned(rig.nodeRed, '/scope-a', '{"event":"restart"}', SECRET, t)).status).equal(200);
      // Its message reaches the collector through the flow's own request, which a kill right after the 200 can cut short.
      await rig.reports((r) => r.kind === 'message' && r.source === 'hook-a' && (r.payload as { event?: string }).event === 'restart');
      await rig.nodeRed.kill();
      // Without this instance's own file, only Redis remembers it.
      fs.rmSync(path.join(rig.userDir, 'svc-location', 'webhook-replays.jsonl'));
      await rig.start();
      should(await postSigned(rig.nodeRed, '/scope-a', '{"event":"restart"}', SECRET, t)).eql({ status: 200, text: '' });
      should((await postSigned(rig.nodeRed, '/scope-b', '{"event":"restart"}', SECRET, t)).status).equal(200);
      // Another instance (its own user directory) on the same Redis: copies of both acknowledged, nothing delivered there.
      const other = new WebhookRig({}, runtime);
      try {
        await other.start();
        should(await other.deploy(flows(redis.url))).be.within(200, 299);
        for (const name of ['a', 'b'])
          should(await postSigned(other.nodeRed, `/scope-${name}`, '{"event":"restart"}', SECRET, t)).eql({ status: 200, text: '' });
        await quiet();
        should(delivered(other, 'restart')).eql([0, 0]);
      } finally {
        await other.stop();
      }
      should(delivered(rig, 'restart')).eql([1, 1]);
    });

    it('with Redis, acknowledges without a message a request that an earlier version claimed under its (t, digest) key', async function () {
      should(await rig.deploy(flows(redis.url))).be.within(200, 299);
      const t = String(Math.floor(Date.now() / 1000));
      const body = '{"event":"claimed by an earlier version"}';
      const client = new Redis(redis.url);
      try {
        await client.set(`svc-location:replay:/scope-a:${t}:${webhookDigest(t, SECRET, Buffer.from(body))}`, 'earlier-instance', 'PX', 300_000);
      } finally {
        client.disconnect();
      }
      should(await postSigned(rig.nodeRed, '/scope-a', body, SECRET, t)).eql({ status: 200, text: '' });
      await quiet();
      should(delivered(rig, 'claimed by an earlier version')).eql([0, 0]);
    });

    it('with Redis, a copy sent to another instance after the window it was delivered in has ended is not delivered there, whatever tolerance that one has (2 s here, 60 s there)', async function () {
      should(await rig.deploy(flows(redis.url, 2))).be.within(200, 299);
      const other = new WebhookRig({}, runtime);
      try {
        await other.start();
        should(await other.deploy(flows(redis.url, 60))).be.within(200, 299);
        const t = String(Date.now());
        should(await postSigned(rig.nodeRed, '/scope-a', '{"event":"window"}', SECRET, t)).eql({ status: 200, text: '' });
        await rig.reports((r) => r.kind === 'message' && r.source === 'hook-a' && (r.payload as { event?: string }).event === 'window');
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(t) + 3000 - Date.now())));
        // Refused as stale: Redis forgot it when its 2 s ended, and vouches for nothing older since.
        should(await postSigned(other.nodeRed, '/scope-a', '{"event":"window"}', SECRET, t)).eql({ status: 401, text: '{"error":"stale timestamp"}' });
        await quiet();
        should(delivered(other, 'window')).eql([0, 0]);
      } finally {
        await other.stop();
      }
      should(delivered(rig, 'window')).eql([1, 0]);
    });
  });
}

describe(`webhook replay cap, ${NODE_RED_4.title}`, function () {
  this.timeout(180_000);
  let redis: RedisServer;
  let rig: WebhookRig;

  before(async function () {
    redis = await RedisServer.start();
    rig = new WebhookRig({ svcWebhookReplayCap: 3 }, NODE_RED_4);
    await rig.start();
  });
  after(async function () {
    await rig?.stop();
    await redis?.stop();
  });

  const flows = (redisUrl: string | undefined): Fields[] => [
    ...(redisUrl ? [configNode(redisUrl)] : []),
    ...reportingTab(
      TAB,
      rig.collector.url,
      webhookNodes(TAB.id, { id: 'hook-cap', url: '/cap', server: redisUrl ? 'cfg' : '', credentials: { secret: SECRET } }),
    ),
  ];
  const events = (names: string[]) => names.map((name) => `{"event":"${name}"}`);
  /** The statuses of these events, each sent with t `t`. */
  const post = async (bodies: string[], t: string) => {
    const statuses: number[] = [];
    for (const body of bodies) statuses.push((await postSigned(rig.nodeRed, '/cap', body, SECRET, t)).status);
    return statuses;
  };
  const quiet = () => new Promise((resolve) => setTimeout(resolve, 500));

  for (const shared of [false, true]) {
    it(`past svcWebhookReplayCap responds with 503 and delivers nothing, forgets nothing, also after a restart (SIGKILL)${shared ? ', with Redis, and on an instance whose own journal was lost' : ''}`, async function () {
      should(await rig.deploy(flows(shared ? redis.url : undefined))).be.within(200, 299);
      const t = String(Math.floor(Date.now() / 1000));
      const prefix = shared ? 'shared' : 'local';
      const held = events([1, 2, 3].map((i) => `${prefix} ${i}`));
      should(await post(held, t)).eql([200, 200, 200]);
      const refused = await rig.nodeRed.request('/cap', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'svc-signature': `t=${t},digestV1=${webhookDigest(t, SECRET, Buffer.from(events([`${prefix} 4`])[0]))}`,
        },
        body: events([`${prefix} 4`])[0],
      });
      should({ status: refused.status, retryAfter: refused.headers.get('retry-after'), text: await refused.text() }).eql({
        status: 503,
        retryAfter: '5',
        text: '{"error":"replays full"}',
      });
      await rig.reports((r) => r.kind === 'message' && (r.payload as { event?: string }).event === `${prefix} 3`);
      await rig.nodeRed.kill();
      // With Redis, the journal lost: only Redis holds the three, and is full.
      if (shared) fs.rmSync(path.join(rig.userDir, 'svc-location', 'webhook-replays.jsonl'));
      await rig.start();
      should(await post([...held, ...events([`${prefix} 4`])], t)).eql([200, 200, 200, 503]);
      await quiet();
      should(rig.messagesOf('hook-cap').filter((m) => String((m.payload as { event?: string }).event).startsWith(prefix))).have.length(3);
      // Emptied for the next case.
      await rig.nodeRed.kill();
      fs.rmSync(path.join(rig.userDir, 'svc-location', 'webhook-replays.jsonl'), { force: true });
      const client = new Redis(redis.url);
      await client.flushall();
      client.disconnect();
      await rig.start();
    });
  }
});
