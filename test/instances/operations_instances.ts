import fs from 'node:fs';
import path from 'node:path';
import should from 'should';
import { SANDBOX_DEFAULTS, Sandbox, startSandbox } from '../../sandbox';
import { RedisServer } from '../support/redis-server';
import { ADMIN_AUTH, Fields, WebhookRig, postSigned } from '../support/webhook-process';
import { Exposition, parseExposition, valueOf } from '../support/prometheus';
import { waitUntilAsync } from '../support/wait';
import { CONFIG_ID, configNode, sandboxCredentials } from '../support/harness';

/**
 * Issue 55, metrics and health (docs/operations.md), in a real Node-RED process with adminAuth, the
 * sandbox and a real redis-server: geocodes, a cache hit, a 429, a token, webhook copies and refusals,
 * and a Redis outage (redis-server stopped by its PID, then started again) move the metrics as they
 * should; the text parses strictly as Prometheus text and carries no secret, address or URL; health
 * responds 503 naming Redis while it is down, 200 after, and the probe's copy on httpNode responds
 * without a token.
 */

const SECRET = 'operations-webhook-secret';
const CONFIG_NAME = 'ops "main" \\ cfg';
const ADDRESSES = ['12 Main Street', '7 Harbour Road'];

/** The webhook node both flows run, signed with SECRET, on the tab `tab`. */
const WEBHOOK_NODE = {
  id: 'hook',
  type: 'svc-webhook-in',
  z: 'tab',
  url: '/ops-hook',
  verify: 'signature',
  tolerance: 300,
  maxBodyKb: 64,
  headerName: '',
  server: '',
};

describe('metrics and health of a running Node-RED (issue 55)', function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  let redis: RedisServer;
  const rig = new WebhookRig({ adminAuth: ADMIN_AUTH, svcLocation: { healthOnHttpNode: true } });

  const flows = (extra: Fields[] = []): Fields[] => [
    { id: 'tab', type: 'tab', label: 'operations' },
    {
      ...configNode(sandbox, { id: 'cfg', platform: 'account', name: CONFIG_NAME, version: 3, rateScope: 'family', dailyLimit: 1000, cacheTtl: 60 }),
      credentials: { ...sandboxCredentials()[CONFIG_ID], redisUrl: redis.url },
    },
    ...httpFlow('geo', 'svc-geocode', 'cfg'),
    ...httpFlow('words', 'svc-words', 'cfg'),
    {
      ...WEBHOOK_NODE,
      name: 'hook',
      credentials: { secret: SECRET },
      wires: [[]],
      x: 100,
      y: 400,
    },
    ...extra,
  ];

  /** POST /<name> sends the body (text) to a node of `type`; its output is the response, or its error's code with status 500. */
  function httpFlow(name: string, type: string, server: string): Fields[] {
    return [
      { id: `${name}-in`, type: 'http in', z: 'tab', url: `/${name}`, method: 'post', wires: [[name]], x: 100, y: 100 },
      { id: name, type, z: 'tab', server, wires: [[`${name}-out`]], x: 300, y: 100 },
      { id: `${name}-catch`, type: 'catch', z: 'tab', scope: [name], wires: [[`${name}-error`]], x: 100, y: 200 },
      {
        id: `${name}-error`,
        type: 'change',
        z: 'tab',
        rules: [
          { t: 'set', p: 'payload', pt: 'msg', to: 'error.code', tot: 'msg' },
          { t: 'set', p: 'statusCode', pt: 'msg', to: '500', tot: 'num' },
        ],
        wires: [[`${name}-out`]],
        x: 300,
        y: 200,
      },
      { id: `${name}-out`, type: 'http response', z: 'tab', statusCode: '', wires: [], x: 500, y: 100 },
    ];
  }

  const send = async (name: string, text: string): Promise<{ status: number; text: string }> => {
    const res = await rig.nodeRed.request(`/${name}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: text });
    return { status: res.status, text: await res.text() };
  };
  const admin = async (path: string, withToken = true): Promise<{ status: number; text: string; type: string }> => {
    const res = await rig.nodeRed.request(path, { headers: withToken ? await rig.authorization() : {} });
    return { status: res.status, text: await res.text(), type: res.headers.get('content-type') ?? '' };
  };
  const scrape = async (): Promise<{ text: string; metrics: Exposition }> => {
    const { status, text, type } = await admin('/svc-config/metrics');
    should(status).equal(200);
    should(type)
      .match(/^text\/plain;/)
      .and.containEql('version=0.0.4');
    return { text, metrics: parseExposition(text) };
  };
  const healthOf = async (
    path: string,
    withToken = true,
  ): Promise<{ status: number; body: { status: string; nodes: Array<{ id: string; problems: string[] }> } }> => {
    const { status, text } = await admin(path, withToken);
    return { status, body: JSON.parse(text) as { status: string; nodes: Array<{ id: string; problems: string[] }> } };
  };
  const cfg = { config_id: 'cfg' };

  before(async function () {
    if (!RedisServer.available()) throw new Error('redis-server is not installed: apt-get install -y redis-server (.ci/run does it)');
    sandbox = await startSandbox();
    redis = await RedisServer.start();
    await rig.start();
    should(await rig.deploy(flows())).be.within(200, 299);
  });

  after(async function () {
    await rig.stop();
    await redis?.remove();
    await sandbox?.close();
  });

  it('refuses both routes without a token (401), and the probe route needs none', async function () {
    should((await admin('/svc-config/metrics', false)).status).equal(401);
    should((await admin('/svc-config/health', false)).status).equal(401);
    should((await healthOf('/svc-health', false)).status).equal(200);
  });

  it('counts geocodes, a cache hit, a 429 and its retry, a token, webhook copies and refusals; parses strictly; names no secret or address', async function () {
    await waitUntilAsync(async () => valueOf((await scrape()).metrics, 'svc_location_redis_state', { ...cfg, state: 'up' }) === 1, 'Redis up', 15_000);
    should((await send('geo', ADDRESSES[0])).status).equal(200);
    should((await send('geo', ADDRESSES[0])).status).equal(200);
    sandbox.setFault('geocode', { status: 429, retryAfter: '0', times: 1 });
    should((await send('geo', ADDRESSES[1])).status).equal(200);
    await send('words', 'index.home.raft');
    const body = JSON.stringify({ event: 'ops' });
    const t = String(Math.floor(Date.now() / 1000));
    should((await postSigned(rig.nodeRed, '/ops-hook', body, SECRET, t)).status).equal(200);
    should((await postSigned(rig.nodeRed, '/ops-hook', body, SECRET, t)).status).equal(200);
    should((await postSigned(rig.nodeRed, '/ops-hook', body, 'not-the-secret', t)).status).equal(401);

    const { text, metrics } = await scrape();
    const geocode = { ...cfg, family: 'geocode' };
    should(valueOf(metrics, 'svc_location_requests_total', { ...geocode, outcome: '2xx' })).equal(2);
    should(valueOf(metrics, 'svc_location_retries_total', geocode)).equal(1);
    should(valueOf(metrics, 'svc_location_rate_limited_total', geocode)).equal(1);
    should(valueOf(metrics, 'svc_location_cache_hits_total', geocode)).equal(1);
    // Every attempt sent counts against the daily limit: the first geocode, and the 429 and its retry.
    should(valueOf(metrics, 'svc_location_daily_requests', cfg)).equal(3);
    should(valueOf(metrics, 'svc_location_daily_limit', cfg)).equal(1000);
    should(valueOf(metrics, 'svc_location_requests_total', { ...cfg, family: 'token', outcome: '2xx' })).equal(1);
    should(valueOf(metrics, 'svc_location_requests_total', { ...cfg, family: 'words' })).be.a.Number();
    should(valueOf(metrics, 'svc_location_token_refreshes_total', cfg)).equal(1);
    should(valueOf(metrics, 'svc_location_token_age_seconds', cfg)).be.within(0, 60);
    should(valueOf(metrics, 'svc_location_token_failing', cfg)).equal(0);
    should(valueOf(metrics, 'svc_location_queue_depth', { ...cfg, queue: 'geocode' })).equal(0);
    should(valueOf(metrics, 'svc_location_queue_wait_seconds_count', { ...cfg, queue: 'geocode' })).equal(3);
    should(valueOf(metrics, 'svc_location_redis_breaker_open', cfg)).equal(0);
    should(valueOf(metrics, 'svc_location_redis_roundtrip_seconds', cfg)).be.within(0, 2);
    const hook = { node_id: 'hook' };
    should(valueOf(metrics, 'svc_location_webhook_deliveries_total', { ...hook, result: 'accepted' })).equal(1);
    should(valueOf(metrics, 'svc_location_webhook_deliveries_total', { ...hook, result: 'duplicate' })).equal(1);
    should(valueOf(metrics, 'svc_location_webhook_deliveries_total', { ...hook, result: 'refused' })).equal(1);
    should(valueOf(metrics, 'svc_location_webhook_journal_ok', hook)).equal(1);
    // The config node's name, with its quotes and backslash, read back as typed.
    should(metrics.samples.find((s) => s.labels.config_id === 'cfg')?.labels.config_name).equal(CONFIG_NAME);
    for (const secret of [
      SANDBOX_DEFAULTS.clientSecret,
      SANDBOX_DEFAULTS.apiKey,
      SANDBOX_DEFAULTS.pubsubApiKey,
      SANDBOX_DEFAULTS.clientId,
      SECRET,
      ...ADDRESSES,
      sandbox.url,
      redis.url,
      '127.0.0.1',
    ]) {
      should(text).not.containEql(secret);
    }
  });

  it('responds 503 naming Redis while redis-server is stopped (geocodes go on), 200 once it is back', async function () {
    should((await healthOf('/svc-config/health')).status).equal(200);
    await redis.stop();
    await waitUntilAsync(async () => (await healthOf('/svc-config/health')).status === 503, 'health 503', 20_000);
    const down = await healthOf('/svc-config/health');
    should(down.body.status).equal('failing');
    should(down.body.nodes.find((node) => node.id === 'cfg')?.problems).eql(['redis']);
    should((await healthOf('/svc-health', false)).status).equal(503);
    const { metrics } = await scrape();
    should(valueOf(metrics, 'svc_location_redis_state', { ...cfg, state: 'bypassed' })).equal(1);
    should(valueOf(metrics, 'svc_location_redis_state', { ...cfg, state: 'up' })).equal(0);
    should((await send('geo', 'Redis is away')).status).equal(200);
    await redis.launch();
    await waitUntilAsync(async () => (await healthOf('/svc-config/health')).status === 200, 'health 200 again', 30_000);
    should((await healthOf('/svc-health', false)).status).equal(200);
    should(valueOf((await scrape()).metrics, 'svc_location_redis_state', { ...cfg, state: 'up' })).equal(1);
  });

  it('responds 503 naming the quota once a config has used its daily limit, and the token once it is refused', async function () {
    const base = flows()[1];
    const small = { ...base, id: 'cfg-small', name: 'small', dailyLimit: 1, cacheTtl: 0 };
    const refused = { ...base, id: 'cfg-refused', name: 'refused', credentials: { ...(base.credentials as Fields), clientSecret: 'wrong' } };
    const extra = [small, refused, ...httpFlow('small', 'svc-geocode', 'cfg-small'), ...httpFlow('refused', 'svc-words', 'cfg-refused')];
    should(await rig.deploy(flows(extra))).be.within(200, 299);
    // The small config counts for the same API key as cfg (one count per key), whose geocodes have used more than 1.
    should(await send('small', ADDRESSES[0])).match({ status: 500, text: 'QUOTA_EXCEEDED' });
    should(await send('refused', 'index.home.raft')).match({ status: 500, text: 'UNAUTHORIZED' });
    const { status, body } = await healthOf('/svc-config/health');
    should(status).equal(503);
    should(body.nodes.find((node) => node.id === 'cfg-small')?.problems).eql(['quota']);
    should(body.nodes.find((node) => node.id === 'cfg-refused')?.problems).eql(['token']);
    should(body.nodes.find((node) => node.id === 'cfg')?.problems).eql([]);
  });
});

describe('health of a webhook whose replay journal cannot be written (issue 55)', function () {
  this.timeout(120_000);
  const rig = new WebhookRig({});

  before(async function () {
    // A folder where the journal file should be: every write of it fails, as on a full or read-only disk.
    fs.mkdirSync(path.join(rig.userDir, 'svc-location', 'webhook-replays.jsonl'), { recursive: true });
    await rig.start();
    should(
      await rig.deploy([
        { id: 'tab', type: 'tab', label: 'journal' },
        { ...WEBHOOK_NODE, credentials: { secret: SECRET }, wires: [[]], x: 100, y: 100 },
      ]),
    ).be.within(200, 299);
  });

  after(async function () {
    await rig.stop();
  });

  it('responds 503 naming the journal once a delivery could not be recorded, and the metric says so', async function () {
    should((await postSigned(rig.nodeRed, '/ops-hook', JSON.stringify({ event: 'lost' }), SECRET)).status).equal(503);
    const res = await rig.nodeRed.request('/svc-config/health');
    should(res.status).equal(503);
    const body = (await res.json()) as { nodes: Array<{ id: string; problems: string[] }> };
    should(body.nodes.find((node) => node.id === 'hook')?.problems).eql(['journal']);
    const metrics = parseExposition(await (await rig.nodeRed.request('/svc-config/metrics')).text());
    should(valueOf(metrics, 'svc_location_webhook_journal_ok', { node_id: 'hook' })).equal(0);
  });
});
