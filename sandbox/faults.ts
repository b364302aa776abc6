import type http from 'node:http';
import zlib from 'node:zlib';
import { sendJson } from './http';
import type { LoggedRequest } from './options';

/** Faults a test switches on (`Sandbox.setFault`): what a platform does wrong, in place of handling a request. */

export interface Fault {
  /** Respond with this status instead of handling the request. */
  status?: number;
  /** Body sent with `status` (JSON error body by default). */
  body?: string;
  /** Retry-After header sent with `status` (seconds, or an HTTP date). */
  retryAfter?: string;
  /** More headers sent with `status` (a `location`, say). */
  headers?: Record<string, string>;
  /**
   * A platform that repeats what it was sent: responds with `status` (400 unless set) and the JSON text
   * this returns from the request as it arrived (its path, query, headers and body).
   */
  echo?: (request: EchoedRequest) => string;
  /** Wait before responding. */
  delayMs?: number;
  /** Destroy the connection without responding. */
  reset?: boolean;
  /** Never respond (until the sandbox closes). */
  hang?: boolean;
  /** Respond with 200 and a truncated, invalid JSON body. */
  malformedJson?: boolean;
  /** Send the body slowly: this many milliseconds between chunks. */
  slowBodyMs?: number;
  /** 429 with Retry-After beyond this many requests in any sliding minute. */
  rateLimitPerMinute?: number;
  /** Apply to this many requests only, then clear. */
  times?: number;
  /** Respond as the handler would (status, headers, declared length), but cut the connection halfway through the body. */
  truncateBody?: boolean;
  /** Respond with 200 and a JSON body of this many bytes, as fast as the client reads it (chunked unless `declareLength`). */
  hugeBodyBytes?: number;
  /** With `hugeBodyBytes`: state the size in Content-Length, as most servers do. */
  declareLength?: boolean;
  /** Respond with 200 and a JSON body that never ends, as fast as the client reads it. */
  endlessBody?: boolean;
  /** Respond with 200, then one byte of body every this many milliseconds, never ending. */
  dripMs?: number;
  /** Respond as the handler would, the body compressed in this Content-Encoding (its Content-Length adjusted). */
  contentEncoding?: ContentCoding;
  /** Respond with 200 and a compression bomb: a small body in this Content-Encoding that decodes to `bombBytes` of JSON filler. */
  compressionBomb?: ContentCoding;
  /** The decoded size of `compressionBomb` (64 MB by default). */
  bombBytes?: number;
  /** Respond with 200 declaring `Content-Encoding: gzip`, with a body that is not gzip. */
  brokenEncoding?: boolean;
  /** Chooses the fault for each request (none: handled normally), in place of this fault's own fields. */
  pick?: (endpoint: string) => Fault | undefined;
}

export type ContentCoding = 'gzip' | 'deflate' | 'br';

export interface EchoedRequest {
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** The faults switched on by endpoint name (`*`: every endpoint), and the requests their rate limits counted. */
export class FaultInjector {
  private readonly faults = new Map<string, Fault>();
  private readonly hits = new Map<string, number[]>();

  /** `later`: a timer the sandbox clears when it closes. */
  constructor(private readonly later: (ms: number, fn: () => void) => void) {}

  set(endpoint: string, fault: Fault): void {
    this.faults.set(endpoint, { ...fault });
  }

  clear(): void {
    this.faults.clear();
    this.hits.clear();
  }

  /** Returns true when a fault responded to (or swallowed) the request. */
  async apply(endpoint: string, req: http.IncomingMessage, res: http.ServerResponse, entry: LoggedRequest): Promise<boolean> {
    const configured = this.faults.get(endpoint) ?? this.faults.get('*');
    if (!configured) return false;
    if (configured.times !== undefined) {
      configured.times--;
      if (configured.times <= 0) this.faults.delete(this.faults.get(endpoint) === configured ? endpoint : '*');
    }
    const fault = configured.pick ? configured.pick(endpoint) : configured;
    if (!fault) return false;
    if (fault.rateLimitPerMinute !== undefined) {
      const now = Date.now();
      const hits = (this.hits.get(endpoint) ?? []).filter((t) => t > now - 60_000);
      if (hits.length >= fault.rateLimitPerMinute) {
        this.hits.set(endpoint, hits);
        const retryAfter = Math.max(1, Math.ceil((hits[0] + 60_000 - now) / 1000));
        res.setHeader('retry-after', String(retryAfter));
        sendJson(res, 429, { error: 'rate_limited', message: `more than ${fault.rateLimitPerMinute} requests per minute` });
        return true;
      }
      hits.push(now);
      this.hits.set(endpoint, hits);
    }
    if (fault.delayMs) await new Promise<void>((resolve) => this.later(fault.delayMs as number, resolve));
    if (fault.hang) return true;
    if (fault.reset) {
      req.socket.destroy();
      return true;
    }
    if (fault.contentEncoding) compressResponse(res, fault.contentEncoding);
    if (fault.echo) {
      res.writeHead(fault.status ?? 400, { 'content-type': 'application/json', ...fault.headers });
      res.end(fault.echo({ path: entry.path, query: entry.query, headers: req.headers, body: entry.body }));
      return true;
    }
    if (fault.status !== undefined) {
      if (fault.retryAfter !== undefined) res.setHeader('retry-after', fault.retryAfter);
      res.writeHead(fault.status, { 'content-type': 'application/json', ...fault.headers });
      res.end(fault.body ?? JSON.stringify({ error: 'fault', message: `injected ${fault.status}` }));
      return true;
    }
    if (fault.hugeBodyBytes !== undefined || fault.endlessBody || fault.dripMs !== undefined) {
      streamFaultBody(res, fault, entry, this.later);
      return true;
    }
    if (fault.compressionBomb) {
      const body = await compressionBomb(fault.compressionBomb, fault.bombBytes ?? 64 * 1024 * 1024);
      entry.faultBodyBytes = body.length;
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': fault.compressionBomb, 'content-length': body.length });
      res.end(body);
      return true;
    }
    if (fault.brokenEncoding) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end('{"this": "is not gzip"}');
      return true;
    }
    if (fault.malformedJson) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"type":"FeatureCollection","features":[{"type":"Feat');
      return true;
    }
    if (fault.truncateBody) {
      res.end = ((chunk?: unknown) => {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.isBuffer(chunk) ? chunk : Buffer.alloc(0);
        res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => req.socket.destroy());
        return res;
      }) as typeof res.end;
    }
    if (fault.slowBodyMs) {
      const original = res.end.bind(res);
      const slowEnd = (chunk?: unknown): http.ServerResponse => {
        const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : '';
        let offset = 0;
        const step = () => {
          if (res.destroyed) return;
          if (offset >= text.length) {
            original();
            return;
          }
          res.write(text.slice(offset, offset + 16));
          offset += 16;
          this.later(fault.slowBodyMs as number, step);
        };
        step();
        return res;
      };
      res.end = slowEnd as typeof res.end;
    }
    return false;
  }
}

const COMPRESSORS: Record<ContentCoding, () => zlib.Gzip | zlib.Deflate | zlib.BrotliCompress> = {
  gzip: () => zlib.createGzip({ level: 9 }),
  deflate: () => zlib.createDeflate({ level: 9 }),
  // Quality 5 keeps making the bomb fast; it is still about 100 bytes for 64 MB.
  br: () => zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } }),
};

/** The response's body (as the handler ends it) compressed, with Content-Encoding set and Content-Length adjusted. */
function compressResponse(res: http.ServerResponse, coding: ContentCoding): void {
  const writeHead = res.writeHead.bind(res) as (status: number, headers?: http.OutgoingHttpHeaders) => http.ServerResponse;
  const end = res.end.bind(res) as (chunk?: unknown) => http.ServerResponse;
  let status = 200;
  let headers: http.OutgoingHttpHeaders = {};
  res.writeHead = ((code: number, given?: http.OutgoingHttpHeaders) => {
    status = code;
    headers = { ...given };
    return res;
  }) as typeof res.writeHead;
  res.end = ((chunk?: unknown) => {
    const plain = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.isBuffer(chunk) ? chunk : Buffer.alloc(0);
    const compressor = COMPRESSORS[coding]();
    const parts: Buffer[] = [];
    compressor.on('data', (part: Buffer) => parts.push(part));
    compressor.on('end', () => {
      const body = Buffer.concat(parts);
      delete headers['content-length'];
      writeHead(status, { ...headers, 'content-encoding': coding, 'content-length': body.length });
      end(body);
    });
    compressor.end(plain);
    return res;
  }) as typeof res.end;
}

const bombs = new Map<string, Promise<Buffer>>();

/** JSON filler of `bytes` compressed in `coding`, made once per size and coding (64 MB of gzip is 64 KB, of br 100 bytes). */
function compressionBomb(coding: ContentCoding, bytes: number): Promise<Buffer> {
  const key = `${coding}:${bytes}`;
  let bomb = bombs.get(key);
  if (!bomb) {
    bomb = new Promise((resolve, reject) => {
      const compressor = COMPRESSORS[coding]();
      const parts: Buffer[] = [];
      compressor.on('data', (part: Buffer) => parts.push(part));
      compressor.on('end', () => resolve(Buffer.concat(parts)));
      compressor.on('error', reject);
      compressor.write(FILLER_OPEN);
      for (let left = bytes - FILLER_OPEN.length - FILLER_CLOSE.length; left > 0; left -= FILLER_CHUNK.length) {
        compressor.write(left < FILLER_CHUNK.length ? FILLER_CHUNK.subarray(0, left) : FILLER_CHUNK);
      }
      compressor.end(FILLER_CLOSE);
    });
    bombs.set(key, bomb);
  }
  return bomb;
}

/** A JSON text of filler: `{"filler":"xxx…"}`; endless ones never reach the closing `"}`. */
const FILLER_OPEN = Buffer.from('{"filler":"');
const FILLER_CLOSE = Buffer.from('"}');
const FILLER_CHUNK = Buffer.alloc(64 * 1024, 'x');

/**
 * Streams a huge, endless or dripping body, writing only as fast as the client reads (so the sandbox
 * holds no more than one chunk), and counts in `entry` the bytes handed to the connection.
 */
function streamFaultBody(res: http.ServerResponse, fault: Fault, entry: LoggedRequest, later: (ms: number, fn: () => void) => void): void {
  const size = fault.hugeBodyBytes;
  const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json' };
  if (size !== undefined && fault.declareLength) headers['content-length'] = size;
  res.writeHead(200, headers);
  let sent = 0;
  const write = (bytes: Buffer): boolean => {
    sent += bytes.length;
    entry.faultBodyBytes = sent;
    return res.write(bytes);
  };
  write(FILLER_OPEN);
  if (fault.dripMs !== undefined) {
    const drip = () => {
      if (res.destroyed) return;
      write(FILLER_CHUNK.subarray(0, 1));
      later(fault.dripMs as number, drip);
    };
    later(fault.dripMs, drip);
    return;
  }
  const pump = () => {
    while (!res.destroyed) {
      const left = size === undefined ? Infinity : size - FILLER_CLOSE.length - sent;
      if (left <= 0) {
        write(FILLER_CLOSE);
        res.end();
        return;
      }
      if (!write(left < FILLER_CHUNK.length ? FILLER_CHUNK.subarray(0, left) : FILLER_CHUNK)) {
        res.once('drain', pump);
        return;
      }
    }
  };
  pump();
}
