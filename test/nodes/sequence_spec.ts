import should from 'should';
import ngeohash from 'ngeohash';
import { expectError, expectOutput, helper, loadWithSandbox, useSandbox, Fields } from '../support/harness';
import { jobsOf } from '../../sandbox/routing';
import { townOf } from '../../sandbox/town/index';
import { matrix } from '../../sandbox/town/sequence';
import { PROJECT_HEADERS, bodies, cancelledJobTests, faultTests, lastBody, refusalTests, sandboxRefusals, statusTexts } from '../support/routing-nodes';

type Feature = { geometry: { type: string; coordinates: unknown }; properties: Fields };

/** Stops on an east-west line: visiting them from the first in order of longitude is optimal. */
const LINE_LONGITUDES = [13.3, 13.34, 13.31, 13.33, 13.32];
const line = LINE_LONGITUDES.map((lon) => ({ lat: 52.5, lon }));
const LINE_ORDER = [0, 2, 4, 3, 1];

/** Polls a job takes in this suite (the sandbox's test knob; the platform-like default is by the clock). */
const JOB_POLLS = 3;

describe('svc-sequence', function () {
  const ctx = useSandbox({ jobPolls: JOB_POLLS });
  const sequenceNode = (extra: Fields = {}) => ({ id: 'n1', type: 'svc-sequence', ...extra });
  const load = (extra: Fields = {}) => loadWithSandbox(ctx.sandbox, { types: ['svc-sequence'], nodes: [sequenceNode(extra)] });
  const request = (extra: Fields = {}) => ({ payload: { waypoints: line, ...extra } });
  const features = (msg: Fields) => (msg.geojson as { features: Feature[] }).features;

  it('sends the spec body to the project path and outputs the optimal order with GeoJSON', async function () {
    await load();
    const msg = await expectOutput('n1', request());
    const [sent] = ctx.sandbox.requests('sequence');
    should(sent.method).equal('POST');
    should(sent.path).equal('/v1/routing/sequence/sandbox-project');
    should(sent.headers['x-svc-project-id']).equal('sandbox-project');
    should(sent.headers['x-svc-api-key']).equal('sandbox-api-key');
    should(JSON.parse(sent.body)).eql({
      async: false,
      waypoints: line.map((p) => ({ type: 'coordinates', latitude: p.lat, longitude: p.lon })),
    });
    should(msg.order).eql(LINE_ORDER);
    should(msg.statusCode).equal(200);
    const all = features(msg);
    const points = all.filter((f) => f.geometry.type === 'Point');
    const legs = all.filter((f) => f.geometry.type === 'LineString');
    should(points.map((f) => f.geometry.coordinates)).eql(LINE_ORDER.map((i) => [line[i].lon, line[i].lat]));
    should(points.map((f) => f.properties.input)).eql(LINE_ORDER);
    should(points[0].properties).containEql({ position: 0, from: 'start' });
    should(legs).have.length(4);
    should(legs[0].geometry.coordinates).eql([
      [line[0].lon, line[0].lat],
      [line[2].lon, line[2].lat],
    ]);
    should(legs[0].properties).eql({ leg: 0, fromInput: 0, toInput: 2 });
  });

  it('finds the optimal order of a small scattered set, by time and by distance', async function () {
    const stops = [
      { lat: 52.5, lon: 13.4 },
      { lat: 52.51, lon: 13.4 },
      { lat: 52.502, lon: 13.41 },
      { lat: 52.506, lon: 13.405 },
      { lat: 52.509, lon: 13.418 },
      { lat: 52.504, lon: 13.42 },
    ];
    await load();
    for (const routeMode of ['fastest', 'shortest'] as const) {
      const msg = await expectOutput('n1', { payload: { waypoints: stops, routeMode } });
      should(msg.order).eql(bruteForceOrder(stops, routeMode));
    }
  });

  it('reads msg.payload as the waypoints when it is an array of locations, keeping marker names', async function () {
    await load();
    const markers = line.map((p, i) => ({ name: `stop ${i}`, ...p }));
    const msg = await expectOutput('n1', { payload: markers });
    should(msg.order).eql(LINE_ORDER);
    const names = features(msg)
      .filter((f) => f.geometry.type === 'Point')
      .map((f) => f.properties.name);
    should(names).eql(LINE_ORDER.map((i) => `stop ${i}`));
  });

  it("sends given Location objects with the spec's members only (issue 51 point 9)", async function () {
    await load();
    const waypoints = line.map((p, i) => ({ type: 'coordinates', latitude: p.lat, longitude: p.lon, name: `stop ${i}`, transportMode: ['car'] }));
    const msg = await expectOutput('n1', { payload: { waypoints } });
    should(lastBody(ctx.sandbox, 'sequence').waypoints).eql(line.map((p) => ({ type: 'coordinates', latitude: p.lat, longitude: p.lon })));
    should(msg.order).eql(LINE_ORDER);
  });

  it('matches returned geohashes to inputs of any geohash length', async function () {
    await load({ waypointFormat: 'geohash', precision: 7 });
    const msg = await expectOutput('n1', request());
    should(lastBody(ctx.sandbox, 'sequence').waypoints).eql(line.map((p) => ({ type: 'geohash', geohash: ngeohash.encode(p.lat, p.lon, 7) })));
    should(msg.order).eql(LINE_ORDER);
    const long = line.map((p) => ngeohash.encode(p.lat, p.lon, 11));
    const fromLong = await expectOutput('n1', { payload: { waypoints: long } });
    should(fromLong.order).eql(LINE_ORDER);
  });

  it('matches a returned point rounded into a neighbouring cell to the nearest input, and leaves strangers null', async function () {
    await load();
    const stops = [
      { lat: 52.5, lon: 13.3 },
      { lat: 52.5, lon: 13.31 },
    ];
    const neighbour = ngeohash.neighbor(ngeohash.encode(52.5, 13.31, 8), [0, 1]);
    const response = {
      description: 'd',
      distance: 1,
      time: 1,
      waypoints: [{ location: ngeohash.encode(52.5, 13.3, 8) }, { location: neighbour }, { location: 's00000' }],
    };
    ctx.sandbox.setFault('sequence', { status: 200, body: JSON.stringify(response) });
    const msg = await expectOutput('n1', { payload: { waypoints: stops } });
    should(msg.order).eql([0, 1, null]);
    should(features(msg).filter((f) => f.geometry.type === 'Point')).have.length(3);
  });

  it('maps repeated places to distinct inputs', async function () {
    await load();
    const stops = [line[0], line[1], line[1], line[2]];
    const msg = await expectOutput('n1', { payload: { waypoints: stops } });
    const order = msg.order as number[];
    should([...order].sort()).eql([0, 1, 2, 3]);
    should(order[0]).equal(0);
  });

  it('puts every enum value on the wire unchanged', async function () {
    await load();
    for (const transportMode of [['car'], ['truck'], ['carHOV'], ['bicycle'], ['pedestrian']]) await expectOutput('n1', request({ transportMode }));
    for (const routeMode of ['fastest', 'shortest']) await expectOutput('n1', request({ routeMode }));
    const sent = bodies(ctx.sandbox, 'sequence');
    should(sent.map((b) => b.transportMode).filter(Boolean)).eql([['car'], ['truck'], ['carHOV'], ['bicycle'], ['pedestrian']]);
    should(sent.map((b) => b.routeMode).filter(Boolean)).eql(['fastest', 'shortest']);
  });

  it('leaves empty lists and empty strings off the wire', async function () {
    await load();
    await expectOutput('n1', request({ transportMode: [], avoid: [], departure: '', routeMode: '' }));
    should(lastBody(ctx.sandbox, 'sequence')).only.have.keys('async', 'waypoints');
  });

  describe('departure', function () {
    const local = (d: Date) =>
      `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
    const cases: Array<[string, unknown, string, string]> = [
      ['a zone-less ISO string, kept as written', '2025-06-01T08:30', 'local', '2025-06-01T08:30:00'],
      ['a zone-less ISO string, kept as written with a zone too', '2025-06-01T08:30', 'zoned', '2025-06-01T08:30:00'],
      ['a zoned ISO string, in UTC with Z', '2025-06-01T08:30:00+02:00', 'zoned', '2025-06-01T06:30:00Z'],
      ['an epoch in milliseconds, in UTC with Z', Date.UTC(2025, 5, 1, 6, 30), 'zoned', '2025-06-01T06:30:00Z'],
      ['an epoch in seconds, in UTC with Z', Date.UTC(2025, 5, 1, 6, 30) / 1000, 'zoned', '2025-06-01T06:30:00Z'],
      ['a Date, in UTC with Z', new Date(Date.UTC(2025, 5, 1, 6, 30, 15)), 'zoned', '2025-06-01T06:30:15Z'],
      ['a Date, in host local time', new Date(Date.UTC(2025, 5, 1, 6, 30, 15)), 'local', local(new Date(Date.UTC(2025, 5, 1, 6, 30, 15)))],
      ['a zoned ISO string, in host local time', '2025-06-01T06:30:00Z', 'local', local(new Date(Date.UTC(2025, 5, 1, 6, 30)))],
    ];
    for (const [what, departure, format, expected] of cases) {
      it(`writes ${what}`, async function () {
        await load({ departureFormat: format, version: 2 });
        await expectOutput('n1', request({ departure }));
        should(lastBody(ctx.sandbox, 'sequence').departure).equal(expected);
      });
    }

    it('writes an instant in UTC with Z by default, and for a node saved before version 2 with local time', async function () {
      for (const extra of [{}, { version: 1, departureFormat: 'local' }, { departureFormat: 'local' }]) {
        await load(extra);
        await expectOutput('n1', request({ departure: Date.UTC(2025, 5, 1, 6, 30) }));
        should(lastBody(ctx.sandbox, 'sequence').departure).equal('2025-06-01T06:30:00Z', JSON.stringify(extra));
        await helper.unload();
      }
    });
  });

  it('sends avoid boxes as {minLat, minLng, maxLat, maxLng} from any accepted form', async function () {
    await load();
    await expectOutput(
      'n1',
      request({
        avoid: [
          { minLat: 52.4, minLng: 13.2, maxLat: 52.45, maxLng: 13.25 },
          { minLat: 52.6, minLon: 13.5, maxLat: 52.7, maxLon: 13.6 },
          '52.8,13.7,52.9,13.8',
        ],
      }),
    );
    should(lastBody(ctx.sandbox, 'sequence').avoid).eql([
      { minLat: 52.4, minLng: 13.2, maxLat: 52.45, maxLng: 13.25 },
      { minLat: 52.6, minLng: 13.5, maxLat: 52.7, maxLng: 13.6 },
      { minLat: 52.8, minLng: 13.7, maxLat: 52.9, maxLng: 13.8 },
    ]);
  });

  it('lets values fixed in the editor win over the message', async function () {
    await load({
      waypoints: JSON.stringify(line.slice(0, 3)),
      waypointsType: 'json',
      async: 'false',
      asyncType: 'bool',
      departure: '2025-07-01T09:00:00',
      departureType: 'str',
      transportMode: 'bicycle,pedestrian',
      transportModeType: 'fixed',
      avoid: '[{"minLat":1,"minLng":2,"maxLat":3,"maxLng":4}]',
      avoidType: 'json',
      routeMode: 'shortest',
      routeModeType: 'fixed',
    });
    await expectOutput('n1', request({ async: true, departure: '2030-01-01T00:00:00', transportMode: ['car'], avoid: [], routeMode: 'fastest' }));
    should(lastBody(ctx.sandbox, 'sequence')).eql({
      async: false,
      waypoints: line.slice(0, 3).map((p) => ({ type: 'coordinates', latitude: p.lat, longitude: p.lon })),
      departure: '2025-07-01T09:00:00',
      transportMode: ['bicycle', 'pedestrian'],
      avoid: [{ minLat: 1, minLng: 2, maxLat: 3, maxLng: 4 }],
      routeMode: 'shortest',
    });
  });

  describe('with a project id that needs encoding', function () {
    const odd = useSandbox({ projectId: 'team a/b' });
    it('URL-encodes the project id in the request and job paths', async function () {
      await loadWithSandbox(odd.sandbox, { types: ['svc-sequence'], nodes: [sequenceNode({ pollInterval: 0.02 })], config: { projectId: 'team a/b' } });
      await expectOutput('n1', request({ async: true }));
      should(odd.sandbox.requests('sequence')[0].path).equal('/v1/routing/sequence/team%20a%2Fb');
      should(odd.sandbox.requests('sequence-job')[0].path).match(/^\/v1\/routing\/sequence\/async\/team%20a%2Fb\/jobs\/job-[0-9a-f]+$/);
    });
  });

  describe('asynchronous jobs', function () {
    it('polls the job until the result arrives, showing progress', async function () {
      await load({ pollInterval: 0.02 });
      const msg = await expectOutput('n1', request({ async: true }));
      should(lastBody(ctx.sandbox, 'sequence').async).be.true();
      const polls = ctx.sandbox.requests('sequence-job');
      should(polls).have.length(JOB_POLLS);
      should(polls[0].path).match(/^\/v1\/routing\/sequence\/async\/sandbox-project\/jobs\/job-[0-9a-f]+$/);
      should(polls[0].headers['x-svc-project-id']).equal('sandbox-project');
      should(msg.order).eql(LINE_ORDER);
      // The job handle's message shows beside its status, and the last one in msg.jobs (issue 28).
      should(statusTexts('n1')).containEql('job pending: job accepted');
      should(statusTexts('n1').some((text) => /^job running: computing \(\d\/\d\) \(poll \d\)$/.test(text))).be.true();
      const polled = JOB_POLLS;
      should(msg.jobs).match([{ polls: polled, message: `computing (${polled - 1}/${polled})` }]);
    });

    it('ends a job whose status reads as failed with JOB_FAILED', async function () {
      await load({ pollInterval: 0.02 });
      jobsOf(ctx.sandbox, 'sequence').failNext = 'waypoints unreachable';
      const { error } = await expectError('n1', request({ async: true }));
      should(error.code).equal('JOB_FAILED');
      should(error.message).match(/waypoints unreachable/);
    });

    cancelledJobTests({
      ctx,
      type: 'svc-sequence',
      endpoint: 'sequence',
      jobEndpoint: 'sequence-job',
      node: sequenceNode({ pollInterval: 0.02 }),
      msg: () => request({ async: true }),
    });
  });

  describe('bad input is refused before any request', function () {
    refusalTests(ctx, () => load(), 'sequence', [
      ['no waypoints', { payload: { routeMode: 'fastest' } }, /no waypoints/],
      ['an empty list', { payload: { waypoints: [] } }, /waypoints: the list is empty/],
      ['a latitude out of range', request({ waypoints: [line[0], line[1], { lat: 91, lon: 13 }] }), /waypoint 3: latitude 91 out of range/],
      [
        'a plain array',
        request({
          waypoints: [
            [13.4, 52.5],
            [13.5, 52.5],
          ],
        }),
        /waypoint 1: a plain array is ambiguous/,
      ],
      ['an unreadable departure', request({ departure: 'tomorrow morning' }), /departure: expected a Date, an epoch or an ISO 8601 date-time/],
      ['a departure that does not exist', request({ departure: '2025-02-30T08:00:00' }), /departure: 2025-02-30T08:00:00 is not a valid date/],
      [
        'an unknown transport mode',
        request({ transportMode: ['wheelchair'] }),
        /transportMode: "wheelchair" is not one of car, truck, carHOV, bicycle, pedestrian/,
      ],
      ['an unknown route mode', request({ routeMode: 'quickest' }), /routeMode: "quickest" is not one of fastest, shortest/],
      [
        'an avoid box with min not below max',
        request({
          avoid: [
            { minLat: 1, minLng: 2, maxLat: 3, maxLng: 4 },
            { minLat: 5, minLng: 2, maxLat: 4, maxLng: 4 },
          ],
        }),
        /avoid box 2: minLat 5 must be less than maxLat 4/,
      ],
      [
        'an avoid box out of range',
        request({ avoid: { minLat: 1, minLng: 2, maxLat: 3, maxLng: 200 } }),
        /avoid box 1 \(maximum corner\): longitude 200 out of range/,
      ],
      ['an avoid box of the wrong shape', request({ avoid: [[1, 2, 3, 4]] }), /avoid box 1: expected \{minLat, minLng, maxLat, maxLng\}/],
    ]);
  });

  describe('the sandbox endpoint', function () {
    const stop = { type: 'coordinates', latitude: 52.5, longitude: 13.4 };
    const valid = { async: false, waypoints: [stop, stop] };
    const post = (body: unknown, path = '/v1/routing/sequence/sandbox-project') => ({ path, headers: PROJECT_HEADERS, body });
    sandboxRefusals(ctx, [
      ['a missing async', post({ waypoints: [stop] }), 400, /async is required/],
      ['an unknown member', post({ ...valid, mode: 'car' }), 400, /unknown member "mode"/],
      ['a departure with milliseconds', post({ ...valid, departure: '2025-06-01T08:00:00.000Z' }), 400, /departure must be yyyy-MM-dd'T'HH:mm:ss/],
      ['a departure without seconds', post({ ...valid, departure: '2025-06-01T08:00' }), 400, /departure must be/],
      [
        'an unknown transport mode',
        post({ ...valid, transportMode: ['wheelchair'] }),
        400,
        /transportMode\[0\] must be one of car, truck, carHOV, bicycle, pedestrian/,
      ],
      ['an avoid box with lon names', post({ ...valid, avoid: [{ minLat: 1, minLon: 2, maxLat: 3, maxLon: 4 }] }), 400, /unknown member "minLon"/],
      ['an avoid box with min above max', post({ ...valid, avoid: [{ minLat: 3, minLng: 2, maxLat: 1, maxLng: 4 }] }), 400, /must be less than/],
      ['an unknown route mode', post({ ...valid, routeMode: 'quickest' }), 400, /routeMode must be one of fastest, shortest/],
      ['another project in the path', post(valid, '/v1/routing/sequence/other'), 401, /project in the path/],
      [
        'an unknown job',
        { method: 'GET', path: '/v1/routing/sequence/async/sandbox-project/jobs/job-0', headers: PROJECT_HEADERS },
        404,
        /no such sequence job/,
      ],
    ]);
  });

  describe('faults', function () {
    faultTests({ ctx, type: 'svc-sequence', endpoint: 'sequence', node: sequenceNode(), msg: () => request() });
  });
});

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/**
 * The order from the first stop minimising the summed leg cost, by trying every order on the legs of
 * the sandbox's town (its matrix of street distances and times; the order it returns is its own search).
 */
function bruteForceOrder(stops: Array<{ lat: number; lon: number }>, routeMode: 'fastest' | 'shortest'): number[] {
  const legs = matrix(townOf(), { points: stops.map((p): [number, number] => [p.lon, p.lat]), mode: 'car', preference: routeMode, avoid: [], traffic: 1 });
  const cost = (a: number, b: number) => (routeMode === 'shortest' ? legs.meters : legs.seconds)[a][b];
  let best: { order: number[]; total: number } = { order: [], total: Infinity };
  const permute = (order: number[], rest: number[], total: number) => {
    if (rest.length === 0) {
      if (total < best.total) best = { order, total };
      return;
    }
    for (const next of rest)
      permute(
        [...order, next],
        rest.filter((r) => r !== next),
        total + cost(order[order.length - 1], next),
      );
  };
  permute([0], stops.map((_s, i) => i).slice(1), 0);
  return best.order;
}
