import { Readable, Transform, pipeline } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { CatalogText, catalogText } from '../util/catalog-text';

/** What was read of a response's body: at most the limit, and whether that was all of it. */
export interface BoundedBody {
  bytes: Buffer;
  /** False when the body went past the limit (or declared it would): reading stopped there. */
  complete: boolean;
  /** The Content-Length that was over the limit, when that is why nothing was read. */
  declaredBytes?: number;
}

/** 1 MB as the settings count it: 1,048,576 bytes. */
export const BYTES_PER_MB = 1024 * 1024;

/**
 * Reads a body, keeping at most `limitBytes`. A Content-Length over the limit stops it before the
 * first byte; otherwise reading stops at the first chunk that goes past it. Either way the stream is
 * destroyed, which aborts the request and closes its connection: nothing more is read, so however
 * large or endless the response, no more than the limit (plus one chunk) is ever held.
 */
export function readBounded(body: Readable, limitBytes: number, declaredLength: string | undefined): Promise<BoundedBody> {
  const declaredBytes = Number(declaredLength);
  if (declaredLength !== undefined && declaredBytes > limitBytes) {
    // Destroying an unread body fails it with an abort error, which is expected here.
    body.once('error', () => undefined);
    body.destroy();
    return Promise.resolve({ bytes: Buffer.alloc(0), complete: false, declaredBytes });
  }
  // Plain events rather than an async iterator: this runs for every response, and the iterator's
  // promise per chunk and end-of-stream tracking were a visible share of a small request's CPU.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const settle = (outcome: BoundedBody | Error) => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const onData = (chunk: Buffer) => {
      if (total + chunk.length > limitBytes) {
        chunks.push(chunk.subarray(0, limitBytes - total));
        settle({ bytes: Buffer.concat(chunks), complete: false });
        // Destroying the stream aborts the request: nothing more is read.
        body.destroy();
        return;
      }
      chunks.push(chunk);
      total += chunk.length;
    };
    body.on('data', onData);
    body.once('end', () => settle({ bytes: Buffer.concat(chunks, total), complete: true }));
    // After settling, errors (such as the abort of the destroy above) are expected and dropped.
    body.on('error', (err) => settle(err));
    body.once('close', () => {
      if (!settled) settle(Object.assign(new Error('the response ended before it was complete'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    });
  });
}

/** A size for people: "5 MB", "512 KB", "300 bytes" (the word translated). */
export function describeSize(bytes: number): string | CatalogText {
  if (bytes >= BYTES_PER_MB) return `${formatAmount(bytes / BYTES_PER_MB)} MB`;
  if (bytes >= 1024) return `${formatAmount(bytes / 1024)} KB`;
  return catalogText('value.bytes', { count: bytes });
}

function formatAmount(value: number): string {
  return String(Math.round(value * 100) / 100);
}

/** The decoders of the content codings the client reads (RFC 9110 8.4.1; `deflate` is the zlib format). */
const DECODERS: Readonly<Record<string, () => Transform>> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};
/** More codings than this on one response are refused: no server needs them, and each one multiplies. */
const MAX_CODINGS = 2;

/** A response's body as it arrives, decoded as it is read, with the limit on the bytes received. */
export interface DecodedBody {
  /** The decoded bytes (the body itself without a Content-Encoding). */
  stream: Readable;
  /** Why decoding failed, once it has: the coding and the decoder's error (a broken or truncated encoding). */
  failure: () => { coding: string; error: Error } | undefined;
  /** True once more bytes were received than the limit allows (reading stopped there). */
  overLimit: () => boolean;
  /** The bytes received so far, before decoding. */
  received: () => number;
}

/** The codings of a Content-Encoding header in the order the server applied them (`identity` left out), lower case. */
export function contentCodings(header: string): string[] {
  // Most responses have no Content-Encoding: no splitting for them.
  if (header === '') return [];
  return header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
}

/** The first coding of `codings` the client cannot decode (or the one past the most it takes), if any. */
export function unreadableCoding(codings: readonly string[]): string | undefined {
  if (codings.length > MAX_CODINGS) return codings.join(', ');
  return codings.find((coding) => !(coding in DECODERS));
}

/**
 * The body decoded as a stream, each coding undone in turn, so that `readBounded` applies its limit to
 * the decoded bytes: a compression bomb (a few KB that decode to gigabytes) stops at the limit, having
 * decoded no more than the limit and a chunk. The bytes received count against `limitBytes` too, so a
 * body that decodes to almost nothing (empty gzip members, without end) cannot run on either.
 * `codings` must all be readable (see `unreadableCoding`).
 */
export function decodedBody(body: Readable, codings: readonly string[], limitBytes: number): DecodedBody {
  if (codings.length === 0) return { stream: body, failure: () => undefined, overLimit: () => false, received: () => 0 };
  let received = 0;
  let overLimit = false;
  let failure: { coding: string; error: Error } | undefined;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      received += chunk.length;
      if (received > limitBytes) {
        overLimit = true;
        callback(new Error('the encoded response is larger than the limit'));
        return;
      }
      callback(null, chunk);
    },
  });
  // pipeline destroys every stream with the error of the one that failed: a decoder's error is a
  // broken encoding only when it is not the connection's (or the limit's) passed on.
  let upstream: Error | undefined;
  body.once('error', (error: Error) => {
    upstream ??= error;
  });
  const decoders = [...codings].reverse().map((coding) => {
    const decoder = DECODERS[coding]();
    decoder.once('error', (error: Error) => {
      if (!overLimit && error !== upstream) failure ??= { coding, error };
    });
    return decoder;
  });
  // pipeline also destroys every stream when the reader destroys the last: the request is aborted.
  pipeline([body, counter, ...decoders], () => undefined);
  return { stream: decoders[decoders.length - 1], failure: () => failure, overLimit: () => overLimit, received: () => received };
}
