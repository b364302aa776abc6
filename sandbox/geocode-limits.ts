import type http from 'node:http';
import { sendJson } from './http';
import type { SandboxModes } from './options';

/** The modes' limits of single geocode per API key (`SandboxModes`), counted by the sandbox's clock. */
export class GeocodeLimits {
  /** Single geocodes per API key: their times in the last minute, and the day and count of the daily limit. */
  private readonly counts = new Map<string, { times: number[]; day: string; count: number }>();

  constructor(
    private readonly modes: SandboxModes,
    private readonly clock: { now(): number },
  ) {}

  /**
   * The recommended rate and the daily limit of single geocode, when their modes are on: responds with
   * 429 and Retry-After (and returns true) beyond them. Refused requests are not counted.
   */
  exceeded(req: http.IncomingMessage, res: http.ServerResponse): boolean {
    const { geocodeRatePerMinute: perMinute, geocodeDailyLimit: perDay } = this.modes;
    if (perMinute === undefined && perDay === undefined) return false;
    const now = this.clock.now();
    const day = new Date(now).toISOString().slice(0, 10);
    const key = String(req.headers['x-svc-api-key']);
    const counts = this.counts.get(key) ?? { times: [], day, count: 0 };
    this.counts.set(key, counts);
    counts.times = counts.times.filter((t) => t > now - 60_000);
    if (counts.day !== day) Object.assign(counts, { day, count: 0 });
    const refuse = (retryAfterMs: number, error: string, message: string) => {
      res.setHeader('retry-after', String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
      sendJson(res, 429, { error, message });
      return true;
    };
    if (perDay !== undefined && counts.count >= perDay) {
      return refuse(Date.parse(`${day}T00:00:00Z`) + 86_400_000 - now, 'daily_limit_exceeded', `more than ${perDay} geocode requests today (UTC)`);
    }
    if (perMinute !== undefined && counts.times.length >= perMinute) {
      return refuse(counts.times[0] + 60_000 - now, 'rate_limited', `more than ${perMinute} geocode requests per minute`);
    }
    counts.times.push(now);
    counts.count++;
    return false;
  }
}
