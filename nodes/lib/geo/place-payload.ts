import type { LatLon } from './geohash';
import type { GeoJsonFeature } from './geojson';
import { escapeHtml } from './worldmap';
import { formatThreeWords } from './words';
import { isRecord } from '../util/values';

/**
 * A located result as one flat object, for nodes that want the place in `msg.payload` (the *Output*
 * choice "location" of geocode and words): `name`, `lat`, `lon` and a few facts, the shape a
 * worldmap marker, a dashboard or a geofence reads without a change node. `name` is the query, so
 * that the same query moves its marker instead of adding one; names and labels are HTML-escaped, as
 * on the Map output, since worldmap writes them into its page.
 */
interface PlacePayload {
  name: string;
  lat?: number;
  lon?: number;
  /** False when nothing matched: then no `lat` and `lon`. */
  found?: false;
  [member: string]: unknown;
}

/** Geocode: the address sent as `name`, the matched place's label, the geohash and what the match is worth. */
export function geocodePlace(address: string, feature: GeoJsonFeature | undefined, location: LatLon | undefined, geohash: string | undefined): PlacePayload {
  const name = escapeHtml(address);
  if (!location) return { name, found: false };
  const properties = isRecord(feature?.properties) ? feature.properties : {};
  const components = isRecord(properties.address_components) ? properties.address_components : {};
  const place = isRecord(components.place) ? components.place : {};
  const quality = isRecord(properties.quality_metrics) ? properties.quality_metrics : {};
  return withoutUndefined({
    name,
    lat: location.lat,
    lon: location.lon,
    geohash,
    label: typeof place.label === 'string' ? escapeHtml(place.label) : undefined,
    match_type: quality.match_type,
    accuracy: quality.accuracy,
  });
}

/** Three words: `///word.word.word` as `name`, the elevation with its type and the geohash. */
export function wordsPlace(words: readonly string[], location: LatLon & { elevation?: number; elevationType?: string }, geohash: string): PlacePayload {
  return withoutUndefined({
    name: escapeHtml(formatThreeWords(words)),
    lat: location.lat,
    lon: location.lon,
    elevation: location.elevation,
    elevationType: location.elevationType === undefined ? undefined : escapeHtml(location.elevationType),
    geohash,
    words: escapeHtml(words.join('.')),
  });
}

function withoutUndefined(place: PlacePayload): PlacePayload {
  return Object.fromEntries(Object.entries(place).filter(([, value]) => value !== undefined)) as PlacePayload;
}
