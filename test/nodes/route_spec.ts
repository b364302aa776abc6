import should from 'should';
import ngeohash from 'ngeohash';
import { expectError, expectOutput, loadWithSandbox, useSandbox, Fields } from '../support/harness';
import { PROJECT_HEADERS, VPM_HEADERS, bodies, faultTests, lastBody, refusalTests, sandboxRefusals } from '../support/routing-nodes';

type Feature = { geometry: { type: string; coordinates: number[][] | number[] } | null; properties: Fields };
type Segment = Fields & { firstPoint: number; lastPoint: number; text: string; roadName: string; length: number; duration: number };

describe('svc-route', function () {
  const ctx = useSandbox();
  const routeNode = (extra: Fields = {}) => ({ id: 'n1', type: 'svc-route', ...extra });
  const load = (extra: Fields = {}) => loadWithSandbox(ctx.sandbox, { types: ['svc-route'], nodes: [routeNode(extra)] });
  const from = { lat: 52.52, lon: 13.405 };
  const to = { lat: 52.5, lon: 13.38 };
  const request = (extra: Fields = {}) => ({ payload: { waypoints: [from, to], ...extra } });
  const features = (msg: Fields) => (msg.geojson as { type: string; features: Feature[] }).features;

  it('sends point waypoints as "longitude,latitude" with the VPM headers, and outputs GeoJSON, instructions and a summary', async function () {
    await load();
    const msg = await expectOutput('n1', request());
    const [sent] = ctx.sandbox.requests('route');
    should(sent.method).equal('POST');
    should(sent.path).equal('/v1/routing');
    should(sent.headers['x-svc-vpm-id']).equal('sandbox-project');
    should(sent.headers['x-svc-api-key']).equal('sandbox-api-key');
    should(sent.headers).not.have.property('x-svc-project-id');
    should(JSON.parse(sent.body)).eql({
      waypoints: [
        { type: 'point', coordinates: '13.405,52.52' },
        { type: 'point', coordinates: '13.38,52.5' },
      ],
    });
    should(msg.statusCode).equal(200);

    const route = msg.payload as { overview: { linestring: string[] }; segments: Segment[] };
    const [whole, ...segmentFeatures] = features(msg);
    const line = whole.geometry?.coordinates as number[][];
    should(whole.geometry?.type).equal('LineString');
    should(line).have.length(route.overview.linestring.length);
    const decoded = ngeohash.decode(route.overview.linestring[3]);
    should(line[3]).eql([decoded.longitude, decoded.latitude]);
    // The line runs from the street point nearest the start to the one nearest the end (the sandbox's town has a street every ~200 m).
    should(line[0][0]).be.approximately(from.lon, 0.003);
    should(line[0][1]).be.approximately(from.lat, 0.002);
    should(line[line.length - 1][0]).be.approximately(to.lon, 0.003);
    should(line[line.length - 1][1]).be.approximately(to.lat, 0.002);

    should(segmentFeatures).have.length(route.segments.length);
    route.segments.forEach((segment, i) => {
      const geometry = segmentFeatures[i].geometry;
      const slice = line.slice(segment.firstPoint, segment.lastPoint + 1);
      if (slice.length === 1) should(geometry).eql({ type: 'Point', coordinates: slice[0] });
      else should(geometry).eql({ type: 'LineString', coordinates: slice });
      should(segmentFeatures[i].properties).containEql({ segment: i, text: segment.text });
    });

    const instructions = msg.instructions as string[];
    should(instructions).have.length(route.segments.length);
    should(route.segments[0].text).match(/<span[^>]*>.*&amp;.*&nbsp;/);
    for (const text of instructions) should(text).not.match(/[<>]|&\w+;|&#/);
    should(instructions[0]).match(/^Head (east|west|north|south) on .+ & follow it for \d+ m$/);
    route.segments.slice(0, -1).forEach((segment, i) => should(instructions[i]).containEql(` on ${segment.roadName} & `));
    should(msg.summary).eql({
      length: route.segments.reduce((sum, s) => sum + s.length, 0),
      duration: route.segments.reduce((sum, s) => sum + s.duration, 0),
      segments: route.segments.length,
    });
  });

  it('writes tiny and negative coordinates without exponent notation, longitude first', async function () {
    await load();
    await expectOutput(
      'n1',
      request({
        waypoints: [
          { lat: -0.0000001, lon: 0.0000001 },
          { lat: -0.0123, lon: -0.0456 },
        ],
      }),
    );
    should(lastBody(ctx.sandbox, 'route').waypoints).eql([
      { type: 'point', coordinates: '0.0000001,-0.0000001' },
      { type: 'point', coordinates: '-0.0456,-0.0123' },
    ]);
  });

  it('turns every accepted location form into a spec waypoint object', async function () {
    await load();
    const geohash = ngeohash.encode(52.51, 13.39, 9);
    await expectOutput('n1', {
      payload: {
        waypoints: [
          { latitude: 52.52, longitude: 13.405 },
          { lat: 52.515, lng: 13.4 },
          { type: 'Feature', geometry: { type: 'Point', coordinates: [13.395, 52.512] }, properties: {} },
          geohash,
          { type: 'coordinates', latitude: 52.505, longitude: 13.385 },
          { type: 'geohash', geohash: 'u33d8' },
          { type: 'point', geohash: 'u33d9b' },
          { name: 'van', lat: 52.5, lon: 13.38 },
        ],
      },
    });
    should(lastBody(ctx.sandbox, 'route').waypoints).eql([
      { type: 'point', coordinates: '13.405,52.52' },
      { type: 'point', coordinates: '13.4,52.515' },
      { type: 'point', coordinates: '13.395,52.512' },
      { type: 'geohash', geohash },
      { type: 'point', coordinates: '13.385,52.505' },
      { type: 'geohash', geohash: 'u33d8' },
      { type: 'point', geohash: 'u33d9b' },
      { type: 'point', coordinates: '13.38,52.5' },
    ]);
  });

  it('reads msg.payload as the waypoints when it is an array of locations', async function () {
    await load();
    await expectOutput('n1', { payload: [from, to] });
    should(lastBody(ctx.sandbox, 'route').waypoints).have.length(2);
  });

  describe('indoor and outdoor', function () {
    const indoorA = { venueId: 'central-mall', unitId: 'unit-12' };
    const indoorB = { type: 'indoor', venueId: 'central-mall', unitId: 'unit-40' };
    const combinations: Array<[string, Fields[], string[]]> = [
      ['outdoor to outdoor', [from, to], ['point', 'point']],
      ['indoor to indoor', [indoorA, indoorB], ['indoor', 'indoor']],
      ['indoor to outdoor', [indoorA, to], ['indoor', 'point']],
      ['outdoor to indoor', [from, indoorB], ['point', 'indoor']],
    ];
    for (const [what, waypoints, types] of combinations) {
      it(`routes ${what}`, async function () {
        await load();
        const msg = await expectOutput('n1', { payload: { waypoints } });
        const sent = lastBody(ctx.sandbox, 'route').waypoints as Fields[];
        should(sent.map((w) => w.type)).eql(types);
        for (const waypoint of sent.filter((w) => w.type === 'indoor')) should(waypoint).have.property('venueId', 'central-mall');
        should((msg.instructions as string[]).length).be.above(0);
        should(features(msg)[0].geometry?.type).equal('LineString');
      });
    }

    it('routes to an indoor waypoint given by its unitId alone, which node and sandbox both accept (the spec requires no combination; issue 28)', async function () {
      await load();
      const msg = await expectOutput('n1', { payload: { waypoints: [from, { type: 'indoor', unitId: 'unit-40' }] } });
      should(lastBody(ctx.sandbox, 'route').waypoints).match({ 1: { type: 'indoor', unitId: 'unit-40' } });
      should((lastBody(ctx.sandbox, 'route').waypoints as Fields[])[1]).not.have.property('venueId');
      should(msg.statusCode).equal(200);
      should(features(msg)[0].geometry?.type).equal('LineString');
    });
  });

  it('gives each waypoint its own transport mode, the configured one as default, every value unchanged', async function () {
    await load({ transportMode: 'car', transportModeType: 'fixed' });
    await expectOutput('n1', {
      payload: {
        waypoints: [
          { ...from, transportMode: ['pedestrian'] },
          { type: 'point', coordinates: '13.39,52.51', transportMode: ['wheelchair'] },
          { lat: 52.505, lon: 13.385, transportMode: 'bicycle' },
          { type: 'geohash', geohash: 'u33d8', transportMode: ['carHOV'] },
          { venueId: 'depot', transportMode: ['truck'] },
          to,
        ],
      },
    });
    should((lastBody(ctx.sandbox, 'route').waypoints as Fields[]).map((w) => w.transportMode)).eql([
      ['pedestrian'],
      ['wheelchair'],
      ['bicycle'],
      ['carHOV'],
      ['truck'],
      ['car'],
    ]);
  });

  it('sends both preferences unchanged', async function () {
    await load();
    for (const preference of ['fastest', 'shortest']) await expectOutput('n1', request({ preference }));
    should(bodies(ctx.sandbox, 'route').map((b) => b.preference)).eql(['fastest', 'shortest']);
  });

  describe('arriveBy and departAt', function () {
    const cases: Array<[string, unknown, string]> = [
      ['a date-time with offset', '2025-06-01T08:30:00+02:00', '2025-06-01T08:30:00+02:00'],
      ['a date-time in UTC with fraction', '2025-06-01T08:30:00.250Z', '2025-06-01T08:30:00.250Z'],
      ['a local date-time without seconds', '2025-06-01T08:30', '2025-06-01T08:30:00'],
      ['a full-date', '2025-06-01', '2025-06-01'],
      ['a partial-time', '08:30', '08:30:00'],
      ['a Date', new Date(Date.UTC(2025, 5, 1, 6, 30)), '2025-06-01T06:30:00Z'],
      ['an epoch', Date.UTC(2025, 5, 1, 6, 30), '2025-06-01T06:30:00Z'],
    ];
    for (const [what, value, expected] of cases) {
      it(`writes ${what} as RFC 3339`, async function () {
        await load();
        await expectOutput('n1', request({ departAt: value }));
        await expectOutput('n1', request({ arriveBy: value }));
        const [depart, arrive] = bodies(ctx.sandbox, 'route');
        should(depart.departAt).equal(expected);
        should(depart).not.have.property('arriveBy');
        should(arrive.arriveBy).equal(expected);
        should(arrive).not.have.property('departAt');
      });
    }
  });

  it('sends avoid as "minLat,minLon,maxLat,maxLon" from a string or an object', async function () {
    await load();
    await expectOutput('n1', request({ avoid: '52.51, 13.39, 52.515, 13.395' }));
    await expectOutput('n1', request({ avoid: { minLat: 52.51, minLng: 13.39, maxLat: 52.515, maxLng: 13.395 } }));
    should(bodies(ctx.sandbox, 'route').map((b) => b.avoid)).eql(['52.51,13.39,52.515,13.395', '52.51,13.39,52.515,13.395']);
  });

  it('lets values fixed in the editor win over the message', async function () {
    await load({
      waypoints: JSON.stringify([to, from]),
      waypointsType: 'json',
      transportMode: 'bicycle',
      transportModeType: 'fixed',
      departAt: '2025-06-01T07:00:00Z',
      departAtType: 'str',
      avoid: '1,2,3,4',
      avoidType: 'str',
      preference: 'shortest',
      preferenceType: 'fixed',
    });
    await expectOutput('n1', request({ transportMode: ['car'], departAt: '2030-01-01', avoid: '5,6,7,8', preference: 'fastest' }));
    should(lastBody(ctx.sandbox, 'route')).eql({
      waypoints: [
        { type: 'point', coordinates: '13.38,52.5', transportMode: ['bicycle'] },
        { type: 'point', coordinates: '13.405,52.52', transportMode: ['bicycle'] },
      ],
      departAt: '2025-06-01T07:00:00Z',
      avoid: '1,2,3,4',
      preference: 'shortest',
    });
  });

  describe('responses in other shapes', function () {
    const responseBody = (overview: unknown, segments: Fields[]) => JSON.stringify({ start: 'u33d', end: 'u33d', segments, overview });
    const geohashes = ['u33dc0', 'u33dc1', 'u33dc2'];

    it('draws a segment whose indices do not fit the line as a Point at its geohash', async function () {
      await load();
      ctx.sandbox.setFault('route', {
        status: 200,
        body: responseBody({ linestring: geohashes }, [{ point: 'u33dc1', text: 'Go', firstPoint: 1, lastPoint: 9 }]),
      });
      const msg = await expectOutput('n1', request());
      const decoded = ngeohash.decode('u33dc1');
      should(features(msg)[1].geometry).eql({ type: 'Point', coordinates: [decoded.longitude, decoded.latitude] });
      should(msg.instructions).eql(['Go']);
    });

    it('decodes HTML5 named references in instructions, in msg.instructions and on the map (issue 51 point 8)', async function () {
      await load();
      const text = 'Turn <span class="direction">right</span> onto Stra&szlig;e &ndash; caf&eacute; &rarr; 200&nbsp;m';
      ctx.sandbox.setFault('route', { status: 200, body: responseBody({ linestring: geohashes }, [{ point: 'u33dc0', text, firstPoint: 0, lastPoint: 2 }]) });
      const msg = await expectOutput('n1', request());
      should(msg.instructions).eql(['Turn right onto Straße – café → 200 m']);
      should(features(msg)[1].properties.plainText).equal('Turn right onto Straße – café → 200 m');
    });

    it('reads a GeoJSON LineString overview', async function () {
      await load();
      const line = [
        [13.4, 52.5],
        [13.41, 52.51],
      ];
      ctx.sandbox.setFault('route', { status: 200, body: responseBody({ linestring: { type: 'LineString', coordinates: line } }, []) });
      const msg = await expectOutput('n1', request());
      should(features(msg)[0].geometry?.coordinates).eql(line);
      should(msg.summary).eql({ length: 0, duration: 0, segments: 0 });
    });

    it('without overview.linestring still outputs, drawing the route through the segment points', async function () {
      await load();
      const segments = [
        { point: 'u33dc0', text: '<span>Head</span> north', firstPoint: 0, lastPoint: 4, length: 10, duration: 2 },
        { point: 'u33dc2', text: 'Arrive', firstPoint: 4, lastPoint: 4, length: 0, duration: 0 },
      ];
      ctx.sandbox.setFault('route', { status: 200, body: JSON.stringify({ start: 'u33dc0', end: 'u33dc3', segments }) });
      const msg = await expectOutput('n1', request());
      const position = (geohash: string) => [ngeohash.decode(geohash).longitude, ngeohash.decode(geohash).latitude];
      should(features(msg)[0].geometry).eql({ type: 'LineString', coordinates: ['u33dc0', 'u33dc2', 'u33dc3'].map(position) });
      should(features(msg)[1].geometry).eql({ type: 'Point', coordinates: position('u33dc0') });
      should(msg.instructions).eql(['Head north', 'Arrive']);
      should(msg.summary).eql({ length: 10, duration: 2, segments: 2 });
    });

    it('reports a response with neither linestring nor segment points as BAD_RESPONSE', async function () {
      await load();
      ctx.sandbox.setFault('route', { status: 200, body: responseBody({}, [{ text: 'Go' }]) });
      const { error } = await expectError('n1', request());
      should(error.code).equal('BAD_RESPONSE');
      should(error.message).match(/neither overview.linestring nor segment points/);
    });

    it('reports a response without a usable linestring as BAD_RESPONSE', async function () {
      await load();
      ctx.sandbox.setFault('route', { status: 200, body: responseBody({ linestring: ['u33dc0', 'not-a-geohash'] }, []) });
      const { error } = await expectError('n1', request());
      should(error.code).equal('BAD_RESPONSE');
      should(error.message).match(/overview.linestring\[1\]: "not-a-geohash" is not a geohash/);
    });
  });

  describe('bad input is refused before any request', function () {
    refusalTests(ctx, () => load(), 'route', [
      ['no waypoints', { payload: { preference: 'fastest' } }, /no waypoints/],
      ['a single waypoint', request({ waypoints: [from] }), /waypoints: at least 2 are needed, got 1/],
      ['a latitude out of range', request({ waypoints: [from, to, { lat: 91, lon: 13 }] }), /waypoint 3: latitude 91 out of range/],
      ['a plain array', request({ waypoints: [[13.4, 52.5], to] }), /waypoint 1: a plain array is ambiguous/],
      [
        'an indoor waypoint without venue or unit',
        request({ waypoints: [from, { type: 'indoor' }] }),
        /waypoint 2: an indoor waypoint needs a venueId or a unitId/,
      ],
      [
        'a point waypoint with bad coordinates',
        request({ waypoints: [{ type: 'point', coordinates: '13.4;52.5' }, to] }),
        /waypoint 1: coordinates must be the string "longitude,latitude"/,
      ],
      [
        'a point waypoint with its coordinates swapped out of range',
        request({ waypoints: [{ type: 'point', coordinates: '52.5,113.4' }, to] }),
        /waypoint 1: latitude 113.4 out of range/,
      ],
      ['a geohash outside the alphabet', request({ waypoints: [from, { type: 'geohash', geohash: 'u33dl' }] }), /waypoint 2: "u33dl" is not a geohash/],
      [
        'an unknown waypoint transport mode',
        request({ waypoints: [from, { ...to, transportMode: ['boat'] }] }),
        /waypoint 2: transportMode: "boat" is not one of pedestrian, wheelchair, bicycle, car, carHOV, truck/,
      ],
      ['an unknown default transport mode', request({ transportMode: 'scooter' }), /transportMode: "scooter" is not one of/],
      [
        'both arriveBy and departAt',
        request({ arriveBy: '2025-06-01T10:00:00Z', departAt: '2025-06-01T08:00:00Z' }),
        /arriveBy and departAt cannot both be set/,
      ],
      ['a time that does not exist', request({ arriveBy: '25:00' }), /arriveBy: 2000-01-01T25:00:00 is not a valid date and time/],
      ['a date-time in another format', request({ departAt: '01/06/2025 08:00' }), /departAt: "01\/06\/2025 08:00" is not an RFC 3339/],
      ['an avoid box with min above max', request({ avoid: '52.6,13.4,52.5,13.5' }), /avoid: minLat 52.6 must be less than maxLat 52.5/],
      ['an avoid box with three numbers', request({ avoid: '52.6,13.4,52.5' }), /avoid: expected "minLat,minLon,maxLat,maxLon"/],
      ['an unknown preference', request({ preference: 'scenic' }), /preference: "scenic" is not one of fastest, shortest/],
    ]);
  });

  describe('the sandbox endpoint', function () {
    const a = { type: 'point', coordinates: '13.4,52.5' };
    const b = { type: 'geohash', geohash: 'u33dc0' };
    const post = (body: unknown, headers: Record<string, string> = VPM_HEADERS) => ({ path: '/v1/routing', headers, body });
    sandboxRefusals(ctx, [
      ['one waypoint', post({ waypoints: [a] }), 400, /two or more waypoint objects/],
      ['an unknown waypoint type', post({ waypoints: [a, { type: 'address', geohash: 'u33d' }] }), 400, /type must be one of point, geohash, indoor/],
      [
        'coordinates with a space',
        post({ waypoints: [{ type: 'point', coordinates: '13.4, 52.5' }, b] }),
        400,
        /coordinates must be the string "longitude,latitude"/,
      ],
      ['coordinates in exponent notation', post({ waypoints: [{ type: 'point', coordinates: '1e-7,52.5' }, b] }), 400, /coordinates must be the string/],
      ['a latitude out of range in coordinates', post({ waypoints: [{ type: 'point', coordinates: '52.5,113.4' }, b] }), 400, /latitude 113.4 out of range/],
      ['a geohash waypoint with coordinates', post({ waypoints: [a, { ...b, coordinates: '13.4,52.5' }] }), 400, /unknown member "coordinates"/],
      ['an indoor waypoint without venue or unit', post({ waypoints: [a, { type: 'indoor' }] }), 400, /needs a venueId or a unitId/],
      ['an unknown transport mode', post({ waypoints: [{ ...a, transportMode: ['boat'] }, b] }), 400, /transportMode\[0\] must be one of pedestrian/],
      ['both arriveBy and departAt', post({ waypoints: [a, b], arriveBy: '10:00:00', departAt: '08:00:00' }), 400, /cannot both be given/],
      ['a partial-time without seconds', post({ waypoints: [a, b], departAt: '08:00' }), 400, /departAt must be an RFC 3339/],
      ['an avoid box as an object', post({ waypoints: [a, b], avoid: { minLat: 1 } }), 400, /avoid must be "minLat,minLon,maxLat,maxLon"/],
      ['an unknown preference', post({ waypoints: [a, b], preference: 'scenic' }), 400, /preference must be one of fastest, shortest/],
      ['the project headers instead of the VPM id', post({ waypoints: [a, b] }, PROJECT_HEADERS), 401, /x-svc-vpm-id/],
    ]);
  });

  describe('faults', function () {
    faultTests({ ctx, type: 'svc-route', endpoint: 'route', node: routeNode(), msg: () => request() });
  });
});
