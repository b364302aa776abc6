import { InputError } from '../util/errors';
import { Label, catalogText } from '../util/catalog-text';
import { Fields } from '../util/values';
import { checkLatLon } from './geohash';
import { Element, decimal, numbered } from './locations';

/** Bounding boxes (the route's and the sequence's `avoid`): read from what users send, written in each endpoint's form. */

interface Box {
  minLat: number;
  minLon: number;
  maxLat: number;
  maxLon: number;
}

/**
 * One bounding box: an object with `minLat`, `maxLat` and `minLng`/`maxLng` (or `minLon`/`maxLon`),
 * or the string "minLat,minLon,maxLat,maxLon". Ranges are checked and each minimum must be below its maximum.
 */
export function readBox(value: unknown, label: Label): Box {
  let raw: [unknown, unknown, unknown, unknown];
  if (typeof value === 'string') {
    const parts = value.split(',').map((s) => s.trim());
    if (parts.length !== 4) throw new InputError(catalogText('error.location.boxText', { label, value: JSON.stringify(value) }));
    raw = [parts[0], parts[1], parts[2], parts[3]];
  } else if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const record = value as Fields;
    raw = [record.minLat, record.minLng ?? record.minLon, record.maxLat, record.maxLng ?? record.maxLon];
  } else {
    throw new InputError(catalogText('error.location.box', { label }));
  }
  const min = checkLatLon(raw[0], raw[1], catalogText('label.minimumCorner', { label }));
  const max = checkLatLon(raw[2], raw[3], catalogText('label.maximumCorner', { label }));
  if (min.lat >= max.lat) throw new InputError(catalogText('error.location.boxLat', { label, min: min.lat, max: max.lat }));
  if (min.lon >= max.lon) throw new InputError(catalogText('error.location.boxLon', { label, min: min.lon, max: max.lon }));
  return { minLat: min.lat, minLon: min.lon, maxLat: max.lat, maxLon: max.lon };
}

/** One box or a list of boxes; `element` names them in errors ("avoid box 2"). */
export function readBoxes(value: unknown, element: Element): Box[] {
  const items = Array.isArray(value) ? value : [value];
  return items.map((item, i) => readBox(item, numbered(element, i + 1)));
}

/** The sequencing form: `{minLat, minLng, maxLat, maxLng}`. */
export function toSequenceBox(box: Box): { minLat: number; minLng: number; maxLat: number; maxLng: number } {
  return { minLat: box.minLat, minLng: box.minLon, maxLat: box.maxLat, maxLng: box.maxLon };
}

/** The routing form: "minLat,minLon,maxLat,maxLon". */
export function toRouteBox(box: Box): string {
  return [box.minLat, box.minLon, box.maxLat, box.maxLon].map(decimal).join(',');
}
