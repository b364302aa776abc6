import should from 'should';
import ngeohash from 'ngeohash';
import { expectError, expectOutput, helper, loadWithSandbox, useSandbox, Fields } from '../support/harness';
import { jobsOf } from '../../sandbox/routing';
import { waitUntil } from '../support/wait';
import {
  PROJECT_HEADERS,
  bodies,
  callSandbox,
  cancelledJobTests,
  faultTests,
  lastBody,
  refusalTests,
  sandboxRefusals,
  statusTexts,
} from '../support/routing-nodes';

type Feature = { type: string; geometry: { type: string; coordinates: number[][][] }; properties: Fields };

/** Polls a job takes in this suite (the sandbox's test knob; the platform-like default is by the clock). */
const JOB_POLLS = 3;

describe('svc-isoline', function () {
  const ctx = useSandbox({ jobPolls: JOB_POLLS });
  const isolineNode = (extra: Fields = {}) => ({ id: 'n1', type: 'svc-isoline', ...extra });
  const load = (extra: Fields = {}) => loadWithSandbox(ctx.sandbox, { types: ['svc-isoline'], nodes: [isolineNode(extra)] });
  const berlin = { lat: 52.52, lon: 13.405 };
  const request = (extra: Fields = {}) => ({ payload: { origins: [berlin], range: { type: 'time', value: 600 }, ...extra } });
  const features = (msg: Fields) => (msg.geojson as { type: string; features: Feature[] }).features;

  it('sends the spec body and headers and outputs the result and closed [lon, lat] polygons', async function () {
    await load();
    const msg = await expectOutput('n1', request());
    const [sent] = ctx.sandbox.requests('isoline');
    should(sent.method).equal('POST');
    should(sent.path).equal('/v1/routing/isoline');
    should(sent.headers['x-svc-project-id']).equal('sandbox-project');
    should(sent.headers['x-svc-api-key']).equal('sandbox-api-key');
    should(JSON.parse(sent.body)).eql({
      async: false,
      origins: [{ type: 'coordinates', latitude: 52.52, longitude: 13.405 }],
      range: { type: 'time', value: 600 },
    });
    should(msg.statusCode).equal(200);
    should((msg.payload as Fields).origin).equal(ngeohash.encode(52.52, 13.405, 9));
    should((msg.geojson as Fields).type).equal('FeatureCollection');
    const [polygon] = features(msg);
    should(polygon.geometry.type).equal('Polygon');
    should(polygon.properties.range).eql({ type: 'time', value: 600 });
    const ring = polygon.geometry.coordinates[0];
    should(ring[0]).eql(ring[ring.length - 1]);
    for (const [lon, lat] of ring) {
      // Ten minutes by car on the sandbox town's motorways (110 km/h) reach up to about 18 km.
      should(lon).be.within(13.1, 13.7);
      should(lat).be.within(52.35, 52.69);
    }
  });

  it('reads msg.payload as the origin when it is one location (a world-map marker)', async function () {
    await load({ rangeType: 'distance', rangeTypeType: 'fixed', rangeValue: '2000', rangeValueType: 'num' });
    await expectOutput('n1', { payload: { name: 'van 7', lat: 48.137, lon: 11.575 } });
    should(lastBody(ctx.sandbox, 'isoline')).eql({
      async: false,
      origins: [{ type: 'coordinates', latitude: 48.137, longitude: 11.575 }],
      range: { type: 'distance', value: 2000 },
    });
  });

  it('reads msg.payload as the origins when it is an array of locations in every accepted form', async function () {
    await load({ rangeType: 'time', rangeTypeType: 'fixed', rangeValue: '300', rangeValueType: 'num' });
    const geohash = ngeohash.encode(51.5, -0.12, 9);
    const decoded = ngeohash.decode(geohash);
    const msg = await expectOutput('n1', {
      payload: [
        { lat: 52.5, lng: 13.4 },
        { latitude: 48.85, longitude: 2.35 },
        { type: 'Point', coordinates: [-3.7, 40.4] },
        { type: 'Feature', geometry: { type: 'Point', coordinates: [12.5, 41.9] }, properties: { name: 'Rome' } },
        geohash,
        { type: 'geohash', geohash: 'u0yjjd' },
      ],
    });
    should(lastBody(ctx.sandbox, 'isoline').origins).eql([
      { type: 'coordinates', latitude: 52.5, longitude: 13.4 },
      { type: 'coordinates', latitude: 48.85, longitude: 2.35 },
      { type: 'coordinates', latitude: 40.4, longitude: -3.7 },
      { type: 'coordinates', latitude: 41.9, longitude: 12.5 },
      { type: 'coordinates', latitude: decoded.latitude, longitude: decoded.longitude },
      { type: 'geohash', geohash: 'u0yjjd' },
    ]);
    should(features(msg)).have.length(6);
  });

  it("sends a given Location object with the spec's members only (issue 51 point 9)", async function () {
    // The sandbox refuses a Location object with any other member (400, unknown member).
    await load();
    const msg = await expectOutput(
      'n1',
      request({
        origins: [
          { type: 'geohash', geohash: 'u33db', name: 'Office', transportMode: ['car'], note: { floor: 3 } },
          { type: 'coordinates', latitude: 52.5, longitude: 13.4, label: 'Depot', altitude: 34 },
        ],
      }),
    );
    should(lastBody(ctx.sandbox, 'isoline').origins).eql([
      { type: 'geohash', geohash: 'u33db' },
      { type: 'coordinates', latitude: 52.5, longitude: 13.4 },
    ]);
    should(features(msg)).have.length(2);
  });

  it('sends origins as geohashes of the configured length', async function () {
    await load({ originFormat: 'geohash', precision: 7 });
    await expectOutput('n1', request());
    should(lastBody(ctx.sandbox, 'isoline').origins).eql([{ type: 'geohash', geohash: ngeohash.encode(52.52, 13.405, 7) }]);
  });

  it('reads plain arrays as [lon, lat] only when told to', async function () {
    await load();
    const refused = await expectError('n1', request({ origins: [[13.405, 52.52]] }));
    should(refused.error.code).equal('INVALID_INPUT');
    should(refused.error.message).match(/origin 1: a plain array is ambiguous/);
    await helper.unload();
    await load({ lonLatArrays: true, rangeType: 'time', rangeTypeType: 'fixed', rangeValue: '60', rangeValueType: 'num' });
    await expectOutput('n1', request({ origins: [[13.405, 52.52]] }));
    await expectOutput('n1', { payload: [13.405, 52.52] });
    const berlinOrigin = [{ type: 'coordinates', latitude: 52.52, longitude: 13.405 }];
    should(bodies(ctx.sandbox, 'isoline').map((b) => b.origins)).eql([berlinOrigin, berlinOrigin]);
  });

  it('puts every enum value on the wire unchanged', async function () {
    await load();
    const cases: Fields[] = [
      { range: { type: 'distance', value: 1500 } },
      { range: { type: 'time', value: 900 } },
      { mode: 'short' },
      { mode: 'fast' },
      { transportMode: ['car'] },
      { transportMode: ['truck'] },
      { transportMode: ['pedestrian'] },
      { transportMode: ['car', 'truck', 'pedestrian'] },
      { avoid: ['tollRoad', 'controlledAccessHighway', 'ferry', 'tunnel', 'dirtRoad'] },
      { optimizeFor: 'quality' },
      { optimizeFor: 'performance' },
      { optimizeFor: 'balanced' },
    ];
    for (const extra of cases) await expectOutput('n1', request(extra));
    // A request retried after the client's timeout (a busy machine drawing a large isoline) is the same body again: counted once.
    const sent = bodies(ctx.sandbox, 'isoline').filter((body, i, all) => i === 0 || JSON.stringify(body) !== JSON.stringify(all[i - 1]));
    should(sent).have.length(cases.length);
    should(sent.map((b) => b.range)).containDeep([
      { type: 'distance', value: 1500 },
      { type: 'time', value: 900 },
    ]);
    should(sent.map((b) => b.mode).filter(Boolean)).eql(['short', 'fast']);
    should(sent.map((b) => b.transportMode).filter(Boolean)).eql([['car'], ['truck'], ['pedestrian'], ['car', 'truck', 'pedestrian']]);
    should(sent[8].avoid).eql({ features: ['tollRoad', 'controlledAccessHighway', 'ferry', 'tunnel', 'dirtRoad'] });
    should(sent.map((b) => b.optimizeFor).filter(Boolean)).eql(['quality', 'performance', 'balanced']);
  });

  it('lets values fixed in the editor win over the message', async function () {
    await load({
      async: 'false',
      asyncType: 'bool',
      rangeType: 'distance',
      rangeTypeType: 'fixed',
      rangeValue: '5000',
      rangeValueType: 'num',
      mode: 'short',
      modeType: 'fixed',
      transportMode: 'truck,pedestrian',
      transportModeType: 'fixed',
      avoid: 'ferry,tunnel',
      avoidType: 'fixed',
      optimizeFor: 'performance',
      optimizeForType: 'fixed',
      shape: '120',
      shapeType: 'num',
    });
    const msg = await expectOutput(
      'n1',
      request({ async: true, mode: 'fast', transportMode: ['car'], avoid: ['tollRoad'], optimizeFor: 'quality', shape: 50 }),
    );
    should(lastBody(ctx.sandbox, 'isoline')).eql({
      async: false,
      origins: [{ type: 'coordinates', latitude: 52.52, longitude: 13.405 }],
      range: { type: 'distance', value: 5000 },
      mode: 'short',
      transportMode: ['truck', 'pedestrian'],
      avoid: { features: ['ferry', 'tunnel'] },
      optimizeFor: 'performance',
      shape: 120,
    });
    should(features(msg)[0].geometry.coordinates[0]).have.length(120);
  });

  it('names the avoid member as configured and reads the object form from the message', async function () {
    await load({ avoidMember: 'exclude' });
    await expectOutput('n1', request({ avoid: { features: ['ferry'] } }));
    should(lastBody(ctx.sandbox, 'isoline').avoid).eql({ exclude: ['ferry'] });
  });

  it('returns polygons of exactly `shape` points, one per requested range, labelled in order', async function () {
    await load();
    const msg = await expectOutput('n1', request({ range: { type: 'distance', value: [1000, 2000, 3000] }, shape: 31 }));
    should(lastBody(ctx.sandbox, 'isoline').range).eql({ type: 'distance', value: [1000, 2000, 3000] });
    const polygons = features(msg);
    should(polygons.map((f) => f.properties.range)).eql([1000, 2000, 3000].map((value) => ({ type: 'distance', value })));
    for (const polygon of polygons) {
      const ring = polygon.geometry.coordinates[0];
      should(ring).have.length(31);
      should(ring[0]).eql(ring[30]);
    }
  });

  it('reads a comma-separated range list', async function () {
    await load({ rangeValue: '300, 600', rangeValueType: 'str' });
    await expectOutput('n1', request());
    should(lastBody(ctx.sandbox, 'isoline').range).eql({ type: 'time', value: [300, 600] });
  });

  it('explains the refusal of an origin in Japan', async function () {
    await load();
    const { error, msg } = await expectError('n1', request({ origins: [berlin, { lat: 35.68, lon: 139.76 }] }));
    should(error.code).equal('BAD_REQUEST');
    should(msg.statusCode).equal(400);
    should(error.message)
      .match(/not available in the Japan region/)
      .and.match(/origin 2 lies in Japan/);
  });

  describe('responses in other shapes', function () {
    const ring = [
      [13.4, 52.5],
      [13.41, 52.5],
      [13.41, 52.51],
      [13.4, 52.5],
    ];
    const responseBody = (isoline: unknown) => JSON.stringify({ origin: 'u33d', range: { type: 'time', value: [300, 600] }, isoline });

    it('keeps the range a polygon is labelled with in a FeatureCollection', async function () {
      await load();
      const labelled = (value: number) => ({
        type: 'Feature',
        geometry: { type: 'Polygon', coordinates: [ring] },
        properties: { range: { type: 'time', value } },
      });
      ctx.sandbox.setFault('isoline', { status: 200, body: responseBody({ type: 'FeatureCollection', features: [labelled(600), labelled(300)] }) });
      const msg = await expectOutput('n1', request({ range: { type: 'time', value: [300, 600] } }));
      should(features(msg).map((f) => f.properties.range)).eql([
        { type: 'time', value: 600 },
        { type: 'time', value: 300 },
      ]);
    });

    it('reads a MultiPolygon and closes rings of geohash vertices', async function () {
      await load();
      const hashes = ['u33dc0', 'u33dc1', 'u33dc3'];
      ctx.sandbox.setFault('isoline', { status: 200, body: responseBody({ type: 'MultiPolygon', coordinates: [[hashes], [ring]] }) });
      const msg = await expectOutput('n1', request({ range: { type: 'time', value: [300, 600] } }));
      const [first, second] = features(msg);
      const decoded = hashes.map((h) => ngeohash.decode(h)).map((p) => [p.longitude, p.latitude]);
      should(first.geometry.coordinates).eql([[...decoded, decoded[0]]]);
      should(second.geometry.coordinates).eql([ring]);
      should([first, second].map((f) => f.properties.range)).eql([
        { type: 'time', value: 300 },
        { type: 'time', value: 600 },
      ]);
    });

    it('takes a result sent straight away for an asynchronous request', async function () {
      await load();
      ctx.sandbox.setFault('isoline', { status: 200, body: responseBody({ type: 'Polygon', coordinates: [ring] }) });
      const msg = await expectOutput('n1', request({ async: true }));
      should(features(msg)).have.length(1);
      should(ctx.sandbox.requests('isoline-job')).have.length(0);
    });

    it('reports a response with neither a result nor a job handle as BAD_RESPONSE', async function () {
      await load();
      ctx.sandbox.setFault('isoline', { status: 200, body: JSON.stringify({ status: 'accepted' }) });
      const { error } = await expectError('n1', request({ async: true }));
      should(error.code).equal('BAD_RESPONSE');
      should(error.message).match(/neither a result nor a job handle/);
    });

    it('reports an isoline without polygons as BAD_RESPONSE', async function () {
      await load();
      ctx.sandbox.setFault('isoline', { status: 200, body: responseBody({ type: 'Polygon', coordinates: [] }) });
      const { error } = await expectError('n1', request());
      should(error.code).equal('BAD_RESPONSE');
    });
  });

  it('reads request fields from global context and JSONata too', async function () {
    await load({
      origins: 'depot',
      originsType: 'global',
      rangeValue: '$sum([payload.a, payload.b])',
      rangeValueType: 'jsonata',
      rangeType: 'distance',
      rangeTypeType: 'fixed',
    });
    (helper.getNode('n1').context as () => { global: { set(key: string, value: unknown): void } })().global.set('depot', { lat: 50.1, lon: 8.68 });
    await expectOutput('n1', { payload: { a: 400, b: 600 } });
    should(lastBody(ctx.sandbox, 'isoline')).eql({
      async: false,
      origins: [{ type: 'coordinates', latitude: 50.1, longitude: 8.68 }],
      range: { type: 'distance', value: 1000 },
    });
  });

  describe('asynchronous jobs', function () {
    it('polls the job until the result arrives, showing progress', async function () {
      await load({ pollInterval: 0.02 });
      const msg = await expectOutput('n1', request({ async: true }));
      should(lastBody(ctx.sandbox, 'isoline').async).be.true();
      const polls = ctx.sandbox.requests('isoline-job');
      should(polls).have.length(JOB_POLLS);
      should(polls[0].path).match(/^\/v1\/routing\/isoline\/jobs\/job-[0-9a-f]+$/);
      should(polls[0].method).equal('GET');
      should(polls[0].headers['x-svc-project-id']).equal('sandbox-project');
      should(features(msg)).have.length(1);
      should((msg.payload as Fields).isoline).be.an.Object();
      // The job handle's message shows beside its status, and the last one in msg.jobs (issue 28).
      should(statusTexts('n1')).containEql('job pending: job accepted');
      should(statusTexts('n1').some((text) => /^job running: computing \(\d\/\d\) \(poll \d\)$/.test(text))).be.true();
      const polled = JOB_POLLS;
      should(msg.jobs).match([{ polls: polled, message: `computing (${polled - 1}/${polled})` }]);
    });

    it('counts many jobs in one status with the next poll, shown at most once a second, not one status per poll (issue 59)', async function () {
      this.timeout(60_000);
      // Polls a second apart: while one job's poll is shown, the others wait for theirs, even on a busy machine.
      await load({ pollInterval: 1 });
      const outputs: Fields[] = [];
      helper.getNode('n1').on('call:send', (call: { args: Fields[] }) => outputs.push(call.args[0]));
      const started = Date.now();
      // A one-minute range: quick to draw, so twelve at once stay within the request timeout on a busy machine.
      for (let i = 0; i < 12; i++) helper.getNode('n1').receive(request({ async: true, range: { type: 'time', value: 60 } }));
      await waitUntil(() => outputs.length === 12, 'every job to end', 50_000);
      const elapsedMs = Date.now() - started;
      // Each progress shown, with the node's next poll when one is due (not shown again for a change of the waiting count, which has its own pace).
      const shown = statusTexts('n1').filter((text) => /^\d+ runs( · next poll in \d+ s)?$/.test(text));
      should(shown.some((text) => /^1[0-2] runs · next poll in [01] s$/.test(text))).be.true(shown.join(' | '));
      // 12 jobs accepted and polled 3 times each: one status per change would be 48; once a second is
      // one per second the jobs took (more on a loaded machine), the first at once and the outcome when the last ends.
      // On a loaded machine polls also wait for the concurrency cap: each change of the waiting count shown
      // (`· 1 waiting`) is followed by the same progress without it, which counts apart from the progress's pace.
      const waitingShown = statusTexts('n1').filter((text) => /^\d+ runs( · next poll in \d+ s)? · /.test(text)).length;
      should(shown.length).be.belowOrEqual(Math.ceil(elapsedMs / 1000) + 2 + waitingShown, `${shown.join(' | ')} in ${elapsedMs} ms`);
    });

    it('shows a job message masked, on one line and short in the status (issue 28)', async function () {
      await load({ pollInterval: 0.02 });
      const said = `queued behind 3 jobs:\n Bearer eyJhbGciOiJIUzI1NiJ9.c2VjcmV0.sig ${'x'.repeat(400)}`;
      ctx.sandbox.setFault('isoline-job', { status: 200, body: JSON.stringify({ status: 'running', message: said }), times: 2 });
      await expectOutput('n1', request({ async: true }));
      const shown = statusTexts('n1').filter((text) => text.startsWith('job running: queued'));
      should(shown).eql(['job running: queued behind 3 jobs: Bearer *** xxxxxx… (poll 1)', 'job running: queued behind 3 jobs: Bearer *** xxxxxx… (poll 2)']);
    });

    it('survives a 503 while polling', async function () {
      await load({ pollInterval: 0.02 });
      ctx.sandbox.setFault('isoline-job', { status: 503, times: 1 });
      await expectOutput('n1', request({ async: true }));
    });

    it('waits out status requests failing beyond the retries of one request, saying so in its status', async function () {
      await load({ pollInterval: 0.02 });
      // One request and its two retries, then the first request after the job's wait.
      ctx.sandbox.setFault('isoline-job', { status: 503, times: 4 });
      const msg = await expectOutput('n1', request({ async: true }));
      should(features(msg)).have.length(1);
      should(statusTexts('n1')).containEql('job waiting out a platform outage (SERVER), next try in 1 s');
    });

    it('ends a job whose status reads as failed with JOB_FAILED', async function () {
      await load({ pollInterval: 0.02 });
      jobsOf(ctx.sandbox, 'isoline').failNext = 'no road network near the origin';
      const { error } = await expectError('n1', request({ async: true }));
      should(error.code).equal('JOB_FAILED');
      should(error.message).match(/failed.*no road network near the origin/);
    });

    it('gives up after the maximum wait with TIMEOUT', async function () {
      const jobPolls = ctx.sandbox.options.jobPolls;
      ctx.sandbox.options.jobPolls = 1000;
      try {
        await load({ pollInterval: 0.02, maxWait: 0.3 });
        const { error } = await expectError('n1', request({ async: true }));
        should(error.code).equal('TIMEOUT');
      } finally {
        ctx.sandbox.options.jobPolls = jobPolls;
      }
    });

    cancelledJobTests({
      ctx,
      type: 'svc-isoline',
      endpoint: 'isoline',
      jobEndpoint: 'isoline-job',
      node: isolineNode({ pollInterval: 0.02 }),
      msg: () => request({ async: true }),
    });
  });

  describe('bad input is refused before any request', function () {
    refusalTests(ctx, () => load(), 'isoline', [
      ['no origins', { payload: { range: { type: 'time', value: 60 } } }, /no origins/],
      ['a latitude out of range', request({ origins: [berlin, { lat: 91, lon: 10 }] }), /origin 2: latitude 91 out of range/],
      ['a longitude out of range', request({ origins: [{ lat: 10, lon: -181 }] }), /origin 1: longitude -181 out of range/],
      ['a geohash outside the alphabet', request({ origins: ['u33dl'] }), /origin 1: "u33dl" is not a geohash/],
      ['a GeoJSON polygon', request({ origins: [{ type: 'Polygon', coordinates: [] }] }), /origin 1: a GeoJSON Polygon is not a point/],
      ['a bad Location object', request({ origins: [{ type: 'coordinates', latitude: '52', longitude: 13 }] }), /origin 1: latitude must be a number/],
      ['no range type', request({ range: { value: 60 } }), /range.type is required/],
      ['an unknown range type', request({ range: { type: 'Time', value: 60 } }), /range.type: "Time" is not one of distance, time/],
      ['no range value', request({ range: { type: 'time' } }), /range.value is required/],
      ['a negative range value', request({ range: { type: 'time', value: -5 } }), /range.value: -5 must be a number greater than 0/],
      ['an unknown mode', request({ mode: 'quick' }), /mode: "quick" is not one of short, fast/],
      ['an unknown transport mode', request({ transportMode: ['bicycle'] }), /transportMode: "bicycle" is not one of car, truck, pedestrian/],
      ['an unknown feature to avoid', request({ avoid: ['highway'] }), /avoid: "highway" is not one of/],
      ['an unknown optimizeFor', request({ optimizeFor: 'speed' }), /optimizeFor: "speed" is not one of quality, performance, balanced/],
      ['a shape of 30', request({ shape: 30 }), /shape: 30 must be a whole number greater than 30/],
      ['a fractional shape', request({ shape: 100.5 }), /shape: 100.5 must be a whole number/],
      ['a non-boolean async', request({ async: 'yes' }), /async: expected true or false/],
    ]);
  });

  describe('the sandbox endpoint', function () {
    const origin = { type: 'coordinates', latitude: 52.5, longitude: 13.4 };
    const valid = { async: false, origins: [origin], range: { type: 'time', value: 300 } };
    const post = (body: unknown, headers: Record<string, string> = PROJECT_HEADERS) => ({ path: '/v1/routing/isoline', headers, body });
    sandboxRefusals(ctx, [
      ['a body that is not JSON', post('{"async":'), 400, /not valid JSON/],
      ['a missing async', post({ origins: [origin], range: { type: 'time', value: 300 } }), 400, /async is required/],
      ['an unknown member', post({ ...valid, origin: origin }), 400, /unknown member "origin"/],
      ['an empty origins list', post({ ...valid, origins: [] }), 400, /origins is required/],
      ['a Location object with lat/lon names', post({ ...valid, origins: [{ type: 'coordinates', lat: 52.5, lon: 13.4 }] }), 400, /unknown member "lat"/],
      [
        'a Location object with a member beyond the spec',
        post({ ...valid, origins: [{ ...origin, name: 'Depot' }] }),
        400,
        /origins\[0\]: unknown member "name"/,
      ],
      [
        'a geohash Location object with a member beyond the spec',
        post({ ...valid, origins: [{ type: 'geohash', geohash: 'u33db', latitude: 52.5 }] }),
        400,
        /unknown member "latitude"/,
      ],
      ['a geohash with the letter l', post({ ...valid, origins: [{ type: 'geohash', geohash: 'u33dl' }] }), 400, /must be a geohash/],
      ['a latitude out of range', post({ ...valid, origins: [{ ...origin, latitude: 91 }] }), 400, /latitude 91 out of range/],
      ['an unknown range type', post({ ...valid, range: { type: 'energy', value: 5 } }), 400, /range.type must be one of distance, time/],
      ['a range value of zero', post({ ...valid, range: { type: 'time', value: 0 } }), 400, /greater than 0/],
      ['an unknown mode', post({ ...valid, mode: 'Fast' }), 400, /mode must be one of short, fast/],
      ['a transport mode that is not an array', post({ ...valid, transportMode: 'car' }), 400, /transportMode must be a non-empty array/],
      ['avoid with two members', post({ ...valid, avoid: { features: ['ferry'], more: ['tunnel'] } }), 400, /exactly one member/],
      ['an unknown feature to avoid', post({ ...valid, avoid: { features: ['toll'] } }), 400, /must be one of tollRoad/],
      ['an unknown optimizeFor', post({ ...valid, optimizeFor: 'speed' }), 400, /optimizeFor must be one of/],
      ['a shape of 30', post({ ...valid, shape: 30 }), 400, /shape must be a whole number greater than 30/],
      [
        'an origin in Japan',
        post({ ...valid, origins: [{ type: 'coordinates', latitude: 43.06, longitude: 141.35 }] }),
        400,
        /not available in the Japan region/,
      ],
      [
        'a key without the isoline permission',
        post(valid, { ...PROJECT_HEADERS, 'x-svc-api-key': 'sandbox-geocode-only-key' }),
        401,
        /may not call the isoline endpoints/,
      ],
      ['a wrong project', post(valid, { ...PROJECT_HEADERS, 'x-svc-project-id': 'other' }), 401, /x-svc-project-id/],
      ['an unknown job', { method: 'GET', path: '/v1/routing/isoline/jobs/job-0', headers: PROJECT_HEADERS }, 404, /no such isoline job/],
    ]);

    it('responds with "running" until the job has been polled jobPolls times, then with the result', async function () {
      const handle = await callSandbox(ctx.sandbox, 'POST', '/v1/routing/isoline', PROJECT_HEADERS, { ...valid, async: true });
      should(handle.status).equal(200);
      should(Object.keys(handle.body).sort()).eql(['jobId', 'message', 'status']);
      const responses = [];
      for (let i = 0; i < JOB_POLLS; i++) {
        responses.push((await callSandbox(ctx.sandbox, 'GET', `/v1/routing/isoline/jobs/${String(handle.body.jobId)}`, PROJECT_HEADERS)).body);
      }
      should(responses.slice(0, -1).map((a) => a.status)).matchEach('running');
      should(responses[responses.length - 1]).have.properties(['origin', 'range', 'mode', 'transportMode', 'isoline']);
    });
  });

  describe('faults', function () {
    faultTests({ ctx, type: 'svc-isoline', endpoint: 'isoline', node: isolineNode(), msg: () => request() });
  });
});
