import { createHash } from 'node:crypto';
import ngeohash from 'ngeohash';
import { badRequest, sendJson } from '../http';
import { Sandbox } from '../server';
import { SANDBOX_CITY } from '../town/places';

/**
 * `GET {sandbox_url}/v1/location/words/{words}` with a bearer token (checked by the server: 401 for a
 * missing, unknown or expired token). Every three words of letters map to one fixed ~3 m cell in the
 * sandbox's town (sandbox/town), around Sandbox City,
 * the same for any letter case; words containing "nowhere" name no cell (404).
 * The path must be URL-encoded (no raw non-ASCII bytes) and hold exactly three dot-separated words.
 */
const WORD = /^[\p{L}\p{M}]+$/u;
/** Cell size in degrees of latitude (about 3 m). */
const CELL_DEG = 0.000027;

export default function wordsEndpoint(sandbox: Sandbox): void {
  sandbox.route('GET', '/v1/location/words/:words', { endpoint: 'words', auth: 'bearer' }, (ctx) => {
    const rawPath = (ctx.req.url ?? '').split('?')[0];
    if (/[^\x21-\x7e]/.test(rawPath)) return void badRequest(ctx.res, 'the words must be URL-encoded in the path');
    const words = ctx.params.words.split('.');
    if (words.length !== 3 || !words.every((word) => WORD.test(word))) {
      return void badRequest(ctx.res, 'expected three words of letters separated by dots');
    }
    const normalized = words.map((word) => word.normalize('NFC').toLowerCase());
    if (normalized.some((word) => word.includes('nowhere'))) {
      return void sendJson(ctx.res, 404, { error: 'not_found', message: 'no cell has these three words', httpStatusCode: 404 });
    }
    sendJson(ctx.res, 200, lookup(normalized.join('.')));
  });
}

/**
 * The deterministic cell of three (lower-case) words: in the town of Sandbox City, within about 6 km of
 * its centre, where geocoded places and indoor venues are too, at 30–90 m of terrain.
 */
export function lookup(words: string): Record<string, unknown> {
  const digest = createHash('sha256').update(words).digest();
  const lat = snap(SANDBOX_CITY.lat + (digest.readUInt32BE(0) / 0xffffffff - 0.5) * 0.1);
  const lon = snap(SANDBOX_CITY.lon + ((digest.readUInt32BE(4) / 0xffffffff - 0.5) * 0.1) / Math.cos((SANDBOX_CITY.lat * Math.PI) / 180));
  return {
    words,
    geohash: ngeohash.encode(lat, lon, 10),
    coordinates: { lat, lon, elevation: 30 + (digest.readUInt16BE(8) % 60), elevationType: 'terrain' },
    httpStatusCode: 200,
  };
}

/** The centre of the grid cell holding a coordinate, to six decimals. */
function snap(value: number): number {
  return Math.round((Math.floor(value / CELL_DEG) + 0.5) * CELL_DEG * 1e6) / 1e6;
}
