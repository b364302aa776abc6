import { Bounds, Graph, Snap, Weight, buildGraph, dijkstra, pathIn, snap, sourcesOf } from './graph';
import { touches } from './geojson';
import { Mode, Position, Town } from './network';
import { speedOn } from './route';

/**
 * Waypoint sequencing on the town's streets: a matrix of leg distances (m) and times (s), one search
 * per waypoint, by time (`fastest`) or length (`shortest`), with the traffic factor of the departure;
 * then the visiting order from the first waypoint that minimises the chosen measure, exact up to
 * EXACT_UP_TO waypoints (Held–Karp), nearest neighbour improved by 2-opt above.
 */

const EXACT_UP_TO = 9;
const MARGIN_DEG = 0.03;

interface Matrix {
  meters: number[][];
  seconds: number[][];
}

interface MatrixRequest {
  points: Position[];
  mode: Mode;
  preference: 'fastest' | 'shortest';
  /** Boxes whose streets are left out; ignored when one holds a waypoint or they leave no way. */
  avoid: Bounds[];
  /** The share of its speed the mode keeps (traffic at the departure). */
  traffic: number;
}

export function matrix(town: Town, request: MatrixRequest): Matrix {
  const { points, mode } = request;
  const bounds = {
    minLon: Math.min(...points.map((p) => p[0])) - MARGIN_DEG,
    minLat: Math.min(...points.map((p) => p[1])) - MARGIN_DEG,
    maxLon: Math.max(...points.map((p) => p[0])) + MARGIN_DEG,
    maxLat: Math.max(...points.map((p) => p[1])) + MARGIN_DEG,
  };
  const seconds: Weight = (edge) => edge.length / ((speedOn(edge, mode) / 3.6) * request.traffic);
  const weight: Weight = request.preference === 'fastest' ? seconds : (edge) => edge.length;
  const boxes = request.avoid.filter((box) => !points.some((p) => p[0] > box.minLon && p[0] < box.maxLon && p[1] > box.minLat && p[1] < box.maxLat));
  const attempt = (graph: Graph): Matrix | undefined => {
    const snaps = points.map((p) => snap(graph, p));
    if (snaps.some((s) => s === undefined)) return undefined;
    const at = snaps as Snap[];
    const result: Matrix = { meters: [], seconds: [] };
    for (const from of at) {
      const search = dijkstra(graph, sourcesOf(graph, from, weight), weight);
      const rowMeters: number[] = [];
      const rowSeconds: number[] = [];
      for (const to of at) {
        const found = pathIn(graph, search, from, to, weight);
        if (!found) return undefined;
        rowMeters.push(found.steps.reduce((sum, step) => sum + step.length, 0));
        rowSeconds.push(found.steps.reduce((sum, step) => sum + (step.length / step.edge.length) * seconds(step.edge, 0), 0));
      }
      result.meters.push(rowMeters);
      result.seconds.push(rowSeconds);
    }
    return result;
  };
  const found =
    (boxes.length > 0 ? attempt(buildGraph(town, bounds, mode, (edge) => boxes.some((box) => touches(edge, box)))) : undefined) ??
    attempt(buildGraph(town, bounds, mode));
  if (!found) throw new Error('the town has no street between two waypoints');
  return found;
}

/** The order of visits from waypoint 0 with the least summed cost (exact up to EXACT_UP_TO waypoints). */
export function bestOrder(cost: number[][]): number[] {
  const n = cost.length;
  if (n <= 2) return Array.from({ length: n }, (_v, i) => i);
  return n <= EXACT_UP_TO ? heldKarp(cost) : twoOpt(cost, nearestNeighbour(cost));
}

/** The summed cost of visiting in an order. */
export function orderCost(cost: number[][], order: number[]): number {
  return order.reduce((sum, stop, k) => (k === 0 ? 0 : sum + cost[order[k - 1]][stop]), 0);
}

/** Exact: the cheapest open path from 0 through every other waypoint, by dynamic programming over subsets. */
function heldKarp(cost: number[][]): number[] {
  const m = cost.length - 1;
  const full = (1 << m) - 1;
  const best: Float64Array[] = Array.from({ length: 1 << m }, () => new Float64Array(m).fill(Infinity));
  const parent: Int8Array[] = Array.from({ length: 1 << m }, () => new Int8Array(m).fill(-1));
  for (let k = 0; k < m; k++) best[1 << k][k] = cost[0][k + 1];
  for (let set = 1; set <= full; set++) {
    for (let last = 0; last < m; last++) {
      if (!(set & (1 << last)) || best[set][last] === Infinity) continue;
      for (let next = 0; next < m; next++) {
        if (set & (1 << next)) continue;
        const to = set | (1 << next);
        const through = best[set][last] + cost[last + 1][next + 1];
        if (through < best[to][next]) {
          best[to][next] = through;
          parent[to][next] = last;
        }
      }
    }
  }
  let last = 0;
  for (let k = 1; k < m; k++) if (best[full][k] < best[full][last]) last = k;
  const order: number[] = [];
  for (let set = full; last >= 0;) {
    order.unshift(last + 1);
    const previous = parent[set][last];
    set &= ~(1 << last);
    last = previous;
  }
  return [0, ...order];
}

function nearestNeighbour(cost: number[][]): number[] {
  const order = [0];
  const left = new Set(cost.map((_row, i) => i).slice(1));
  while (left.size > 0) {
    const from = order[order.length - 1];
    let next = -1;
    for (const candidate of left) if (next < 0 || cost[from][candidate] < cost[from][next]) next = candidate;
    order.push(next);
    left.delete(next);
  }
  return order;
}

/** 2-opt on an open path with a fixed start: reverses stretches while that lowers the cost. */
function twoOpt(cost: number[][], start: number[]): number[] {
  let order = start;
  let improved = true;
  while (improved) {
    improved = false;
    for (let i = 1; i < order.length - 1; i++) {
      for (let j = i + 1; j < order.length; j++) {
        const candidate = [...order.slice(0, i), ...order.slice(i, j + 1).reverse(), ...order.slice(j + 1)];
        if (orderCost(cost, candidate) < orderCost(cost, order) - 1e-9) {
          order = candidate;
          improved = true;
        }
      }
    }
  }
  return order;
}
