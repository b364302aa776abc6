import ngeohash from 'ngeohash';
import { invalidInput } from './errors';

export interface LatLon {
  lat: number;
  lon: number;
}

/** The standard geohash alphabet; ngeohash is the authority (the spec's list wrongly adds `l`). */
const GEOHASH = /^[0123456789bcdefghjkmnpqrstuvwxyz]{1,22}$/;

export const DEFAULT_GEOHASH_PRECISION = 9;

export function isGeohash(value: unknown): value is string {
  return typeof value === 'string' && GEOHASH.test(value.toLowerCase());
}

/** Checks ranges; `label` names the offending element in the message ("waypoint 3"). */
export function checkLatLon(lat: unknown, lon: unknown, label: string): LatLon {
  const latitude = toNumber(lat);
  const longitude = toNumber(lon);
  if (latitude === undefined) throw invalidInput(`${label}: latitude ${JSON.stringify(lat)} is not a number`);
  if (longitude === undefined) throw invalidInput(`${label}: longitude ${JSON.stringify(lon)} is not a number`);
  if (latitude < -90 || latitude > 90) throw invalidInput(`${label}: latitude ${latitude} out of range`);
  if (longitude < -180 || longitude > 180) throw invalidInput(`${label}: longitude ${longitude} out of range`);
  return { lat: latitude, lon: longitude };
}

export function encodeGeohash(point: LatLon, precision = DEFAULT_GEOHASH_PRECISION): string {
  return ngeohash.encode(point.lat, point.lon, precision);
}

export function decodeGeohash(geohash: string, label = 'geohash'): LatLon {
  if (!isGeohash(geohash)) throw invalidInput(`${label}: ${JSON.stringify(geohash)} is not a geohash`);
  const { latitude, longitude } = ngeohash.decode(geohash.toLowerCase());
  return { lat: latitude, lon: longitude };
}

/** A GeoJSON position is [longitude, latitude]: the order is easy to get wrong, so it lives here only. */
export function fromPosition(position: unknown, label: string): LatLon {
  if (!Array.isArray(position) || position.length < 2) throw invalidInput(`${label}: not a [longitude, latitude] position`);
  return checkLatLon(position[1], position[0], label);
}

export function toPosition(point: LatLon): [number, number] {
  return [point.lon, point.lat];
}

type Json = Record<string, unknown>;

/** A JSON object: not null, not an array. */
export function isRecord(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export interface GeoJsonFeature extends Json {
  type: 'Feature';
  geometry: { type: string; coordinates: unknown } | null;
  properties: Json | null;
}

/**
 * The best match in a geocode answer whose wrapper the spec does not show: a bare Feature,
 * a FeatureCollection (first feature), an array of features, or an object wrapping any of those.
 */
export function bestFeature(answer: unknown, depth = 0): GeoJsonFeature | undefined {
  if (depth > 3 || answer === null || typeof answer !== 'object') return undefined;
  if (Array.isArray(answer)) {
    for (const item of answer) {
      const found = bestFeature(item, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  const record = answer as Json;
  if (isFeatureLike(record)) {
    return { ...record, type: 'Feature', properties: (record.properties as Json | undefined) ?? null } as GeoJsonFeature;
  }
  if (Array.isArray(record.features)) return bestFeature(record.features, depth + 1);
  for (const value of Object.values(record)) {
    if (value && typeof value === 'object') {
      const found = bestFeature(value, depth + 1);
      if (found) return found;
    }
  }
  return undefined;
}

function isFeatureLike(record: Json): boolean {
  if (record.type === 'Feature') return true;
  const geometry = record.geometry as Json | undefined;
  return !!geometry && typeof geometry === 'object' && 'coordinates' in geometry;
}

/** The point of a Point feature, or undefined when the feature carries no usable point. */
export function featurePoint(feature: GeoJsonFeature | undefined): LatLon | undefined {
  const geometry = feature?.geometry;
  if (!geometry || geometry.type !== 'Point') return undefined;
  try {
    return fromPosition(geometry.coordinates, 'result');
  } catch {
    return undefined;
  }
}

/** A finite number from a number or a numeric string (CSV fields are text), else undefined. */
export function toNumber(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  return Number.isFinite(n) ? n : undefined;
}

const EARTH_RADIUS_M = 6_371_008.8;

/** Great-circle distance in meters (haversine). */
export function distanceMeters(a: LatLon, b: LatLon): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLon = (b.lon - a.lon) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Half the diagonal of a geohash's cell in meters: how far a point in the cell may lie from its centre. */
export function geohashRadiusMeters(geohash: string): number {
  const [south, west, north, east] = ngeohash.decode_bbox(geohash.toLowerCase());
  return distanceMeters({ lat: south, lon: west }, { lat: north, lon: east }) / 2;
}
