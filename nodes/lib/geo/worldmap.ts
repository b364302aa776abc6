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
