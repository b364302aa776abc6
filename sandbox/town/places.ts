import { Edge, Position, StreetRef, Town, meters } from './network';
import { hashText } from './random';
import { cityMapping } from './vendor';

/**
 * Places in the town: real cities from a bundled list (city-timezones, about 7,300 cities with their
 * coordinates), streets found by name near a place, house numbers along a street, and stable spots for
 * text that names neither.
 *
 * House numbers run from the street's west (or south) end, odd and even side by side, one pair every
 * HOUSE_SPACING_M meters: number n is (ceil(n / 2) − 0.5) × HOUSE_SPACING_M along the street, so
 * numbers on one street are in order along it and 12 lies between 10 and 14.
 */

export const HOUSE_SPACING_M = 20;
/** How far from a place streets are looked for by name, in lattice steps (about 6 km). */
const SEARCH_STEPS = 28;

interface City {
  name: string;
  country: string;
  region: string | null;
  lat: number;
  lon: number;
}

/** Where text that names no city is placed. */
export const SANDBOX_CITY: City = { name: 'Sandbox City', country: 'Sandboxia', region: null, lat: 52.5, lon: 13.4 };

let cityIndex: Map<string, City> | undefined;

/** The most populous city of the list by this name (any letter case, with or without accents), if any. */
function cityNamed(name: string): City | undefined {
  const key = name.trim().toLowerCase();
  if (key === SANDBOX_CITY.name.toLowerCase()) return SANDBOX_CITY;
  if (!cityIndex) {
    cityIndex = new Map();
    const population = new Map<string, number>();
    for (const c of cityMapping) {
      const city = { name: c.city, country: c.country, region: c.province || null, lat: c.lat, lon: c.lng };
      for (const k of [c.city.toLowerCase(), c.city_ascii.toLowerCase()]) {
        if ((population.get(k) ?? -1) < c.pop) {
          population.set(k, c.pop);
          cityIndex.set(k, city);
        }
      }
    }
  }
  return cityIndex.get(key);
}

/** The city a text names: its whole, or one of its comma-separated parts (the last first). */
export function cityIn(text: string): City | undefined {
  const parts = text.split(',').map((part) => part.trim());
  for (const candidate of [text.trim(), ...parts.reverse()]) {
    const city = candidate === '' ? undefined : cityNamed(candidate);
    if (city) return city;
  }
  return undefined;
}

/** The streets whose edges leave junctions within SEARCH_STEPS lattice steps of a place, each once. */
function streetsNear(town: Town, lon: number, lat: number): StreetRef[] {
  const [i0, j0] = town.index(lon, lat);
  const streets = new Map<string, StreetRef>();
  for (let j = j0 - SEARCH_STEPS; j <= j0 + SEARCH_STEPS; j++) {
    for (let i = i0 - SEARCH_STEPS; i <= i0 + SEARCH_STEPS; i++) {
      for (const direction of ['east', 'north'] as const) {
        const street = town.streetOf(i, j, direction);
        if (!streets.has(street.key)) streets.set(street.key, street);
      }
    }
  }
  return [...streets.values()];
}

interface Street {
  ref: StreetRef;
  edges: Edge[];
  /** Meters along the street where each edge starts (the street may have gaps, as at a river). */
  starts: number[];
  length: number;
}

function street(town: Town, ref: StreetRef): Street {
  const edges = town.streetEdges(ref);
  const starts: number[] = [];
  let length = 0;
  for (const edge of edges) {
    starts.push(length);
    length += edge.length;
  }
  return { ref, edges, starts, length };
}

/** The street of this name (any letter case) nearest to a place, if one lies within the search. */
export function streetNamed(town: Town, name: string, lon: number, lat: number): Street | undefined {
  const wanted = name.toLowerCase();
  const matches = streetsNear(town, lon, lat).filter((ref) => ref.name.toLowerCase() === wanted);
  return nearest(town, matches, lon, lat);
}

/** The nearest street whose name is one or two letters off, if any (for a misspelt name). */
export function streetLike(town: Town, name: string, lon: number, lat: number): Street | undefined {
  const wanted = name.toLowerCase();
  const scored = streetsNear(town, lon, lat)
    // Names whose lengths differ by more than two are more than two letters off.
    .filter((ref) => Math.abs(ref.name.length - wanted.length) <= 2)
    .map((ref) => ({ ref, d: editDistance(ref.name.toLowerCase(), wanted) }))
    .filter(({ d }) => d > 0 && d <= 2);
  const least = Math.min(...scored.map(({ d }) => d));
  return nearest(
    town,
    scored.filter(({ d }) => d === least).map(({ ref }) => ref),
    lon,
    lat,
  );
}

function nearest(town: Town, refs: StreetRef[], lon: number, lat: number): Street | undefined {
  let best: { street: Street; d: number } | undefined;
  for (const ref of refs) {
    const candidate = street(town, ref);
    if (candidate.edges.length === 0) continue;
    const d = meters(pointAlong(candidate, candidate.length / 2), [lon, lat]);
    if (!best || d < best.d || (d === best.d && ref.key < best.street.ref.key)) best = { street: candidate, d };
  }
  return best?.street;
}

/** The point `along` meters from the street's start. */
export function pointAlong(s: Street, along: number): Position {
  for (let k = s.edges.length - 1; k >= 0; k--) {
    if (along >= s.starts[k] || k === 0) {
      const edge = s.edges[k];
      const t = edge.length === 0 ? 0 : Math.max(0, Math.min(1, (along - s.starts[k]) / edge.length));
      const [a, b] = [edge.line[0], edge.line[edge.line.length - 1]];
      return [round6(a[0] + (b[0] - a[0]) * t), round6(a[1] + (b[1] - a[1]) * t)];
    }
  }
  throw new Error('a street without edges');
}

/** The highest house number of a street. */
export function lastNumber(s: Street): number {
  return 2 * Math.floor(s.length / HOUSE_SPACING_M);
}

/**
 * Where house number n stands on a street, and whether it is surveyed (every house of an arterial is
 * known) or interpolated between its numbered neighbours (residential streets); undefined beyond the
 * last number.
 */
export function house(s: Street, n: number): { position: Position; surveyed: boolean } | undefined {
  if (!Number.isInteger(n) || n < 1 || n > lastNumber(s)) return undefined;
  return { position: pointAlong(s, (Math.ceil(n / 2) - 0.5) * HOUSE_SPACING_M), surveyed: s.edges[0].cls === 'arterial' || s.edges[0].cls === 'motorway' };
}

/** A junction a stable number of steps (up to `steps` each way) from a place, for a text: a spot on a street. */
export function spotFor(town: Town, text: string, lon: number, lat: number, steps = 10): Position {
  const [i0, j0] = town.index(lon, lat);
  const h = hashText(town.seed, text.toLowerCase());
  const span = 2 * steps + 1;
  return town.position(i0 + (h % span) - steps, j0 + (Math.floor(h / span) % span) - steps);
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_v, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length];
}

function round6(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
