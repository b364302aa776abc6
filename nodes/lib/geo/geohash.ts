import ngeohash from 'ngeohash';
import { InputError } from '../util/errors';
import { Label, catalogText } from '../util/catalog-text';
import { toNumber } from '../util/values';

export interface LatLon {
  lat: number;
  lon: number;
}

/**
 * The longest geohash read or written: 12 characters (a cell of a few centimetres), as the sandbox
 * and common geohash libraries take; longer ones add nothing a coordinate of a double carries.
 */
export const MAX_GEOHASH_LENGTH = 12;

/**
 * The standard base-32 geohash alphabet (digits and letters without a, i, l and o), as ngeohash
 * writes it; the spec's list wrongly adds `l`, which no geohash holds.
 */
const GEOHASH = new RegExp(`^[0123456789bcdefghjkmnpqrstuvwxyz]{1,${MAX_GEOHASH_LENGTH}}$`);

export function isGeohash(value: unknown): value is string {
  return typeof value === 'string' && GEOHASH.test(value.toLowerCase());
}

/** Checks ranges; `label` names the offending element in the message ("waypoint 3"). */
export function checkLatLon(lat: unknown, lon: unknown, label: Label): LatLon {
  const latitude = toNumber(lat);
  const longitude = toNumber(lon);
  if (latitude === undefined) throw new InputError(catalogText('error.geo.latNotNumber', { label, value: JSON.stringify(lat) ?? 'undefined' }));
  if (longitude === undefined) throw new InputError(catalogText('error.geo.lonNotNumber', { label, value: JSON.stringify(lon) ?? 'undefined' }));
  if (latitude < -90 || latitude > 90) throw new InputError(catalogText('error.geo.latRange', { label, value: latitude }));
  if (longitude < -180 || longitude > 180) throw new InputError(catalogText('error.geo.lonRange', { label, value: longitude }));
  return { lat: latitude, lon: longitude };
}

export function encodeGeohash(point: LatLon, precision: number): string {
  return ngeohash.encode(point.lat, point.lon, precision);
}

export function decodeGeohash(geohash: string, label: Label = 'geohash'): LatLon {
  if (!isGeohash(geohash))
    throw new InputError(catalogText('error.geo.notGeohash', { label, value: JSON.stringify(geohash) ?? 'undefined', max: MAX_GEOHASH_LENGTH }));
  const { latitude, longitude } = ngeohash.decode(geohash.toLowerCase());
  return { lat: latitude, lon: longitude };
}

/** A GeoJSON position is [longitude, latitude]: the order is easy to get wrong, so it lives here only. */
export function fromPosition(position: unknown, label: Label): LatLon {
  if (!Array.isArray(position) || position.length < 2) throw new InputError(catalogText('error.geo.notPosition', { label }));
  return checkLatLon(position[1], position[0], label);
}

export function toPosition(point: LatLon): [number, number] {
  return [point.lon, point.lat];
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
