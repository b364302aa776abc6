import { TinyQueue } from './vendor';
import { Edge, Mode, Position, Town, TRUCK_HEIGHT_M, meters } from './network';

/**
 * The part of the network a search runs on: the edges of a box that a transport mode may use and that
 * no exclusion removes (avoided features, avoided boxes), as an adjacency list; every street runs both
 * ways. Shortest paths are Dijkstra's on a binary heap (tinyqueue), with an optional cut-off.
 */

export interface Graph {
  edges: Edge[];
  keys: number[];
  positions: Position[];
  /** Per node n, its links are k from `linkStart[n]` to `linkStart[n + 1]`: edge `linkEdge[k]` to node `linkTo[k]`. */
  linkStart: Int32Array;
  linkEdge: Int32Array;
  linkTo: Int32Array;
  nodeOf: Map<number, number>;
}

export interface Bounds {
  minLon: number;
  minLat: number;
  maxLon: number;
  maxLat: number;
}

function allows(edge: Edge, mode: Mode): boolean {
  if (!edge.modes.includes(mode)) return false;
  return mode !== 'truck' || edge.maxHeight === null || edge.maxHeight >= TRUCK_HEIGHT_M;
}

export function buildGraph(town: Town, bounds: Bounds, mode: Mode, excluded: (edge: Edge) => boolean = () => false): Graph {
  const edges: Edge[] = [];
  const keys: number[] = [];
  const positions: Position[] = [];
  const nodeOf = new Map<number, number>();
  const ends: number[] = [];
  const node = (key: number, position: Position) => {
    let n = nodeOf.get(key);
    if (n === undefined) {
      n = keys.length;
      nodeOf.set(key, n);
      keys.push(key);
      positions.push(position);
    }
    return n;
  };
  for (const edge of town.edgesIn(bounds.minLon, bounds.minLat, bounds.maxLon, bounds.maxLat)) {
    if (!allows(edge, mode) || excluded(edge)) continue;
    ends.push(node(edge.from, edge.line[0]), node(edge.to, edge.line[edge.line.length - 1]));
    edges.push(edge);
  }
  const linkStart = new Int32Array(keys.length + 1);
  for (const n of ends) linkStart[n + 1]++;
  for (let n = 0; n < keys.length; n++) linkStart[n + 1] += linkStart[n];
  const fill = linkStart.slice(0, keys.length);
  const linkEdge = new Int32Array(ends.length);
  const linkTo = new Int32Array(ends.length);
  for (let e = 0; e < edges.length; e++) {
    const [a, b] = [ends[2 * e], ends[2 * e + 1]];
    linkEdge[fill[a]] = e;
    linkTo[fill[a]++] = b;
    linkEdge[fill[b]] = e;
    linkTo[fill[b]++] = a;
  }
  return { edges, keys, positions, linkStart, linkEdge, linkTo, nodeOf };
}

/** A point on an edge of the graph: `t` from the edge's start (0) to its end (1). */
export interface Snap {
  edge: number;
  t: number;
  position: Position;
  /** Meters from the point snapped to the street. */
  offset: number;
}

/** The nearest point of the graph's streets to a position (undefined for an empty graph). */
export function snap(graph: Graph, position: Position): Snap | undefined {
  const kx = Math.cos((position[1] * Math.PI) / 180);
  let best: Snap | undefined;
  let bestSq = Infinity;
  graph.edges.forEach((edge, e) => {
    const [a, b] = [edge.line[0], edge.line[edge.line.length - 1]];
    const dx = (b[0] - a[0]) * kx;
    const dy = b[1] - a[1];
    const px = (position[0] - a[0]) * kx;
    const py = position[1] - a[1];
    const lengthSq = dx * dx + dy * dy;
    const t = lengthSq === 0 ? 0 : Math.max(0, Math.min(1, (px * dx + py * dy) / lengthSq));
    const sq = (px - t * dx) ** 2 + (py - t * dy) ** 2;
    if (sq < bestSq) {
      bestSq = sq;
      best = { edge: e, t, position: [round6(a[0] + (b[0] - a[0]) * t), round6(a[1] + (b[1] - a[1]) * t)], offset: 0 };
    }
  });
  if (best) best.offset = Math.sqrt(bestSq) * 111_195;
  return best;
}

/** The cost of a whole edge entered at a cost already spent (seconds for time, meters for distance). */
export type Weight = (edge: Edge, spent: number) => number;

interface Search {
  cost: Float64Array;
  /** The edge and node a node was reached by, -1 for a source. */
  viaEdge: Int32Array;
  viaNode: Int32Array;
}

/** Dijkstra from several sources (node, starting cost); nodes beyond `limit` are left at Infinity. */
export function dijkstra(graph: Graph, sources: Array<{ node: number; cost: number }>, weight: Weight, limit = Infinity): Search {
  const n = graph.keys.length;
  const search: Search = { cost: new Float64Array(n).fill(Infinity), viaEdge: new Int32Array(n).fill(-1), viaNode: new Int32Array(n).fill(-1) };
  const queue = new TinyQueue<{ node: number; cost: number }>([], (a, b) => a.cost - b.cost || a.node - b.node);
  for (const source of sources) {
    if (source.cost < search.cost[source.node] && source.cost <= limit) {
      search.cost[source.node] = source.cost;
      queue.push(source);
    }
  }
  const done = new Uint8Array(n);
  while (queue.length > 0) {
    const { node, cost } = queue.pop() as { node: number; cost: number };
    if (done[node]) continue;
    done[node] = 1;
    for (let k = graph.linkStart[node]; k < graph.linkStart[node + 1]; k++) {
      const edge = graph.linkEdge[k];
      const to = graph.linkTo[k];
      const next = cost + weight(graph.edges[edge], cost);
      if (next < search.cost[to] && next <= limit) {
        search.cost[to] = next;
        search.viaEdge[to] = edge;
        search.viaNode[to] = node;
        queue.push({ node: to, cost: next });
      }
    }
  }
  return search;
}

/** The sources of a search from a snapped point: both ends of its edge at their share of the edge's cost. */
export function sourcesOf(graph: Graph, at: Snap, weight: Weight, spent = 0): Array<{ node: number; cost: number }> {
  const edge = graph.edges[at.edge];
  const full = weight(edge, spent);
  return [
    { node: nodeOf(graph, edge.from), cost: spent + at.t * full },
    { node: nodeOf(graph, edge.to), cost: spent + (1 - at.t) * full },
  ];
}

function nodeOf(graph: Graph, key: number): number {
  return graph.nodeOf.get(key) as number;
}

/** One stretch of a path: along one edge (or part of it), with its geometry. */
export interface Step {
  edge: Edge;
  line: Position[];
  length: number;
}

/**
 * The cheapest path from one snapped point to another, as steps in order, or undefined when the graph
 * does not join them.
 */
export function path(graph: Graph, from: Snap, to: Snap, weight: Weight, spent = 0): { steps: Step[]; cost: number } | undefined {
  return pathIn(graph, dijkstra(graph, sourcesOf(graph, from, weight, spent), weight), from, to, weight, spent);
}

/** The cheapest path to a snapped point in a search already made from another (`sourcesOf(from)`). */
export function pathIn(graph: Graph, search: Search, from: Snap, to: Snap, weight: Weight, spent = 0): { steps: Step[]; cost: number } | undefined {
  const target = graph.edges[to.edge];
  const ends = [
    { node: nodeOf(graph, target.from), share: to.t },
    { node: nodeOf(graph, target.to), share: 1 - to.t },
  ];
  let best: { cost: number; end?: number } = { cost: Infinity };
  for (const { node, share } of ends) {
    const reached = search.cost[node];
    if (reached === Infinity) continue;
    const cost = reached + share * weight(target, reached);
    if (cost < best.cost) best = { cost, end: node };
  }
  if (from.edge === to.edge) {
    const direct = spent + Math.abs(from.t - to.t) * weight(target, spent);
    if (direct <= best.cost) return { steps: [partial(target, from.position, to.position)], cost: direct };
  }
  if (best.end === undefined) return undefined;
  const nodes: number[] = [best.end];
  const edges: number[] = [];
  for (let n = best.end; search.viaNode[n] >= 0; n = search.viaNode[n]) {
    edges.unshift(search.viaEdge[n]);
    nodes.unshift(search.viaNode[n]);
  }
  const steps: Step[] = [partial(graph.edges[from.edge], from.position, graph.positions[nodes[0]])];
  edges.forEach((e, k) => steps.push(partial(graph.edges[e], graph.positions[nodes[k]], graph.positions[nodes[k + 1]])));
  steps.push(partial(target, graph.positions[best.end], to.position));
  return { steps: steps.filter((step) => step.length > 0), cost: best.cost };
}

function partial(edge: Edge, a: Position, b: Position): Step {
  return { edge, line: [a, b], length: meters(a, b) };
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
