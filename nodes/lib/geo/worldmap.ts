import type { LatLon } from './geohash';
import type { Place } from './locations';

/**
 * Our results as the payloads node-red-contrib-web-worldmap (5.x) draws as they are: markers
 * (`name`, `lat`, `lon`), lines (`line: [[lat, lon], …]`) and GeoJSON polygons (`geojson`), each
 * on a `layer`. worldmap identifies a shape by its `name` across the whole map, so names are made
 * from the query (the address, the words, the waypoints): repeating a query replaces its shapes.
 * worldmap writes names and popups into the page as HTML, so every text from users or the
 * service is escaped here. Popup rows are labelled with the spec's member names, which read the
 * same in every language.
 *
 * This file holds what every shape shares (names, popups, colours); the shapes themselves are in
 * `worldmap-places.ts` (geocode, words, bulk, isoline) and `worldmap-routes.ts` (sequence, route).
 */

/** One thing worldmap draws: the members of its `msg.payload`. */
export type MapShape = Record<string, unknown>;
/** What one input puts on the Map output: one shape, or several drawn together. */
export type MapPayload = MapShape | MapShape[];

/** A popup row: the spec's member name and its value. */
export type Row = [label: string, value: unknown];

/** Decimal places of coordinates in names: about 1 m, enough to tell places apart. */
const NAME_DECIMALS = 5;
/** Fill colours of isoline ranges, smallest range first (ColorBrewer "Spectral", colour-blind safe). */
export const RANGE_COLORS = ['#2b83ba', '#abdda4', '#fdae61', '#d7191c', '#5e3c99', '#1a9641'];
export const ROUTE_COLOR = '#1f6feb';
export const INDOOR_COLOR = '#8e44ad';
export const START_COLOR = '#2e7d32';
export const END_COLOR = '#c62828';
export const STOP_COLOR = '#ef6c00';

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

function popupText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value) ?? '';
}

/** A popup: one row per value that is set, label and value escaped. */
export function popupTable(rows: Row[]): string {
  const cells = rows
    .filter(([, value]) => value !== undefined && value !== null && value !== '')
    .map(([label, value]) => `<tr><td>${escapeHtml(label)}</td><td>${escapeHtml(popupText(value))}</td></tr>`);
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
export function placesLabel(places: Place[]): string {
  const labels = places.map(placeLabel);
  return labels.length <= 3 ? labels.join(' → ') : `${labels[0]} → … → ${labels[labels.length - 1]} (${labels.length})`;
}

export function latLon(point: LatLon): [number, number] {
  return [point.lat, point.lon];
}

/**
 * A route's length with its unit: metres below a kilometre, else kilometres to 0.1 km. The spec gives
 * no unit for a segment's `length` and `duration`; the pack reads them as metres and seconds, the units
 * of the isoline ranges (docs/decisions.md).
 */
export function lengthText(meters: unknown): string | undefined {
  if (typeof meters !== 'number' || !Number.isFinite(meters)) return undefined;
  return meters < 1000 ? `${Math.round(meters)} m` : `${(meters / 1000).toFixed(1)} km`;
}

/** A duration in seconds with its units: `49 s`, `13 min 49 s`, `2 h 5 min`. */
export function durationText(seconds: unknown): string | undefined {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return undefined;
  const total = Math.round(seconds);
  if (total < 60) return `${total} s`;
  if (total < 3600) return `${Math.floor(total / 60)} min ${total % 60} s`;
  return `${Math.floor(total / 3600)} h ${Math.floor((total % 3600) / 60)} min`;
}

/** How close worldmap zooms to a result that is one point (a street, at Leaflet's scale). */
const POINT_ZOOM = 16;

/** Every [lat, lon] a shape draws: a marker's position, a line's vertices, a GeoJSON geometry's positions. */
function pointsOf(shape: MapShape): Array<[number, number]> {
  const points: Array<[number, number]> = [];
  if (typeof shape.lat === 'number' && typeof shape.lon === 'number') points.push([shape.lat, shape.lon]);
  if (Array.isArray(shape.line)) {
    for (const vertex of shape.line as unknown[]) {
      if (Array.isArray(vertex) && typeof vertex[0] === 'number' && typeof vertex[1] === 'number') points.push([vertex[0], vertex[1]]);
    }
  }
  const walk = (coordinates: unknown): void => {
    if (!Array.isArray(coordinates)) return;
    if (typeof coordinates[0] === 'number' && typeof coordinates[1] === 'number') points.push([coordinates[1], coordinates[0]]);
    else for (const inner of coordinates) walk(inner);
  };
  const geometry = (shape.geojson as { geometry?: { coordinates?: unknown } } | undefined)?.geometry;
  walk(geometry?.coordinates);
  return points;
}

/**
 * The worldmap command that shows what a result draws: `bounds` around all its shapes, or a view
 * centred on it when it is one point; undefined when nothing has a position.
 */
export function viewCommand(shapes: MapShape[]): Record<string, unknown> | undefined {
  const points = shapes.flatMap(pointsOf);
  if (points.length === 0) return undefined;
  const lats = points.map(([lat]) => lat);
  const lons = points.map(([, lon]) => lon);
  const south = Math.min(...lats);
  const north = Math.max(...lats);
  const west = Math.min(...lons);
  const east = Math.max(...lons);
  if (south === north && west === east) return { lat: south, lon: west, zoom: POINT_ZOOM };
  return {
    bounds: [
      [south, west],
      [north, east],
    ],
  };
}
