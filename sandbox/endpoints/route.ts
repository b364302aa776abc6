import { createHash } from 'node:crypto';
import { Sandbox, sendJson } from '../server';
import {
  Box,
  Point,
  SPEED,
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
  pathAround,
  pathCrosses,
  requireEnum,
  requireEnumArray,
  requireGeohash,
  requireLatLon,
  strictly,
  trafficFactor,
  validCalendar,
} from '../routing';

/**
 * `POST /v1/routing` (endpoint name `route`, headers `x-svc-vpm-id` + `x-svc-api-key`, permission
 * `routing`). The body is checked against the spec's tables, unknown members included. Choices where
 * the spec is silent:
 * - `point` needs `coordinates` ("longitude,latitude", plain decimals) or a `geohash`; `geohash`
 *   needs a `geohash`; `indoor` needs a `venueId` or a `unitId` (the spec gives both as optional and
 *   requires no combination; a `geohash` or `coordinates` may follow); venue and unit ids place the
 *   waypoint near the sandbox city, deterministically;
 * - each leg runs east-west, then north-south; one segment per straight stretch plus an `arrive`
 *   segment, `text` with HTML span markup and entities, `firstPoint`/`lastPoint` indexing
 *   `overview.linestring` (9-character geohashes); `length` in meters, `duration` in seconds;
 * - a leg's transport mode is the first of its start waypoint's `transportMode`, else `car`
 *   (`pedestrian` when indoor); `transportMode` is given per segment;
 * - `preference` `fastest` (the default) runs on main roads as above; `shortest` goes straight to the
 *   next waypoint on side streets, where road transport goes at 0.6 of its speed;
 * - a leg that would run through the `avoid` box goes north-south first, else around the box's
 *   corners (a box holding one of the leg's waypoints cannot be avoided);
 * - `departAt` and `arriveBy` without an offset are local time at the departure place and at the
 *   destination (a full-date is its midnight, a partial-time today), in the zone `zoneOffsetMinutes`
 *   gives a place; without either the departure is now. Durations follow the traffic
 *   (`trafficFactor`) at the departure, or at the arrival for `arriveBy`, whose departure is then the
 *   arrival less the whole duration; the `arrive` segment's text gives both times, local with offset.
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
const ROADS = ['Main Street', "Queen's Walk", 'Station Road', 'Market Square', "Rue de l'Église", 'Church Lane'];
const VENUE_AREA: Point = { lat: 52.5, lon: 13.38 };
const STEP_M = 200;
const MAX_STEPS = 30;
/** Waypoints per route, a sandbox cap (docs/sandbox.md). */
export const MAX_ROUTE_WAYPOINTS = 100;
const ROAD_SPEED_LIMIT_KMPH = 50;
const TRUCK_MAX_HEIGHT_M = 4.2;

const SIDE_STREET_FACTOR = 0.6;
const ROAD_MODES = ['car', 'carHOV', 'truck'];

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

/** A stable spot for a venue (within about 3 km of the sandbox city) and a unit inside it. */
function indoorPosition(venueId: string, unitId?: string): Point {
  const venue = offset(VENUE_AREA, fraction(venueId, 0) * 2 * Math.PI, fraction(venueId, 1) * 3000);
  return unitId ? offset(venue, fraction(unitId, 0) * 2 * Math.PI, 20 + fraction(unitId, 1) * 60) : venue;
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
  const line: Point[] = [first.position];
  const segments: Segment[] = [];
  const legs = waypoints.slice(1).map((to, i) => {
    const from = waypoints[i];
    const indoor = from.indoor || to.indoor;
    return { to, indoor, mode: from.mode ?? (indoor ? 'pedestrian' : 'car'), ends: stretches(from.position, to.position, request) };
  });
  // Traffic is that of the departure (or of the arrival, for arriveBy) at the place the time is given for.
  const arriving = request.time?.kind === 'arriveBy';
  const trafficPlace = arriving ? last.position : first.position;
  const trafficAt = request.time ? readRfc3339(request.time.text, trafficPlace, now) : now;
  legs.forEach(({ to, indoor, mode, ends }, i) => {
    const sideStreets = request.preference === 'shortest' && ROAD_MODES.includes(mode);
    const speed = SPEED[mode] * trafficFactor(trafficAt, trafficPlace, mode) * (sideStreets ? SIDE_STREET_FACTOR : 1);
    let heading = '';
    ends.forEach((end, s) => {
      const start = line[line.length - 1];
      const firstPoint = line.length - 1;
      line.push(...densify(start, end));
      const direction = compass(start, end);
      const road = indoor ? '' : ROADS[(i * 2 + s + (sideStreets ? 1 : 0)) % ROADS.length];
      const length = Math.round(distance(start, end));
      const instruction = s > 0 ? turn(heading, direction) : 'continue';
      const verb = s > 0 ? `Turn <span class="direction">${instruction}</span> and go` : i === 0 ? 'Head' : 'Continue';
      const where = indoor
        ? `to <span class="unit">${escapeHtml(to.unitId ?? to.venueId ?? 'the exit')}</span>`
        : `on <span class="street">${escapeHtml(road)}</span>`;
      segments.push({
        ...segment(start, length, mode, !indoor, speed),
        roadName: road,
        instruction,
        text: `${verb} <span class="direction">${direction}</span> ${where} &amp; follow it for <span class="length">${length}&nbsp;m</span>`,
        action: s > 0 ? 'turn' : i === 0 ? 'depart' : 'continue',
        firstPoint,
        lastPoint: line.length - 1,
      });
      heading = direction;
    });
  });
  const seconds = segments.reduce((sum, s) => sum + (s.duration as number), 0);
  const departure = arriving ? trafficAt - seconds * 1000 : trafficAt;
  const end = line.length - 1;
  segments.push({
    ...segment(last.position, 0, segments[segments.length - 1].transportMode as string, !last.indoor, 1),
    roadName: '',
    instruction: 'arrive',
    text:
      `Arrive at <span class="destination">${escapeHtml(last.unitId ?? last.venueId ?? 'your destination')}</span>` +
      ` at <span class="time">${localTime(departure + seconds * 1000, last.position)}</span>` +
      ` (departure <span class="time">${localTime(departure, first.position)}</span>)`,
    action: 'arrive',
    firstPoint: end,
    lastPoint: end,
  });
  return {
    start: encode(first.position),
    end: encode(last.position),
    segments,
    overview: { linestring: line.map((point) => encode(point)) },
  };
}

/**
 * The corners and end of one leg, after its start: for `fastest`, east-west then north-south (or the
 * other way round when that runs through the avoided box, else around it); for `shortest`, straight
 * (or around the box).
 */
function stretches(from: Point, to: Point, request: RouteRequest): Point[] {
  const boxes = request.avoid ? [request.avoid] : [];
  if (request.preference === 'fastest') {
    for (const corner of [
      { lat: from.lat, lon: to.lon },
      { lat: to.lat, lon: from.lon },
    ]) {
      const bends = distance(from, corner) > 1 && distance(corner, to) > 1;
      const path = bends ? [corner, to] : [to];
      if (!pathCrosses([from, ...path], boxes)) return path;
    }
  }
  return pathAround(from, to, boxes);
}

/** The members of a segment that follow from where it starts, how long it is, how it is travelled and at what speed (m/s). */
function segment(start: Point, length: number, mode: string, outdoor: boolean, speed: number): Segment {
  const onRoad = outdoor && ROAD_MODES.includes(mode);
  return {
    point: encode(start),
    length,
    duration: Math.round(length / speed),
    maxHeight: mode === 'truck' ? TRUCK_MAX_HEIGHT_M : null,
    speedLimit: onRoad ? ROAD_SPEED_LIMIT_KMPH : null,
    speedLimitUnit: onRoad ? 'kmph' : null,
    transportMode: mode,
  };
}

/** Points after `start` up to and including `end`, about every 200 m. */
function densify(start: Point, end: Point): Point[] {
  const steps = Math.max(1, Math.min(MAX_STEPS, Math.ceil(distance(start, end) / STEP_M)));
  return Array.from({ length: steps }, (_v, k) => {
    const t = (k + 1) / steps;
    return { lat: start.lat + (end.lat - start.lat) * t, lon: start.lon + (end.lon - start.lon) * t };
  });
}

function compass(from: Point, to: Point): string {
  const north = to.lat - from.lat;
  const east = (to.lon - from.lon) * Math.cos((from.lat * Math.PI) / 180);
  if (Math.abs(east) > Math.abs(north)) return east >= 0 ? 'east' : 'west';
  return north >= 0 ? 'north' : 'south';
}

function turn(heading: string, direction: string): string {
  const order = ['north', 'east', 'south', 'west'];
  const change = (order.indexOf(direction) - order.indexOf(heading) + 4) % 4;
  return change === 0 ? 'continue' : change === 1 ? 'right' : 'left';
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}
