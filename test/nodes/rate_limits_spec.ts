import fs from 'node:fs';
import path from 'node:path';
import should from 'should';
import type { SvcConfigNode } from '../../nodes/lib/node-red/config';
import { QUOTA_FILE } from '../../nodes/lib/node-red/shared-services';
import type { PlatformClient } from '../../nodes/lib/platform/client';
import type { ClientConfig } from '../../nodes/lib/platform/types';
import {
  CONFIG_ID,
  Fields,
  configNode,
  expectError,
  expectOutput,
  helper,
  loadWithSandbox,
  nodeModule,
  sandboxCredentials,
  testUserDir,
  useSandbox,
} from '../support/harness';
import { addTopic, resetPubsub } from '../../sandbox/pubsub-state';
import { waitUntil } from '../support/wait';

/**
 * Issue 28 points 1 and 2: the spec's recommended rate is for single geocodes, so each endpoint family
 * has a rate (and a queue) of its own; a config node saved by 1.0.0 keeps one rate for every request;
 * the daily limit counts every attempt of a single geocode, as the platform counts requests.
 */

/** Geocode once a second: a second geocode waits a whole second for its slot. */
const GEOCODE_RATE = 60;
const PUBLISHES = 5;

type Call = { args: unknown[]; thisValue: { id?: string } };

/** The statuses a node showed (the helper spies on every node's status). */
function statusesOf(nodeId: string): unknown[] {
  const calls = (helper.getNode(nodeId).status as { getCalls?: () => Call[] }).getCalls?.() ?? [];
  return calls.filter((call) => call.thisValue?.id === nodeId).map((call) => call.args[0]);
}

const configClient = () => (helper.getNode(CONFIG_ID) as unknown as SvcConfigNode).client;
/** The settings the config node handed to its client (private to the client, read here on purpose). */
const settingsOf = (client: PlatformClient) => (client as unknown as { config: ClientConfig }).config;

describe('rate limits per endpoint family (issue 28 point 1)', function () {
  const ctx = useSandbox();
  let topicId: number;

  beforeEach(function () {
    resetPubsub(ctx.sandbox);
    topicId = addTopic(ctx.sandbox, 'positions').id;
  });

  /** A geocode node (output at `gout`) and a publish node (output at `pout`) on one config node. */
  async function loadGeocodeAndPublish(config: Fields): Promise<{ geocoded: Fields[]; published: Fields[] }> {
    await helper.load(
      ['svc-config', 'svc-geocode', 'svc-topic-publish'].map(nodeModule),
      [
        configNode(ctx.sandbox, config),
        { id: 'g', type: 'svc-geocode', server: CONFIG_ID, wires: [['gout']] },
        { id: 'p', type: 'svc-topic-publish', server: CONFIG_ID, wires: [['pout']] },
        { id: 'gout', type: 'helper' },
        { id: 'pout', type: 'helper' },
      ],
      sandboxCredentials(),
    );
    const geocoded: Fields[] = [];
    const published: Fields[] = [];
    helper.getNode('gout').on('input', (msg: Fields) => geocoded.push(msg));
    helper.getNode('pout').on('input', (msg: Fields) => published.push(msg));
    return { geocoded, published };
  }

  /** Two geocodes; once the first has reached the platform (the second now waits a second for its slot), `publishes` publishes. */
  async function sendGeocodesThenPublish(publishes: number): Promise<void> {
    helper.getNode('g').receive({ payload: '1 Main Street' });
    helper.getNode('g').receive({ payload: '2 Main Street' });
    await waitUntil(() => ctx.sandbox.requests('geocode').length === 1, 'the first geocode', 3000);
    for (let n = 0; n < publishes; n++) helper.getNode('p').receive({ topicId, locationId: `cell-${n}`, payload: { n } });
  }

  const arrivals = () => ctx.sandbox.log.filter((entry) => entry.endpoint === 'geocode' || entry.endpoint === 'topic-publish');

  it('publishes never wait on the geocode rate: all are sent while the second geocode waits for its slot', async function () {
    const { geocoded, published } = await loadGeocodeAndPublish({ version: 2, rateScope: 'family', rateLimit: GEOCODE_RATE });
    await sendGeocodesThenPublish(PUBLISHES);
    await waitUntil(() => published.length === PUBLISHES, 'every publish', 3000);
    should(ctx.sandbox.requests('geocode')).have.length(1);
    await waitUntil(() => geocoded.length === 2, 'the second geocode, a second later', 3000);
    should(arrivals().map((entry) => entry.endpoint)).eql(['geocode', ...Array<string>(PUBLISHES).fill('topic-publish'), 'geocode']);
  });

  it('a config node saved by 1.0.0 (no settings version) keeps one rate for every request: a publish queues behind the geocodes', async function () {
    const { published } = await loadGeocodeAndPublish({ rateLimit: GEOCODE_RATE });
    should(configClient().gateFor('topics')).equal(configClient().gateFor('geocode'));
    await sendGeocodesThenPublish(1);
    await waitUntil(() => published.length === 1, 'the publish, after the second geocode', 4000);
    const [first, second, publish] = arrivals();
    should([first, second, publish].map((entry) => entry.endpoint)).eql(['geocode', 'geocode', 'topic-publish']);
    // One schedule of one request a second: each request waits for the slot after the one before (a little timer slack allowed).
    should(second.time - first.time).be.aboveOrEqual(900);
    should(publish.time - second.time).be.aboveOrEqual(900);
  });

  it('reads each family rate of a version-2 config node (0 or empty: off), and gives a 1.0.0 node none', async function () {
    const load = (config: Fields) => helper.load([nodeModule('svc-config')], [configNode(ctx.sandbox, config)], sandboxCredentials());
    await load({ version: 2, rateScope: 'family', rateLimit: '80', rateWords: '30', rateRouting: 0, rateBulk: '', rateTopics: 600 });
    should(settingsOf(configClient())).containDeep({ ratePerMinute: 80, familyRates: { words: 30, routing: 0, bulk: 0, topics: 600 } });
    should(configClient().gateFor('topics')).not.equal(configClient().gateFor('geocode'));
    await helper.unload();
    await load({ version: 2, rateScope: 'family' });
    should(settingsOf(configClient()).familyRates).eql({ words: 0, routing: 0, bulk: 0, topics: 0 });
    await helper.unload();
    await load({ version: 2, rateScope: 'all', rateLimit: 30, rateTopics: 600 });
    should(settingsOf(configClient()).familyRates).be.undefined();
    await helper.unload();
    await load({ version: 1, rateLimit: 30 });
    should(settingsOf(configClient())).containDeep({ ratePerMinute: 30 });
    should(settingsOf(configClient()).familyRates).be.undefined();
  });
});

describe('the daily limit counts every attempt of a single geocode (issue 28 point 2)', function () {
  const ctx = useSandbox();
  const load = (config: Fields) => loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [{ id: 'n1', type: 'svc-geocode' }], config });
  const storedCount = () => {
    const file = path.join(testUserDir(), QUOTA_FILE);
    return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  };

  it('a retried geocode takes one unit per attempt, as the platform counts, and the status says requests today', async function () {
    await load({ dailyLimit: 5, maxRetries: 2 });
    ctx.sandbox.setFault('geocode', { status: 503, times: 1 });
    const msg = await expectOutput('n1', { payload: '12 Main Street' });
    should(msg.statusCode).equal(200);
    should(ctx.sandbox.requests('geocode')).have.length(2);
    should(statusesOf('n1').at(-1)).eql({ fill: 'green', shape: 'dot', text: 'found (2/5 requests today)' });
    await waitUntil(() => /"value":"2"/.test(storedCount()), 'the count of 2 in the counter file');
  });

  it('a retry past the limit is not sent: QUOTA_EXCEEDED after the one request the platform counted', async function () {
    await load({ dailyLimit: 1, maxRetries: 2 });
    ctx.sandbox.setFault('geocode', { status: 503, times: 1 });
    const { error } = await expectError('n1', { payload: '12 Main Street' });
    should(error.code).equal('QUOTA_EXCEEDED');
    should(ctx.sandbox.requests('geocode')).have.length(1);
  });
});
