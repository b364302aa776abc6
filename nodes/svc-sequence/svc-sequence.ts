import type { NodeAPI, NodeDef, Node, OutputMessage } from '../lib/node-red/types';
import { LatLon, decodeGeohash, distanceMeters, encodeGeohash, geohashRadiusMeters, toPosition } from '../lib/geo/geohash';
import { LocationObject, LocationVariant, Place, numbered, readLocation, toLocationObjects } from '../lib/geo/locations';
import { readBoxes, toSequenceBox } from '../lib/geo/boxes';
import { DepartureFormat, formatDeparture } from '../lib/geo/dates';
import type { ComputationResult } from '../lib/platform/jobs';
import { storedPlaces } from '../lib/node-red/resumable';
import { computationNode } from '../lib/node-red/computation';
import { locationsOf, msgPaths, nodeInputs } from '../lib/node-red/inputs';
import { readSettings } from '../lib/node-red/settings';
import type { SettingsOf } from '../lib/node-red/editor-definition';
import { Fields, isSet, readBoolean, readChoice, readChoices, setMembers } from '../lib/util/values';
import { HandlerResult, handleInputs } from '../lib/node-red/runner';
import { catalogText } from '../lib/util/catalog-text';
import { sequenceShapes } from '../lib/geo/worldmap-routes';
import type { PlatformClient } from '../lib/platform/client';
import { pathSegment } from '../lib/platform/paths';
import { defaults } from './defaults';
import { migrations } from './migrations';
import { translateWith } from '../lib/node-red/i18n';

const TRANSPORT_MODES = ['car', 'truck', 'carHOV', 'bicycle', 'pedestrian'] as const;
const ROUTE_MODES = ['fastest', 'shortest'] as const;
/** Geohash length used to compare a returned geohash with a waypoint given as coordinates. */
const FULL_PRECISION = 12;
/** A returned point that shares no geohash prefix with any waypoint still matches one this close. */
const MIN_MATCH_TOLERANCE_M = 50;

const FIELDS = msgPaths(defaults, ['waypoints', 'async', 'departure', 'transportMode', 'avoid', 'routeMode']);

type SequenceDef = NodeDef & SettingsOf<typeof defaults>;

/** What the output of a stored sequence job needs, besides the job. */
type SequenceOutput = { waypoints: LocationObject[]; places: Place[] };

export = function register(RED: NodeAPI): void {
  function SvcSequence(this: Node, def: SequenceDef): void {
    RED.nodes.createNode(this, def);
    def = migrations.migrate(def);
    const computation = computationNode(RED, this, def, defaults, {
      kind: 'sequence',
      jobPath: (platform, jobSegment) => `/v1/routing/sequence/async/${projectSegment(platform)}/jobs/${jobSegment}`,
      isResult: isSequenceResult,
    });
    const { inputs, read } = nodeInputs(RED, this, def, FIELDS);
    const locationOptions = { lonLatArrays: def.lonLatArrays === true };
    const settings = readSettings(def, defaults);
    const variant = settings.choice<LocationVariant>('waypointFormat', ['coordinates', 'geohash']);
    const precision = settings.precision('precision');
    const departureFormat = settings.choice<DepartureFormat>('departureFormat', ['local', 'zoned']);

    handleInputs(
      this,
      async (msg, context) => {
        const platform = computation.client();
        const fields = await read(msg);
        const places = locationsOf(fields.waypoints, inputs.waypoints, msg, 'waypoint', locationOptions);
        const waypoints = toLocationObjects(places, 'waypoint', variant, precision);
        const body: Fields = {
          async: readBoolean(fields.async, 'async') ?? false,
          waypoints,
          ...setMembers({
            departure: isSet(fields.departure) ? formatDeparture(fields.departure, departureFormat, 'departure') : undefined,
            transportMode: readChoices(fields.transportMode, TRANSPORT_MODES, 'transportMode'),
            avoid: isSet(fields.avoid) ? readBoxes(fields.avoid, 'avoidBox').map(toSequenceBox) : undefined,
            routeMode: readChoice(fields.routeMode, ROUTE_MODES, 'routeMode'),
          }),
        };
        const path = `/v1/routing/sequence/${projectSegment(platform)}`;
        // Not awaited: a job waiting for its result holds no frame of this handler (see docs/performance.md).
        const result = computation.compute(platform, context, path, body, { waypoints, places: storedPlaces(places) });
        return result.then((done) => sequenceOutput(msg, done, waypoints, places));
      },
      def,
      computation.resumable<SequenceOutput>(({ waypoints, places }, msg, result) => result.then((done) => sequenceOutput(msg, done, waypoints, places))),
    );
  }

  translateWith(RED);
  RED.nodes.registerType('svc-sequence', SvcSequence);
};

/** The output: the response body as payload, the input index of each stop, the tour as GeoJSON, and the job when there was one. */
/** The project id as the segment of the sequence paths (the config check has refused one that cannot be). */
function projectSegment(platform: PlatformClient): string {
  return pathSegment(platform.projectId, catalogText('setting.projectId'), 'input');
}

function sequenceOutput(out: OutputMessage, result: ComputationResult, waypoints: LocationObject[], places: Place[]): HandlerResult {
  const visited = (result.body as { waypoints: Fields[] }).waypoints;
  const stops = visited.map((element, k) => returnedStop(element, k));
  const order = matchOrder(stops, waypoints.map(sentStop));
  const geojson = sequenceGeoJson(visited, stops, order, places);
  out.payload = result.body;
  out.order = order;
  out.geojson = geojson;
  out.statusCode = result.statusCode;
  if (result.jobId !== undefined) out.jobs = [{ jobId: result.jobId, polls: result.polls, ...setMembers({ message: result.message }) }];
  const unmatched = order.filter((i) => i === null).length;
  return {
    msg: out,
    statusText: unmatched ? catalogText('status.stopsUnmatched', { count: visited.length, unmatched }) : catalogText('status.stops', { count: visited.length }),
    map: (layer) => sequenceShapes(geojson, places, layer),
  };
}

/** The finished result carries `waypoints` whose elements have a `location`; a job handle has none. */
function isSequenceResult(body: unknown): boolean {
  const waypoints = body !== null && typeof body === 'object' ? (body as Fields).waypoints : undefined;
  return Array.isArray(waypoints) && waypoints.every((w) => w !== null && typeof w === 'object' && 'location' in w);
}

interface Stop {
  geohash: string;
  point: LatLon;
}

/** A returned waypoint's `location` (a geohash, or any location form), or undefined when unreadable. */
function returnedStop(element: Fields, k: number): Stop | undefined {
  try {
    const place = readLocation(element.location, numbered('resultWaypoint', k + 1), { lonLatArrays: true });
    if (!place.point) return undefined;
    return { geohash: place.geohash ?? encodeGeohash(place.point, FULL_PRECISION), point: place.point };
  } catch {
    return undefined;
  }
}

/** What the service was told about a waypoint: its geohash as sent, or that of its coordinates at full length. */
function sentStop(location: LocationObject): Stop {
  if (location.type === 'geohash') return { geohash: location.geohash, point: decodeGeohash(location.geohash) };
  const point = { lat: location.latitude, lon: location.longitude };
  return { geohash: encodeGeohash(point, FULL_PRECISION), point };
}

/**
 * The input index of each returned waypoint, compared with what was sent. Geohashes of different lengths match when one is a
 * prefix of the other; among matches the nearest unused input wins (so repeated places map to
 * distinct inputs). Without a prefix match, the nearest unused input within the returned cell's size
 * (at least 50 m) is taken, which covers a point rounded into a neighbouring cell. Else null.
 */
function matchOrder(stops: Array<Stop | undefined>, sent: Stop[]): Array<number | null> {
  const used = new Set<number>();
  const all = sent.map((_s, i) => i);
  return stops.map((stop) => {
    if (!stop) return null;
    const unused = all.filter((i) => !used.has(i));
    const candidates = unused.length > 0 ? unused : all;
    const distance = (i: number) => distanceMeters(stop.point, sent[i].point);
    const nearest = (indices: number[]) => indices.reduce<number | null>((best, i) => (best === null || distance(i) < distance(best) ? i : best), null);
    const prefixed = candidates.filter((i) => sent[i].geohash.startsWith(stop.geohash) || stop.geohash.startsWith(sent[i].geohash));
    const tolerance = Math.max(MIN_MATCH_TOLERANCE_M, 2 * geohashRadiusMeters(stop.geohash));
    const match = nearest(prefixed) ?? nearest(candidates.filter((i) => distance(i) <= tolerance));
    if (match !== null) used.add(match);
    return match;
  });
}

/** The visited points in order (with the returned members as properties) and the legs between them as lines. */
function sequenceGeoJson(visited: Fields[], stops: Array<Stop | undefined>, order: Array<number | null>, places: Place[]): Fields {
  const positions = stops.map((stop, k) => {
    const input = order[k];
    const point = input !== null ? places[input].point : stop?.point;
    return point ? toPosition(point) : undefined;
  });
  const points = visited.flatMap((element, k) => {
    const position = positions[k];
    if (!position) return [];
    const { location, ...members } = element;
    const input = order[k];
    const name = input !== null ? places[input].name : undefined;
    return [
      {
        type: 'Feature',
        geometry: { type: 'Point', coordinates: position },
        properties: { ...members, ...(name === undefined ? {} : { name }), location, position: k, input },
      },
    ];
  });
  const legs = positions.slice(1).flatMap((to, k) => {
    const from = positions[k];
    if (!from || !to) return [];
    return [
      {
        type: 'Feature',
        geometry: { type: 'LineString', coordinates: [from, to] },
        properties: { leg: k, fromInput: order[k], toInput: order[k + 1] },
      },
    ];
  });
  return { type: 'FeatureCollection', features: [...points, ...legs] };
}
