import { createHash } from 'node:crypto';
import { Sandbox, accepts, badRequest, notAcceptable, sendJson } from '../server';

/**
 * `POST /v1/geocode?address=…`: plausible, deterministic results in the spec's result shape.
 * Which result a query gets (so that every enum value is reachable):
 * - "nowhere" anywhere in the query: no match (an empty FeatureCollection);
 * - "near", "next to", "opposite", "behind" or "beside": landmark / Point / landmark;
 * - a house number on a known street: exact / Point / house_number;
 * - a house number on another street: interpolated / Point / house_number;
 * - a known street misspelt by one or two letters: fuzzy / Point / street;
 * - a known street without a number: exact / Centroid / street;
 * - anything else (a town, a postal code): fallback / Centroid / street, a Cluster of cells.
 * The wrapper is set by `sandbox.stateOf('geocode', …).wrapper`: 'collection' (default), 'feature' or 'wrapped'.
 * With the typical durations on (`SandboxModes`), a query with a landmark ("near" …) is descriptive and
 * takes 700–800 ms, any other 100–200 ms, as the spec says; the same query always takes the same time.
 */

export const KNOWN_STREETS = ['main street', 'high street', 'station road', 'market square', 'church lane'];
const LANDMARK = /\b(near|next to|opposite|behind|beside)\b/i;
const HOUSE_NUMBER = /(^|\s)(\d{1,5}[a-z]?)(\s|,|$)/i;

export type GeocodeWrapper = 'collection' | 'feature' | 'wrapped';

export default function geocodeEndpoint(sandbox: Sandbox): void {
  sandbox.route('POST', '/v1/geocode', { endpoint: 'geocode', auth: 'project', permission: 'geocode' }, async (ctx) => {
    if (!accepts(ctx.req.headers.accept, 'application/json')) return void notAcceptable(ctx.res, 'application/json', ctx.req.headers.accept);
    const address = ctx.url.searchParams.get('address');
    if (address === null || address.trim() === '') return void badRequest(ctx.res, 'query parameter address is required');
    if (sandbox.modes.typicalDurations) await sandbox.pause(typicalDuration(address));
    const feature = geocode(address);
    const wrapper = sandbox.stateOf<{ wrapper: GeocodeWrapper }>('geocode', () => ({ wrapper: 'collection' })).wrapper;
    sendJson(ctx.res, 200, wrap(feature, wrapper));
  });
}

function wrap(feature: Record<string, unknown> | undefined, wrapper: GeocodeWrapper): unknown {
  const collection = { type: 'FeatureCollection', features: feature ? [feature] : [] };
  if (wrapper === 'feature') return feature ?? collection;
  if (wrapper === 'wrapped') return { status: 'OK', result: collection };
  return collection;
}

/** The result for one query, or undefined for no match. Also used by the bulk job. */
export function geocode(query: string): Record<string, unknown> | undefined {
  const text = query.trim().replace(/\s+/g, ' ');
  if (/nowhere/i.test(text)) return undefined;
  const lower = text.toLowerCase();
  const houseNumber = HOUSE_NUMBER.exec(text)?.[2] ?? null;
  const street = KNOWN_STREETS.find((s) => lower.includes(s)) ?? null;
  const fuzzyStreet = street ? null : findFuzzyStreet(lower);
  const otherStreet = /\b[\p{L}]+ (street|road|lane|avenue|way|square)\b/iu.exec(text)?.[0] ?? null;

  let match: [string, string, string];
  let streetName: string | null = street ?? fuzzyStreet ?? otherStreet;
  if (LANDMARK.test(text)) match = ['landmark', 'Point', 'landmark'];
  else if (houseNumber && street) match = ['exact', 'Point', 'house_number'];
  else if (houseNumber && otherStreet) match = ['interpolated', 'Point', 'house_number'];
  else if (fuzzyStreet) match = ['fuzzy', 'Point', 'street'];
  else if (street) match = ['exact', 'Centroid', 'street'];
  else {
    match = ['fallback', 'Centroid', 'street'];
    streetName = null;
  }
  const [matchType, accuracy, component] = match;
  const [lon, lat] = positionFor(lower);
  const landmarks = matchType === 'landmark' ? [{ label: text.split(LANDMARK)[2]?.trim() || 'landmark', id: `lm-${hash(lower).slice(0, 8)}` }] : [];
  return {
    type: 'Feature',
    geometry: { type: 'Point', coordinates: [lon, lat] },
    properties: {
      address_components: {
        place: { label: text, id: `pl-${hash(lower).slice(0, 12)}` },
        admin: { country: 'Sandboxia', region: null, city: 'Sandbox City', postal_code: accuracy === 'Point' ? '10001' : null },
        street: streetName ? titleCase(streetName) : null,
        house_number: match[2] === 'house_number' ? houseNumber : null,
        landmark: landmarks,
      },
      svc_location:
        accuracy === 'Point'
          ? { type: 'Cell', cell: `cell-${hash(lower).slice(0, 10)}` }
          : { type: 'Cluster', cells: [0, 1, 2].map((i) => `cell-${hash(lower + i).slice(0, 10)}`) },
      quality_metrics: { match_type: matchType, accuracy, match_component: component },
    },
  };
}

/** The spec's typical duration of a query, in ms: about 750 for a descriptive (landmark-based) one, 100–200 for another. */
export function typicalDuration(query: string): number {
  const share = parseInt(hash(query).slice(0, 8), 16) / 0xffffffff;
  return Math.round((LANDMARK.test(query) ? 700 : 100) + share * 100);
}

/** A stable position in a box around the sandbox city, [longitude, latitude]. */
function positionFor(text: string): [number, number] {
  const digest = hash(text);
  const a = parseInt(digest.slice(0, 8), 16) / 0xffffffff;
  const b = parseInt(digest.slice(8, 16), 16) / 0xffffffff;
  return [round(13.3 + a * 0.2), round(52.45 + b * 0.1)];
}

function findFuzzyStreet(lower: string): string | null {
  const words = lower.split(/[\s,]+/);
  for (const street of KNOWN_STREETS) {
    const size = street.split(' ').length;
    for (let i = 0; i + size <= words.length; i++) {
      const candidate = words.slice(i, i + size).join(' ');
      const distance = editDistance(candidate, street);
      if (distance > 0 && distance <= 2) return street;
    }
  }
  return null;
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

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

function titleCase(text: string): string {
  return text.replace(/\b\p{L}/gu, (c) => c.toUpperCase());
}
