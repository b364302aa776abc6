import http from 'node:http';
import should from 'should';
import ngeohash from 'ngeohash';
import { startSandbox, Sandbox, SANDBOX_DEFAULTS, SandboxOptions } from '../../sandbox/index';
import { Box, Point, crosses, distance, inside } from '../../sandbox/routing';
import { townOf } from '../../sandbox/town/index';
import { matrix } from '../../sandbox/town/sequence';
import { typicalDuration } from '../../sandbox/endpoints/geocode';
import { describeModes, modesFromEnv } from '../../sandbox/modes';
import { ManualClock } from '../support/clock';

/**
 * The sandbox behaves like the platform (issue 28 point 5): the options it accepts change what it
 * returns, zone-less times are read where the spec says, and the spec's typical durations and limits
 * of single geocode are modes a test (or `npm start`) turns on.
 */

type Fields = Record<string, unknown>;
type Segment = { length: number; duration: number; roadName: string; text: string; action: string };
type Route = { segments: Segment[]; overview: { linestring: string[] } };
type Stop = { location: string; estimatedArrival: string | null; estimatedDeparture: string | null; distance: number; time: number };
type Sequence = { distance: number; time: number; waypoints: Stop[] };

const PROJECT = { 'x-svc-project-id': SANDBOX_DEFAULTS.projectId, 'x-svc-api-key': SANDBOX_DEFAULTS.apiKey };

/** One exchange on a fresh connection: status, headers and the body read as JSON. */
function call(
  sandbox: Sandbox,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; json: Fields }> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      new URL(path, sandbox.url),
      { method, headers: text ? { ...headers, 'content-type': 'application/json' } : headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Fields }));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

async function ok<T>(response: Promise<{ status: number; json: Fields }>): Promise<T> {
  const { status, json } = await response;
  should(status).equal(200, JSON.stringify(json));
  return json as T;
}

const point = (lat: number, lon: number) => ({ type: 'point', coordinates: `${lon},${lat}` });
const location = (lat: number, lon: number) => ({ type: 'coordinates', latitude: lat, longitude: lon });
const plain = (html: string) =>
  html
    .replace(/<[^>]*>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&');
const totalSeconds = (route: Route) => route.segments.reduce((sum, s) => sum + s.duration, 0);
const totalMeters = (route: Route) => route.segments.reduce((sum, s) => sum + s.length, 0);
/** The route's line as the node draws it: the overview's geohashes decoded. */
const lineOf = (route: Route): Point[] =>
  route.overview.linestring.map((geohash) => {
    const { latitude, longitude } = ngeohash.decode(geohash);
    return { lat: latitude, lon: longitude };
  });
/** The departure and arrival the `arrive` segment states. */
const timesOf = (route: Route) => {
  const match = / at (\S+) \(departure (\S+)\)$/.exec(plain(route.segments[route.segments.length - 1].text));
  should(match).not.be.null();
  return {
    arrival: Date.parse((match as RegExpExecArray)[1]),
    departure: Date.parse((match as RegExpExecArray)[2]),
    text: (match as RegExpExecArray).slice(1),
  };
};

describe('sandbox platform behaves like the platform', function () {
  const started: Sandbox[] = [];
  let sandbox: Sandbox;
  const another = async (options: SandboxOptions) => {
    const created = await startSandbox(options);
    started.push(created);
    return created;
  };
  const route = (body: Fields, target = sandbox) =>
    ok<Route>(call(target, 'POST', '/v1/routing', { 'x-svc-vpm-id': SANDBOX_DEFAULTS.projectId, 'x-svc-api-key': SANDBOX_DEFAULTS.apiKey }, body));
  const sequence = (body: Fields) =>
    ok<Sequence>(call(sandbox, 'POST', `/v1/routing/sequence/${SANDBOX_DEFAULTS.projectId}`, PROJECT, { async: false, ...body }));
  const geocode = (target: Sandbox, address: string, key: string = SANDBOX_DEFAULTS.apiKey) =>
    call(target, 'POST', `/v1/geocode?address=${encodeURIComponent(address)}`, { ...PROJECT, 'x-svc-api-key': key, accept: 'application/json' });

  before(async function () {
    sandbox = await startSandbox();
  });
  after(async function () {
    await Promise.all([sandbox, ...started].map((s) => s.close()));
  });

  describe('avoid', function () {
    // From the west to the north-east of a box that the main roads (east-west, then north-south) run through.
    const from = { lat: 52.5, lon: 13.3 };
    const to = { lat: 52.54, lon: 13.4 };
    const box: Box = { minLat: 52.49, minLon: 13.33, maxLat: 52.52, maxLon: 13.36 };
    const routeBox = `${box.minLat},${box.minLon},${box.maxLat},${box.maxLon}`;
    const throughBox = (line: Point[]) => line.some((p, i) => inside(p, box) || (i > 0 && crosses(line[i - 1], p, box)));

    it('a route does not run through the avoided box, for either preference', async function () {
      const waypoints = [point(from.lat, from.lon), point(to.lat, to.lon)];
      should(throughBox(lineOf(await route({ waypoints })))).be.true('without avoid the route crosses the box');
      for (const preference of ['fastest', 'shortest']) {
        const avoided = await route({ waypoints, avoid: routeBox, preference });
        should(throughBox(lineOf(avoided))).be.false(preference);
      }
    });

    it('a route goes around a box that blocks both ways along the main roads', async function () {
      const wide: Box = { minLat: 52.49, minLon: 13.32, maxLat: 52.55, maxLon: 13.36 };
      const throughWide = (line: Point[]) => line.some((p, i) => inside(p, wide) || (i > 0 && crosses(line[i - 1], p, wide)));
      const avoided = await route({
        waypoints: [point(52.52, 13.3), point(52.52, 13.4)],
        avoid: `${wide.minLat},${wide.minLon},${wide.maxLat},${wide.maxLon}`,
      });
      should(throughWide(lineOf(avoided))).be.false();
      should(totalMeters(avoided)).be.above(distance({ lat: 52.52, lon: 13.3 }, { lat: 52.52, lon: 13.4 }) + 3000);
    });

    it('a sequence leg goes around every avoided box: its distance and time are those of the detour', async function () {
      const waypoints = [location(from.lat, from.lon), location(to.lat, to.lon)];
      const direct = await sequence({ waypoints });
      const avoided = await sequence({ waypoints, avoid: [{ minLat: box.minLat, minLng: box.minLon, maxLat: box.maxLat, maxLng: box.maxLon }] });
      // The leg is the town's way around the box: the matrix of its streets without those meeting the box.
      const legs = matrix(townOf(), {
        points: [from, to].map((p): [number, number] => [p.lon, p.lat]),
        mode: 'car',
        preference: 'fastest',
        avoid: [box],
        traffic: 1,
      });
      should(avoided.waypoints[1].distance).equal(Math.round(legs.meters[0][1]));
      should(avoided.waypoints[1].distance).be.above(direct.waypoints[1].distance);
      should(avoided.waypoints[1].time).be.above(direct.waypoints[1].time);
    });

    it('a sequence visits in another order when a box makes the nearest stop far', async function () {
      // A stop just east of the start and one north of it; a wall between the start and the near one
      // (open only to the north) makes the way to it long, so the northern stop comes first.
      const start = { lat: 52.5, lon: 13.3 };
      const near = { lat: 52.5, lon: 13.33 };
      const north = { lat: 52.56, lon: 13.3 };
      const waypoints = [start, near, north].map((p) => location(p.lat, p.lon));
      const wall = { minLat: 52.0, minLng: 13.31, maxLat: 52.55, maxLng: 13.32 };
      should((await sequence({ waypoints })).waypoints.map((w) => w.location)).eql([start, near, north].map((p) => ngeohash.encode(p.lat, p.lon, 8)));
      should((await sequence({ waypoints, avoid: [wall] })).waypoints.map((w) => w.location)).eql(
        [start, north, near].map((p) => ngeohash.encode(p.lat, p.lon, 8)),
      );
    });
  });

  describe('route preference and isoline optimizeFor', function () {
    it('shortest goes straight on side streets, fastest on main roads: shorter but slower', async function () {
      const waypoints = [point(52.5, 13.3), point(52.54, 13.36)];
      const fastest = await route({ waypoints, preference: 'fastest', departAt: '2026-05-04T12:00:00' });
      const shortest = await route({ waypoints, preference: 'shortest', departAt: '2026-05-04T12:00:00' });
      should(await route({ waypoints, departAt: '2026-05-04T12:00:00' })).eql(fastest);
      should(totalMeters(shortest)).be.below(totalMeters(fastest));
      should(totalSeconds(shortest)).be.above(totalSeconds(fastest));
      should(shortest.segments.map((s) => s.roadName)).not.eql(fastest.segments.map((s) => s.roadName));
    });

    it('optimizeFor changes the detail of the isoline, not its number of points', async function () {
      const shapes: Record<string, number[][]> = {};
      for (const optimizeFor of ['performance', 'balanced', 'quality', undefined]) {
        const body = {
          async: false,
          origins: [location(52.5, 13.4)],
          range: { type: 'time', value: 600 },
          shape: 120,
          ...(optimizeFor ? { optimizeFor } : {}),
        };
        const result = await ok<{ isoline: { geometry: { coordinates: number[][][] } } }>(call(sandbox, 'POST', '/v1/routing/isoline', PROJECT, body));
        shapes[optimizeFor ?? 'default'] = result.isoline.geometry.coordinates[0];
      }
      should(shapes.default).eql(shapes.balanced);
      // How much the distance from the origin goes up and down along the ring: the finer the graph, the more.
      const variation = (ring: number[][]) => {
        const radii = ring.map(([lon, lat]) => distance({ lat: 52.5, lon: 13.4 }, { lat, lon }));
        return radii.slice(1).reduce((sum, r, i) => sum + Math.abs(r - radii[i]), 0);
      };
      for (const name of ['performance', 'balanced', 'quality']) should(shapes[name]).have.length(120, name);
      should(variation(shapes.balanced)).be.above(variation(shapes.performance) * 1.03);
      should(variation(shapes.quality)).be.above(variation(shapes.balanced) * 1.03);
    });
  });

  describe('times', function () {
    const waypoints = [point(52.5, 13.3), point(52.54, 13.36)];

    it('departAt is when the route leaves; a zone-less one is local time at the departure place', async function () {
      const zoned = timesOf(await route({ waypoints, departAt: '2026-05-04T12:00:00+01:00' }));
      should(zoned.text[1]).equal('2026-05-04T12:00:00+01:00');
      should(timesOf(await route({ waypoints, departAt: '2026-05-04T12:00:00' }))).eql(zoned);
      should(timesOf(await route({ waypoints, departAt: '2026-05-04T11:00:00Z' }))).eql(zoned);
      // In Tokyo the sandbox's zone is +09:00.
      const tokyo = timesOf(await route({ waypoints: [point(35.68, 139.69), point(35.7, 139.75)], departAt: '2026-05-04T12:00:00' }));
      should(tokyo.text[1]).equal('2026-05-04T12:00:00+09:00');
      should(tokyo.departure).equal(Date.UTC(2026, 4, 4, 3));
    });

    it('arriveBy moves the departure: the route arrives then, leaving its whole duration before', async function () {
      const arriving = await route({ waypoints, arriveBy: '2026-05-04T12:00:00' });
      const { arrival, departure, text } = timesOf(arriving);
      should(text[0]).equal('2026-05-04T12:00:00+01:00');
      should(arrival - departure).equal(totalSeconds(arriving) * 1000);
      const earlier = timesOf(await route({ waypoints, arriveBy: '2026-05-04T11:00:00' }));
      should(earlier.departure).equal(departure - 3_600_000);
    });

    it('traffic: a weekday rush hour at the departure place slows road transport, not pedestrians', async function () {
      const rush = await route({ waypoints, departAt: '2026-05-04T08:00:00' });
      const noon = await route({ waypoints, departAt: '2026-05-04T12:00:00' });
      const sunday = await route({ waypoints, departAt: '2026-05-03T08:00:00' });
      should(totalSeconds(rush)).be.above(totalSeconds(noon));
      should(totalSeconds(sunday)).equal(totalSeconds(noon));
      const walk = [{ ...point(52.5, 13.3), transportMode: ['pedestrian'] }, point(52.54, 13.36)];
      should(totalSeconds(await route({ waypoints: walk, departAt: '2026-05-04T08:00:00' }))).equal(
        totalSeconds(await route({ waypoints: walk, departAt: '2026-05-04T12:00:00' })),
      );
    });

    it('a zone-less sequence departure is local time at the start; the estimated times are UTC', async function () {
      const tokyo = [location(35.68, 139.69), location(35.7, 139.75), location(35.66, 139.7)];
      const zoneless = await sequence({ waypoints: tokyo, departure: '2026-05-04T12:00:00' });
      should(zoneless.waypoints[0].estimatedDeparture).equal('2026-05-04T03:00:00Z');
      for (const departure of ['2026-05-04T12:00:00+09:00', '2026-05-04T12:00:00+0900', '2026-05-04T12:00:00+09', '2026-05-04T03:00:00Z']) {
        should(await sequence({ waypoints: tokyo, departure })).eql(zoneless, departure);
      }
      const rush = await sequence({ waypoints: tokyo, departure: '2026-05-04T08:00:00' });
      should(rush.time).be.above(zoneless.time);
    });
  });

  describe('modes', function () {
    it('single geocodes take the typical durations when asked: 100–200 ms, 700–800 ms for a descriptive address', async function () {
      should(sandbox.modes.typicalDurations).be.false();
      const timed = await another({ typicalDurations: true });
      for (const address of ['12 Main Street', 'the bakery near the town hall']) {
        const expected = typicalDuration(address);
        should(expected).be.within(address.includes('near') ? 700 : 100, address.includes('near') ? 800 : 200);
        const startedAt = performance.now();
        should((await geocode(timed, address)).status).equal(200);
        should(performance.now() - startedAt).be.aboveOrEqual(expected - 1, address);
      }
    });

    it('the recommended rate: 429 with Retry-After beyond it in any sliding minute, per API key, refusals not counted', async function () {
      const clock = new ManualClock();
      const limited = await another({ clock, geocodeRatePerMinute: 3 });
      for (let i = 0; i < 3; i++) should((await geocode(limited, `${i} Main Street`)).status).equal(200);
      clock.stall(20_000);
      const refused = await geocode(limited, '4 Main Street');
      should(refused.status).equal(429);
      should(refused.json).have.properties({ error: 'rate_limited' });
      should(refused.headers['retry-after']).equal('40');
      should((await geocode(limited, '4 Main Street', SANDBOX_DEFAULTS.geocodeOnlyApiKey)).status).equal(200);
      clock.stall(39_999);
      should((await geocode(limited, '5 Main Street')).status).equal(429);
      clock.stall(1);
      should((await geocode(limited, '6 Main Street')).status).equal(200);
    });

    it('the daily limit: 429 beyond it until midnight UTC', async function () {
      const clock = new ManualClock();
      const limited = await another({ clock, geocodeDailyLimit: 2 });
      clock.stall(86_400_000 - clock.now() - 90_000);
      for (let i = 0; i < 2; i++) should((await geocode(limited, `${i} Main Street`)).status).equal(200);
      const refused = await geocode(limited, '3 Main Street');
      should(refused.status).equal(429);
      should(refused.json).have.properties({ error: 'daily_limit_exceeded' });
      should(refused.headers['retry-after']).equal('90');
      clock.stall(89_999);
      should((await geocode(limited, '3 Main Street')).status).equal(429);
      clock.stall(1);
      should((await geocode(limited, '3 Main Street')).status).equal(200);
    });

    it('the spec limits are off unless turned on; other endpoints are not limited', async function () {
      should(sandbox.modes).eql({ typicalDurations: false, geocodeRatePerMinute: undefined, geocodeDailyLimit: undefined });
      const limited = await another({ geocodeRatePerMinute: 1, geocodeDailyLimit: 1 });
      should((await geocode(limited, '1 Main Street')).status).equal(200);
      should((await geocode(limited, '1 Main Street')).status).equal(429);
      await route({ waypoints: [point(52.5, 13.3), point(52.5, 13.31)] }, limited);
      await route({ waypoints: [point(52.5, 13.3), point(52.5, 13.31)] }, limited);
    });

    it('npm start and npm run sandbox read the modes from the environment', function () {
      should(modesFromEnv({}, { typicalDurations: true })).eql({ typicalDurations: true, geocodeRatePerMinute: undefined, geocodeDailyLimit: undefined });
      should(modesFromEnv({ SANDBOX_DURATIONS: 'off', SANDBOX_RATE_LIMIT: 'on', SANDBOX_DAILY_LIMIT: 'on' }, { typicalDurations: true })).eql({
        typicalDurations: false,
        geocodeRatePerMinute: 80,
        geocodeDailyLimit: 50_000,
      });
      should(modesFromEnv({ SANDBOX_DURATIONS: 'typical', SANDBOX_RATE_LIMIT: '120', SANDBOX_DAILY_LIMIT: 'off' }, { typicalDurations: false })).eql({
        typicalDurations: true,
        geocodeRatePerMinute: 120,
        geocodeDailyLimit: undefined,
      });
      should(() => modesFromEnv({ SANDBOX_RATE_LIMIT: 'fast' }, { typicalDurations: true })).throw(/SANDBOX_RATE_LIMIT must be on, off or a whole number/);
      should(() => modesFromEnv({ SANDBOX_DURATIONS: 'slow' }, { typicalDurations: true })).throw(/SANDBOX_DURATIONS must be typical or off/);
      should(describeModes({ typicalDurations: true, geocodeRatePerMinute: 80 })).equal(
        'sandbox modes: typical durations (SANDBOX_DURATIONS=off turns them off), 80 geocodes a minute, no daily limit (SANDBOX_DAILY_LIMIT=on)',
      );
    });
  });
});
