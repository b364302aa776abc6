import { createHash } from 'node:crypto';
import { Sandbox, sendJson } from '../server';
import {
  Point,
  SPEED,
  check,
  decode,
  distance,
  encode,
  jsonObject,
  offset,
  onlyMembers,
  requireEnum,
  requireEnumArray,
  requireGeohash,
  requireLatLon,
  strictly,
  validCalendar,
} from '../routing';

/**
 * `POST /v1/routing` (endpoint name `route`, headers `x-svc-vpm-id` + `x-svc-api-key`, permission
 * `routing`). The body is checked against the spec's tables, unknown members included. Choices where
 * the spec is silent:
 * - `point` needs `coordinates` ("longitude,latitude", plain decimals) or a `geohash`; `geohash`
 *   needs a `geohash`; `indoor` needs a `venueId` (a `unitId`, `geohash` or `coordinates` may
 *   follow); venue and unit ids place the waypoint near the sandbox city, deterministically;
 * - each leg runs east-west, then north-south; one segment per straight stretch plus an `arrive`
 *   segment, `text` with HTML span markup and entities, `firstPoint`/`lastPoint` indexing
 *   `overview.linestring` (9-character geohashes); `length` in meters, `duration` in seconds;
 * - a leg's transport mode is the first of its start waypoint's `transportMode`, else `car`
 *   (`pedestrian` when indoor); `transportMode` is given per segment.
 */

const TYPES = ['point', 'geohash', 'indoor'] as const;
const TRANSPORT_MODES = ['pedestrian', 'wheelchair', 'bicycle', 'car', 'carHOV', 'truck'] as const;
const PREFERENCES = ['fastest', 'shortest'] as const;
const DECIMAL = '-?\\d+(?:\\.\\d+)?';
const COORDINATES = new RegExp(`^(${DECIMAL}),(${DECIMAL})$`);
const AVOID = new RegExp(`^(${DECIMAL}),(${DECIMAL}),(${DECIMAL}),(${DECIMAL})$`);
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})?$/;
const FULL_DATE = /^(\d{4}-\d{2}-\d{2})$/;
const PARTIAL_TIME = /^(\d{2}:\d{2}:\d{2})(?:\.\d+)?$/;
const ROADS = ['Main Street', "Queen's Walk", 'Station Road', 'Market Square', "Rue de l'Église", 'Church Lane'];
const VENUE_AREA: Point = { lat: 52.5, lon: 13.38 };
const STEP_M = 200;
const MAX_STEPS = 30;
const ROAD_SPEED_LIMIT_KMPH = 50;
const TRUCK_MAX_HEIGHT_M = 4.2;

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
      sendJson(ctx.res, 200, route(validate(body)));
    }),
  );
}

function validate(body: Record<string, unknown>): Waypoint[] {
  onlyMembers(body, ['waypoints', 'arriveBy', 'departAt', 'avoid', 'preference'], 'body');
  check(Array.isArray(body.waypoints) && body.waypoints.length >= 2, 'waypoints is required: an array of two or more waypoint objects');
  const waypoints = (body.waypoints as unknown[]).map((waypoint, i) => validateWaypoint(waypoint, `waypoints[${i}]`));
  check(body.arriveBy === undefined || body.departAt === undefined, 'arriveBy and departAt cannot both be given');
  for (const name of ['arriveBy', 'departAt']) if (body[name] !== undefined) checkRfc3339(body[name], name);
  if (body.avoid !== undefined) {
    const match = typeof body.avoid === 'string' ? AVOID.exec(body.avoid) : null;
    check(match, `avoid must be "minLat,minLon,maxLat,maxLon", got ${JSON.stringify(body.avoid)}`);
    const [minLat, minLon, maxLat, maxLon] = match.slice(1).map(Number);
    requireLatLon(minLat, minLon, 'avoid minimum');
    requireLatLon(maxLat, maxLon, 'avoid maximum');
    check(minLat < maxLat && minLon < maxLon, 'avoid: minimums must be less than maximums');
  }
  if (body.preference !== undefined) requireEnum(body.preference, PREFERENCES, 'preference');
  return waypoints;
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
  check(waypoint.venueId !== undefined, `${label}: an indoor waypoint needs a venueId`);
  const venueId = waypoint.venueId as string;
  const unitId = waypoint.unitId as string | undefined;
  return { position: position ?? indoorPosition(venueId, unitId), indoor: true, mode: modes?.[0], venueId, unitId };
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

function route(waypoints: Waypoint[]): Record<string, unknown> {
  const line: Point[] = [waypoints[0].position];
  const segments: Segment[] = [];
  waypoints.slice(1).forEach((to, i) => {
    const from = waypoints[i];
    const indoor = from.indoor || to.indoor;
    const mode = from.mode ?? (indoor ? 'pedestrian' : 'car');
    const corner: Point = { lat: from.position.lat, lon: to.position.lon };
    const bends = distance(from.position, corner) > 1 && distance(corner, to.position) > 1;
    let heading = '';
    (bends ? [corner, to.position] : [to.position]).forEach((end, s) => {
      const start = line[line.length - 1];
      const firstPoint = line.length - 1;
      line.push(...densify(start, end));
      const direction = compass(start, end);
      const road = indoor ? '' : ROADS[(i * 2 + s) % ROADS.length];
      const length = Math.round(distance(start, end));
      const instruction = s > 0 ? turn(heading, direction) : 'continue';
      const verb = s > 0 ? `Turn <span class="direction">${instruction}</span> and go` : i === 0 ? 'Head' : 'Continue';
      const where = indoor
        ? `to <span class="unit">${escapeHtml(to.unitId ?? to.venueId ?? 'the exit')}</span>`
        : `on <span class="street">${escapeHtml(road)}</span>`;
      segments.push({
        ...segment(start, length, mode, !indoor),
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
  const last = waypoints[waypoints.length - 1];
  const end = line.length - 1;
  segments.push({
    ...segment(last.position, 0, segments[segments.length - 1].transportMode as string, !last.indoor),
    roadName: '',
    instruction: 'arrive',
    text: `Arrive at <span class="destination">${escapeHtml(last.unitId ?? last.venueId ?? 'your destination')}</span>`,
    action: 'arrive',
    firstPoint: end,
    lastPoint: end,
  });
  return {
    start: encode(waypoints[0].position),
    end: encode(last.position),
    segments,
    overview: { linestring: line.map((point) => encode(point)) },
  };
}

/** The members of a segment that follow from where it starts, how long it is and how it is travelled. */
function segment(start: Point, length: number, mode: string, outdoor: boolean): Segment {
  const onRoad = outdoor && ['car', 'carHOV', 'truck'].includes(mode);
  return {
    point: encode(start),
    length,
    duration: Math.round(length / SPEED[mode]),
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
  return (order.indexOf(direction) - order.indexOf(heading) + 4) % 4 === 1 ? 'right' : 'left';
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}
