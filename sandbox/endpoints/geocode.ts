import { createHash } from 'node:crypto';
import { accepts, badRequest, notAcceptable, sendJson } from '../http';
import { Sandbox } from '../server';
import { townOf } from '../town/index';
import { Position } from '../town/network';
import { SANDBOX_CITY, cityIn, house, pointAlong, spotFor, streetLike, streetNamed } from '../town/places';

/**
 * `POST /v1/geocode?address=…`: results in the spec's result shape, placed in the sandbox's town
 * (sandbox/town): a query is read for a city of the bundled list (its whole text or a comma-separated
 * part; else Sandbox City), then:
 * - "nowhere" anywhere in the query: no match (an empty FeatureCollection);
 * - "near", "next to", "opposite", "behind" or "beside": landmark / Point / landmark, at a junction a
 *   stable distance from the city;
 * - a house number on a street of the town (the nearest street of that name): exact / Point /
 *   house_number on an arterial (Main Street, High Street, …: every house known), interpolated / Point /
 *   house_number between its numbered neighbours on a residential street;
 * - a street of the town without a number (or a number beyond its last): exact / Centroid / street,
 *   at the street's middle;
 * - a street name one or two letters off a street of the town: fuzzy / Point / street, on that street;
 * - a city alone: fallback / Centroid / street at the city's centre, a Cluster of cells;
 * - anything else: fallback / Centroid / street at a stable junction near the city, a Cluster of cells.
 * The wrapper is set by `sandbox.stateOf('geocode', …).wrapper`: 'collection' (default), 'feature' or 'wrapped'.
 * With the typical durations on (`SandboxModes`), a query with a landmark ("near" …) is descriptive and
 * takes 700–800 ms, any other 100–200 ms, as the spec says; the same query always takes the same time.
 */

const LANDMARK = /\b(near|next to|opposite|behind|beside)\b/i;
const HOUSE_NUMBER = /(^|\s)(\d{1,5})[a-z]?(\s|,|$)/i;
/** A street name: one to four words before a street word (bounded, so a long text is read in linear time). */
const STREET = /(?<![\p{L}'’])(?:[\p{L}'’]+ ){1,4}?(?:street|road|lane|avenue|way|square|close|grove|crescent)\b/iu;

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
  const town = townOf();
  const namedCity = cityIn(text);
  const city = namedCity ?? SANDBOX_CITY;
  const houseNumber = HOUSE_NUMBER.exec(text)?.[2] ?? null;
  const streetText = STREET.exec(text.replace(LANDMARK, ','))?.[0] ?? null;
  let found: { position: Position; match: [string, string, string]; street: string | null; number: string | null } | undefined;
  if (LANDMARK.test(text)) {
    found = { position: spotFor(town, lower, city.lon, city.lat), match: ['landmark', 'Point', 'landmark'], street: null, number: null };
  } else if (streetText) {
    // The longest name that ends the street text ("Old Main Street", else "Main Street").
    const words = streetText.split(' ');
    const names = words.map((_w, k) => words.slice(k).join(' ')).slice(0, -1);
    const find = <T>(lookUp: (name: string) => T | undefined) => names.reduce<T | undefined>((found, name) => found ?? lookUp(name), undefined);
    const exact = find((name) => streetNamed(town, name, city.lon, city.lat));
    const street = exact ?? find((name) => streetLike(town, name, city.lon, city.lat));
    const home = exact && houseNumber ? house(exact, Number(houseNumber)) : undefined;
    if (home) {
      found = {
        position: home.position,
        match: [home.surveyed ? 'exact' : 'interpolated', 'Point', 'house_number'],
        street: exact?.ref.name ?? null,
        number: houseNumber,
      };
    } else if (exact) {
      found = { position: pointAlong(exact, exact.length / 2), match: ['exact', 'Centroid', 'street'], street: exact.ref.name, number: null };
    } else if (street) {
      found = { position: pointAlong(street, street.length / 2), match: ['fuzzy', 'Point', 'street'], street: street.ref.name, number: null };
    }
  }
  found ??= {
    position: namedCity && !streetText ? [round(city.lon), round(city.lat)] : spotFor(town, lower, city.lon, city.lat),
    match: ['fallback', 'Centroid', 'street'],
    street: null,
    number: null,
  };
  const [matchType, accuracy, component] = found.match;
  const landmarks = matchType === 'landmark' ? [{ label: text.split(LANDMARK)[2]?.trim() || 'landmark', id: `lm-${hash(lower).slice(0, 8)}` }] : [];
  return {
    type: 'Feature',
    geometry: { type: 'Point', coordinates: found.position },
    properties: {
      address_components: {
        place: { label: text, id: `pl-${hash(lower).slice(0, 12)}` },
        admin: { country: city.country, region: city.region, city: city.name, postal_code: accuracy === 'Point' ? postalCode(found.position) : null },
        street: found.street,
        house_number: found.number,
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

/** A five-digit postal code of the 0.05° square holding a position. */
function postalCode([lon, lat]: Position): string {
  return String(10000 + ((((Math.floor(lon / 0.05) * 7919 + Math.floor(lat / 0.05) * 104729) % 90000) + 90000) % 90000));
}

/** The spec's typical duration of a query, in ms: about 750 for a descriptive (landmark-based) one, 100–200 for another. */
export function typicalDuration(query: string): number {
  const share = parseInt(hash(query).slice(0, 8), 16) / 0xffffffff;
  return Math.round((LANDMARK.test(query) ? 700 : 100) + share * 100);
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
