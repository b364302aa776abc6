import type { NodeAPI, NodeDef, Node, OutputMessage } from '../lib/node-red/types';
import { clientFor } from '../lib/node-red/config';
import { InputError, PlatformError, SvcError, causeOf } from '../lib/util/errors';
import { CatalogText, catalogText } from '../lib/util/catalog-text';
import { LatLon, decodeGeohash, isGeohash, toPosition } from '../lib/geo/geohash';
import { Fields, isSet, readChoice, setMembers, toNumber } from '../lib/util/values';
import { numbered, readLocation, readRouteModes, toWaypointObject } from '../lib/geo/locations';
import { readBox, toRouteBox } from '../lib/geo/boxes';
import { formatRfc3339 } from '../lib/geo/dates';
import { locationsOf, msgPaths, nodeInputs } from '../lib/node-red/inputs';
import { plainText } from '../lib/util/text';
import { handleInputs } from '../lib/node-red/runner';
import { routeShapes } from '../lib/geo/worldmap-routes';
import { durationText, lengthText } from '../lib/geo/worldmap';
import type { SettingsOf } from '../lib/node-red/editor-definition';
import { defaults } from './defaults';
import { migrations } from './migrations';
import { translateWith } from '../lib/node-red/i18n';

const PREFERENCES = ['fastest', 'shortest'] as const;
const MIN_WAYPOINTS = 2;

/** `transportMode` is the mode of waypoints that carry none of their own. */
const FIELDS = msgPaths(defaults, ['waypoints', 'transportMode', 'arriveBy', 'departAt', 'avoid', 'preference']);

type RouteDef = NodeDef & SettingsOf<typeof defaults>;

type Position = [number, number];

export = function register(RED: NodeAPI): void {
  function SvcRoute(this: Node, def: RouteDef): void {
    RED.nodes.createNode(this, def);
    def = migrations.migrate(def);
    const client = clientFor(RED, this, def.server, 'vpm');
    const { inputs, read } = nodeInputs(RED, this, def, FIELDS);
    const locationOptions = { lonLatArrays: def.lonLatArrays === true };

    handleInputs(
      this,
      async (msg, { signal, onWait }) => {
        const platform = client();
        const fields = await read(msg);
        const places = locationsOf(fields.waypoints, inputs.waypoints, msg, 'waypoint', locationOptions);
        if (places.length < MIN_WAYPOINTS) throw new InputError(catalogText('error.route.fewWaypoints', { min: MIN_WAYPOINTS, count: places.length }));
        if (isSet(fields.arriveBy) && isSet(fields.departAt)) throw new InputError(catalogText('error.route.arriveAndDepart'));
        const defaultModes = isSet(fields.transportMode) ? readRouteModes(fields.transportMode, 'transportMode') : undefined;
        const body: Fields = {
          waypoints: places.map((place, i) => toWaypointObject(place, defaultModes, numbered('waypoint', i + 1))),
          ...setMembers({
            arriveBy: isSet(fields.arriveBy) ? formatRfc3339(fields.arriveBy, 'arriveBy') : undefined,
            departAt: isSet(fields.departAt) ? formatRfc3339(fields.departAt, 'departAt') : undefined,
            avoid: isSet(fields.avoid) ? toRouteBox(readBox(fields.avoid, 'avoid')) : undefined,
            preference: readChoice(fields.preference, PREFERENCES, 'preference'),
          }),
        };
        const response = await platform.request<Fields>({
          auth: 'vpm',
          rate: 'routing',
          method: 'POST',
          path: '/v1/routing',
          json: body,
          retry: 'read',
          signal,
          onWait,
        });
        const route = response.body !== null && typeof response.body === 'object' ? response.body : {};
        const segments = Array.isArray(route.segments) ? (route.segments as Fields[]) : [];
        const summary = { length: total(segments, 'length'), duration: total(segments, 'duration'), segments: segments.length };
        const out = msg as OutputMessage;
        out.payload = response.body;
        const geojson = routeGeoJson(route, segments, summary);
        out.geojson = geojson;
        out.instructions = segments.map((s) => (typeof s.text === 'string' ? plainText(s.text) : '')).filter((text) => text !== '');
        out.summary = summary;
        out.statusCode = response.statusCode;
        return {
          msg: out,
          statusText: catalogText('status.segments', {
            count: segments.length,
            length: lengthText(summary.length) ?? '?',
            duration: durationText(summary.duration) ?? '?',
          }),
          map: (layer) => routeShapes(geojson, places, layer),
        };
      },
      def,
    );
  }

  translateWith(RED);
  RED.nodes.registerType('svc-route', SvcRoute);
};

/** Sum of a numeric segment member; units are the service's (not shown by the spec). */
function total(segments: Fields[], member: string): number {
  return segments.reduce((sum, segment) => sum + (toNumber(segment[member]) ?? 0), 0);
}

/**
 * The whole route as a LineString decoded from `overview.linestring` (geohashes, decoded with
 * ngeohash; GeoJSON positions are read too), then each segment as a feature over its
 * `firstPoint`..`lastPoint` slice (a Point when the slice has one point).
 */
function routeGeoJson(route: Fields, segments: Fields[], summary: Fields): Fields {
  const overview = routePositions((route.overview as Fields | undefined)?.linestring);
  // Without the overview line the route is still usable: drawn coarsely through the segments'
  // starting points to its end, each segment a Point (its indices refer to a line we do not have).
  const line = overview ?? coarseLine(route, segments);
  const segmentFeatures = segments.map((segment, i) => {
    const { text } = segment;
    const properties = { ...segment, segment: i, ...(typeof text === 'string' ? { plainText: plainText(text) } : {}) };
    return { type: 'Feature', geometry: segmentGeometry(segment, overview ?? []), properties };
  });
  return {
    type: 'FeatureCollection',
    features: [
      { type: 'Feature', geometry: { type: 'LineString', coordinates: line }, properties: { start: route.start, end: route.end, ...summary } },
      ...segmentFeatures,
    ],
  };
}

/** The segment's slice of the line; a Point at its `point` geohash when its indices do not fit the line. */
function segmentGeometry(segment: Fields, line: Position[]): Fields | null {
  const first = segment.firstPoint;
  const last = segment.lastPoint;
  const fits = typeof first === 'number' && typeof last === 'number' && Number.isInteger(first) && Number.isInteger(last);
  if (fits && first >= 0 && first <= last && last < line.length) {
    const slice = line.slice(first, last + 1);
    return slice.length === 1 ? { type: 'Point', coordinates: slice[0] } : { type: 'LineString', coordinates: slice };
  }
  if (!isGeohash(segment.point)) return null;
  return { type: 'Point', coordinates: toPosition(decodeGeohash(segment.point)) };
}

/** The overview line's positions, or undefined when the response has none. */
function routePositions(linestring: unknown): Position[] | undefined {
  const record = linestring !== null && typeof linestring === 'object' && !Array.isArray(linestring) ? (linestring as Fields) : undefined;
  const points = record ? ((record.geometry as Fields | undefined)?.coordinates ?? record.coordinates) : linestring;
  if (!Array.isArray(points) || points.length === 0) return undefined;
  return points.map((point, i) => {
    try {
      return toPosition(readLocation(point, `overview.linestring[${i}]`, { lonLatArrays: true }).point as LatLon);
    } catch (err) {
      throw badRoute(causeOf(err));
    }
  });
}

function coarseLine(route: Fields, segments: Fields[]): Position[] {
  const line = [...segments.map((segment) => segment.point), route.end].filter(isGeohash).map((geohash) => toPosition(decodeGeohash(geohash)));
  if (line.length < 2) throw badRoute(catalogText('error.route.nothingToDraw'));
  return line;
}

function badRoute(detail: string | CatalogText): SvcError {
  return new PlatformError('BAD_RESPONSE', catalogText('error.route.unusable', { detail }));
}
