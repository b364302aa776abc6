import { sendJson } from '../http';
import { RouteContext, Sandbox } from '../server';
import {
  Box,
  Point,
  check,
  encode,
  instantAt,
  jobsOf,
  jsonObject,
  onlyMembers,
  distance,
  requireEnum,
  requireEnumArray,
  requireLatLon,
  requireLocationObject,
  requireObject,
  round,
  strictly,
  trafficFactor,
  validCalendar,
} from '../routing';
import { TOO_MANY_JOBS } from '../job-clock';
import { townOf } from '../town/index';
import { Mode } from '../town/network';
import { MAX_TRIP_M } from '../town/route';
import { bestOrder, matrix } from '../town/sequence';

/**
 * `POST /v1/routing/sequence/:projectId` and `GET /v1/routing/sequence/async/:projectId/jobs/:jobId`
 * (endpoint names `sequence` and `sequence-job`, permission `sequence`). The path's project must be
 * the one in `x-svc-project-id` (else 401). Choices where the spec is silent:
 * - legs run on the streets of the sandbox's town (sandbox/town/sequence.ts), their distances and
 *   times from one search per waypoint, every waypoint within 30 km of the start (else 400);
 * - the first waypoint is the start; the others are put in the order that minimises total time
 *   (`fastest`, the default) or distance (`shortest`): exactly for up to 9 waypoints, by nearest
 *   neighbour improved with 2-opt above; the end is the last waypoint visited;
 * - a stop takes 3 minutes: its `estimatedDeparture` is 3 minutes after its `estimatedArrival`, and the
 *   total `time` counts the stops between the terminal points; the start has no `estimatedArrival`
 *   (null), the end no `estimatedDeparture` (null);
 * - a zone-less `departure` is local time at the first waypoint (the start), in the zone
 *   `zoneOffsetMinutes` gives it, as the spec says of routing times; without `departure` it is now;
 *   estimated times are written in UTC with `Z`;
 * - leg times follow the traffic (`trafficFactor`) at the departure, at the start;
 * - legs keep off the streets that meet an `avoid` box (a box holding a waypoint, or boxes that leave
 *   no way, are ignored), so their distances and times are those of the detour, and the order takes
 *   them into account;
 * - each returned waypoint has `location` as an 8-character geohash, `from` "start" or its position,
 *   `to` "end" or its position, and `distance` (meters) / `time` (seconds) of the leg arriving there;
 *   the totals are meters and seconds;
 * - at most 100 waypoints; an asynchronous job takes 0.3 s plus 0.1 s per waypoint (`job-clock.ts`).
 */

const TRANSPORT_MODES = ['car', 'truck', 'carHOV', 'bicycle', 'pedestrian'] as const;
const ROUTE_MODES = ['fastest', 'shortest'] as const;
const DEPARTURE = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(Z|[+-]\d{2}(?::?\d{2})?)?$/;
const RETURNED_PRECISION = 8;
/** Waypoints per request, a sandbox cap (docs/sandbox.md). */
export const MAX_SEQUENCE_WAYPOINTS = 100;
/** How long a stop takes, in seconds. */
const STOP_SECONDS = 180;

interface SequenceRequest {
  async: boolean;
  points: Point[];
  /** The departure as written, or undefined for now. */
  departure: RegExpExecArray | undefined;
  avoid: Box[];
  mode: string;
  routeMode: (typeof ROUTE_MODES)[number];
}

export default function sequenceEndpoints(sandbox: Sandbox): void {
  const jobs = jobsOf(sandbox, 'sequence');
  const ownProject = (ctx: RouteContext) => {
    if (ctx.params.projectId === sandbox.options.projectId) return true;
    sendJson(ctx.res, 401, { error: 'unauthorized', message: 'the project in the path is not the one in x-svc-project-id' });
    return false;
  };
  sandbox.route(
    'POST',
    '/v1/routing/sequence/:projectId',
    { endpoint: 'sequence', auth: 'project', permission: 'sequence' },
    strictly((ctx) => {
      if (!ownProject(ctx)) return;
      const body = jsonObject(ctx);
      if (!body) return;
      const request = validate(body);
      const result = sequenceResult(request, sandbox.clock.now());
      if (!request.async) return sendJson(ctx.res, 200, result);
      const handle = jobs.create(result, request.points.length);
      if (!handle) return sendJson(ctx.res, 429, TOO_MANY_JOBS(sandbox.options.maxRoutingJobs));
      sendJson(ctx.res, 200, handle);
    }),
  );
  sandbox.route('GET', '/v1/routing/sequence/async/:projectId/jobs/:jobId', { endpoint: 'sequence-job', auth: 'project', permission: 'sequence' }, (ctx) => {
    if (!ownProject(ctx)) return;
    const response = jobs.poll(ctx.params.jobId);
    if (response === undefined) return sendJson(ctx.res, 404, { error: 'not_found', message: 'no such sequence job' });
    sendJson(ctx.res, response.status, response.body);
  });
}

function validate(body: Record<string, unknown>): SequenceRequest {
  onlyMembers(body, ['async', 'waypoints', 'departure', 'transportMode', 'avoid', 'routeMode'], 'body');
  check(typeof body.async === 'boolean', 'async is required and must be a boolean');
  check(Array.isArray(body.waypoints) && body.waypoints.length > 0, 'waypoints is required: a non-empty array of Location objects');
  check(
    body.waypoints.length <= MAX_SEQUENCE_WAYPOINTS,
    `waypoints holds ${body.waypoints.length} points; the sandbox takes at most ${MAX_SEQUENCE_WAYPOINTS}`,
  );
  const points = (body.waypoints as unknown[]).map((waypoint, i) => requireLocationObject(waypoint, `waypoints[${i}]`));
  let departure: RegExpExecArray | undefined;
  if (body.departure !== undefined) {
    const match = typeof body.departure === 'string' ? DEPARTURE.exec(body.departure) : null;
    check(
      match && validCalendar(match[1], match[2]),
      `departure must be yyyy-MM-dd'T'HH:mm:ss or yyyy-MM-dd'T'HH:mm:ssX, got ${JSON.stringify(body.departure)}`,
    );
    departure = match;
  }
  const modes = body.transportMode === undefined ? ['car'] : requireEnumArray(body.transportMode, TRANSPORT_MODES, 'transportMode');
  const avoid: Box[] = [];
  if (body.avoid !== undefined) {
    check(Array.isArray(body.avoid) && body.avoid.length > 0, 'avoid must be a non-empty array of bounding boxes');
    (body.avoid as unknown[]).forEach((item, i) => {
      const box = requireObject(item, `avoid[${i}]`);
      onlyMembers(box, ['minLat', 'minLng', 'maxLat', 'maxLng'], `avoid[${i}]`);
      const min = requireLatLon(box.minLat, box.minLng, `avoid[${i}] min`);
      const max = requireLatLon(box.maxLat, box.maxLng, `avoid[${i}] max`);
      check(min.lat < max.lat && min.lon < max.lon, `avoid[${i}]: minLat/minLng must be less than maxLat/maxLng`);
      avoid.push({ minLat: min.lat, minLon: min.lon, maxLat: max.lat, maxLon: max.lon });
    });
  }
  const routeMode = body.routeMode === undefined ? 'fastest' : requireEnum(body.routeMode, ROUTE_MODES, 'routeMode');
  return { async: body.async, points, departure, avoid, mode: modes[0], routeMode };
}

function sequenceResult(request: SequenceRequest, now: number): Record<string, unknown> {
  const { points } = request;
  const start = points[0];
  points.forEach((point, i) =>
    check(
      distance(start, point) <= MAX_TRIP_M,
      `waypoint ${i + 1} is ${Math.round(distance(start, point) / 1000)} km from the start: the sandbox's town sequences within ${MAX_TRIP_M / 1000} km`,
    ),
  );
  const departure = request.departure ? instantAt(request.departure[1], request.departure[2], request.departure[3], start) : now;
  const legs = matrix(townOf(), {
    points: points.map((p) => [p.lon, p.lat]),
    mode: request.mode as Mode,
    preference: request.routeMode,
    avoid: request.avoid,
    traffic: trafficFactor(departure, start, request.mode),
  });
  const order = bestOrder(request.routeMode === 'shortest' ? legs.meters : legs.seconds);
  let clock = departure;
  let totalMeters = 0;
  let totalSeconds = 0;
  const waypoints = order.map((index, k) => {
    const meters = k === 0 ? 0 : legs.meters[order[k - 1]][index];
    const seconds = k === 0 ? 0 : legs.seconds[order[k - 1]][index];
    const last = k === order.length - 1;
    clock += seconds * 1000;
    const arrival = clock;
    if (k > 0 && !last) clock += STOP_SECONDS * 1000;
    totalMeters += meters;
    totalSeconds += seconds + (k > 0 && !last ? STOP_SECONDS : 0);
    return {
      location: encode(points[index], RETURNED_PRECISION),
      estimatedArrival: k === 0 ? null : utc(arrival),
      estimatedDeparture: last ? null : utc(clock),
      from: k === 0 ? 'start' : k,
      to: last ? 'end' : k,
      distance: Math.round(meters),
      time: Math.round(seconds),
    };
  });
  return {
    description: `Sequence optimized for ${request.routeMode === 'shortest' ? 'minimum distance' : 'shortest time'} by ${request.mode} on the sandbox's town, with real-time and historical traffic`,
    distance: Math.round(totalMeters),
    time: Math.round(totalSeconds),
    waypoints,
  };
}

function utc(ms: number): string {
  return `${new Date(round(ms, 0)).toISOString().slice(0, 19)}Z`;
}
