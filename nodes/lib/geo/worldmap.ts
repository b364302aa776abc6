import { LatLon, distanceMeters, fromPosition } from './geohash';
import type { Place } from './locations';
import { GeoJsonFeature, bestFeature } from './geojson';
import { Json, isRecord } from '../util/values';

/**
 * Our results as the payloads node-red-contrib-web-worldmap (5.x) draws as they are: markers
 * (`name`, `lat`, `lon`), lines (`line: [[lat, lon], …]`) and GeoJSON polygons (`geojson`), each
 * on a `layer`. worldmap identifies a shape by its `name` across the whole map, so names are made
 * from the query (the address, the words, the waypoints): repeating a query replaces its shapes.
 * worldmap writes names and popups into the page as HTML, so every text from users or the
 * service is escaped here. Popup rows are labelled with the spec's member names, which read the
 * same in every language.
 */

/** One thing worldmap draws: the members of its `msg.payload`. */
export type MapShape = Record<string, unknown>;
/** What one input puts on the Map output: one shape, or several drawn together. */
export type MapPayload = MapShape | MapShape[];

type Row = [label: string, value: unknown];

/** Decimal places of coordinates in names: about 1 m, enough to tell places apart. */
const NAME_DECIMALS = 5;
/** Fill colours of isoline ranges, smallest range first (ColorBrewer "Spectral", colour-blind safe). */
const RANGE_COLORS = ['#2b83ba', '#abdda4', '#fdae61', '#d7191c', '#5e3c99', '#1a9641'];
const ROUTE_COLOR = '#1f6feb';
const INDOOR_COLOR = '#8e44ad';
const START_COLOR = '#2e7d32';
const END_COLOR = '#c62828';
const STOP_COLOR = '#ef6c00';

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** A popup: one row per value that is set, label and value escaped. */
export function popupTable(rows: Row[]): string {
  const cells = rows
    .filter(([, value]) => value !== undefined && value !== null && value !== '')
    .map(([label, value]) => `<tr><td>${escapeHtml(label)}</td><td>${escapeHtml(typeof value === 'object' ? JSON.stringify(value) : String(value))}</td></tr>`);
  return cells.length > 0 ? `<table>${cells.join('')}</table>` : '';
}

/** How a place is named on the map: its own name, the geohash it was given as, or its rounded coordinates. */
export function placeLabel(place: Place): string {
  if (place.name) return place.name;
  if (place.geohash) return place.geohash;
  if (place.point) return `${place.point.lat.toFixed(NAME_DECIMALS)},${place.point.lon.toFixed(NAME_DECIMALS)}`;
  return [place.venueId, place.unitId].filter(Boolean).join('/') || '?';
}

/** A query over several places, named by its ends: `A → B`, `A → B → C`, `A → … → Z (7)`. */
function placesLabel(places: Place[]): string {
  const labels = places.map(placeLabel);
  return labels.length <= 3 ? labels.join(' → ') : `${labels[0]} → … → ${labels[labels.length - 1]} (${labels.length})`;
}

function latLon(point: LatLon): [number, number] {
  return [point.lat, point.lon];
}

/** Geocode: a marker named after the address, with what the match is worth in its popup. */
export function geocodeShapes(address: string, feature: GeoJsonFeature | undefined, location: LatLon | undefined, layer: string): MapPayload | undefined {
  if (!location) return undefined;
  return geocodeMarker(escapeHtml(address), feature, location, layer, []);
}

function geocodeMarker(name: string, feature: GeoJsonFeature | undefined, location: LatLon, layer: string, rows: Row[]): MapShape {
  const properties = isRecord(feature?.properties) ? feature.properties : {};
  const components = isRecord(properties.address_components) ? properties.address_components : {};
  const place = isRecord(components.place) ? components.place : {};
  const quality = isRecord(properties.quality_metrics) ? properties.quality_metrics : {};
  return {
    name,
    layer,
    lat: location.lat,
    lon: location.lon,
    icon: 'map-marker',
    iconColor: ROUTE_COLOR,
    popup: popupTable([
      ...rows,
      ['place', place.label],
      ['match_type', quality.match_type],
      ['accuracy', quality.accuracy],
      ['match_component', quality.match_component],
    ]),
  };
}

/** Three words: a marker named `///word.word.word` with the words, the elevation (and its type from the answer) and the geohash in its popup. */
export function wordsShapes(words: string, location: LatLon & { elevation?: number }, geohash: string, answer: unknown, layer: string): MapPayload {
  const coordinates = isRecord(answer) && isRecord(answer.coordinates) ? answer.coordinates : {};
  return {
    name: escapeHtml(words),
    layer,
    lat: location.lat,
    lon: location.lon,
    icon: 'th',
    iconColor: STOP_COLOR,
    popup: popupTable([
      ['words', words],
      ['elevation', location.elevation === undefined ? undefined : `${location.elevation} m`],
      ['elevationType', coordinates.elevationType],
      ['geohash', geohash],
    ]),
  };
}

/** One located row of a bulk run. */
export interface BulkMapRow {
  index: number;
  input: unknown;
  result: unknown;
  location: LatLon | undefined;
}

/**
 * Bulk: one marker per located row, all in one payload. A row is named by its address and its row
 * number, so that repeated addresses stay apart and a rerun of the same input replaces its markers.
 */
export function bulkShapes(rows: BulkMapRow[], layer: string): MapPayload {
  return rows.flatMap((row) => {
    if (!row.location) return [];
    const address = addressOf(row.input);
    return [geocodeMarker(escapeHtml(`${address} (row ${row.index + 1})`), bestFeature(row.result), row.location, layer, [['row', row.index + 1]])];
  });
}

/** The address of an input row: the string itself, or its `address` member (CSV header in any case). */
function addressOf(input: unknown): string {
  if (typeof input === 'string') return input.trim();
  if (!isRecord(input)) return '';
  const key = Object.keys(input).find((name) => name.trim().toLowerCase() === 'address');
  return key !== undefined && typeof input[key] === 'string' ? input[key].trim() : '';
}

interface Range {
  type: string;
  value: number;
}

/**
 * Isoline: one GeoJSON polygon per origin and range, named `isoline <origin> <range>` and filled by
 * range (the smallest range darkest on top: larger ranges are sent first, so they are drawn below).
 * The service answers origin by origin, ranges in request order; with any other count of polygons
 * the origin is not known and polygons are numbered instead.
 */
export function isolineShapes(features: Json[], origins: Place[], rangeCount: number, layer: string): MapPayload {
  const byOrigin = features.length === origins.length * rangeCount;
  const values = [...new Set(features.map((feature) => rangeOf(feature).value))].sort((a, b) => a - b);
  const shapes = features.map((feature, i) => {
    const range = rangeOf(feature);
    const rangeText = `${range.value} ${range.type === 'time' ? 's' : 'm'}`;
    const origin = byOrigin ? placeLabel(origins[Math.floor(i / rangeCount)]) : `polygon ${i + 1}`;
    const name = escapeHtml(`isoline ${origin} ${rangeText}`);
    const color = RANGE_COLORS[values.indexOf(range.value) % RANGE_COLORS.length];
    return {
      value: range.value,
      shape: {
        name,
        layer,
        color,
        fillColor: color,
        fillOpacity: 0.25,
        weight: 2,
        geojson: {
          type: 'Feature',
          geometry: feature.geometry,
          // worldmap's popup for GeoJSON lists these properties, `name` in bold.
          properties: { name, range: escapeHtml(rangeText), type: escapeHtml(range.type), origin: escapeHtml(origin) },
        },
      },
    };
  });
  return shapes.sort((a, b) => b.value - a.value).map(({ shape }) => shape);
}

function rangeOf(feature: Json): Range {
  const range = isRecord(feature.properties) && isRecord(feature.properties.range) ? feature.properties.range : {};
  return { type: typeof range.type === 'string' ? range.type : 'distance', value: typeof range.value === 'number' ? range.value : 0 };
}

/**
 * Sequence: the stops as markers labelled 1, 2, 3 … in visiting order (arrival and departure in
 * their popups) and the legs between them as one line. `geojson` is the sequence node's output.
 */
export function sequenceShapes(geojson: Json, places: Place[], layer: string): MapPayload {
  const query = escapeHtml(`sequence ${placesLabel(places)}`);
  const features = Array.isArray(geojson.features) ? (geojson.features as Json[]) : [];
  const stops = features.filter((feature) => isRecord(feature.geometry) && feature.geometry.type === 'Point');
  const markers = stops.map((stop, k): MapShape => {
    const properties = isRecord(stop.properties) ? stop.properties : {};
    const point = fromPosition((stop.geometry as Json).coordinates, 'stop');
    const input = typeof properties.input === 'number' ? places[properties.input] : undefined;
    return {
      name: `${query} #${k + 1}`,
      layer,
      lat: point.lat,
      lon: point.lon,
      icon: 'circle',
      iconColor: k === 0 ? START_COLOR : k === stops.length - 1 ? END_COLOR : STOP_COLOR,
      label: String(k + 1),
      popup: popupTable([
        ['stop', k + 1],
        ['waypoint', input ? placeLabel(input) : undefined],
        ['estimatedArrival', properties.estimatedArrival],
        ['estimatedDeparture', properties.estimatedDeparture],
        ['distance', properties.distance],
        ['time', properties.time],
      ]),
    };
  });
  const line = stops.map((stop) => latLon(fromPosition((stop.geometry as Json).coordinates, 'stop')));
  const legs: MapShape[] = line.length < 2 ? [] : [{ name: `${query} legs`, layer, line, color: STOP_COLOR, weight: 4, dashArray: '8 6' }];
  return [...legs, ...markers];
}

/** A stretch of the route line between two waypoints, and whether it touches an indoor waypoint. */
export interface Leg {
  from: number;
  to: number;
  /** First and last index into the line. */
  start: number;
  end: number;
  indoor: boolean;
}

/**
 * The route line cut at its waypoints: a waypoint splits the line at the nearest line point after the
 * previous cut. A waypoint without a known position (an indoor one given by venue and unit) is not a
 * cut: its stretch runs on to the next known one.
 */
export function routeLegs(line: LatLon[], places: Place[]): Leg[] {
  const legs: Leg[] = [];
  let from = 0;
  let start = 0;
  for (let to = 1; to < places.length; to++) {
    const point = places[to].point;
    const last = to === places.length - 1;
    if (!last && !point) continue;
    let end = line.length - 1;
    if (!last && point) {
      for (let i = start; i < line.length; i++) if (distanceMeters(line[i], point) < distanceMeters(line[end], point)) end = i;
    }
    legs.push({ from, to, start, end, indoor: places.slice(from, to + 1).some(isIndoor) });
    from = to;
    start = end;
  }
  return legs;
}

function isIndoor(place: Place): boolean {
  return place.venueId !== undefined || place.unitId !== undefined || place.specObject?.type === 'indoor';
}

/**
 * Route: the line with the route's length, duration and every instruction in its popup, start and
 * end markers, and each stretch touching an indoor waypoint drawn over it as a dashed purple line.
 * `geojson` is the route node's output: the whole line first, then one feature per segment.
 */
export function routeShapes(geojson: Json, places: Place[], layer: string): MapPayload {
  const query = escapeHtml(`route ${placesLabel(places)}`);
  const [whole, ...segments] = Array.isArray(geojson.features) ? (geojson.features as Json[]) : [];
  const coordinates = isRecord(whole?.geometry) && Array.isArray(whole.geometry.coordinates) ? (whole.geometry.coordinates as unknown[]) : [];
  const line = coordinates.map((position) => fromPosition(position, 'route'));
  if (line.length < 2) return [];
  const summary = isRecord(whole.properties) ? whole.properties : {};
  const instructions = segments.map((segment) => (isRecord(segment.properties) ? segment.properties.plainText : undefined)).filter((text): text is string => typeof text === 'string');
  const list = instructions.length > 0 ? `<ol>${instructions.map((text) => `<li>${escapeHtml(text)}</li>`).join('')}</ol>` : '';
  const legs = routeLegs(line, places);
  const indoor = legs.filter((leg) => leg.indoor);
  const endpoint = (which: 'start' | 'end', point: LatLon, place: Place, text: string | undefined): MapShape => ({
    name: `${query} ${which}`,
    layer,
    lat: point.lat,
    lon: point.lon,
    icon: isIndoor(place) ? 'building' : which === 'start' ? 'play' : 'flag-checkered',
    iconColor: which === 'start' ? START_COLOR : END_COLOR,
    popup: popupTable([
      [which, placeLabel(place)],
      ['indoor', isIndoor(place) ? 'yes' : undefined],
      ['instruction', text],
    ]),
  });
  return [
    {
      name: query,
      layer,
      line: line.map(latLon),
      color: ROUTE_COLOR,
      weight: 5,
      clickable: true,
      popup: popupTable([
        ['length', summary.length],
        ['duration', summary.duration],
        ['segments', summary.segments],
        ['indoor legs', indoor.length || undefined],
      ]) + list,
    },
    ...indoor.map((leg, i) => ({
      name: `${query} indoor ${i + 1}`,
      layer,
      line: line.slice(leg.start, leg.end + 1).map(latLon),
      color: INDOOR_COLOR,
      weight: 6,
      dashArray: '4 8',
      clickable: true,
      popup: popupTable([
        ['indoor', `${placeLabel(places[leg.from])} → ${placeLabel(places[leg.to])}`],
        ['waypoints', `${leg.from + 1} → ${leg.to + 1}`],
      ]),
    })),
    endpoint('start', line[0], places[0], instructions[0]),
    endpoint('end', line[line.length - 1], places[places.length - 1], instructions[instructions.length - 1]),
  ];
}
