import type { LatLon } from './geohash';
import type { Place } from './locations';
import { GeoJsonFeature, bestFeature } from './geojson';
import { Fields, isRecord } from '../util/values';
import { MapPayload, MapShape, RANGE_COLORS, ROUTE_COLOR, Row, STOP_COLOR, escapeHtml, placeLabel, popupTable } from './worldmap';

/** worldmap shapes of results about places: a geocoded address, a three-word address, bulk rows, isolines around origins. */

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

/** Three words: a marker named `///word.word.word` with the words, the elevation (and its type from the response) and the geohash in its popup. */
export function wordsShapes(words: string, location: LatLon & { elevation?: number }, geohash: string, body: unknown, layer: string): MapPayload {
  const coordinates = isRecord(body) && isRecord(body.coordinates) ? body.coordinates : {};
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
interface BulkMapRow {
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
 * The service returns them origin by origin, ranges in request order; with any other count of polygons
 * the origin is not known and polygons are numbered instead.
 */
export function isolineShapes(features: Fields[], origins: Place[], rangeCount: number, layer: string): MapPayload {
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

function rangeOf(feature: Fields): Range {
  const range = isRecord(feature.properties) && isRecord(feature.properties.range) ? feature.properties.range : {};
  return { type: typeof range.type === 'string' ? range.type : 'distance', value: typeof range.value === 'number' ? range.value : 0 };
}
