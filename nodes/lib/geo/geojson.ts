import { Fields } from '../util/values';
import { catalogText } from '../util/catalog-text';
import { LatLon, fromPosition } from './geohash';

/** GeoJSON as the platform returns it: finding the matched feature and its point. */

export interface GeoJsonFeature extends Fields {
  type: 'Feature';
  geometry: { type: string; coordinates: unknown } | null;
  properties: Fields | null;
}

/**
 * The best match in a geocode response whose wrapper the spec does not show: a bare Feature,
 * a FeatureCollection (first feature), an array of features, or an object wrapping any of those.
 */
export function bestFeature(body: unknown, depth = 0): GeoJsonFeature | undefined {
  if (depth > 3 || body === null || typeof body !== 'object') return undefined;
  if (Array.isArray(body)) {
    for (const item of body) {
      const found = bestFeature(item, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  const record = body as Fields;
  if (isFeatureLike(record)) {
    return { ...record, type: 'Feature', properties: (record.properties as Fields | undefined) ?? null } as GeoJsonFeature;
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

function isFeatureLike(record: Fields): boolean {
  if (record.type === 'Feature') return true;
  const geometry = record.geometry as Fields | undefined;
  return !!geometry && typeof geometry === 'object' && 'coordinates' in geometry;
}

/** The point of a Point feature, or undefined when the feature carries no usable point. */
export function featurePoint(feature: GeoJsonFeature | undefined): LatLon | undefined {
  const geometry = feature?.geometry;
  if (!geometry || geometry.type !== 'Point') return undefined;
  try {
    return fromPosition(geometry.coordinates, catalogText('value.result'));
  } catch {
    return undefined;
  }
}
