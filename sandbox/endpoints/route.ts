import { createHash } from 'node:crypto';
import { sendJson } from '../http';
import { Sandbox } from '../server';
import {
  Box,
  Point,
  check,
  decode,
  distance,
  encode,
  instantAt,
  jsonObject,
  localDate,
  localTime,
  offset,
  onlyMembers,
  requireEnum,
  requireEnumArray,
  requireGeohash,
  requireLatLon,
  strictly,
  trafficFactor,
  validCalendar,
} from '../routing';
import { townOf } from '../town/index';
import { Mode, Position } from '../town/network';
import { SANDBOX_CITY, spotFor } from '../town/places';
import { MAX_TRIP_M, leg, stretches } from '../town/route';

/**
 * `POST /v1/routing` (endpoint name `route`, headers `x-svc-vpm-id` + `x-svc-api-key`, permission
 * `routing`). The body is checked against the spec's tables, unknown members included. Choices where
 * the spec is silent:
 * - `point` needs `coordinates` ("longitude,latitude", plain decimals) or a `geohash`; `geohash`
 *   needs a `geohash`; `indoor` needs a `venueId` or a `unitId` (the spec gives both as optional and
 *   requires no combination; a `geohash` or `coordinates` may follow); venue and unit ids place the
 *   waypoint near the sandbox city, deterministically;
 * - each leg runs on the streets of the sandbox's town (sandbox/town/route.ts), from and to the points
 *   of the streets its transport mode may use nearest to its waypoints, at most 30 km apart in a
 *   straight line (else 400); a segment per stretch of one street without a turn (`instruction`
 *   `continue`, `left` or `right`, `roadName`, the street's `speedLimit`, the lowest `maxHeight` on
 *   it), plus an `arrive` segment; `text` with HTML span markup and entities; `firstPoint`/`lastPoint`
 *   index `overview.linestring` (9-character geohashes of the route's points, from the start's
 *   nearest street point); `length` in meters, `duration` in seconds;
 * - a leg's transport mode is the first of its start waypoint's `transportMode`, else `car`
 *   (`pedestrian` when indoor); `transportMode` is given per segment;
 * - `preference` `fastest` (the default) is the quickest way, `shortest` the shortest;
 * - a leg keeps off the streets that meet the `avoid` box (a box holding one of the leg's waypoints,
 *   or leaving no way, is ignored for that leg);
 * - `departAt` and `arriveBy` without an offset are local time at the departure place and at the
 *   destination (a full-date is its midnight, a partial-time today), in the zone `zoneOffsetMinutes`
 *   gives a place; without either the departure is now. Each street is timed with the traffic
 *   (`trafficFactor`, at the place the time is given for) of the moment it is reached; for `arriveBy`
 *   the departure is the arrival less the whole duration; the `arrive` segment's text gives both times, local with offset.
 */

const TYPES = ['point', 'geohash', 'indoor'] as const;
const TRANSPORT_MODES = ['pedestrian', 'wheelchair', 'bicycle', 'car', 'carHOV', 'truck'] as const;
const PREFERENCES = ['fastest', 'shortest'] as const;
const DECIMAL = '-?\\d+(?:\\.\\d+)?';
const COORDINATES = new RegExp(`^(${DECIMAL}),(${DECIMAL})$`);
const AVOID = new RegExp(`^(${DECIMAL}),(${DECIMAL}),(${DECIMAL}),(${DECIMAL})$`);
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(?:\.\d+)?([Zz]|[+-]\d{2}:\d{2})?$/;
const FULL_DATE = /^(\d{4}-\d{2}-\d{2})$/;
const PARTIAL_TIME = /^(\d{2}:\d{2}:\d{2})(?:\.\d+)?$/;
/** Waypoints per route, a sandbox cap (docs/sandbox.md). */
export const MAX_ROUTE_WAYPOINTS = 100;

interface RouteRequest {
  waypoints: Waypoint[];
  /** When the route starts (`departAt`) or ends (`arriveBy`), as written; neither: now. */
  time: { kind: 'departAt' | 'arriveBy'; text: string } | undefined;
  avoid: Box | undefined;
  preference: (typeof PREFERENCES)[number];
}

interface Waypoint {
  position: Point;
  indoor: boolean;
  mode?: string;
  venueId?: string;
  unitId?: string;
}

type Segment = Record<string, unknown>;

export default function routeEndpoint(sandbox: Sandbox): void {
  sandbox.route(
    'POST',
    '/v1/routing',
    { endpoint: 'route', auth: 'vpm', permission: 'routing' },
    strictly((ctx) => {
      const body = jsonObject(ctx);
      if (!body) return;
      sendJson(ctx.res, 200, route(validate(body), sandbox.clock.now()));
    }),
  );
}

function validate(body: Record<string, unknown>): RouteRequest {
  onlyMembers(body, ['waypoints', 'arriveBy', 'departAt', 'avoid', 'preference'], 'body');
  check(Array.isArray(body.waypoints) && body.waypoints.length >= 2, 'waypoints is required: an array of two or more waypoint objects');
  check(body.waypoints.length <= MAX_ROUTE_WAYPOINTS, `waypoints holds ${body.waypoints.length} points; the sandbox takes at most ${MAX_ROUTE_WAYPOINTS}`);
  const waypoints = (body.waypoints as unknown[]).map((waypoint, i) => validateWaypoint(waypoint, `waypoints[${i}]`));
  check(body.arriveBy === undefined || body.departAt === undefined, 'arriveBy and departAt cannot both be given');
  for (const name of ['arriveBy', 'departAt']) if (body[name] !== undefined) checkRfc3339(body[name], name);
  let avoid: Box | undefined;
  if (body.avoid !== undefined) {
    const match = typeof body.avoid === 'string' ? AVOID.exec(body.avoid) : null;
    check(match, `avoid must be "minLat,minLon,maxLat,maxLon", got ${JSON.stringify(body.avoid)}`);
    const [minLat, minLon, maxLat, maxLon] = match.slice(1).map(Number);
    requireLatLon(minLat, minLon, 'avoid minimum');
    requireLatLon(maxLat, maxLon, 'avoid maximum');
    check(minLat < maxLat && minLon < maxLon, 'avoid: minimums must be less than maximums');
    avoid = { minLat, minLon, maxLat, maxLon };
  }
  const preference = body.preference === undefined ? 'fastest' : requireEnum(body.preference, PREFERENCES, 'preference');
  const kind = body.departAt !== undefined ? 'departAt' : body.arriveBy !== undefined ? 'arriveBy' : undefined;
  return { waypoints, time: kind === undefined ? undefined : { kind, text: body[kind] as string }, avoid, preference };
}

function validateWaypoint(value: unknown, label: string): Waypoint {
  check(value !== null && typeof value === 'object' && !Array.isArray(value), `${label} must be a waypoint object`);
  const waypoint = value as Record<string, unknown>;
  const type = requireEnum(waypoint.type, TYPES, `${label}.type`);
  const allowed: Record<(typeof TYPES)[number], string[]> = {
    point: ['type', 'transportMode', 'coordinates', 'geohash'],
    geohash: ['type', 'transportMode', 'geohash'],
    indoor: ['type', 'transportMode', 'venueId', 'unitId', 'geohash', 'coordinates'],
  };
  onlyMembers(waypoint, allowed[type], label);
  const modes = waypoint.transportMode === undefined ? undefined : requireEnumArray(waypoint.transportMode, TRANSPORT_MODES, `${label}.transportMode`);
  let position = waypoint.geohash === undefined ? undefined : decode(requireGeohash(waypoint.geohash, `${label}.geohash`));
  if (waypoint.coordinates !== undefined) {
    const match = typeof waypoint.coordinates === 'string' ? COORDINATES.exec(waypoint.coordinates) : null;
    check(match, `${label}.coordinates must be the string "longitude,latitude", got ${JSON.stringify(waypoint.coordinates)}`);
    position = requireLatLon(Number(match[2]), Number(match[1]), `${label}.coordinates`);
  }
  if (type === 'geohash') check(waypoint.geohash !== undefined, `${label}: a geohash waypoint needs a geohash`);
  if (type === 'point') check(position, `${label}: a point waypoint needs coordinates or a geohash`);
  if (type !== 'indoor') return { position: position as Point, indoor: false, mode: modes?.[0] };
  for (const name of ['venueId', 'unitId']) {
    check(waypoint[name] === undefined || (typeof waypoint[name] === 'string' && waypoint[name] !== ''), `${label}.${name} must be a non-empty string`);
  }
  check(waypoint.venueId !== undefined || waypoint.unitId !== undefined, `${label}: an indoor waypoint needs a venueId or a unitId`);
  const venueId = waypoint.venueId as string | undefined;
  const unitId = waypoint.unitId as string | undefined;
  // A unit alone is placed as a venue would be.
  const place = venueId === undefined ? indoorPosition(unitId as string) : indoorPosition(venueId, unitId);
  return { position: position ?? place, indoor: true, mode: modes?.[0], venueId, unitId };
}

function checkRfc3339(value: unknown, label: string): void {
  const text = typeof value === 'string' ? value : '';
  const dateTime = DATE_TIME.exec(text);
  const fullDate = FULL_DATE.exec(text);
  const partialTime = PARTIAL_TIME.exec(text);
  const valid = dateTime
    ? validCalendar(dateTime[1], dateTime[2])
    : fullDate
      ? validCalendar(fullDate[1], '00:00:00')
      : partialTime
        ? validCalendar('2000-01-01', partialTime[1])
        : false;
  check(valid, `${label} must be an RFC 3339 date-time, full-date or partial-time, got ${JSON.stringify(value)}`);
}

/** The instant of a checked RFC 3339 date-time, full-date (its midnight) or partial-time (today), local at `place` without an offset. */
function readRfc3339(text: string, place: Point, now: number): number {
  const dateTime = DATE_TIME.exec(text);
  if (dateTime) return instantAt(dateTime[1], dateTime[2], dateTime[3], place);
  const fullDate = FULL_DATE.exec(text);
  if (fullDate) return instantAt(fullDate[1], '00:00:00', undefined, place);
  const partialTime = PARTIAL_TIME.exec(text) as RegExpExecArray;
  return instantAt(localDate(now, place), partialTime[1], undefined, place);
}

/** A venue stands at a junction of the town within about 3 km of Sandbox City; a unit inside it 20–80 m from its door. */
function indoorPosition(venueId: string, unitId?: string): Point {
  const [lon, lat] = spotFor(townOf(), `venue ${venueId}`, SANDBOX_CITY.lon, SANDBOX_CITY.lat, 12);
  return unitId ? offset({ lat, lon }, fraction(unitId, 0) * 2 * Math.PI, 20 + fraction(unitId, 1) * 60) : { lat, lon };
}

function fraction(text: string, slot: number): number {
  return (
    parseInt(
      createHash('sha256')
        .update(text)
        .digest('hex')
        .slice(slot * 8, slot * 8 + 8),
      16,
    ) / 0xffffffff
  );
}

function route(request: RouteRequest, now: number): Record<string, unknown> {
  const { waypoints } = request;
  const first = waypoints[0];
  const last = waypoints[waypoints.length - 1];
  waypoints.slice(1).forEach((to, i) => {
    const meters = distance(waypoints[i].position, to.position);
    check(
      meters <= MAX_TRIP_M,
      `waypoints ${i + 1} and ${i + 2} are ${Math.round(meters / 1000)} km apart: the sandbox's town routes legs up to ${MAX_TRIP_M / 1000} km`,
    );
  });
  // Times are those of the departure, or of the arrival for arriveBy, at the place the time is given for.
  const arriving = request.time?.kind === 'arriveBy';
  const timePlace = arriving ? last.position : first.position;
  const given = request.time ? readRfc3339(request.time.text, timePlace, now) : now;
  const plan = (departure: number) => {
    let clock = departure;
    return waypoints.slice(1).map((to, i) => {
      const from = waypoints[i];
      const mode = (from.mode ?? (from.indoor || to.indoor ? 'pedestrian' : 'car')) as Mode;
      const steps = leg(townOf(), {
        from: [from.position.lon, from.position.lat],
        to: [to.position.lon, to.position.lat],
        mode,
        preference: request.preference,
        avoid: request.avoid && { minLon: request.avoid.minLon, minLat: request.avoid.minLat, maxLon: request.avoid.maxLon, maxLat: request.avoid.maxLat },
        departure: clock,
        traffic: (ms) => trafficFactor(ms, timePlace, mode),
      });
      clock += steps.reduce((sum, step) => sum + Math.round(step.seconds), 0) * 1000;
      return { to, mode, steps };
    });
  };
  const seconds = (legs: ReturnType<typeof plan>) => legs.reduce((sum, l) => sum + l.steps.reduce((s, step) => s + Math.round(step.seconds), 0), 0);
  // For arriveBy, the legs are timed from a first guess of the departure, which then moves so that the route arrives in time.
  const legs = arriving ? plan(given - seconds(plan(given)) * 1000) : plan(given);
  const departure = arriving ? given - seconds(legs) * 1000 : given;
  const line: Position[] = [];
  const segments: Segment[] = [];
  legs.forEach(({ mode, steps }, i) => {
    // A leg starts where its own mode's streets are nearest to its waypoint: joined to the line if that is not where the last leg ended.
    const start = steps[0]?.line[0] ?? [first.position.lon, first.position.lat];
    const end = line[line.length - 1];
    if (!end || geohashOf(end) !== geohashOf(start)) line.push(start);
    stretches(steps).forEach((stretch, s) => {
      const firstPoint = line.length - 1;
      for (const step of stretch.steps) line.push(step.line[1]);
      const start = stretch.steps[0].line[0];
      const edge = stretch.steps[0].edge;
      const length = Math.round(stretch.steps.reduce((sum, step) => sum + step.length, 0));
      const heights = stretch.steps.map((step) => step.edge.maxHeight).filter((h): h is number => h !== null);
      const verb =
        s > 0 ? (stretch.turn === 'continue' ? 'Continue' : `Turn <span class="direction">${stretch.turn}</span> and go`) : i === 0 ? 'Head' : 'Continue';
      segments.push({
        point: geohashOf(start),
        length,
        duration: stretch.steps.reduce((sum, step) => sum + Math.round(step.seconds), 0),
        maxHeight: heights.length > 0 ? Math.min(...heights) : null,
        speedLimit: edge.speedLimit,
        speedLimitUnit: edge.speedLimit === null ? null : 'kmph',
        transportMode: mode,
        roadName: edge.name,
        instruction: stretch.turn,
        text: `${verb} <span class="direction">${compass(start, stretch.steps[stretch.steps.length - 1].line[1])}</span> on <span class="street">${escapeHtml(edge.name)}</span> &amp; follow it for <span class="length">${length}&nbsp;m</span>`,
        action: s > 0 ? 'turn' : i === 0 ? 'depart' : 'continue',
        firstPoint,
        lastPoint: line.length - 1,
      });
    });
  });
  const end = line.length - 1;
  const arrival = departure + seconds(legs) * 1000;
  segments.push({
    point: geohashOf(line[end]),
    length: 0,
    duration: 0,
    maxHeight: null,
    speedLimit: null,
    speedLimitUnit: null,
    transportMode: legs[legs.length - 1].mode,
    roadName: '',
    instruction: 'arrive',
    text:
      `Arrive at <span class="destination">${escapeHtml(last.unitId ?? last.venueId ?? 'your destination')}</span>` +
      ` at <span class="time">${localTime(arrival, last.position)}</span>` +
      ` (departure <span class="time">${localTime(departure, first.position)}</span>)`,
    action: 'arrive',
    firstPoint: end,
    lastPoint: end,
  });
  return {
    start: encode(first.position),
    end: encode(last.position),
    segments,
    overview: { linestring: line.map(geohashOf) },
  };
}

function geohashOf([lon, lat]: Position): string {
  return encode({ lat, lon });
}

function compass(from: Position, to: Position): string {
  const north = to[1] - from[1];
  const east = (to[0] - from[0]) * Math.cos((from[1] * Math.PI) / 180);
  if (Math.abs(east) > Math.abs(north)) return east >= 0 ? 'east' : 'west';
  return north >= 0 ? 'north' : 'south';
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}
