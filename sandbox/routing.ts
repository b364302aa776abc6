import { randomBytes } from 'node:crypto';
import ngeohash from 'ngeohash';
import type { RouteContext, Sandbox } from './server';
import { badRequest } from './http';
import { JobTiming, expiredBody, isExpired, makeRoom, newTiming, phaseOf } from './job-clock';

/**
 * What the isoline, sequencing and routing endpoints of the sandbox share: strict validation,
 * spherical geometry, the Japan check and asynchronous jobs that take several polls.
 */

export interface Point {
  lat: number;
  lon: number;
}

/** A request the spec forbids; the response is 400 with the message. */
class Invalid extends Error {}

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Invalid(message);
}

/** Runs a handler, responding with 400 and the JSON error body when it finds the request invalid. */
export function strictly(handler: (ctx: RouteContext) => void): (ctx: RouteContext) => void {
  return (ctx) => {
    try {
      handler(ctx);
    } catch (err) {
      if (!(err instanceof Invalid)) throw err;
      badRequest(ctx.res, err.message);
    }
  };
}

/** The JSON body as an object, or undefined when `ctx.json()` has already responded with 400. */
export function jsonObject(ctx: RouteContext): Record<string, unknown> | undefined {
  const body = ctx.json();
  if (body === undefined) return undefined;
  return requireObject(body, 'body');
}

export function requireObject(value: unknown, label: string): Record<string, unknown> {
  check(value !== null && typeof value === 'object' && !Array.isArray(value), `${label} must be an object`);
  return value as Record<string, unknown>;
}

export function onlyMembers(record: Record<string, unknown>, allowed: readonly string[], label: string): void {
  for (const key of Object.keys(record)) check(allowed.includes(key), `${label}: unknown member "${key}"`);
}

export function requireEnum<T extends string>(value: unknown, allowed: readonly T[], label: string): T {
  check((allowed as readonly unknown[]).includes(value), `${label} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  return value as T;
}

export function requireEnumArray<T extends string>(value: unknown, allowed: readonly T[], label: string): T[] {
  check(Array.isArray(value) && value.length > 0, `${label} must be a non-empty array`);
  return (value as unknown[]).map((item, i) => requireEnum(item, allowed, `${label}[${i}]`));
}

export function requireNumber(value: unknown, label: string): number {
  check(typeof value === 'number' && Number.isFinite(value), `${label} must be a number`);
  return value;
}

/** The standard base-32 geohash alphabet, lower case. */
const GEOHASH = /^[0123456789bcdefghjkmnpqrstuvwxyz]{1,12}$/;

export function requireGeohash(value: unknown, label: string): string {
  check(
    typeof value === 'string' && GEOHASH.test(value),
    `${label} must be a geohash (alphabet 0123456789bcdefghjkmnpqrstuvwxyz), got ${JSON.stringify(value)}`,
  );
  return value;
}

export function requireLatLon(lat: unknown, lon: unknown, label: string): Point {
  const latitude = requireNumber(lat, `${label} latitude`);
  const longitude = requireNumber(lon, `${label} longitude`);
  check(latitude >= -90 && latitude <= 90, `${label}: latitude ${latitude} out of range`);
  check(longitude >= -180 && longitude <= 180, `${label}: longitude ${longitude} out of range`);
  return { lat: latitude, lon: longitude };
}

/** A spec Location object: `{type: 'geohash', geohash}` or `{type: 'coordinates', latitude, longitude}`, nothing else. */
export function requireLocationObject(value: unknown, label: string): Point {
  const location = requireObject(value, label);
  const type = requireEnum(location.type, ['geohash', 'coordinates'], `${label}.type`);
  if (type === 'geohash') {
    onlyMembers(location, ['type', 'geohash'], label);
    return decode(requireGeohash(location.geohash, `${label}.geohash`));
  }
  onlyMembers(location, ['type', 'latitude', 'longitude'], label);
  return requireLatLon(location.latitude, location.longitude, label);
}

export function decode(geohash: string): Point {
  const { latitude, longitude } = ngeohash.decode(geohash);
  return { lat: latitude, lon: longitude };
}

export function encode(point: Point, precision = 9): string {
  return ngeohash.encode(point.lat, point.lon, precision);
}

const EARTH_RADIUS_M = 6_371_008.8;
const METERS_PER_DEGREE = (Math.PI / 180) * EARTH_RADIUS_M;

export function distance(a: Point, b: Point): number {
  const rad = Math.PI / 180;
  const h = Math.sin(((b.lat - a.lat) * rad) / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(((b.lon - a.lon) * rad) / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** The point `meters` away along `bearing` (radians from north); flat-earth, fine for city scales. */
export function offset(origin: Point, bearing: number, meters: number): Point {
  const lat = Math.max(-89.999, Math.min(89.999, origin.lat + (meters * Math.cos(bearing)) / METERS_PER_DEGREE));
  const lon = origin.lon + (meters * Math.sin(bearing)) / (METERS_PER_DEGREE * Math.cos((origin.lat * Math.PI) / 180));
  return { lat: round(lat), lon: round(((((lon + 180) % 360) + 360) % 360) - 180) };
}

export function round(n: number, decimals = 6): number {
  const f = 10 ** decimals;
  return Math.round(n * f) / f;
}

/** Japan's islands, roughly (south, west, north, east): the service computes no isolines there. */
const JAPAN: Array<[number, number, number, number]> = [
  [30.9, 129.3, 41.6, 142.2],
  [41.3, 139.3, 45.6, 148.9],
  [24.0, 122.9, 30.9, 131.4],
];

export function inJapan(point: Point): boolean {
  return JAPAN.some(([s, w, n, e]) => point.lat >= s && point.lat <= n && point.lon >= w && point.lon <= e);
}

export interface Job extends JobTiming {
  result: unknown;
  failure?: string;
}

/**
 * Asynchronous jobs of one endpoint family: a job responds with "running" until it completes (by the
 * sandbox's clock, see `job-clock.ts`, or on its `jobPolls`-th poll in tests), then with the result (or,
 * after `failNext`, with status "failed"), and with 410 once its results have expired.
 */
class Jobs {
  /** Makes the next job created end with status "failed" and this message. */
  failNext?: string;
  private readonly jobs = new Map<string, Job>();

  constructor(
    private readonly sandbox: Sandbox,
    private readonly family: 'isoline' | 'sequence',
  ) {}

  /** A new job of `items` items (polygons or waypoints), or undefined when `options.maxRoutingJobs` are running. */
  create(result: unknown, items: number): { jobId: string; status: string; message: string } | undefined {
    if (!makeRoom(this.sandbox, this.jobs, this.sandbox.options.maxRoutingJobs)) return undefined;
    const jobId = `job-${randomBytes(6).toString('hex')}`;
    this.jobs.set(jobId, { ...newTiming(this.sandbox, this.family, items), result, failure: this.failNext });
    this.failNext = undefined;
    return { jobId, status: 'pending', message: 'job accepted' };
  }

  /** The jobs whose results have not expired, by id (for the state `npm start` keeps across restarts). */
  entries(): Array<[string, Job]> {
    return [...this.jobs].filter(([, job]) => !isExpired(this.sandbox, job));
  }

  /** Puts back jobs `entries()` gave, as they were (a job saved before jobs had times is timed from now). */
  restore(entries: Array<[string, Job]>): void {
    const now = this.sandbox.clock.now();
    for (const [jobId, job] of entries) this.jobs.set(jobId, Object.assign({ createdAt: now, readyAt: now }, job));
  }

  /** The status and body of the response to one status request, or undefined for an unknown job. */
  poll(jobId: string): { status: number; body: unknown } | undefined {
    const job = this.jobs.get(jobId);
    if (!job) return undefined;
    const now = phaseOf(this.sandbox, job, { poll: true });
    if (now.phase === 'running') {
      const progress = job.pollsNeeded !== undefined ? `${job.polls}/${job.pollsNeeded}` : `${Math.floor(now.fraction * 100)}%`;
      return { status: 200, body: { jobId, status: 'running', message: `computing (${progress})` } };
    }
    if (now.phase === 'expired') return { status: 410, body: expiredBody(this.sandbox, jobId) };
    if (job.failure) return { status: 200, body: { jobId, status: 'failed', message: job.failure } };
    return { status: 200, body: job.result };
  }
}

export function jobsOf(sandbox: Sandbox, family: 'isoline' | 'sequence'): Jobs {
  return sandbox.stateOf(`${family}-jobs`, () => new Jobs(sandbox, family));
}

/** Strict RFC 3339-style date checks shared by `departure`, `arriveBy` and `departAt`. */
export function validCalendar(date: string, time: string): boolean {
  const [year, month, day] = date.split('-').map(Number);
  const [hours, minutes, seconds] = time.split(':').map(Number);
  const probe = new Date(Date.UTC(year, month - 1, day));
  return probe.getUTCFullYear() === year && probe.getUTCMonth() === month - 1 && probe.getUTCDate() === day && hours <= 23 && minutes <= 59 && seconds <= 60;
}

/** A bounding box to avoid, in degrees. */
export interface Box {
  minLat: number;
  minLon: number;
  maxLat: number;
  maxLon: number;
}

export function inside(point: Point, box: Box): boolean {
  return point.lat > box.minLat && point.lat < box.maxLat && point.lon > box.minLon && point.lon < box.maxLon;
}

/** Whether the straight line from `a` to `b` (in latitude and longitude, as the route lines are drawn) runs through the inside of `box`. */
export function crosses(a: Point, b: Point, box: Box): boolean {
  let t0 = 0;
  let t1 = 1;
  const clip = (p: number, q: number): boolean => {
    if (p === 0) return q > 0;
    const t = q / p;
    if (p < 0) t0 = Math.max(t0, t);
    else t1 = Math.min(t1, t);
    return t0 < t1;
  };
  const dLat = b.lat - a.lat;
  const dLon = b.lon - a.lon;
  return clip(-dLat, a.lat - box.minLat) && clip(dLat, box.maxLat - a.lat) && clip(-dLon, a.lon - box.minLon) && clip(dLon, box.maxLon - a.lon);
}

/**
 * The sandbox's time zone of a place, in minutes east of UTC: whole hours from its longitude (15°
 * an hour, as nautical time), without daylight saving. Tokyo is +09:00, Berlin +01:00, Los Angeles −08:00.
 */
function zoneOffsetMinutes(place: Point): number {
  return Math.round(place.lon / 15) * 60;
}

/**
 * The instant of a date and time (`HH:mm:ss`) with a zone (`Z`, `±hh`, `±hhmm`, `±hh:mm`), or, without
 * one, as local time at `place`.
 */
export function instantAt(date: string, time: string, zone: string | undefined, place: Point): number {
  const [year, month, day] = date.split('-').map(Number);
  const [hours, minutes, seconds] = time.split(':').map(Number);
  const wall = Date.UTC(year, month - 1, day, hours, minutes, Math.min(59, seconds));
  return wall - zoneMinutes(zone, place) * 60_000;
}

function zoneMinutes(zone: string | undefined, place: Point): number {
  if (zone === undefined || zone === '') return zoneOffsetMinutes(place);
  if (zone === 'Z' || zone === 'z') return 0;
  const digits = zone.slice(1).replace(':', '');
  const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0');
  return zone.startsWith('-') ? -minutes : minutes;
}

/** The local date (`yyyy-MM-dd`) at `place` at an instant. */
export function localDate(ms: number, place: Point): string {
  return new Date(ms + zoneOffsetMinutes(place) * 60_000).toISOString().slice(0, 10);
}

/** An instant as local time at `place`, with its offset: `yyyy-MM-dd'T'HH:mm:ss±hh:mm`. */
export function localTime(ms: number, place: Point): string {
  const offsetMinutes = zoneOffsetMinutes(place);
  const wall = new Date(Math.round(ms / 1000) * 1000 + offsetMinutes * 60_000).toISOString().slice(0, 19);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${wall}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** Road transport, which traffic slows. */
const SLOWED = { car: 0.6, truck: 0.6, carHOV: 0.8 } as Record<string, number | undefined>;

/**
 * Traffic: on weekdays from 07:00 to 10:00 and from 16:00 to 19:00 local time at `place`, cars and
 * trucks go at 0.6 of their speed and carHOV (its own lanes) at 0.8; other transport, and other
 * times, at full speed.
 */
export function trafficFactor(ms: number, place: Point, mode: string): number {
  const local = new Date(ms + zoneOffsetMinutes(place) * 60_000);
  const hour = local.getUTCHours();
  const weekday = local.getUTCDay() >= 1 && local.getUTCDay() <= 5;
  const rush = weekday && ((hour >= 7 && hour < 10) || (hour >= 16 && hour < 19));
  return rush ? (SLOWED[mode] ?? 1) : 1;
}
