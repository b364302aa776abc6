import { hash32, unit } from './random';
import { arterialName, motorwayName, residentialName } from './names';

/**
 * The street network of the town: a pure function of (seed, where). Junctions sit on a global lattice
 * (DLON × DLAT degrees) moved by a seeded jitter, so a junction's place depends only on its lattice
 * index and neighbouring cells join at their shared edges by construction; nothing is stored. Lines of
 * the lattice have a class: every 24th a motorway, every 6th an arterial, the others residential.
 * - Motorways (110 km/h, cars, carHOV and trucks) meet the network only where they cross an arterial or
 *   another motorway (controlled access): residential streets pass under them. East–west motorways are
 *   toll roads.
 * - Arterials (50 km/h, every mode) are never interrupted; residential east–west streets (30 km/h) are
 *   never interrupted either, so every junction reaches an arterial along its row and the network is
 *   connected for every mode.
 * - North–south residential links vary: some are footpaths, some dirt roads (track, 20 km/h), some have
 *   a 3.5 m height limit (no trucks).
 * - Every 48th row gap holds a river: arterials cross it on bridges, motorways in a tunnel (4.5 m), and
 *   of the residential streets only a ferry (every 12th column, 10 km/h, no trucks) and a footbridge
 *   (every 12th column, six further) do.
 * Junctions and streets are generated per cell of CELL × CELL lattice points, kept in a small LRU.
 */

const DLAT = 0.002;
const DLON = 0.003;
export const CELL = 16;
const MOTORWAY_EVERY = 24;
const ARTERIAL_EVERY = 6;
const RIVER_EVERY = 48;
const RIVER_AT = 35;
const CACHE_CELLS = 256;
/** Height of a truck, in meters: streets with a lower limit are closed to trucks. */
export const TRUCK_HEIGHT_M = 4;

export type StreetClass = 'motorway' | 'arterial' | 'residential' | 'track' | 'footpath' | 'ferry';
export const MODES = ['pedestrian', 'wheelchair', 'bicycle', 'car', 'carHOV', 'truck'] as const;
export type Mode = (typeof MODES)[number];

const ROAD: Mode[] = ['car', 'carHOV', 'truck'];
const ALL: Mode[] = [...MODES];
/** Speed limit (km/h, null: none) and the modes each class allows. */
const CLASSES: Record<StreetClass, { speedLimit: number | null; modes: Mode[] }> = {
  motorway: { speedLimit: 110, modes: ROAD },
  arterial: { speedLimit: 50, modes: ALL },
  residential: { speedLimit: 30, modes: ALL },
  track: { speedLimit: 20, modes: ['pedestrian', 'bicycle', 'car', 'carHOV', 'truck'] },
  footpath: { speedLimit: null, modes: ['pedestrian', 'wheelchair', 'bicycle'] },
  ferry: { speedLimit: 10, modes: ['pedestrian', 'wheelchair', 'bicycle', 'car', 'carHOV'] },
};

/** [longitude, latitude] */
export type Position = [number, number];

export interface Edge {
  /** Lattice keys of the two junctions. */
  from: number;
  to: number;
  /** From `from` to `to`, [lon, lat]. */
  line: Position[];
  /** Meters. */
  length: number;
  cls: StreetClass;
  /** The street this edge belongs to: a key naming one stretch of one lattice line. */
  street: string;
  name: string;
  speedLimit: number | null;
  modes: Mode[];
  toll: boolean;
  tunnel: boolean;
  bridge: boolean;
  ferry: boolean;
  dirtRoad: boolean;
  controlledAccess: boolean;
  /** Meters, or null for no limit. */
  maxHeight: number | null;
}

type LineClass = 'motorway' | 'arterial' | 'residential';

/** A generated cell: its junctions' edges going east and north. */
interface Cell {
  cx: number;
  cy: number;
  edges: Edge[];
}

const KEY_OFFSET = 65536;
const KEY_SPAN = 131072;

export function nodeKey(i: number, j: number): number {
  return (j + KEY_OFFSET) * KEY_SPAN + (i + KEY_OFFSET);
}

const EARTH_RADIUS_M = 6_371_008.8;

export function meters(a: Position, b: Position): number {
  const rad = Math.PI / 180;
  const h = Math.sin(((b[1] - a[1]) * rad) / 2) ** 2 + Math.cos(a[1] * rad) * Math.cos(b[1] * rad) * Math.sin(((b[0] - a[0]) * rad) / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

export class Town {
  private readonly offI: number;
  private readonly offJ: number;
  private readonly cells = new Map<string, Cell>();

  constructor(readonly seed: number) {
    this.offI = hash32(seed, 1) % (RIVER_EVERY * 2);
    this.offJ = hash32(seed, 2) % (RIVER_EVERY * 2);
  }

  columnClass(i: number): LineClass {
    return lineClass(i + this.offI);
  }

  rowClass(j: number): LineClass {
    return lineClass(j + this.offJ);
  }

  /** Whether the river runs between rows j and j + 1. */
  riverAfter(j: number): boolean {
    return mod(j + this.offJ, RIVER_EVERY) === RIVER_AT;
  }

  /** The junction at lattice index (i, j), [lon, lat], six decimals. */
  position(i: number, j: number): Position {
    const amplitude = { motorway: 0, arterial: 0.12, residential: 0.5 };
    const x = i + (unit(this.seed, i, j, 3) - 0.5) * amplitude[this.columnClass(i)];
    const y = j + (unit(this.seed, i, j, 4) - 0.5) * amplitude[this.rowClass(j)];
    return [round6(x * DLON), round6(y * DLAT)];
  }

  /** The lattice index nearest to a position. */
  index(lon: number, lat: number): [number, number] {
    return [Math.round(lon / DLON), Math.round(lat / DLAT)];
  }

  /** The cell holding a lattice index. */
  cellOf(i: number, j: number): [number, number] {
    return [Math.floor(i / CELL), Math.floor(j / CELL)];
  }

  /** A cell, generated on first use and kept among the most recent. */
  cell(cx: number, cy: number): Cell {
    const key = `${cx},${cy}`;
    const cached = this.cells.get(key);
    if (cached) {
      this.cells.delete(key);
      this.cells.set(key, cached);
      return cached;
    }
    const edges: Edge[] = [];
    // Junction positions of the cell and the two rows and columns beyond it, each computed once.
    const size = CELL + 2;
    const positions = new Array<Position | undefined>(size * size);
    const at = (i: number, j: number) => {
      const k = (j - cy * CELL) * size + (i - cx * CELL);
      return (positions[k] ??= this.position(i, j));
    };
    for (let j = cy * CELL; j < (cy + 1) * CELL; j++) {
      for (let i = cx * CELL; i < (cx + 1) * CELL; i++) {
        const east = this.edge(i, j, 'east', at);
        if (east) edges.push(east);
        const north = this.edge(i, j, 'north', at);
        if (north) edges.push(north);
      }
    }
    const cell = { cx, cy, edges };
    this.cells.set(key, cell);
    if (this.cells.size > CACHE_CELLS) this.cells.delete(this.cells.keys().next().value as string);
    return cell;
  }

  /** Edges of the cells covering a box of degrees (each edge once, owned by its west or south junction's cell). */
  edgesIn(minLon: number, minLat: number, maxLon: number, maxLat: number): Edge[] {
    const [c0x, c0y] = this.cellOf(Math.floor(minLon / DLON) - 2, Math.floor(minLat / DLAT) - 2);
    const [c1x, c1y] = this.cellOf(Math.ceil(maxLon / DLON) + 2, Math.ceil(maxLat / DLAT) + 2);
    const edges: Edge[] = [];
    for (let cy = c0y; cy <= c1y; cy++) for (let cx = c0x; cx <= c1x; cx++) edges.push(...this.cell(cx, cy).edges);
    return edges;
  }

  /**
   * The edge leaving junction (i, j) east or north, if any; a pure function of the seed and (i, j).
   * Residential streets skip the junction of a motorway they pass under.
   */
  edge(i: number, j: number, direction: 'east' | 'north', at = (x: number, y: number) => this.position(x, y)): Edge | undefined {
    const east = direction === 'east';
    const along = east ? this.rowClass(j) : this.columnClass(i);
    const here = east ? this.columnClass(i) : this.rowClass(j);
    const next = east ? this.columnClass(i + 1) : this.rowClass(j + 1);
    let step = 1;
    if (along === 'residential') {
      if (here === 'motorway') return undefined;
      if (next === 'motorway') step = 2;
    }
    const i2 = east ? i + step : i;
    const j2 = east ? j : j + step;
    const river = !east && this.riverAfter(j);
    let cls: StreetClass = along;
    let maxHeight: number | null = null;
    if (along === 'residential' && !east) {
      if (river) {
        const slot = mod(i + this.offI, 12);
        if (slot === 3) cls = 'ferry';
        else if (slot === 9) cls = 'footpath';
        else return undefined;
      } else {
        const u = unit(this.seed, i, j, 5);
        if (u < 0.07) cls = 'track';
        else if (u < 0.13) maxHeight = 3.5;
        else if (u < 0.3) cls = 'footpath';
      }
    }
    const tunnel = river && along === 'motorway';
    if (tunnel) maxHeight = 4.5;
    const a = at(i, j);
    const b = at(i2, j2);
    const street = this.streetOf(i, j, direction);
    return {
      from: nodeKey(i, j),
      to: nodeKey(i2, j2),
      line: [a, b],
      length: meters(a, b),
      cls,
      street: street.key,
      name: street.name,
      speedLimit: CLASSES[cls].speedLimit,
      modes: maxHeight !== null && maxHeight < TRUCK_HEIGHT_M ? CLASSES[cls].modes.filter((m) => m !== 'truck') : CLASSES[cls].modes,
      toll: along === 'motorway' && east,
      tunnel,
      bridge: river && cls !== 'ferry' && !tunnel,
      ferry: cls === 'ferry',
      dirtRoad: cls === 'track',
      controlledAccess: along === 'motorway',
      maxHeight,
    };
  }

  /**
   * The street an edge leaving (i, j) belongs to: one stretch of a lattice line between the lines of
   * the next class up (a residential street between arterials, an arterial between motorways), with
   * its name; `start` and `end` are the lattice positions along the line where it begins and ends.
   */
  streetOf(i: number, j: number, direction: 'east' | 'north'): StreetRef {
    const east = direction === 'east';
    const line = east ? j : i;
    const at = east ? i : j;
    const shift = east ? this.offI : this.offJ;
    const cls = east ? this.rowClass(j) : this.columnClass(i);
    const span = cls === 'residential' ? ARTERIAL_EVERY : cls === 'arterial' ? MOTORWAY_EVERY : MOTORWAY_EVERY * 10;
    const segment = Math.floor((at + shift) / span);
    const start = segment * span - shift;
    const lineShift = east ? this.offJ : this.offI;
    const name =
      cls === 'motorway'
        ? motorwayName(this.seed, east, Math.floor((line + lineShift) / MOTORWAY_EVERY))
        : cls === 'arterial'
          ? arterialName(this.seed, east, Math.floor((line + lineShift) / ARTERIAL_EVERY), segment)
          : residentialName(this.seed, east, line, segment);
    return { key: `${east ? 'r' : 'c'}${line}:${segment}`, name, direction, line, start, end: start + span };
  }

  /** The edges of a street in order from its west (or south) end. */
  streetEdges(street: StreetRef): Edge[] {
    const edges: Edge[] = [];
    for (let at = street.start; at < street.end; at++) {
      const edge = street.direction === 'east' ? this.edge(at, street.line, 'east') : this.edge(street.line, at, 'north');
      if (edge && edge.street === street.key) edges.push(edge);
    }
    return edges;
  }
}

export interface StreetRef {
  key: string;
  name: string;
  direction: 'east' | 'north';
  /** The row (east) or column (north) of the street. */
  line: number;
  /** Lattice positions along the line: the street's edges leave the junctions from start to end − 1. */
  start: number;
  end: number;
}

function lineClass(index: number): LineClass {
  if (mod(index, MOTORWAY_EVERY) === 0) return 'motorway';
  if (mod(index, ARTERIAL_EVERY) === 0) return 'arterial';
  return 'residential';
}

function mod(n: number, m: number): number {
  return ((n % m) + m) % m;
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
