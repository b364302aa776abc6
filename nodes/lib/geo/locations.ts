import { invalidInput } from '../util/errors';
import { Label, Message, message } from '../util/messages';
import { LatLon, checkLatLon, decodeGeohash, encodeGeohash, fromPosition, isGeohash } from './geohash';
import { Json, describeValue, readChoices, setMembers, toNumber } from '../util/values';

/**
 * The one converter from what users send (coordinates objects, GeoJSON, geohashes, world-map
 * markers, spec objects) to what the routing endpoints take (spec Location objects, routing
 * waypoint objects, bounding boxes, dates). Every error names the element it is about.
 */

/** The spec's Location object (isoline `origins`, sequence `waypoints`). */
export type LocationObject = { type: 'geohash'; geohash: string } | { type: 'coordinates'; latitude: number; longitude: number };

export const ROUTE_TRANSPORT_MODES = ['pedestrian', 'wheelchair', 'bicycle', 'car', 'carHOV', 'truck'] as const;
export type RouteTransportMode = (typeof ROUTE_TRANSPORT_MODES)[number];

/** The spec's routing waypoint object. */
export interface WaypointObject {
  type: 'point' | 'geohash' | 'indoor';
  transportMode?: RouteTransportMode[];
  geohash?: string;
  /** `longitude,latitude` (note the order). */
  coordinates?: string;
  venueId?: string;
  unitId?: string;
}

/** A location read from any accepted form. */
export interface Place {
  /** Where it is; absent only for an indoor place given by venue and unit alone. */
  point?: LatLon;
  /** The geohash, when the location was given as one. */
  geohash?: string;
  /** The spec object the location came as: sent on as given, once validated. */
  specObject?: LocationObject | WaypointObject;
  venueId?: string;
  unitId?: string;
  /** A waypoint's own transport mode, validated when it becomes a routing waypoint. */
  transportMode?: unknown;
  /** A marker's name (world-map style), kept for the GeoJSON output. */
  name?: string;
}

export interface LocationOptions {
  /** Read plain arrays as `[longitude, latitude]`; otherwise they are refused as ambiguous. */
  lonLatArrays: boolean;
}

const GEOJSON_NON_POINTS = new Set(['LineString', 'Polygon', 'MultiPoint', 'MultiLineString', 'MultiPolygon', 'GeometryCollection', 'FeatureCollection']);
const ACCEPTED_FORMS = message('error.location.acceptedForms');

/** Reads one location; `label` names it in errors ("waypoint 3"). */
export function readLocation(value: unknown, label: Label, options: LocationOptions): Place {
  if (typeof value === 'string') {
    const geohash = value.trim().toLowerCase();
    if (!isGeohash(geohash)) throw invalidInput(message('error.geo.notGeohash', { label, value: JSON.stringify(value) }));
    return { geohash, point: decodeGeohash(geohash, label) };
  }
  if (Array.isArray(value)) {
    if (!options.lonLatArrays) {
      throw invalidInput(message('error.location.ambiguousArray', { label, forms: ACCEPTED_FORMS }));
    }
    return { point: fromPosition(value, label) };
  }
  if (value === null || typeof value !== 'object')
    throw invalidInput(message('error.location.notLocationValue', { label, value: shown(value), forms: ACCEPTED_FORMS }));
  const record = value as Json;
  switch (record.type) {
    case 'Feature':
      return readFeature(record, label);
    case 'Point':
      return { point: fromPosition(record.coordinates, label) };
    case 'geohash':
      return readGeohashObject(record, label);
    case 'coordinates':
      return readCoordinatesObject(record, label);
    case 'point':
      return readPointWaypoint(record, label);
    case 'indoor':
      return readIndoorWaypoint(record, label);
  }
  if (typeof record.type === 'string' && GEOJSON_NON_POINTS.has(record.type)) {
    throw invalidInput(message('error.location.geojsonNotPoint', { label, type: String(record.type) }));
  }
  return readPlainObject(record, label);
}

/** What the elements of a list are called in errors, each with its position ("waypoint 3"). */
export type Element = 'origin' | 'waypoint' | 'resultWaypoint' | 'avoidBox';

/** The label of the element at `position` (from 1). */
export function numbered(element: Element, position: number): Message {
  return message(`label.${element}`, { position });
}

/** Reads one location or a list of them; `element` names them in errors ("origin 2: ..."). */
export function readLocations(value: unknown, element: Element, options: LocationOptions): Place[] {
  if (!Array.isArray(value)) return [readLocation(value, numbered(element, 1), options)];
  if (options.lonLatArrays && isPlainPosition(value)) return [readLocation(value, numbered(element, 1), options)];
  return value.map((item, i) => readLocation(item, numbered(element, i + 1), options));
}

/**
 * `msg.payload` when it is itself one location or a list of them, so a stream of positions can feed
 * the routing nodes directly; undefined when it is something else (such as a request object).
 */
export function payloadAsLocations(payload: unknown): unknown {
  if (typeof payload === 'string' || Array.isArray(payload)) return payload;
  if (payload === null || typeof payload !== 'object') return undefined;
  const locationMembers = ['lat', 'latitude', 'lon', 'lng', 'longitude', 'type', 'geometry', 'coordinates', 'geohash', 'venueId', 'unitId'];
  return locationMembers.some((member) => member in payload) ? payload : undefined;
}

/** The spec Location object for a place: a given one as it is, else the configured variant. */
export function toLocationObject(place: Place, variant: 'geohash' | 'coordinates', precision: number, label: Label): LocationObject {
  if (place.specObject && (place.specObject.type === 'geohash' || place.specObject.type === 'coordinates')) {
    return place.specObject as LocationObject;
  }
  if (!place.point) throw invalidInput(message('error.location.indoorNoPoint', { label }));
  if (variant === 'geohash') return { type: 'geohash', geohash: place.geohash ?? encodeGeohash(place.point, precision) };
  return { type: 'coordinates', latitude: place.point.lat, longitude: place.point.lon };
}

/**
 * The routing waypoint object for a place: a given waypoint object as it is, else `point`
 * (coordinates "longitude,latitude"), `geohash` or `indoor`; `transportMode` is the place's own
 * or, failing that, `defaultModes`.
 */
export function toWaypointObject(place: Place, defaultModes: RouteTransportMode[] | undefined, label: Label): WaypointObject {
  const own = place.transportMode === undefined ? undefined : readRouteModes(place.transportMode, message('label.member', { label, member: 'transportMode' }));
  const transportMode = own ?? defaultModes;
  const withModes = (waypoint: WaypointObject): WaypointObject => (transportMode ? { ...waypoint, transportMode } : waypoint);
  const given = place.specObject;
  if (given?.type === 'point' || given?.type === 'indoor') return withModes(given);
  if (given?.type === 'geohash') return withModes({ type: 'geohash', geohash: given.geohash });
  if (place.venueId !== undefined || place.unitId !== undefined) {
    return withModes(setMembers({ type: 'indoor', venueId: place.venueId, unitId: place.unitId }));
  }
  if (place.geohash) return withModes({ type: 'geohash', geohash: place.geohash });
  if (!place.point) throw invalidInput(message('error.location.noPosition', { label }));
  return withModes({ type: 'point', coordinates: `${decimal(place.point.lon)},${decimal(place.point.lat)}` });
}

/** Route transport modes from an array or a comma-separated list, each checked against the spec's enum. */
export function readRouteModes(value: unknown, label: Label): RouteTransportMode[] {
  const modes = readChoices(value, ROUTE_TRANSPORT_MODES, label);
  if (!modes) throw invalidInput(message('error.location.modesNotList', { label }));
  return modes;
}

function readFeature(record: Json, label: Label): Place {
  const geometry = record.geometry as Json | null | undefined;
  if (!geometry || typeof geometry !== 'object' || geometry.type !== 'Point') {
    throw invalidInput(message('error.location.featureNotPoint', { label }));
  }
  const properties = (record.properties ?? {}) as Json;
  const name = typeof properties.name === 'string' ? properties.name : undefined;
  return setMembers({ point: fromPosition(geometry.coordinates, label), name });
}

function readGeohashObject(record: Json, label: Label): Place {
  const geohash = requireGeohash(record.geohash, label);
  return {
    geohash,
    point: decodeGeohash(geohash, label),
    specObject: { ...record, geohash } as LocationObject,
    transportMode: record.transportMode,
  };
}

function readCoordinatesObject(record: Json, label: Label): Place {
  for (const member of ['latitude', 'longitude']) {
    if (typeof record[member] !== 'number') throw invalidInput(message('error.location.memberNotNumber', { label, member }));
  }
  return { point: checkLatLon(record.latitude, record.longitude, label), specObject: record as LocationObject };
}

function readPointWaypoint(record: Json, label: Label): Place {
  if (record.coordinates === undefined && record.geohash === undefined) {
    throw invalidInput(message('error.location.pointNeedsCoordinates', { label }));
  }
  return readWaypointObject(record, label);
}

function readIndoorWaypoint(record: Json, label: Label): Place {
  for (const member of ['venueId', 'unitId']) {
    if (record[member] !== undefined && (typeof record[member] !== 'string' || record[member] === '')) {
      throw invalidInput(message('error.location.memberNotText', { label, member }));
    }
  }
  if (record.venueId === undefined && record.unitId === undefined) throw invalidInput(message('error.location.indoorNeedsId', { label }));
  return readWaypointObject(record, label);
}

/** A `point` or `indoor` waypoint object: its optional coordinates and geohash must be valid. */
function readWaypointObject(record: Json, label: Label): Place {
  const geohash = record.geohash === undefined ? undefined : requireGeohash(record.geohash, label);
  const point = record.coordinates !== undefined ? readCoordinatesString(record.coordinates, label) : geohash ? decodeGeohash(geohash, label) : undefined;
  if (record.transportMode !== undefined) readRouteModes(record.transportMode, message('label.member', { label, member: 'transportMode' }));
  const specObject = (geohash ? { ...record, geohash } : record) as unknown as WaypointObject;
  return setMembers({ point, geohash, specObject, transportMode: record.transportMode });
}

/** `{lat, lon}`, `{lat, lng}`, `{latitude, longitude}` (world-map markers too), or venue/unit alone. */
function readPlainObject(record: Json, label: Label): Place {
  const lat = record.lat ?? record.latitude;
  const lon = record.lon ?? record.lng ?? record.longitude;
  const name = typeof record.name === 'string' ? record.name : undefined;
  const venueId = optionalString(record.venueId, 'venueId', label);
  const unitId = optionalString(record.unitId, 'unitId', label);
  if (lat === undefined && lon === undefined) {
    if (venueId !== undefined || unitId !== undefined) return setMembers({ venueId, unitId, name, transportMode: record.transportMode });
    throw invalidInput(message('error.location.notLocation', { label, forms: ACCEPTED_FORMS }));
  }
  if (lat === undefined) throw invalidInput(message('error.location.noLatitude', { label }));
  if (lon === undefined) throw invalidInput(message('error.location.noLongitude', { label }));
  return setMembers({ point: checkLatLon(lat, lon, label), venueId, unitId, name, transportMode: record.transportMode });
}

/** A routing waypoint's `coordinates`: the string "longitude,latitude". */
function readCoordinatesString(value: unknown, label: Label): LatLon {
  const parts = typeof value === 'string' ? value.split(',') : [];
  if (parts.length !== 2 || parts.some((p) => toNumber(p) === undefined)) {
    throw invalidInput(message('error.location.coordinatesText', { label, value: JSON.stringify(value) ?? 'undefined' }));
  }
  return checkLatLon(parts[1], parts[0], label);
}

function requireGeohash(value: unknown, label: Label): string {
  if (!isGeohash(value)) throw invalidInput(message('error.geo.notGeohash', { label, value: JSON.stringify(value) }));
  return value.toLowerCase();
}

function optionalString(value: unknown, member: string, label: Label): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw invalidInput(message('error.location.memberNotText', { label, member }));
  return value;
}

function isPlainPosition(value: unknown[]): boolean {
  return (value.length === 2 || value.length === 3) && value.every((v) => typeof v === 'number');
}

/** A coordinate without exponent notation (String(1e-7) is "1e-7"), to 7 decimals (about 1 cm). */
export function decimal(n: number): string {
  const text = n.toFixed(7).replace(/\.?0+$/, '');
  return text === '-0' ? '0' : text;
}

// ---- Bounding boxes ----

export interface Box {
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
    if (parts.length !== 4) throw invalidInput(message('error.location.boxText', { label, value: JSON.stringify(value) }));
    raw = [parts[0], parts[1], parts[2], parts[3]];
  } else if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const record = value as Json;
    raw = [record.minLat, record.minLng ?? record.minLon, record.maxLat, record.maxLng ?? record.maxLon];
  } else {
    throw invalidInput(message('error.location.box', { label }));
  }
  const min = checkLatLon(raw[0], raw[1], message('label.minimumCorner', { label }));
  const max = checkLatLon(raw[2], raw[3], message('label.maximumCorner', { label }));
  if (min.lat >= max.lat) throw invalidInput(message('error.location.boxLat', { label, min: min.lat, max: max.lat }));
  if (min.lon >= max.lon) throw invalidInput(message('error.location.boxLon', { label, min: min.lon, max: max.lon }));
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

// ---- Dates ----

export type DepartureFormat = 'local' | 'zoned';

const ZONELESS_DATE_TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?$/i;
/** Epoch numbers below this are seconds, above it milliseconds (1e11 ms is March 1973). */
const EPOCH_SECONDS_BELOW = 1e11;

/**
 * The sequencing `departure`: `local` writes `yyyy-MM-dd'T'HH:mm:ss` (a zone-less string keeps its
 * wall-clock time; a Date, an epoch or a zoned string is written in the host's time zone);
 * `zoned` writes the same in UTC with the designator `Z`, which every reading of the `X` pattern accepts.
 */
export function formatDeparture(value: unknown, format: DepartureFormat, label: Label): string {
  const zoneless = typeof value === 'string' ? ZONELESS_DATE_TIME.exec(value.trim()) : null;
  if (zoneless && format === 'local') {
    const [, date, hours, minutes, seconds = '00'] = zoneless;
    checkCalendar(date, `${hours}:${minutes}:${seconds}`, label);
    return `${date}T${hours}:${minutes}:${seconds}`;
  }
  const instant = readInstant(value, label);
  if (format === 'zoned') return `${instant.toISOString().slice(0, 19)}Z`;
  return `${pad(instant.getFullYear(), 4)}-${pad(instant.getMonth() + 1)}-${pad(instant.getDate())}T${pad(instant.getHours())}:${pad(
    instant.getMinutes(),
  )}:${pad(instant.getSeconds())}`;
}

const RFC3339_DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?(Z|z|[+-]\d{2}:\d{2})?$/;
const RFC3339_FULL_DATE = /^\d{4}-\d{2}-\d{2}$/;
const RFC3339_PARTIAL_TIME = /^(\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?$/;

/**
 * `arriveBy` / `departAt`: a string stays as written (an RFC 3339 date-time with or without offset,
 * a full-date or a partial-time; missing seconds are added); a Date or an epoch becomes a UTC date-time.
 */
export function formatRfc3339(value: unknown, label: Label): string {
  if (typeof value === 'string') {
    const text = value.trim();
    const dateTime = RFC3339_DATE_TIME.exec(text);
    if (dateTime) {
      const [, date, hoursMinutes, seconds = ':00', offset = ''] = dateTime;
      checkCalendar(date, `${hoursMinutes}${seconds}`, label);
      return `${date}T${hoursMinutes}${seconds}${offset}`;
    }
    if (RFC3339_FULL_DATE.test(text)) {
      checkCalendar(text, '00:00:00', label);
      return text;
    }
    const time = RFC3339_PARTIAL_TIME.exec(text);
    if (time) {
      const [, hoursMinutes, seconds = ':00'] = time;
      checkCalendar('2000-01-01', `${hoursMinutes}${seconds}`, label);
      return `${hoursMinutes}${seconds}`;
    }
    throw invalidInput(message('error.location.notRfc3339', { label, value: JSON.stringify(value) ?? 'undefined' }));
  }
  return `${readInstant(value, label).toISOString().slice(0, 19)}Z`;
}

/** A moment from a Date, an epoch (seconds or milliseconds) or an ISO 8601 date-time string. */
export function readInstant(value: unknown, label: Label): Date {
  let instant: Date | undefined;
  if (value instanceof Date) instant = value;
  else if (typeof value === 'number') instant = new Date(Math.abs(value) < EPOCH_SECONDS_BELOW ? value * 1000 : value);
  else if (typeof value === 'string' && ISO_DATE_TIME.test(value.trim())) instant = new Date(value.trim());
  if (!instant || Number.isNaN(instant.getTime())) {
    throw invalidInput(message('error.location.notDate', { label, value: JSON.stringify(value) ?? 'undefined' }));
  }
  return instant;
}

/** Refuses dates and times that do not exist (2025-02-30, 24:10). */
function checkCalendar(date: string, time: string, label: Label): void {
  const [year, month, day] = date.split('-').map(Number);
  const [hours, minutes, seconds] = time.split(':').map(Number);
  const probe = new Date(Date.UTC(year, month - 1, day));
  const dateOk = probe.getUTCFullYear() === year && probe.getUTCMonth() === month - 1 && probe.getUTCDate() === day;
  // RFC 3339 allows a leap second (60).
  const timeOk = hours <= 23 && minutes <= 59 && seconds < 61;
  if (!dateOk || !timeOk) throw invalidInput(message('error.location.invalidDate', { label, value: `${date}T${time}` }));
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

function shown(value: unknown): string | Message {
  if (value === null) return 'null';
  if (value === undefined) return message('value.nothing');
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return message('value.typed', { type: typeof value, value: String(value) });
  return describeValue(value);
}
