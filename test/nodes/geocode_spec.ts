import ngeohash from 'ngeohash';
import should from 'should';
import type { GeocodeWrapper } from '../../sandbox/endpoints/geocode';
import {
  CONFIG_ID,
  configNode,
  expectError,
  expectOutput,
  helper,
  loadWithSandbox,
  nodeModule,
  sandboxCredentials,
  useSandbox,
  Fields,
  TestNode,
} from '../support/harness';
import { expectHandlesBackTo, handleBaseline } from '../support/handles';
import { waitUntil } from '../support/wait';

type StatusCall = { args: unknown[]; thisValue: { id?: string } };
type ContextStore = { set(key: string, value: unknown): void };

/** Every status the node showed, in order (the helper spies on all nodes at once). */
function statusesOf(nodeId: string): Array<{ fill?: string; shape?: string; text?: string }> {
  const calls = (helper.getNode(nodeId).status.getCalls?.() ?? []) as StatusCall[];
  return calls.filter((call) => call.thisValue?.id === nodeId).map((call) => call.args[0] as { fill?: string; shape?: string; text?: string });
}

describe('svc-geocode', function () {
  const ctx = useSandbox();
  const geocodeNode = (extra: Fields = {}) => ({ id: 'n1', type: 'svc-geocode', ...extra });
  const load = (node: Fields = {}, config: Fields = {}) => loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [geocodeNode(node)], config });
  const sentAddress = () => ctx.sandbox.requests('geocode').map((r) => r.query.address);
  const wrapperState = () => ctx.sandbox.stateOf<{ wrapper: GeocodeWrapper }>('geocode', () => ({ wrapper: 'collection' }));

  afterEach(function () {
    wrapperState().wrapper = 'collection';
  });

  it('geocodes an address from msg.payload with the spec headers and query', async function () {
    await loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [geocodeNode()] });
    const msg = await expectOutput('n1', { payload: '12 Main Street, Sandbox City' });
    should(msg.statusCode).equal(200);
    const location = msg.location as { lat: number; lon: number };
    const feature = msg.feature as { geometry: { coordinates: number[] }; properties: Fields };
    should(location.lon).equal(feature.geometry.coordinates[0]);
    should(location.lat).equal(feature.geometry.coordinates[1]);
    should(msg.geohash).be.a.String().and.have.length(9);
    const [request] = ctx.sandbox.requests('geocode');
    should(request.method).equal('POST');
    should(request.query.address).equal('12 Main Street, Sandbox City');
    // Spaces as %20, which every server reads as a space, not the form encoding's + (issue 51 point 9).
    should(request.target).equal('/v1/geocode?address=12%20Main%20Street%2C%20Sandbox%20City');
    should(request.headers['x-svc-project-id']).equal('sandbox-project');
    should(request.headers['x-svc-api-key']).equal('sandbox-api-key');
    should(request.headers.accept).equal('application/json');
    await expectOutput('n1', { payload: '1+2 Main Street' });
    should(ctx.sandbox.requests('geocode')[1].target).equal('/v1/geocode?address=1%2B2%20Main%20Street');
    should(ctx.sandbox.requests('geocode')[1].query.address).equal('1+2 Main Street');
  });

  it('reports no match as an output with location undefined', async function () {
    await loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [geocodeNode()] });
    const msg = await expectOutput('n1', { payload: 'nowhere at all' });
    should(msg.location).be.undefined();
    should(msg.geohash).be.undefined();
  });

  it('refuses an empty address before any request', async function () {
    await loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [geocodeNode()] });
    const { error, msg } = await expectError('n1', { payload: '   ' });
    should(error.code).equal('INVALID_INPUT');
    should(msg.payload).equal('   ');
    should(ctx.sandbox.requests('geocode')).have.length(0);
  });

  it('surfaces a 401 with statusCode and code', async function () {
    await loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [geocodeNode()], credentials: { apiKey: 'wrong' } });
    const { error, msg } = await expectError('n1', { payload: 'Main Street' });
    should(error.code).equal('UNAUTHORIZED');
    should(msg.statusCode).equal(401);
  });

  describe('where the address comes from', function () {
    it('reads another msg member when the TypedInput names one', async function () {
      await load({ address: 'request.where', addressType: 'msg' });
      await expectOutput('n1', { payload: 'not this', request: { where: '1 High Street' } });
      should(sentAddress()).eql(['1 High Street']);
    });

    it('reads flow and global context', async function () {
      // Flow context needs a flow: this node and its output live on a tab, the config node stays global.
      const onTab = (node: Fields) => ({ z: 'tab', ...node });
      await helper.load(
        [nodeModule('svc-config'), nodeModule('svc-geocode')],
        [
          { id: 'tab', type: 'tab', label: 'geocode' },
          configNode(ctx.sandbox),
          onTab(geocodeNode({ server: CONFIG_ID, address: 'home', addressType: 'flow', wires: [['out']] })),
          onTab({ id: 'out', type: 'helper' }),
        ],
        sandboxCredentials(),
      );
      const context = () => (helper.getNode('n1') as unknown as { context(): { flow: ContextStore; global: ContextStore } }).context();
      context().flow.set('home', '2 Station Road');
      await expectOutput('n1', { payload: 'not this' });
      await helper.unload();
      await load({ address: 'office', addressType: 'global' });
      context().global.set('office', '3 Market Square');
      await expectOutput('n1', { payload: 'not this' });
      should(sentAddress()).eql(['2 Station Road', '3 Market Square']);
    });

    it('reads an environment variable', async function () {
      process.env.SVC_GEOCODE_TEST_ADDRESS = '4 Church Lane';
      try {
        await load({ address: 'SVC_GEOCODE_TEST_ADDRESS', addressType: 'env' });
        await expectOutput('n1', { payload: 'not this' });
      } finally {
        delete process.env.SVC_GEOCODE_TEST_ADDRESS;
      }
      should(sentAddress()).eql(['4 Church Lane']);
    });

    it('a value fixed in the editor is not overridden by msg.payload', async function () {
      await load({ address: '5 Main Street', addressType: 'str' });
      await expectOutput('n1', { payload: '99 Other Street', address: 'neither this' });
      should(sentAddress()).eql(['5 Main Street']);
    });

    it('evaluates a JSONata expression', async function () {
      await load({ address: "payload.street & ', Sandbox City'", addressType: 'jsonata' });
      await expectOutput('n1', { payload: { street: '6 High Street' } });
      should(sentAddress()).eql(['6 High Street, Sandbox City']);
    });

    it('accepts an object with an address member, trimmed', async function () {
      await load();
      const msg = await expectOutput('n1', { payload: { address: '  7 Main Street  ', note: 'kept' } });
      should(sentAddress()).eql(['7 Main Street']);
      should(msg.payload).be.an.Object();
    });
  });

  describe('output', function () {
    it('has the configured geohash precision, decoding back near the location', async function () {
      for (const precision of [5, '12']) {
        await load({ precision });
        const msg = await expectOutput('n1', { payload: '12 Main Street' });
        const location = msg.location as { lat: number; lon: number };
        should(msg.geohash).have.length(Number(precision));
        const decoded = ngeohash.decode(msg.geohash as string);
        should(decoded.latitude).be.approximately(location.lat, 0.05);
        should(decoded.longitude).be.approximately(location.lon, 0.05);
        await helper.unload();
      }
    });

    it('reads latitude and longitude in GeoJSON order (longitude first)', async function () {
      await load();
      const msg = await expectOutput('n1', { payload: '12 Main Street' });
      const location = msg.location as { lat: number; lon: number };
      // The sandbox places everything in a box at lat 52.45-52.55, lon 13.3-13.5: the two cannot be swapped.
      should(location.lat).be.within(52.45, 52.55);
      should(location.lon).be.within(13.3, 13.5);
    });

    it('finds the feature in each response wrapper: collection, bare feature, wrapped object', async function () {
      await load();
      const features: unknown[] = [];
      for (const wrapper of ['collection', 'feature', 'wrapped'] as const) {
        wrapperState().wrapper = wrapper;
        const msg = await expectOutput('n1', { payload: '12 Main Street' });
        features.push(msg.feature);
        const payload = msg.payload as Fields;
        if (wrapper === 'collection') should(payload.type).equal('FeatureCollection');
        if (wrapper === 'feature') should(payload.type).equal('Feature');
        if (wrapper === 'wrapped') should(payload).have.properties({ status: 'OK' });
        should(msg.location).be.an.Object();
      }
      should(features[1]).eql(features[0]);
      should(features[2]).eql(features[0]);
    });

    it('passes every match_type, accuracy and match_component value through', async function () {
      await load();
      const cases: Array<[string, string, string, string, string]> = [
        ['12 Main Street', 'exact', 'Point', 'house_number', 'Cell'],
        ['12 Elm Street', 'interpolated', 'Point', 'house_number', 'Cell'],
        ['Mian Street', 'fuzzy', 'Point', 'street', 'Cell'],
        ['Main Street', 'exact', 'Centroid', 'street', 'Cluster'],
        ['Sandbox City', 'fallback', 'Centroid', 'street', 'Cluster'],
        ['the bakery next to the town hall', 'landmark', 'Point', 'landmark', 'Cell'],
      ];
      for (const [query, matchType, accuracy, component, cellType] of cases) {
        const msg = await expectOutput('n1', { payload: query });
        const properties = (msg.feature as { properties: Fields }).properties as {
          quality_metrics: Fields;
          svc_location: Fields;
          address_components: { landmark: unknown[] };
        };
        should(properties.quality_metrics).eql({ match_type: matchType, accuracy, match_component: component }, query);
        should(properties.svc_location.type).equal(cellType, query);
        should(properties.address_components.landmark).have.length(matchType === 'landmark' ? 1 : 0);
        should(msg.location).be.an.Object();
      }
    });

    it('gives exactly one output per message when many arrive at once', async function () {
      await load();
      const received: Fields[] = [];
      helper.getNode('out').on('input', (msg: Fields) => received.push(msg));
      for (let n = 1; n <= 10; n++) helper.getNode('n1').receive({ payload: `${n} Main Street`, n });
      await waitUntil(() => received.length === 10, 'ten outputs');
      should(received.map((m) => m.n).sort((a, b) => Number(a) - Number(b))).eql([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    });
  });

  describe('faults', function () {
    it('waits out a 429 with Retry-After, then outputs the result', async function () {
      await load();
      ctx.sandbox.setFault('geocode', { status: 429, retryAfter: '1', times: 1 });
      const msg = await expectOutput('n1', { payload: '12 Main Street' });
      should(msg.statusCode).equal(200);
      should(ctx.sandbox.requests('geocode').map((r) => r.status)).eql([429, 200]);
      should(statusesOf('n1').map((s) => s.text)).containEql('retry 1 after RATE_LIMITED');
    });

    it('retries a 5xx, then outputs the result', async function () {
      await load();
      ctx.sandbox.setFault('geocode', { status: 502, times: 1 });
      should((await expectOutput('n1', { payload: '12 Main Street' })).statusCode).equal(200);
      should(ctx.sandbox.requests('geocode').map((r) => r.status)).eql([502, 200]);
    });

    it('reports a 5xx that outlasts the retries as SERVER with msg.statusCode', async function () {
      await load();
      ctx.sandbox.setFault('geocode', { status: 503, retryAfter: '0' });
      const { error, msg } = await expectError('n1', { payload: '12 Main Street' });
      should(error.code).equal('SERVER');
      should(msg.statusCode).equal(503);
      should(ctx.sandbox.requests('geocode')).have.length(3);
    });

    it('reports a timeout as TIMEOUT', async function () {
      await load({}, { timeout: 300, maxRetries: 0 });
      ctx.sandbox.setFault('geocode', { hang: true });
      // A status an earlier node left on the message must not pass for this failure's.
      const { error, msg } = await expectError('n1', { payload: '12 Main Street', statusCode: 200 });
      should(error.code).equal('TIMEOUT');
      should(msg.statusCode).be.undefined();
    });

    it('reports malformed JSON as BAD_RESPONSE', async function () {
      await load();
      ctx.sandbox.setFault('geocode', { malformedJson: true });
      const { error, msg } = await expectError('n1', { payload: '12 Main Street' });
      should(error.code).equal('BAD_RESPONSE');
      should(msg.statusCode).equal(200);
      should(ctx.sandbox.requests('geocode')).have.length(1);
    });

    it('retries a connection reset, and reports NETWORK when resets persist', async function () {
      await load();
      ctx.sandbox.setFault('geocode', { reset: true, times: 1 });
      should((await expectOutput('n1', { payload: '12 Main Street' })).statusCode).equal(200);
      should(ctx.sandbox.requests('geocode')).have.length(2);
      ctx.sandbox.setFault('geocode', { reset: true });
      const { error } = await expectError('n1', { payload: '12 Main Street' });
      should(error.code).equal('NETWORK');
      should(ctx.sandbox.requests('geocode')).have.length(5);
    });

    it('names the Base URL, and the Proxy when one is set, when the connection is refused', async function () {
      await load({}, { baseUrl: 'http://127.0.0.1:1', maxRetries: 0 });
      const { error } = await expectError('n1', { payload: '12 Main Street' });
      should(error.code).equal('NETWORK');
      should(error.message).endWith(' — check Base URL in the svc-config node, and the network');
      await helper.unload();
      await helper.load(
        [nodeModule('svc-config'), nodeModule('svc-geocode'), require(require.resolve('@node-red/nodes/core/network/06-httpproxy.js'))],
        [
          configNode(ctx.sandbox, { proxy: 'px', maxRetries: 0 }),
          { id: 'px', type: 'http proxy', name: '', url: 'http://127.0.0.1:1', noproxy: [] },
          { ...geocodeNode(), server: CONFIG_ID, wires: [['out']] },
          { id: 'out', type: 'helper' },
        ],
        sandboxCredentials(),
      );
      const proxied = await expectError('n1', { payload: '12 Main Street' });
      should(proxied.error.code).equal('NETWORK');
      should(proxied.error.message).endWith(' — check Base URL and Proxy in the svc-config node, and the network');
    });

    it('reports a key lacking the geocode permission as UNAUTHORIZED', async function () {
      await loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [geocodeNode()], credentials: { apiKey: 'unknown-key' } });
      const { error, msg } = await expectError('n1', { payload: '12 Main Street' });
      should(error.code).equal('UNAUTHORIZED');
      should(error.message).equal("svc-config 'sandbox': API key refused (401): check the API key and Project id fields");
      should(msg.statusCode).equal(401);
    });
  });

  describe('bad input', function () {
    const cases: Array<[string, unknown, RegExp]> = [
      ['an empty string', '', /address is empty/],
      ['a number', 42, /got number/],
      ['null', null, /got null/],
      ['an array', ['12 Main Street'], /got an array/],
      ['an object without address', { street: 'Main Street' }, /got object/],
      ['an object whose address is not a string', { address: 12 }, /got number/],
      ['nothing at all', undefined, /got undefined/],
    ];
    for (const [label, payload, message] of cases) {
      it(`refuses ${label} before any request, keeping the message`, async function () {
        await load();
        const { error, msg } = await expectError('n1', { payload, topic: 'kept' });
        should(error.code).equal('INVALID_INPUT');
        should(error.message).match(message);
        should(msg.topic).equal('kept');
        should(msg.payload).eql(payload);
        should(ctx.sandbox.requests('geocode')).have.length(0);
      });
    }
  });

  describe('status', function () {
    it('shows requesting, then found or no match, and the error code after a failure', async function () {
      // Without the daily limit, whose count the status would add (see the quota tests).
      await load({}, { dailyLimit: 0 });
      await expectOutput('n1', { payload: '12 Main Street' });
      await expectOutput('n1', { payload: 'nowhere' });
      ctx.sandbox.setFault('geocode', { status: 401 });
      await expectError('n1', { payload: '12 Main Street' });
      should(statusesOf('n1')).eql([
        { fill: 'blue', shape: 'dot', text: 'requesting' },
        { fill: 'green', shape: 'dot', text: 'found' },
        { fill: 'blue', shape: 'dot', text: 'requesting' },
        { fill: 'green', shape: 'dot', text: 'no match' },
        { fill: 'blue', shape: 'dot', text: 'requesting' },
        { fill: 'red', shape: 'ring', text: 'UNAUTHORIZED (401): credentials refused' },
      ]);
    });

    it('shows the status at most ten times a second while several messages are under way, and the last outcome once they end', async function () {
      await load({}, { dailyLimit: 0, maxConcurrency: 64 });
      const received: Fields[] = [];
      helper.getNode('out').on('input', (msg: Fields) => received.push(msg));
      // 40 messages at once, each responded to after 400 ms: every one of them requesting and done would be 80 statuses.
      ctx.sandbox.setFault('geocode', { delayMs: 400 });
      for (let i = 0; i < 40; i++) helper.getNode('n1').receive({ payload: `${i} Main Street` });
      await waitUntil(() => received.length === 40, 'the 40 outputs', 10_000);
      const shown = statusesOf('n1');
      should(shown.length).be.within(2, 12, JSON.stringify(shown));
      should(shown[0]).eql({ fill: 'blue', shape: 'dot', text: 'requesting' });
      should(shown.at(-1)).eql({ fill: 'green', shape: 'dot', text: 'found' });
      // One message at a time again: each change shows as it happens.
      ctx.sandbox.clearFaults();
      await expectOutput('n1', { payload: 'nowhere' });
      should(statusesOf('n1').slice(shown.length)).eql([
        { fill: 'blue', shape: 'dot', text: 'requesting' },
        { fill: 'green', shape: 'dot', text: 'no match' },
      ]);
    });

    it('shows how many messages the rate holds back and the rate, at most a few times a second, until none wait (issue 54)', async function () {
      await load({}, { rateLimit: 1200 });
      const received: Fields[] = [];
      helper.getNode('out').on('input', (msg: Fields) => received.push(msg));
      const started = Date.now();
      for (let i = 0; i < 20; i++) helper.getNode('n1').receive({ payload: `${i + 1} Main Street` });
      await waitUntil(() => received.length === 20, 'twenty outputs', 15000);
      const elapsedSeconds = (Date.now() - started) / 1000;
      const texts = statusesOf('n1').map((s) => String(s.text));
      const counts = texts.map((text) => /· (\d+) waiting \(1200\/min\)$/.exec(text)?.[1]).filter((count) => count !== undefined);
      should(counts.length).be.above(1, texts.join(' | '));
      should(Number(counts[0])).be.above(Number(counts[counts.length - 1]));
      should(texts.some((text) => /^found .*· \d+ waiting \(1200\/min\)$/.test(text))).be.true(texts.join(' | '));
      // Coalesced: a status per message and per wait would be 60 and more.
      should(texts.length).be.belowOrEqual(Math.ceil(elapsedSeconds * 15) + 5, texts.join(' | '));
      await waitUntil(() => !/waiting/.test(String(statusesOf('n1').at(-1)?.text)), 'no message waiting', 2000);
      should(statusesOf('n1').at(-1)?.text).equal('found (20/50000 requests today)');
    });

    it('shows queued messages and retries', async function () {
      await load({}, { rateLimit: 600 });
      ctx.sandbox.setFault('geocode', { status: 500, times: 1 });
      const received: Fields[] = [];
      helper.getNode('out').on('input', (msg: Fields) => received.push(msg));
      helper.getNode('n1').receive({ payload: '1 Main Street' });
      helper.getNode('n1').receive({ payload: '2 Main Street' });
      await waitUntil(() => received.length === 2, 'two outputs');
      const texts = statusesOf('n1').map((s) => s.text);
      should(texts.some((text) => /· 1 waiting \(600\/min\)$/.test(String(text)))).be.true(texts.join(' | '));
      should(texts.some((text) => String(text).startsWith('retry 1 after SERVER'))).be.true(texts.join(' | '));
    });
  });

  it('without a config node it says so at once and refuses messages', async function () {
    await load({ server: '' });
    should(statusesOf('n1')[0]).eql({ fill: 'red', shape: 'ring', text: 'no svc-config' });
    const { error } = await expectError('n1', { payload: '12 Main Street' });
    should(error.code).equal('INVALID_INPUT');
    should(error.message).match(/no svc-config node is selected/);
    should(ctx.sandbox.requests()).have.length(0);
  });

  it('close during a hanging request ends it with a cancelled done(err) and leaves no timers or sockets', async function () {
    await load();
    ctx.sandbox.setFault('geocode', { hang: true });
    const baseline = await handleBaseline();
    const node = helper.getNode('n1') as TestNode & { close(removed: boolean): Promise<void> };
    const errors: Array<{ args: unknown[] }> = [];
    node.on('call:error', (call: { args: unknown[] }) => errors.push(call));
    node.receive({ payload: '12 Main Street', topic: 'hanging' });
    await waitUntil(() => ctx.sandbox.requests('geocode').length === 1, 'the request to reach the sandbox');

    await node.close(false);
    await waitUntil(() => errors.length === 1, 'done(err)');
    const [error, msg] = errors[0].args as [Fields, Fields];
    should(error.code).equal('CANCELLED');
    should(error.message).equal('message cancelled: the node was closed or redeployed');
    should(msg.topic).equal('hanging');
    should(statusesOf('n1').pop()).eql({});
    await expectHandlesBackTo(baseline);
  });
});
