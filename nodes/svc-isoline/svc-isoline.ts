import type { NodeAPI, NodeDef, Node, OutputMessage } from '../lib/node-red/types';
import { InputError, PlatformError, SvcError, causeOf } from '../lib/util/errors';
import { CatalogText, catalogText } from '../lib/util/catalog-text';
import { LatLon, toPosition } from '../lib/geo/geohash';
import { LocationVariant, Place, readLocation, toLocationObjects } from '../lib/geo/locations';
import type { ComputationResult } from '../lib/platform/jobs';
import { storedPlaces } from '../lib/node-red/resumable';
import { computationNode } from '../lib/node-red/computation';
import { locationsOf, msgPaths, nodeInputs } from '../lib/node-red/inputs';
import { readSettings } from '../lib/node-red/settings';
import type { SettingsOf } from '../lib/node-red/editor-definition';
import { isSet, readBoolean, readChoice, readChoices, readNumber, setMembers } from '../lib/util/values';
import { HandlerResult, handleInputs } from '../lib/node-red/runner';
import { isolineShapes } from '../lib/geo/worldmap-places';
import { defaults } from './defaults';
import { migrations } from './migrations';
import { translateWith } from '../lib/node-red/i18n';

const RANGE_TYPES = ['distance', 'time'] as const;
const MODES = ['short', 'fast'] as const;
const TRANSPORT_MODES = ['car', 'truck', 'pedestrian'] as const;
const AVOID_FEATURES = ['tollRoad', 'controlledAccessHighway', 'ferry', 'tunnel', 'dirtRoad'] as const;
const OPTIMIZE_FOR = ['quality', 'performance', 'balanced'] as const;
const MIN_SHAPE_EXCLUSIVE = 30;

/**
 * Request fields: each a TypedInput whose default source is the same member of `msg.payload` (`range.type` ←
 * `msg.payload.range.type`); the range is fixed (time, 600 s) on a node dropped as is (defaults.ts).
 */
const FIELDS = {
  ...msgPaths(defaults, ['origins', 'async']),
  rangeType: { defaultPath: 'payload.range.type', initial: { type: defaults.rangeTypeType.value, value: defaults.rangeType.value } },
  rangeValue: { defaultPath: 'payload.range.value', initial: { type: defaults.rangeValueType.value, value: defaults.rangeValue.value } },
  ...msgPaths(defaults, ['mode', 'transportMode', 'avoid', 'optimizeFor', 'shape']),
};

type IsolineDef = NodeDef & SettingsOf<typeof defaults>;

type Range = { type: (typeof RANGE_TYPES)[number]; value: number };
/** What the output of a stored isoline job needs, besides the job. */
type IsolineOutput = { ranges: Range[]; places: Place[] };
type Ring = [number, number][];

export = function register(RED: NodeAPI): void {
  function SvcIsoline(this: Node, def: IsolineDef): void {
    RED.nodes.createNode(this, def);
    def = migrations.migrate(def);
    const computation = computationNode(RED, this, def, defaults, {
      kind: 'isoline',
      jobPath: (_platform, jobSegment) => `/v1/routing/isoline/jobs/${jobSegment}`,
      isResult: (body) => body !== null && typeof body === 'object' && 'isoline' in body,
    });
    const { inputs, read } = nodeInputs(RED, this, def, FIELDS);
    const locationOptions = { lonLatArrays: def.lonLatArrays === true };
    const settings = readSettings(def, defaults);
    const variant = settings.choice<LocationVariant>('originFormat', ['coordinates', 'geohash']);
    const precision = settings.precision('precision');
    // The spec does not name the member of `avoid` that holds the features.
    const avoidMember = settings.text('avoidMember');

    handleInputs(
      this,
      async (msg, context) => {
        const platform = computation.client();
        const fields = await read(msg);
        const places = locationsOf(fields.origins, inputs.origins, msg, 'origin', locationOptions);
        const rangeType = readChoice(fields.rangeType, RANGE_TYPES, 'range.type');
        if (!rangeType) throw new InputError(catalogText('error.isoline.rangeType'));
        const rangeValues = readRangeValues(fields.rangeValue);
        const body: Record<string, unknown> = {
          async: readBoolean(fields.async, 'async') ?? false,
          origins: toLocationObjects(places, 'origin', variant, precision),
          range: { type: rangeType, value: rangeValues.length === 1 ? rangeValues[0] : rangeValues },
          ...setMembers({
            mode: readChoice(fields.mode, MODES, 'mode'),
            transportMode: readChoices(fields.transportMode, TRANSPORT_MODES, 'transportMode'),
            avoid: readAvoid(fields.avoid, avoidMember),
            optimizeFor: readChoice(fields.optimizeFor, OPTIMIZE_FOR, 'optimizeFor'),
            shape: readShape(fields.shape),
          }),
        };

        const ranges = rangeValues.map((value) => ({ type: rangeType, value }));
        const stored = { ranges, places: storedPlaces(places) };
        // Not awaited: a job waiting for its result holds no frame of this handler (see docs/performance.md).
        const result = withJapanHint(computation.compute(platform, context, '/v1/routing/isoline', body, stored), places);
        return result.then((done) => isolineOutput(msg, done, ranges, places));
      },
      def,
      computation.resumable<IsolineOutput>(({ ranges, places }, msg, result) =>
        withJapanHint(result, places).then((done) => isolineOutput(msg, done, ranges, places)),
      ),
    );
  }

  translateWith(RED);
  RED.nodes.registerType('svc-isoline', SvcIsoline);
};

/** One range value, or several (an array or a comma-separated list), each a positive number. */
function readRangeValues(value: unknown): number[] {
  if (!isSet(value)) throw new InputError(catalogText('error.isoline.rangeValueRequired'));
  const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : [value];
  if (items.length === 0) throw new InputError(catalogText('error.isoline.rangeValueEmpty'));
  return items.map((item, i) => {
    const n = readNumber(item, items.length > 1 ? `range.value ${i + 1}` : 'range.value');
    if (n === undefined || n <= 0) throw new InputError(catalogText('error.isoline.rangeValuePositive', { value: JSON.stringify(item) }));
    return n;
  });
}

/** Features to avoid: a list, or the spec's object whose one array member holds them; sent as `{[member]: [...]}`. */
function readAvoid(value: unknown, member: string): Record<string, string[]> | undefined {
  let list = value;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const arrays = Object.values(value).filter(Array.isArray);
    if (arrays.length !== 1) throw new InputError(catalogText('error.isoline.avoid'));
    list = arrays[0];
  }
  const features = readChoices(list, AVOID_FEATURES, 'avoid');
  return features ? { [member]: features } : undefined;
}

function readShape(value: unknown): number | undefined {
  const shape = readNumber(value, 'shape');
  if (shape !== undefined && (!Number.isInteger(shape) || shape <= MIN_SHAPE_EXCLUSIVE)) {
    throw new InputError(catalogText('error.isoline.shape', { shape, min: MIN_SHAPE_EXCLUSIVE }));
  }
  return shape;
}

/** The output: the response body as payload, its polygons as GeoJSON, and the job when there was one. */
function isolineOutput(out: OutputMessage, result: ComputationResult, ranges: Range[], places: Place[]): HandlerResult {
  const features = isolineFeatures((result.body as { isoline: unknown }).isoline, ranges);
  out.payload = result.body;
  out.geojson = { type: 'FeatureCollection', features };
  out.statusCode = result.statusCode;
  if (result.jobId !== undefined) out.jobs = [{ jobId: result.jobId, polls: result.polls, ...setMembers({ message: result.message }) }];
  return {
    msg: out,
    statusText: catalogText(features.length === 1 ? 'status.polygon' : 'status.polygons', { count: features.length }),
    map: (layer) => isolineShapes(features, places, ranges.length, layer),
  };
}

/** Rough boxes around Japan's islands (south, west, north, east), only to explain a refusal. */
const JAPAN_BOXES: Array<[number, number, number, number]> = [
  [30.9, 129.3, 41.6, 142.2],
  [41.3, 139.3, 45.6, 148.9],
  [24.0, 122.9, 30.9, 131.4],
];

function inJapan(point: LatLon): boolean {
  return JAPAN_BOXES.some(([s, w, n, e]) => point.lat >= s && point.lat <= n && point.lon >= w && point.lon <= e);
}

/** The service offers no isolines in Japan: a refusal for an origin there says so. */
function withJapanHint(result: Promise<ComputationResult>, places: Place[]): Promise<ComputationResult> {
  return result.catch((err: unknown) => {
    throw explainJapan(err, places);
  });
}

function explainJapan(err: unknown, places: Place[]): unknown {
  if (!(err instanceof SvcError) || !['BAD_REQUEST', 'FORBIDDEN', 'JOB_FAILED'].includes(err.code)) return err;
  const index = places.findIndex((place) => place.point && inJapan(place.point));
  if (index < 0) return err;
  return new PlatformError(err.code, catalogText('error.isoline.japan', { cause: causeOf(err), origin: index + 1 }), {
    statusCode: err.statusCode,
    body: err.bodyExcerpt,
    cause: err,
  });
}

interface Polygon {
  rings: unknown[][];
  properties: Record<string, unknown>;
}

/**
 * The isoline polygons as GeoJSON features with closed [lon, lat] rings. The spec calls `isoline`
 * "Polygon feature", one polygon per range: a Feature, a FeatureCollection, a Polygon or MultiPolygon
 * geometry, an array of those, or bare rings are all read. A polygon the service does not label gets
 * the requested ranges in request order.
 */
function isolineFeatures(isoline: unknown, ranges: Range[]): Record<string, unknown>[] {
  const polygons: Polygon[] = [];
  collectPolygons(isoline, {}, polygons, 0);
  if (polygons.length === 0) throw new PlatformError('BAD_RESPONSE', catalogText('error.isoline.noPolygon'));
  return polygons.map((polygon, i) => ({
    type: 'Feature',
    geometry: {
      type: 'Polygon',
      coordinates: polygon.rings.map((ring, r) => closedRing(ring, catalogText('label.polygonRing', { polygon: i + 1, ring: r + 1 }))),
    },
    properties: { ...polygon.properties, range: rangeOf(polygon.properties.range, ranges, i) },
  }));
}

function collectPolygons(value: unknown, properties: Record<string, unknown>, out: Polygon[], depth: number): void {
  if (depth > 6 || value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    if (isRing(value)) out.push({ rings: [value], properties });
    else if (value.length > 0 && value.every(isRing)) out.push({ rings: value, properties });
    else for (const item of value) collectPolygons(item, properties, out, depth + 1);
    return;
  }
  const record = value as Record<string, unknown>;
  switch (record.type) {
    case 'Feature':
      return collectPolygons(record.geometry, (record.properties as Record<string, unknown> | null) ?? {}, out, depth + 1);
    case 'FeatureCollection':
      return collectPolygons(record.features, properties, out, depth + 1);
    case 'Polygon':
    case 'MultiPolygon':
      return collectPolygons(record.coordinates, properties, out, depth + 1);
    case 'GeometryCollection':
      return collectPolygons(record.geometries, properties, out, depth + 1);
  }
}

/** A ring: three or more vertices, each a position, a geohash or a lat/lon object. */
function isRing(value: unknown): value is unknown[] {
  return (
    Array.isArray(value) &&
    value.length >= 3 &&
    value.every(
      (v) =>
        typeof v === 'string' ||
        (Array.isArray(v) && v.length >= 2 && v.every((n) => typeof n === 'number')) ||
        (v !== null && typeof v === 'object' && !Array.isArray(v) && ('lat' in v || 'latitude' in v)),
    )
  );
}

function closedRing(vertices: unknown[], label: CatalogText): Ring {
  let ring: Ring;
  try {
    ring = vertices.map((v, i) => toPosition(readLocation(v, catalogText('label.vertex', { label, position: i + 1 }), { lonLatArrays: true }).point as LatLon));
  } catch (err) {
    throw new PlatformError('BAD_RESPONSE', catalogText('error.isoline.unusable', { cause: causeOf(err) }));
  }
  const [first, last] = [ring[0], ring[ring.length - 1]];
  return first[0] === last[0] && first[1] === last[1] ? ring : [...ring, first];
}

function rangeOf(given: unknown, ranges: Range[], index: number): Range {
  if (typeof given === 'number') return { type: ranges[0].type, value: given };
  if (given !== null && typeof given === 'object' && typeof (given as Range).value === 'number') {
    return { type: (given as Range).type ?? ranges[0].type, value: (given as Range).value };
  }
  return ranges[index % ranges.length];
}
