import fs from 'node:fs';
import path from 'node:path';
import should from 'should';
import { QUOTA_FILE } from '../../nodes/lib/node-red/shared-services';
import { CONFIG_ID, expectError, expectOutput, helper, loadWithSandbox, testUserDir, useSandbox, Fields } from '../support/harness';
import { freePort } from '../support/node-red-process';
import { waitUntil } from '../support/wait';

type Call = { args: unknown[]; thisValue: { id?: string } };

function callsOf(nodeId: string, method: 'status' | 'warn' | 'error'): unknown[] {
  const calls = (helper.getNode(nodeId)[method] as { getCalls?: () => Call[] }).getCalls?.() ?? [];
  return calls.filter((call) => call.thisValue?.id === nodeId).map((call) => call.args[0]);
}

describe('svc-geocode daily limit and cache without Redis; svc-config with an unreachable Redis', function () {
  const ctx = useSandbox();
  const load = (config: Fields, credentials: Fields = {}) =>
    loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [{ id: 'n1', type: 'svc-geocode' }], config, credentials });
  const geocodeRequests = () => ctx.sandbox.requests('geocode').length;

  it('stops at exactly the daily limit: the next message fails before any request with QUOTA_EXCEEDED and used/limit', async function () {
    await load({ dailyLimit: 2 });
    await expectOutput('n1', { payload: '1 Main Street' });
    await expectOutput('n1', { payload: '2 Main Street' });
    const { error, msg } = await expectError('n1', { payload: '3 Main Street' });
    should(error.code).equal('QUOTA_EXCEEDED');
    should(msg.payload).equal('3 Main Street');
    should(geocodeRequests()).equal(2);
    should(callsOf('n1', 'status')).containEql({ fill: 'green', shape: 'dot', text: 'found (2/2 requests today)' });
    should(callsOf('n1', 'status').at(-1)).eql({ fill: 'red', shape: 'ring', text: 'QUOTA_EXCEEDED 2/2: daily limit reached' });
    // Counted in the user directory, where a restarted Node-RED finds the count.
    const stored = () => (fs.existsSync(path.join(testUserDir(), QUOTA_FILE)) ? fs.readFileSync(path.join(testUserDir(), QUOTA_FILE), 'utf8') : '');
    await waitUntil(() => /"value":"2"/.test(stored()), 'the count of 2 in the counter file');
  });

  it('serves an identical query within cacheTtl from the cache: msg.cached, no request, no quota', async function () {
    await load({ cacheTtl: 60, dailyLimit: 1 });
    const first = await expectOutput('n1', { payload: '12 Main Street' });
    const second = await expectOutput('n1', { payload: '12 Main Street', topic: 'again' });
    should(first.cached).be.undefined();
    should(second.cached).be.true();
    should(second.topic).equal('again');
    should(second.payload).eql(first.payload);
    should(second.location).eql(first.location);
    should(geocodeRequests()).equal(1);
    // The one unit of quota went to the first request; a new address now fails.
    should((await expectError('n1', { payload: '13 Main Street' })).error.code).equal('QUOTA_EXCEEDED');
  });

  it('with dailyLimit 0 and no cache, counts nothing and caches nothing', async function () {
    await load({ dailyLimit: 0 });
    for (let i = 0; i < 3; i++) should((await expectOutput('n1', { payload: '12 Main Street' })).cached).be.undefined();
    should(geocodeRequests()).equal(3);
    should(fs.existsSync(path.join(testUserDir(), QUOTA_FILE))).be.false();
  });

  it('keeps working on local state when Redis is unreachable, with the status saying so and one warning', async function () {
    const port = await freePort();
    await load({ dailyLimit: 5 }, { redisUrl: `redis://127.0.0.1:${port}` });
    await waitUntil(() => callsOf(CONFIG_ID, 'warn').length > 0, 'the warning of the outage');
    const msg = await expectOutput('n1', { payload: '12 Main Street' });
    should(msg.statusCode).equal(200);
    should(callsOf('n1', 'status')).containEql({ fill: 'yellow', shape: 'ring', text: 'shared state unavailable' });
    should(callsOf('n1', 'status').at(-1)).eql({ fill: 'yellow', shape: 'dot', text: 'found (1/5 requests today) · shared state unavailable' });
    await expectOutput('n1', { payload: '12 Main Street' });
    should(callsOf(CONFIG_ID, 'warn')).have.length(1);
    should(String(callsOf(CONFIG_ID, 'warn')[0])).match(/shared state unavailable \(Redis at redis:\/\/127\.0\.0\.1:\d+/);
  });

  it('reports a Redis URL that is not redis:// or rediss:// and works without Redis', async function () {
    await load({}, { redisUrl: 'http://127.0.0.1:6379' });
    const [reported] = callsOf(CONFIG_ID, 'error');
    should(reported).match({ code: 'CONFIG_INVALID' });
    should(String(reported)).equal(
      'the Redis URL must start with redis://, rediss://, redis-sentinel://, rediss-sentinel://, redis-cluster:// or rediss-cluster://, not http://; shared state is off — fix the svc-config node',
    );
    should(callsOf(CONFIG_ID, 'error')).have.length(1);
    should((await expectOutput('n1', { payload: '12 Main Street' })).statusCode).equal(200);
  });

  it('reads the Redis URL from ${REDIS_URL}, and runs locally with a warning when the variable is not set', async function () {
    const port = await freePort();
    process.env.SVC_TEST_REDIS_URL = `redis://127.0.0.1:${port}`;
    try {
      await load({}, { redisUrl: '${SVC_TEST_REDIS_URL}' });
      const config = helper.getNode(CONFIG_ID) as unknown as { shared: { state: { address: string } } };
      should(config.shared.state.address).equal(`redis://127.0.0.1:${port}`);
      await helper.unload();
      delete process.env.SVC_TEST_REDIS_URL;
      await load({}, { redisUrl: '${SVC_TEST_REDIS_URL}' });
      should(callsOf(CONFIG_ID, 'warn')).eql(['the Redis URL refers to the environment variable SVC_TEST_REDIS_URL, which is not set: shared state is off']);
      should((await expectOutput('n1', { payload: '12 Main Street' })).statusCode).equal(200);
    } finally {
      delete process.env.SVC_TEST_REDIS_URL;
    }
  });
});

describe("svc-geocode at the platform's own limits (issue 52 point 5)", function () {
  const ctx = useSandbox({ geocodeDailyLimit: 1 });

  it('says in its status which limit a 429 names: the daily limit here (the sandbox sends daily_limit_exceeded)', async function () {
    await loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [{ id: 'n1', type: 'svc-geocode' }], config: { maxRetries: 0 } });
    await expectOutput('n1', { payload: '1 Main Street' });
    const { error } = await expectError('n1', { payload: '2 Main Street' });
    should(error.code).equal('RATE_LIMITED');
    should(callsOf('n1', 'status').at(-1)).eql({ fill: 'red', shape: 'ring', text: 'RATE_LIMITED (429) daily_limit_exceeded: too many requests' });
  });
});
