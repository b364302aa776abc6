import { Bounds, Graph, Step, Weight, buildGraph, path, snap } from './graph';
import { touches } from './geojson';
import { Edge, Mode, Position, Town } from './network';

/**
 * Routes on the town's streets: a leg is snapped at both ends to the nearest street its transport mode
 * may use, then searched by length (`shortest`) or by time (`fastest`, each street at the mode's speed
 * on it and the traffic of the moment it is reached), on the streets of a box around both ends.
 * Streets that meet an avoided box are left out, unless the box holds an end of the leg or leaves no
 * way; then it is ignored for that leg. A leg may be at most MAX_TRIP_M long in a straight line.
 */

export const MAX_TRIP_M = 30_000;
/** How far beyond its ends the streets of a leg's search reach, in degrees. */
const MARGIN_DEG = 0.03;

/** How fast a mode goes on a street, in km/h, before traffic. */
export function speedOn(edge: Edge, mode: Mode): number {
  if (edge.ferry) return edge.speedLimit ?? 10;
  switch (mode) {
    case 'pedestrian':
      return 5;
    case 'wheelchair':
      return 3.6;
    case 'bicycle':
      return edge.dirtRoad ? 10 : 16;
    case 'truck':
      return Math.min(edge.speedLimit ?? 30, 80);
    default:
      return edge.speedLimit ?? 30;
  }
}

/** The share of its speed a mode keeps on a street at an instant (1: free flow). */
type Traffic = (ms: number, edge: Edge) => number;

interface LegRequest {
  from: Position;
  to: Position;
  mode: Mode;
  preference: 'fastest' | 'shortest';
  avoid?: Bounds;
  /** When the leg starts, ms since the epoch. */
  departure: number;
  traffic: Traffic;
}

/** One step of a leg with its duration in seconds. */
interface TimedStep extends Step {
  seconds: number;
}

/** The steps of a leg from its snapped start to its snapped end, with their durations. */
export function leg(town: Town, request: LegRequest): TimedStep[] {
  const { from, to, mode } = request;
  const seconds: Weight = (edge, spent) => edge.length / ((speedOn(edge, mode) / 3.6) * request.traffic(request.departure + spent * 1000, edge));
  const weight: Weight = request.preference === 'fastest' ? seconds : (edge) => edge.length;
  const bounds = {
    minLon: Math.min(from[0], to[0]) - MARGIN_DEG,
    minLat: Math.min(from[1], to[1]) - MARGIN_DEG,
    maxLon: Math.max(from[0], to[0]) + MARGIN_DEG,
    maxLat: Math.max(from[1], to[1]) + MARGIN_DEG,
  };
  const box = request.avoid;
  const avoidable = box && !within(from, box) && !within(to, box);
  const attempt = (graph: Graph) => {
    const a = snap(graph, from);
    const b = snap(graph, to);
    return a && b ? path(graph, a, b, weight) : undefined;
  };
  const found = (avoidable ? attempt(buildGraph(town, bounds, mode, (edge) => touches(edge, box))) : undefined) ?? attempt(buildGraph(town, bounds, mode));
  if (!found) throw new Error('the town has no street between the ends of a leg');
  let clock = request.departure;
  return found.steps.map((step) => {
    const s = step.length / ((speedOn(step.edge, mode) / 3.6) * request.traffic(clock, step.edge));
    clock += s * 1000;
    return { ...step, seconds: s };
  });
}

/**
 * The steps of a leg grouped into stretches as a driver is told them: a new stretch where the street's
 * name changes or the way turns by more than TURN_DEG; `turn` is how the stretch begins relative to the
 * one before ('continue', 'left' or 'right').
 */
interface Stretch {
  steps: TimedStep[];
  turn: 'continue' | 'left' | 'right';
}

const TURN_DEG = 35;

export function stretches(steps: TimedStep[]): Stretch[] {
  const result: Stretch[] = [];
  steps.forEach((step, k) => {
    const current = result[result.length - 1];
    if (!current) return void result.push({ steps: [step], turn: 'continue' });
    const change = turnBetween(steps[k - 1], step);
    if (step.edge.name === current.steps[0].edge.name && Math.abs(change) <= TURN_DEG) return void current.steps.push(step);
    result.push({ steps: [step], turn: Math.abs(change) <= TURN_DEG ? 'continue' : change > 0 ? 'right' : 'left' });
  });
  return result;
}

/** The change of heading from one step to the next, in degrees, positive to the right. */
function turnBetween(before: Step, after: Step): number {
  const change = bearing(after.line[0], after.line[1]) - bearing(before.line[0], before.line[1]);
  return ((change + 540) % 360) - 180;
}

/** The heading from a to b, degrees clockwise from north. */
function bearing(a: Position, b: Position): number {
  const east = (b[0] - a[0]) * Math.cos((a[1] * Math.PI) / 180);
  const north = b[1] - a[1];
  return (Math.atan2(east, north) * 180) / Math.PI;
}

function within(p: Position, box: Bounds): boolean {
  return p[0] > box.minLon && p[0] < box.maxLon && p[1] > box.minLat && p[1] < box.maxLat;
}
