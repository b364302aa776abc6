import { Readable, Transform, pipeline } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Dispatcher } from 'undici';
import { CatalogText, catalogText } from '../util/catalog-text';

/** What was read of a response's body: at most the limit, and whether that was all of it. */
export interface BoundedBody {
  bytes: Buffer;
  /** False when the body went past the limit (or declared it would): reading stopped there. */
  complete: boolean;
  /** The Content-Length that was over the limit, when that is why nothing was read. */
  declaredBytes?: number;
  /** Why decoding failed, when it did: the coding and the decoder's error (a broken or truncated encoding); nothing is kept then. */
  brokenCoding?: { coding: string; error: Error };
}

/** 1 MB as the settings count it. */
export const BYTES_PER_MB = 1024 * 1024;

/** A response's headers as undici gives them: lower-case names, a list for a repeated one. */
export type ResponseHeaders = Record<string, string | string[] | undefined>;

/** How a response's body is read, decided from its status and headers as they arrive. */
export interface BodyPlan {
  /** The most bytes kept, and received (see `decodedBody`). */
  limit: number;
  /** The content codings to undo (`contentCodings`), all readable (`unreadableCoding`). */
  codings: readonly string[];
  /** A Content-Length to hold against the limit before the first byte; undefined to read the body's start whatever it declares. */
  declaredLength?: string;
}

/** A response read within its plan; `body` undefined when the plan was to read none of it. */
export interface ReceivedResponse {
  statusCode: number;
  headers: ResponseHeaders;
  body: BoundedBody | undefined;
}

/** The plan for a response's body from its status and headers; undefined to read none of it. */
type BodyPlanner = (statusCode: number, headers: ResponseHeaders) => BodyPlan | undefined;

/**
 * Sends one request on `dispatcher` and reads its response within the plan `planFor` makes of its status and headers.
 * Past the limit (declared or read) the request is aborted, closing its connection: however large or endless the
 * response, no more than the limit plus one chunk is held. `abort` settles it at once, even for a request still waiting
 * for a connection, which undici would not abort until written (a proxy that never opens the tunnel).
 */
export function receive(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, planFor: BodyPlanner): Exchange {
  let reader: ResponseReader | undefined;
  const response = new Promise<ReceivedResponse>((resolve, reject) => {
    reader = new ResponseReader(planFor, resolve, reject);
    dispatcher.dispatch(options, reader);
  });
  return { response, abort: (reason) => reader?.abort(reason) };
}

interface Exchange {
  response: Promise<ReceivedResponse>;
  /** Settles the exchange with `reason` and aborts the request, unless it has settled already. */
  abort(reason: Error): void;
}

/** undici's dispatch handler for one exchange: a plain body is collected without a stream; an encoded one is streamed to its decoders. */
class ResponseReader implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private settled = false;
  private statusCode = 0;
  private headers: ResponseHeaders = {};
  private chunks: BoundedChunks | undefined;
  private encoded: Readable | undefined;

  /** Why the exchange was aborted before its request started, if it was. */
  private abortedWith: Error | undefined;

  constructor(
    private readonly planFor: BodyPlanner,
    private readonly resolve: (response: ReceivedResponse) => void,
    private readonly reject: (err: unknown) => void,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // Aborted while it waited for a connection: it ends here, before it is written.
    if (this.abortedWith) controller.abort(this.abortedWith);
    else this.controller = controller;
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: ResponseHeaders): void {
    // An informational response (1xx) comes before the response itself.
    if (this.settled || statusCode < 200) return;
    this.statusCode = statusCode;
    this.headers = headers;
    const plan = this.planFor(statusCode, headers);
    if (!plan) {
      this.stop(controller, undefined);
      return;
    }
    const declaredBytes = Number(plan.declaredLength);
    if (plan.declaredLength !== undefined && declaredBytes > plan.limit) {
      this.stop(controller, { bytes: Buffer.alloc(0), complete: false, declaredBytes });
      return;
    }
    if (plan.codings.length === 0) {
      this.chunks = new BoundedChunks(plan.limit);
      return;
    }
    this.encoded = new Readable({
      read: () => controller.resume(),
      // Destroyed before its end (the limit, a broken encoding): the request is aborted, which closes the connection.
      destroy: (err, callback) => {
        controller.abort(err ?? new Error('the response was not read to its end'));
        callback(err);
      },
    });
    readDecoded(this.encoded, plan).then(
      (body) => this.succeed(body),
      (err: unknown) => this.fail(err),
    );
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.chunks) {
      if (!this.chunks.add(chunk)) this.stop(controller, this.chunks.body(false));
    } else if (this.encoded && !this.encoded.push(chunk)) {
      controller.pause();
    }
  }

  onResponseEnd(): void {
    if (this.chunks) this.succeed(this.chunks.body(true));
    else this.encoded?.push(null);
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    // After settling, errors (such as the abort of `stop`) are expected and dropped.
    if (this.encoded) this.encoded.destroy(err);
    else this.fail(err);
  }

  /** Stops reading: what was read settles the exchange, and the request is aborted. */
  private stop(controller: Dispatcher.DispatchController, body: BoundedBody | undefined): void {
    this.succeed(body);
    controller.abort(new Error('the response was not read to its end'));
  }

  abort(reason: Error): void {
    if (this.settled) return;
    this.abortedWith = reason;
    this.fail(reason);
    this.controller?.abort(reason);
  }

  private succeed(body: BoundedBody | undefined): void {
    if (this.finish()) this.resolve({ statusCode: this.statusCode, headers: this.headers, body });
  }

  private fail(err: unknown): void {
    if (this.finish()) this.reject(err);
  }

  /** True the first time only: an exchange settles once. */
  private finish(): boolean {
    if (this.settled) return false;
    this.settled = true;
    return true;
  }
}

class BoundedChunks {
  private readonly chunks: Buffer[] = [];
  private total = 0;

  constructor(private readonly limit: number) {}

  /** Keeps `chunk`; false when it goes past the limit: only its part within the limit is kept, and reading stops. */
  add(chunk: Buffer): boolean {
    if (this.total + chunk.length > this.limit) {
      this.chunks.push(chunk.subarray(0, this.limit - this.total));
      this.total = this.limit;
      return false;
    }
    this.chunks.push(chunk);
    this.total += chunk.length;
    return true;
  }

  body(complete: boolean): BoundedBody {
    return { bytes: Buffer.concat(this.chunks, this.total), complete };
  }
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

/** A response's body as it arrives, decoded as it is read, with the limit on the bytes received. */
interface DecodedBody {
  stream: Readable;
  /** Why decoding failed, once it has: the coding and the decoder's error (a broken or truncated encoding). */
  failure: () => { coding: string; error: Error } | undefined;
  /** True once more bytes were received than the limit allows (reading stopped there). */
  overLimit: () => boolean;
  received: () => number;
}

/**
 * The body decoded as a stream, so that `readDecoded` applies its limit to the decoded bytes: a compression bomb stops at
 * the limit. The bytes received count against `limitBytes` too, so a body that decodes to nothing cannot run on either.
 * `codings` must all be readable (see `unreadableCoding`).
 */
function decodedBody(body: Readable, codings: readonly string[], limitBytes: number): DecodedBody {
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

/** Reads an encoded body decoded within `plan.limit`; a broken encoding is `brokenCoding`, not a network error, as a retry gets the same. */
async function readDecoded(body: Readable, plan: BodyPlan): Promise<BoundedBody> {
  const decoded = decodedBody(body, plan.codings, plan.limit);
  try {
    const read = await readStream(decoded.stream, plan.limit);
    return decoded.overLimit() ? { ...read, complete: false } : read;
  } catch (err) {
    if (decoded.overLimit()) return { bytes: Buffer.alloc(0), complete: false };
    const failure = decoded.failure();
    if (!failure) throw err;
    // An empty body declared as encoded (a 204, an empty 200) has nothing to decode: it is empty.
    return { bytes: Buffer.alloc(0), complete: true, brokenCoding: decoded.received() === 0 ? undefined : failure };
  }
}

/** Reads a stream within `limitBytes`; at the first chunk past it the stream is destroyed, which aborts the request. */
function readStream(stream: Readable, limitBytes: number): Promise<BoundedBody> {
  return new Promise((resolve, reject) => {
    const chunks = new BoundedChunks(limitBytes);
    let settled = false;
    const settle = (outcome: BoundedBody | Error) => {
      if (settled) return;
      settled = true;
      stream.off('data', onData);
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const onData = (chunk: Buffer) => {
      if (chunks.add(chunk)) return;
      settle(chunks.body(false));
      stream.destroy();
    };
    stream.on('data', onData);
    stream.once('end', () => settle(chunks.body(true)));
    // After settling, errors (such as the abort of the destroy above) are expected and dropped.
    stream.on('error', (err) => settle(err));
    stream.once('close', () => {
      if (!settled) settle(Object.assign(new Error('the response ended before it was complete'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    });
  });
}
