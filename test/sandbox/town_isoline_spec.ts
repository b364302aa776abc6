import should from 'should';
import { startSandbox, Sandbox, SANDBOX_DEFAULTS } from '../../sandbox/index';
import { townOf } from '../../sandbox/town/index';
import { IsolineRequest, isolines } from '../../sandbox/town/isoline';
import { buildGraph, dijkstra, snap, sourcesOf } from '../../sandbox/town/graph';
import { Position } from '../../sandbox/town/network';
import { speedOn } from '../../sandbox/town/route';

/** Isolines reach along the town's streets (issue 53 point 4). */

const ORIGIN: Position = [13.4, 52.5];
const base: IsolineRequest = {
  origin: ORIGIN,
  values: [180, 360],
  type: 'time',
  mode: 'fast',
  transportModes: ['car'],
  avoid: [],
  optimizeFor: 'balanced',
  shape: 64,
};

/** Whether a point is inside a ring or within `tolerance` meters of its boundary. */
function covers(ring: Position[], p: Position, tolerance = 1): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [a, b] = [ring[i], ring[j]];
    if (a[1] > p[1] !== b[1] > p[1] && p[0] < ((b[0] - a[0]) * (p[1] - a[1])) / (b[1] - a[1]) + a[0]) inside = !inside;
  }
  if (inside) return true;
  const k = Math.cos((p[1] * Math.PI) / 180);
  return ring.some((a, i) => {
    const b = ring[(i + 1) % ring.length];
    const [dx, dy] = [(b[0] - a[0]) * k, b[1] - a[1]];
    const [px, py] = [(p[0] - a[0]) * k, p[1] - a[1]];
    const t = Math.max(0, Math.min(1, (px * dx + py * dy) / (dx * dx + dy * dy || 1)));
    return Math.hypot(px - t * dx, py - t * dy) * 111_195 <= tolerance;
  });
}

function area(ring: Position[]): number {
  return Math.abs(ring.reduce((sum, p, i) => sum + (i > 0 ? ring[i - 1][0] * p[1] - p[0] * ring[i - 1][1] : 0), 0) / 2);
}

describe('sandbox town: isolines', function () {
  it('contains its origin and every junction it reaches; each ring is closed with exactly `shape` points', function () {
    const rings = isolines(townOf(), base);
    const graph = buildGraph(townOf(), { minLon: 13.2, minLat: 52.38, maxLon: 13.6, maxLat: 52.62 }, 'car');
    const seconds = (edge: Parameters<typeof speedOn>[0]) => edge.length / (speedOn(edge, 'car') / 3.6);
    const search = dijkstra(graph, sourcesOf(graph, snap(graph, ORIGIN) as NonNullable<ReturnType<typeof snap>>, seconds), seconds);
    base.values.forEach((value, k) => {
      const ring = rings[k];
      should(ring).have.length(base.shape);
      should(ring[0]).eql(ring[ring.length - 1]);
      should(covers(ring, ORIGIN)).be.true();
      const reached = graph.positions.filter((_p, n) => search.cost[n] <= value);
      should(reached.length).be.above(20);
      for (const p of reached) should(covers(ring, p)).be.true(`${p.join()} reached within ${value} s`);
    });
  });

  it('a larger range contains the smaller', function () {
    const [small, large] = isolines(townOf(), { ...base, optimizeFor: 'quality' });
    for (const p of small) should(covers(large, p)).be.true();
    small.slice(1).forEach((p, i) => should(covers(large, [(p[0] + small[i][0]) / 2, (p[1] + small[i][1]) / 2])).be.true());
    should(area(large)).be.above(area(small));
  });

  it('transport modes, avoided features, mode and optimizeFor change what is reached', function () {
    const areaOf = (request: Partial<IsolineRequest>) => area(isolines(townOf(), { ...base, values: [600], ...request })[0]);
    const car = areaOf({});
    const walking = areaOf({ transportModes: ['pedestrian'] });
    should(walking).be.below(car / 4);
    should(areaOf({ avoid: ['controlledAccessHighway'] })).be.below(car);
    should(areaOf({ mode: 'short' })).be.below(car);
    should(areaOf({ optimizeFor: 'quality' })).be.belowOrEqual(areaOf({ optimizeFor: 'performance' }));
    // Every transport mode counts, not only the first.
    should(areaOf({ transportModes: ['pedestrian', 'car'] })).be.above(walking * 4);
  });

  it('POST /v1/routing/isoline responds with the town polygons, one per origin and range', async function () {
    const sandbox: Sandbox = await startSandbox();
    try {
      const res = await fetch(new URL('/v1/routing/isoline', sandbox.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc-project-id': SANDBOX_DEFAULTS.projectId, 'x-svc-api-key': SANDBOX_DEFAULTS.apiKey },
        body: JSON.stringify({
          async: false,
          origins: [
            { type: 'coordinates', latitude: ORIGIN[1], longitude: ORIGIN[0] },
            { type: 'coordinates', latitude: 52.52, longitude: 13.38 },
          ],
          range: { type: 'distance', value: [500, 1000] },
          transportMode: ['pedestrian'],
          shape: 40,
        }),
      });
      should(res.status).equal(200);
      const body = (await res.json()) as { isoline: Array<{ geometry: { coordinates: Position[][] } }> };
      should(body.isoline).have.length(4);
      for (const polygon of body.isoline) should(polygon.geometry.coordinates[0]).have.length(40);
      should(covers(body.isoline[2].geometry.coordinates[0], [13.38, 52.52])).be.true();
    } finally {
      await sandbox.close();
    }
  });
});
