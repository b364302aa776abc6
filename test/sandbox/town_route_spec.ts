import should from 'should';
import ngeohash from 'ngeohash';
import { startSandbox, Sandbox, SANDBOX_DEFAULTS } from '../../sandbox/index';
import { meters, Position } from '../../sandbox/town/network';
import { streetsGeoJson } from '../../sandbox/town/geojson';
import { townOf } from '../../sandbox/town/index';

/** Routes follow the town's streets (issue 53 point 3). */

type Segment = { length: number; duration: number; roadName: string; instruction: string; speedLimit: number | null; firstPoint: number; lastPoint: number };
type Route = { segments: Segment[]; overview: { linestring: string[] } };
type Street = { geometry: { coordinates: Position[] }; properties: { class: string; modes: string[]; name: string } };

async function post(sandbox: Sandbox, body: unknown): Promise<{ status: number; json: Route }> {
  const res = await fetch(new URL('/v1/routing', sandbox.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-vpm-id': SANDBOX_DEFAULTS.projectId, 'x-svc-api-key': SANDBOX_DEFAULTS.apiKey },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Route };
}

const lineOf = (route: Route): Position[] =>
  route.overview.linestring.map((geohash) => {
    const { latitude, longitude } = ngeohash.decode(geohash);
    return [longitude, latitude];
  });

/** Meters from a point to a segment, on a local flat projection. */
function toSegment(p: Position, a: Position, b: Position): number {
  const k = Math.cos((p[1] * Math.PI) / 180);
  const [ax, ay, bx, by, px, py] = [a[0] * k, a[1], b[0] * k, b[1], p[0] * k, p[1]];
  const lengthSq = (bx - ax) ** 2 + (by - ay) ** 2;
  const t = lengthSq === 0 ? 0 : Math.max(0, Math.min(1, ((px - ax) * (bx - ax) + (py - ay) * (by - ay)) / lengthSq));
  return meters(p, [(ax + t * (bx - ax)) / k, ay + t * (by - ay)]);
}

/** The streets served for the route's box, that a mode may use. */
function servedStreets(line: Position[], mode: string): Street[] {
  const lons = line.map((p) => p[0]);
  const lats = line.map((p) => p[1]);
  const box = { minLon: Math.min(...lons) - 0.002, minLat: Math.min(...lats) - 0.002, maxLon: Math.max(...lons) + 0.002, maxLat: Math.max(...lats) + 0.002 };
  return (streetsGeoJson(townOf(), box).features as Street[]).filter((street) => street.properties.modes.includes(mode));
}

/** A 9-character geohash is within about 2.5 m of its point. */
const ON_STREET_M = 3;

function everyPointOnAStreet(route: Route, mode: string): void {
  const line = lineOf(route);
  const streets = servedStreets(line, mode);
  for (const point of line) {
    const nearest = Math.min(...streets.map((s) => toSegment(point, s.geometry.coordinates[0], s.geometry.coordinates[1])));
    should(nearest).be.below(ON_STREET_M, `point ${point.join()} of a ${mode} route on a street it may use`);
  }
  // Every stretch between two points runs along one street: its middle is on a street too.
  line.slice(1).forEach((point, k) => {
    const middle: Position = [(point[0] + line[k][0]) / 2, (point[1] + line[k][1]) / 2];
    const nearest = Math.min(...streets.map((s) => toSegment(middle, s.geometry.coordinates[0], s.geometry.coordinates[1])));
    should(nearest).be.below(ON_STREET_M, `the middle of stretch ${k}`);
  });
}

const totalMeters = (route: Route) => route.segments.reduce((sum, s) => sum + s.length, 0);
const point = (lon: number, lat: number, transportMode?: string[]) => ({
  type: 'point',
  coordinates: `${lon},${lat}`,
  ...(transportMode ? { transportMode } : {}),
});

describe('sandbox town: routes', function () {
  let sandbox: Sandbox;
  before(async function () {
    sandbox = await startSandbox();
  });
  after(async function () {
    await sandbox.close();
  });

  for (const mode of ['car', 'truck', 'pedestrian', 'bicycle', 'wheelchair', 'carHOV']) {
    it(`a ${mode} route runs on streets ${mode} may use, never shorter than the straight line`, async function () {
      const { status, json } = await post(sandbox, { waypoints: [point(13.37, 52.49, [mode]), point(13.43, 52.52)], preference: 'shortest' });
      should(status).equal(200);
      everyPointOnAStreet(json, mode);
      const line = lineOf(json);
      should(totalMeters(json)).be.aboveOrEqual(Math.floor(meters(line[0], line[line.length - 1])) - 2);
      should(json.segments[json.segments.length - 1].lastPoint).equal(line.length - 1);
    });
  }

  it('fastest and shortest: the shortest is no longer, the fastest no slower', async function () {
    const waypoints = [point(13.31, 52.47), point(13.45, 52.53)];
    const fastest = (await post(sandbox, { waypoints, preference: 'fastest' })).json;
    const shortest = (await post(sandbox, { waypoints, preference: 'shortest' })).json;
    const seconds = (route: Route) => route.segments.reduce((sum, s) => sum + s.duration, 0);
    should(totalMeters(shortest)).be.belowOrEqual(totalMeters(fastest));
    should(seconds(fastest)).be.belowOrEqual(seconds(shortest));
    everyPointOnAStreet(fastest, 'car');
  });

  it('segments break at turns and street names, with the street name and its speed limit', async function () {
    const { json } = await post(sandbox, { waypoints: [point(13.37, 52.49), point(13.43, 52.52)] });
    const driven = json.segments.slice(0, -1);
    should(driven.length).be.above(2);
    for (const segment of driven) {
      should(['continue', 'left', 'right']).containEql(segment.instruction);
      should(segment.roadName).not.equal('');
      should([20, 30, 50, 110]).containEql(segment.speedLimit);
    }
    driven.slice(1).forEach((segment, k) => should(segment.instruction !== 'continue' || segment.roadName !== driven[k].roadName).be.true());
  });

  it('an avoided box is never entered, and the route goes around it', async function () {
    const box = { minLat: 52.495, minLon: 13.38, maxLat: 52.515, maxLon: 13.41 };
    const waypoints = [point(13.36, 52.505), point(13.43, 52.505)];
    const direct = lineOf((await post(sandbox, { waypoints })).json);
    const inBox = (p: Position) => p[1] > box.minLat && p[1] < box.maxLat && p[0] > box.minLon && p[0] < box.maxLon;
    should(direct.some(inBox)).be.true('the direct way runs through the box');
    for (const preference of ['fastest', 'shortest']) {
      const { json } = await post(sandbox, { waypoints, preference, avoid: `${box.minLat},${box.minLon},${box.maxLat},${box.maxLon}` });
      const line = lineOf(json);
      should(line.some(inBox)).be.false(preference);
      // No stretch crosses the box either: check points along each stretch.
      line.slice(1).forEach((p, k) => {
        for (let s = 1; s < 20; s++) should(inBox([line[k][0] + ((p[0] - line[k][0]) * s) / 20, line[k][1] + ((p[1] - line[k][1]) * s) / 20])).be.false();
      });
      everyPointOnAStreet(json, 'car');
    }
  });

  it('several waypoints: the legs join up on the streets, each segment starting where the one before ended', async function () {
    const { status, json } = await post(sandbox, {
      waypoints: [point(13.37, 52.49), point(13.4, 52.51), point(13.42, 52.495, ['pedestrian']), point(13.43, 52.5)],
    });
    should(status).equal(200);
    json.segments.slice(1).forEach((segment, k) => should(segment.firstPoint).be.oneOf(json.segments[k].lastPoint, json.segments[k].lastPoint + 1));
    const line = lineOf(json);
    const pedestrianFrom = json.segments.findIndex((segment) => (segment as unknown as { transportMode: string }).transportMode === 'pedestrian');
    should(pedestrianFrom).be.above(0);
    everyPointOnAStreet({ ...json, overview: { linestring: json.overview.linestring.slice(0, json.segments[pedestrianFrom - 1].lastPoint + 1) } }, 'car');
    everyPointOnAStreet({ ...json, overview: { linestring: json.overview.linestring.slice(json.segments[pedestrianFrom].firstPoint) } }, 'pedestrian');
    should(line.length).equal(json.segments[json.segments.length - 1].lastPoint + 1);
  });

  it('a leg longer than the town routes is refused with 400', async function () {
    const { status } = await post(sandbox, { waypoints: [point(13.0, 52.5), point(13.6, 52.5)] });
    should(status).equal(400);
  });
});
