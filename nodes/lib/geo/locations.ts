import { InputError } from '../util/errors';
import { Label, CatalogText, catalogText } from '../util/catalog-text';
import { LatLon, MAX_GEOHASH_LENGTH, checkLatLon, decodeGeohash, encodeGeohash, fromPosition, isGeohash } from './geohash';
import { bestFeature } from './geojson';
import { Fields, describeValue, readChoices, setMembers, toNumber } from '../util/values';

/** The one converter from what users send to the spec's Location and waypoint objects; every error names the element it is about. */

/** The spec's Location object (isoline `origins`, sequence `waypoints`). */
export type LocationObject = { type: 'geohash'; geohash: string } | { type: 'coordinates'; latitude: number; longitude: number };
export type LocationVariant = LocationObject['type'];

const ROUTE_TRANSPORT_MODES = ['pedestrian', 'wheelchair', 'bicycle', 'car', 'carHOV', 'truck'] as const;
type RouteTransportMode = (typeof ROUTE_TRANSPORT_MODES)[number];

export interface WaypointObject {
  type: 'point' | 'geohash' | 'indoor';
  transportMode?: RouteTransportMode[];
  geohash?: string;
  /** `longitude,latitude` (note the order). */
  coordinates?: string;
  venueId?: string;
  unitId?: string;
}

export interface Place {
  /** Where it is; absent only for an indoor place given by venue and unit alone. */
  point?: LatLon;
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

const GEOJSON_NON_POINTS = new Set(['LineString', 'Polygon', 'MultiPoint', 'MultiLineString', 'MultiPolygon', 'GeometryCollection']);
const ACCEPTED_FORMS = catalogText('error.location.acceptedForms');

/** Reads one location; `label` names it in errors ("waypoint 3"). */
export function readLocation(value: unknown, label: Label, options: LocationOptions): Place {
  if (typeof value === 'string') {
    const geohash = value.trim().toLowerCase();
    if (!isGeohash(geohash)) throw new InputError(catalogText('error.geo.notGeohash', { label, value: JSON.stringify(value), max: MAX_GEOHASH_LENGTH }));
    return { geohash, point: decodeGeohash(geohash, label) };
  }
  if (Array.isArray(value)) {
    if (!options.lonLatArrays) {
      throw new InputError(catalogText('error.location.ambiguousArray', { label, forms: ACCEPTED_FORMS }));
    }
    return { point: fromPosition(value, label) };
  }
  if (value === null || typeof value !== 'object')
    throw new InputError(catalogText('error.location.notLocationValue', { label, value: shown(value), forms: ACCEPTED_FORMS }));
  const record = value as Fields;
  switch (record.type) {
    case 'Feature':
      return readFeature(record, label);
    case 'FeatureCollection':
      return readCollection(record, label);
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
    throw new InputError(catalogText('error.location.geojsonNotPoint', { label, type: String(record.type) }));
  }
  return readPlainObject(record, label);
}

/** What the elements of a list are called in errors, each with its position ("waypoint 3"). */
export type Element = 'origin' | 'waypoint' | 'resultWaypoint' | 'avoidBox';

export function numbered(element: Element, position: number): CatalogText {
  return catalogText(`label.${element}`, { position });
}

/** Reads one location or a list of them; `element` names them in errors ("origin 2: ..."). */
export function readLocations(value: unknown, element: Element, options: LocationOptions): Place[] {
  if (!Array.isArray(value)) return [readLocation(value, numbered(element, 1), options)];
  if (options.lonLatArrays && isPlainPosition(value)) return [readLocation(value, numbered(element, 1), options)];
  return value.map((item, i) => readLocation(item, numbered(element, i + 1), options));
}

/** `msg.payload` when it is itself one location or a list of them, so a stream of positions can feed the routing nodes directly. */
export function payloadAsLocations(payload: unknown): unknown {
  if (typeof payload === 'string' || Array.isArray(payload)) return payload;
  if (payload === null || typeof payload !== 'object') return undefined;
  const locationMembers = ['lat', 'latitude', 'lon', 'lng', 'longitude', 'type', 'geometry', 'coordinates', 'geohash', 'venueId', 'unitId'];
  return locationMembers.some((member) => member in payload) ? payload : undefined;
}

/** The spec Location object for a place: a given one in its own variant, else the configured one; only the spec's members either way. */
export function toLocationObject(place: Place, variant: LocationVariant, precision: number, label: Label): LocationObject {
  const given = place.specObject as LocationObject | undefined;
  if (given?.type === 'geohash') return { type: 'geohash', geohash: given.geohash };
  if (given?.type === 'coordinates') return { type: 'coordinates', latitude: given.latitude, longitude: given.longitude };
  if (!place.point) throw new InputError(catalogText('error.location.indoorNoPoint', { label }));
  if (variant === 'geohash') return { type: 'geohash', geohash: place.geohash ?? encodeGeohash(place.point, precision) };
  return { type: 'coordinates', latitude: place.point.lat, longitude: place.point.lon };
}

/** The spec Location objects for a list of places, each named in errors by its position ("origin 2"). */
export function toLocationObjects(places: Place[], element: Element, variant: LocationVariant, precision: number): LocationObject[] {
  return places.map((place, i) => toLocationObject(place, variant, precision, numbered(element, i + 1)));
}

/** The routing waypoint object for a place: a given one as it is, else built; `transportMode` is the place's own, else `defaultModes`. */
export function toWaypointObject(place: Place, defaultModes: RouteTransportMode[] | undefined, label: Label): WaypointObject {
  const own =
    place.transportMode === undefined ? undefined : readRouteModes(place.transportMode, catalogText('label.member', { label, member: 'transportMode' }));
  const transportMode = own ?? defaultModes;
  const withModes = (waypoint: WaypointObject): WaypointObject => (transportMode ? { ...waypoint, transportMode } : waypoint);
  const given = place.specObject;
  if (given?.type === 'point' || given?.type === 'indoor') return withModes(given);
  if (given?.type === 'geohash') return withModes({ type: 'geohash', geohash: given.geohash });
  if (place.venueId !== undefined || place.unitId !== undefined) {
    return withModes(setMembers({ type: 'indoor', venueId: place.venueId, unitId: place.unitId }));
  }
  if (place.geohash) return withModes({ type: 'geohash', geohash: place.geohash });
  if (!place.point) throw new InputError(catalogText('error.location.noPosition', { label }));
  return withModes({ type: 'point', coordinates: `${decimal(place.point.lon)},${decimal(place.point.lat)}` });
}

/** Route transport modes from an array or a comma-separated list, each checked against the spec's enum. */
export function readRouteModes(value: unknown, label: Label): RouteTransportMode[] {
  const modes = readChoices(value, ROUTE_TRANSPORT_MODES, label);
  if (!modes) throw new InputError(catalogText('error.location.modesNotList', { label }));
  return modes;
}

function readFeature(record: Fields, label: Label): Place {
  const geometry = record.geometry as Fields | null | undefined;
  if (!geometry || typeof geometry !== 'object' || geometry.type !== 'Point') {
    throw new InputError(catalogText('error.location.featureNotPoint', { label }));
  }
  const properties = (record.properties ?? {}) as Fields;
  const name = typeof properties.name === 'string' ? properties.name : undefined;
  return setMembers({ point: fromPosition(geometry.coordinates, label), name });
}

/** A FeatureCollection, as svc-geocode's default output is: its best match, the first feature, which must be a point. */
function readCollection(record: Fields, label: Label): Place {
  const feature = bestFeature(Array.isArray(record.features) ? record.features : []);
  if (!feature) throw new InputError(catalogText('error.location.collectionEmpty', { label }));
  return readFeature(feature, label);
}

function readGeohashObject(record: Fields, label: Label): Place {
  const geohash = requireGeohash(record.geohash, label);
  return {
    geohash,
    point: decodeGeohash(geohash, label),
    specObject: { ...record, geohash } as LocationObject,
    transportMode: record.transportMode,
  };
}

function readCoordinatesObject(record: Fields, label: Label): Place {
  for (const member of ['latitude', 'longitude']) {
    if (typeof record[member] !== 'number') throw new InputError(catalogText('error.location.memberNotNumber', { label, member }));
  }
  return { point: checkLatLon(record.latitude, record.longitude, label), specObject: record as LocationObject };
}

function readPointWaypoint(record: Fields, label: Label): Place {
  if (record.coordinates === undefined && record.geohash === undefined) {
    throw new InputError(catalogText('error.location.pointNeedsCoordinates', { label }));
  }
  return readWaypointObject(record, label);
}

function readIndoorWaypoint(record: Fields, label: Label): Place {
  for (const member of ['venueId', 'unitId']) {
    if (record[member] !== undefined && (typeof record[member] !== 'string' || record[member] === '')) {
      throw new InputError(catalogText('error.location.memberNotText', { label, member }));
    }
  }
  if (record.venueId === undefined && record.unitId === undefined) throw new InputError(catalogText('error.location.indoorNeedsId', { label }));
  return readWaypointObject(record, label);
}

/** A `point` or `indoor` waypoint object: its optional coordinates and geohash must be valid. */
function readWaypointObject(record: Fields, label: Label): Place {
  const geohash = record.geohash === undefined ? undefined : requireGeohash(record.geohash, label);
  const point = record.coordinates !== undefined ? readCoordinatesString(record.coordinates, label) : geohash ? decodeGeohash(geohash, label) : undefined;
  if (record.transportMode !== undefined) readRouteModes(record.transportMode, catalogText('label.member', { label, member: 'transportMode' }));
  const specObject = (geohash ? { ...record, geohash } : record) as unknown as WaypointObject;
  return setMembers({ point, geohash, specObject, transportMode: record.transportMode });
}

/** `{lat, lon}`, `{lat, lng}`, `{latitude, longitude}` (world-map markers too), or venue/unit alone. */
function readPlainObject(record: Fields, label: Label): Place {
  const lat = record.lat ?? record.latitude;
  const lon = record.lon ?? record.lng ?? record.longitude;
  const name = typeof record.name === 'string' ? record.name : undefined;
  const venueId = optionalString(record.venueId, 'venueId', label);
  const unitId = optionalString(record.unitId, 'unitId', label);
  if (lat === undefined && lon === undefined) {
    if (venueId !== undefined || unitId !== undefined) return setMembers({ venueId, unitId, name, transportMode: record.transportMode });
    throw new InputError(catalogText('error.location.notLocation', { label, forms: ACCEPTED_FORMS }));
  }
  if (lat === undefined) throw new InputError(catalogText('error.location.noLatitude', { label }));
  if (lon === undefined) throw new InputError(catalogText('error.location.noLongitude', { label }));
  return setMembers({ point: checkLatLon(lat, lon, label), venueId, unitId, name, transportMode: record.transportMode });
}

/** A routing waypoint's `coordinates`: the string "longitude,latitude". */
function readCoordinatesString(value: unknown, label: Label): LatLon {
  const parts = typeof value === 'string' ? value.split(',') : [];
  if (parts.length !== 2 || parts.some((p) => toNumber(p) === undefined)) {
    throw new InputError(catalogText('error.location.coordinatesText', { label, value: JSON.stringify(value) ?? 'undefined' }));
  }
  return checkLatLon(parts[1], parts[0], label);
}

function requireGeohash(value: unknown, label: Label): string {
  if (!isGeohash(value)) throw new InputError(catalogText('error.geo.notGeohash', { label, value: JSON.stringify(value), max: MAX_GEOHASH_LENGTH }));
  return value.toLowerCase();
}

function optionalString(value: unknown, member: string, label: Label): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw new InputError(catalogText('error.location.memberNotText', { label, member }));
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

function shown(value: unknown): string | CatalogText {
  if (value === null) return 'null';
  if (value === undefined) return catalogText('value.nothing');
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return catalogText('value.typed', { type: typeof value, value: String(value) });
  return describeValue(value);
}
