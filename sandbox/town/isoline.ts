import { MultiPolygon, concaveman, polygonClipping } from './vendor';
import { Graph, Weight, buildGraph, dijkstra, snap, sourcesOf } from './graph';
import { Mode, Position, Town } from './network';
import { speedOn } from './route';

/**
 * Isolines on the town's streets: one cut-off Dijkstra per origin and transport mode covers every
 * range; what a range reaches is the junctions within it and, on each street reached from one end
 * only, the point where the range runs out. Its outline is a concave hull (concaveman) of those points
 * and the origin, its detail set by `optimizeFor`; a larger range's outline is united (polygon-clipping)
 * with the smaller one's, so it contains it. The ring then gets exactly the number of points asked
 * for: points added along its longest sides, or taken away only in ways that enlarge it (cutting off
 * an inward corner, or extending two sides of a convex ring over the side between them), so everything
 * reached stays inside.
 */

/** How far an isoline reaches at most, in meters (the search's box). */
const MAX_REACH_M = 20_000;
const CONCAVITY = { quality: 1.2, balanced: 2, performance: Infinity };
const FEATURE = { tollRoad: 'toll', controlledAccessHighway: 'controlledAccess', ferry: 'ferry', tunnel: 'tunnel', dirtRoad: 'dirtRoad' } as const;
export type AvoidFeature = keyof typeof FEATURE;

export interface IsolineRequest {
  origin: Position;
  /** Range values in request order: meters or seconds. */
  values: number[];
  type: 'distance' | 'time';
  /** `short`: time at one speed for every street (ignoring speed information); `fast`: each street's speed. */
  mode: 'short' | 'fast';
  transportModes: Mode[];
  avoid: AvoidFeature[];
  optimizeFor: keyof typeof CONCAVITY;
  /** Points of each closed ring, the last equal to the first. */
  shape: number;
}

/** One closed ring ([lon, lat]) per range value, in request order. */
export function isolines(town: Town, request: IsolineRequest): Position[][] {
  const largest = Math.max(...request.values);
  const reached = request.values.map(() => [request.origin] as Position[]);
  for (const mode of request.transportModes) {
    const weight: Weight =
      request.type === 'distance'
        ? (edge) => edge.length
        : (edge) => edge.length / ((request.mode === 'short' ? SHORT_SPEED[mode] : speedOn(edge, mode)) / 3.6);
    const fastest = request.type === 'distance' ? largest : (largest * Math.max(TOP_SPEED[mode], FERRY_SPEED)) / 3.6;
    const graph = buildGraph(town, box(request.origin, Math.min(fastest, MAX_REACH_M)), mode, (edge) =>
      request.avoid.some((feature) => edge[FEATURE[feature]]),
    );
    const at = snap(graph, request.origin);
    if (!at) continue;
    const search = dijkstra(graph, sourcesOf(graph, at, weight), weight, largest);
    request.values.forEach((value, k) => reached[k].push(...reachedPoints(graph, search.cost, weight, value)));
    reached.forEach((points) => points.push(at.position));
  }
  const rings: Position[][] = [];
  const order = request.values.map((_v, k) => k).sort((a, b) => request.values[a] - request.values[b] || a - b);
  let inner: Position[] | undefined;
  for (const k of order) {
    let ring = outline(reached[k], request.optimizeFor, request.shape);
    if (inner) ring = fit(outerRing(polygonClipping.union([ring], [inner])), request.shape);
    rings[k] = ring;
    inner = ring;
  }
  return rings;
}

/** km/h: one speed for every street (`short`), and the highest a mode reaches anywhere. */
const SHORT_SPEED: Record<Mode, number> = { pedestrian: 5, wheelchair: 3.6, bicycle: 16, car: 30, carHOV: 30, truck: 30 };
const TOP_SPEED: Record<Mode, number> = { pedestrian: 5, wheelchair: 3.6, bicycle: 16, car: 110, carHOV: 110, truck: 80 };
const FERRY_SPEED = 10;

/** The points a range reaches: junctions within it, and where it runs out along the streets. */
function reachedPoints(graph: Graph, cost: Float64Array, weight: Weight, value: number): Position[] {
  const points: Position[] = [];
  graph.positions.forEach((position, n) => {
    if (cost[n] <= value) points.push(position);
  });
  graph.positions.forEach((_p, n) => {
    if (cost[n] > value) return;
    for (let k = graph.linkStart[n]; k < graph.linkStart[n + 1]; k++) {
      const [edge, to] = [graph.linkEdge[k], graph.linkTo[k]];
      const full = weight(graph.edges[edge], cost[n]);
      if (cost[n] + full <= value) continue;
      const t = (value - cost[n]) / full;
      const [a, b] = [graph.positions[n], graph.positions[to]];
      points.push([a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t]);
    }
  });
  return points;
}

function box(origin: Position, meters: number): { minLon: number; minLat: number; maxLon: number; maxLat: number } {
  const dLat = meters / 111_195 + 0.004;
  const dLon = meters / (111_195 * Math.cos((origin[1] * Math.PI) / 180)) + 0.006;
  return { minLon: origin[0] - dLon, minLat: origin[1] - dLat, maxLon: origin[0] + dLon, maxLat: origin[1] + dLat };
}

/** The concave hull of points as a closed ring of exactly `shape` points. */
function outline(points: Position[], optimizeFor: keyof typeof CONCAVITY, shape: number): Position[] {
  const unique = dedupe(points);
  const hull = unique.length >= 3 ? concaveman(unique, CONCAVITY[optimizeFor], 0) : unique;
  return fit(hull, shape);
}

function outerRing(multi: MultiPolygon): Position[] {
  // Both polygons hold the origin, so their union is one polygon; its holes are filled.
  return multi.reduce((best, polygon) => (area(polygon[0]) > area(best) ? polygon[0] : best), multi[0][0]);
}

/**
 * A ring (closed or not) as a counter-clockwise closed ring of exactly `shape` points that contains
 * it: points added in the middle of the longest sides, or taken away by enlarging moves only.
 */
function fit(ring: Position[], shape: number): Position[] {
  let local = open(ring).map(([lon, lat]) => [lon * scale(ring), lat] as Position);
  if (signedArea(local) < 0) local.reverse();
  const wanted = shape - 1;
  while (local.length > wanted) local = removeInwardCorner(local) ?? removeConvexSide(local) ?? convexHull(local);
  while (local.length < wanted) {
    let longest = 0;
    local.forEach((p, i) => {
      if (length(p, local[(i + 1) % local.length]) > length(local[longest], local[(longest + 1) % local.length])) longest = i;
    });
    const [a, b] = [local[longest], local[(longest + 1) % local.length]];
    local.splice(longest + 1, 0, [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2]);
  }
  const k = scale(ring);
  const result = local.map(([x, y]) => [round6(x / k), round6(y)] as Position);
  return [...result, [...result[0]] as Position];
}

/** Removes the reflex vertex whose removal adds the least area without making the ring cross itself. */
function removeInwardCorner(ring: Position[]): Position[] | undefined {
  const n = ring.length;
  const candidates: Array<{ i: number; added: number }> = [];
  for (let i = 0; i < n; i++) {
    const turn = cross(ring[(i - 1 + n) % n], ring[i], ring[(i + 1) % n]);
    if (turn < 0) candidates.push({ i, added: -turn }); // reflex, for a counter-clockwise ring
  }
  candidates.sort((a, b) => a.added - b.added || a.i - b.i);
  for (const { i } of candidates) {
    const [p, v, q] = [ring[(i - 1 + n) % n], ring[i], ring[(i + 1) % n]];
    if (ring.some((w, j) => j !== i && j !== (i - 1 + n) % n && j !== (i + 1) % n && inTriangle(w, p, v, q))) continue;
    if (ring.some((w, j) => crossesProperly(p, q, w, ring[(j + 1) % n]))) continue;
    return ring.filter((_p, j) => j !== i);
  }
  return undefined;
}

/** On a convex ring, replaces the side whose removal adds the least area by extending its neighbours. */
function removeConvexSide(ring: Position[]): Position[] | undefined {
  const n = ring.length;
  if (ring.some((v, i) => cross(ring[(i - 1 + n) % n], v, ring[(i + 1) % n]) < 0)) return undefined;
  let best: { i: number; x: Position; added: number } | undefined;
  for (let i = 0; i < n; i++) {
    const [a, b, c, d] = [ring[(i - 1 + n) % n], ring[i], ring[(i + 1) % n], ring[(i + 2) % n]];
    const x = intersect(a, b, d, c);
    if (!x) continue;
    const added = cross(b, x, c) / 2;
    if (added >= 0 && (!best || added < best.added)) best = { i, x, added };
  }
  if (!best) return undefined;
  const { i, x } = best;
  const next = (i + 1) % n;
  return ring.flatMap((p, j) => (j === i ? [x] : j === next ? [] : [p]));
}

/** Where the ray from a through b meets the ray from d through c, beyond b and c; undefined if they do not. */
function intersect(a: Position, b: Position, d: Position, c: Position): Position | undefined {
  const r: Position = [b[0] - a[0], b[1] - a[1]];
  const s: Position = [c[0] - d[0], c[1] - d[1]];
  const denominator = r[0] * s[1] - r[1] * s[0];
  if (Math.abs(denominator) < 1e-18) return undefined;
  const t = ((d[0] - a[0]) * s[1] - (d[1] - a[1]) * s[0]) / denominator;
  const u = ((d[0] - a[0]) * r[1] - (d[1] - a[1]) * r[0]) / denominator;
  if (t <= 1 || u <= 1) return undefined;
  return [a[0] + r[0] * t, a[1] + r[1] * t];
}

function convexHull(points: Position[]): Position[] {
  const sorted = [...points].sort((p, q) => p[0] - q[0] || p[1] - q[1]);
  const half = (list: Position[]) => {
    const hull: Position[] = [];
    for (const p of list) {
      while (hull.length >= 2 && cross(hull[hull.length - 2], hull[hull.length - 1], p) <= 0) hull.pop();
      hull.push(p);
    }
    hull.pop();
    return hull;
  };
  return [...half(sorted), ...half([...sorted].reverse())];
}

function cross(o: Position, a: Position, b: Position): number {
  return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

function inTriangle(w: Position, a: Position, b: Position, c: Position): boolean {
  const d1 = cross(a, b, w);
  const d2 = cross(b, c, w);
  const d3 = cross(c, a, w);
  return (d1 < 0 && d2 < 0 && d3 < 0) || (d1 > 0 && d2 > 0 && d3 > 0);
}

function crossesProperly(p: Position, q: Position, a: Position, b: Position): boolean {
  const d1 = cross(p, q, a);
  const d2 = cross(p, q, b);
  const d3 = cross(a, b, p);
  const d4 = cross(a, b, q);
  return ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0));
}

function signedArea(ring: Position[]): number {
  return ring.reduce((sum, p, i) => sum + cross([0, 0], p, ring[(i + 1) % ring.length]), 0) / 2;
}

function area(ring: Position[]): number {
  return Math.abs(signedArea(ring));
}

function open(ring: Position[]): Position[] {
  const first = ring[0];
  const last = ring[ring.length - 1];
  return ring.length > 1 && first[0] === last[0] && first[1] === last[1] ? ring.slice(0, -1) : [...ring];
}

function dedupe(points: Position[]): Position[] {
  const seen = new Set<string>();
  return points.filter((p) => {
    const key = `${p[0].toFixed(7)},${p[1].toFixed(7)}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function scale(ring: Position[]): number {
  return Math.cos((ring[0][1] * Math.PI) / 180);
}

function length(a: Position, b: Position): number {
  return Math.hypot(b[0] - a[0], b[1] - a[1]);
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
