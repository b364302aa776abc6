import { randomBytes } from 'node:crypto';
import ngeohash from 'ngeohash';
import type { RouteContext, Sandbox } from './server';
import { badRequest } from './server';

/**
 * What the isoline, sequencing and routing endpoints of the sandbox share: strict validation,
 * spherical geometry, the Japan check and asynchronous jobs that take several polls.
 */

export interface Point {
  lat: number;
  lon: number;
}

/** A request the spec forbids; the response is 400 with the message. */
export class Invalid extends Error {}

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

/** Speeds in m/s per transport mode, for plausible times. */
export const SPEED: Record<string, number> = {
  car: 12,
  carHOV: 13,
  truck: 9,
  bicycle: 4.5,
  pedestrian: 1.4,
  wheelchair: 1.0,
};

export interface Job {
  polls: number;
  pollsNeeded: number;
  result: unknown;
  failure?: string;
}

/**
 * Asynchronous jobs of one endpoint family: a job responds with "running" until it has been polled
 * `sandbox.options.jobPolls` times, then with the result (or, after `failNext`, with status "failed").
 */
export class Jobs {
  /** Makes the next job created end with status "failed" and this message. */
  failNext?: string;
  private readonly jobs = new Map<string, Job>();

  constructor(private readonly sandbox: Sandbox) {}

  create(result: unknown): { jobId: string; status: string; message: string } {
    const jobId = `job-${randomBytes(6).toString('hex')}`;
    this.jobs.set(jobId, { polls: 0, pollsNeeded: this.sandbox.options.jobPolls, result, failure: this.failNext });
    this.failNext = undefined;
    return { jobId, status: 'pending', message: 'job accepted' };
  }

  /** The jobs not yet collected, by id (for the state `npm start` keeps across restarts). */
  entries(): Array<[string, Job]> {
    return [...this.jobs];
  }

  /** Puts back jobs `entries()` gave, as they were. */
  restore(entries: Array<[string, Job]>): void {
    for (const [jobId, job] of entries) this.jobs.set(jobId, job);
  }

  /** The response to one status request, or undefined for an unknown job. */
  poll(jobId: string): unknown {
    const job = this.jobs.get(jobId);
    if (!job) return undefined;
    job.polls++;
    if (job.polls < job.pollsNeeded) return { jobId, status: 'running', message: `computing (${job.polls}/${job.pollsNeeded})` };
    if (job.failure) return { jobId, status: 'failed', message: job.failure };
    return job.result;
  }
}

export function jobsOf(sandbox: Sandbox, family: 'isoline' | 'sequence'): Jobs {
  return sandbox.stateOf(`${family}-jobs`, () => new Jobs(sandbox));
}

/** Strict RFC 3339-style date checks shared by `departure`, `arriveBy` and `departAt`. */
export function validCalendar(date: string, time: string): boolean {
  const [year, month, day] = date.split('-').map(Number);
  const [hours, minutes, seconds] = time.split(':').map(Number);
  const probe = new Date(Date.UTC(year, month - 1, day));
  return probe.getUTCFullYear() === year && probe.getUTCMonth() === month - 1 && probe.getUTCDate() === day && hours <= 23 && minutes <= 59 && seconds <= 60;
}
