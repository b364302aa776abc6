import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { PlatformError, SvcError, codeForStatus } from '../util/errors';
import { redact, redactHeader, scrubBody, scrubBytes } from '../util/masking';
import { CatalogText, catalogText } from '../util/catalog-text';
import { BoundedBody, contentCodings, decodedBody, describeSize, readBounded, unreadableCoding } from './body';
import { isHeaderValue } from '../util/text';
import type { PlatformResponse, ResponseKind } from './types';
import { parseRetryAfter } from './retry';
import type { TokenResponse } from './token-manager';

/** Reading the platform's responses: the body within its limit, JSON, error statuses, the token endpoint's response. */

/** An error response is read only this far: enough for its message and an excerpt, whatever its size. */
const ERROR_BODY_BYTES = 64 * 1024;

/**
 * Reads a response within `limit`: a 2xx as its parsed body (the bytes for `buffer`), any other
 * status as a PlatformError with the start of its body. `secrets` (everything secret the request
 * carried) never come back: masked in errors, and in the response itself wherever it repeats one,
 * its headers included (a header's text can become a job id, or part of an error).
 */
export async function readResponse<T>(
  res: Dispatcher.ResponseData,
  kind: ResponseKind,
  limit: number,
  secrets: readonly string[],
): Promise<PlatformResponse<T>> {
  const contentType = redactHeader(headerValue(res.headers['content-type']), secrets);
  const declaredLength = headerValue(res.headers['content-length']) || undefined;
  const codings = contentCodings(redactHeader(headerValue(res.headers['content-encoding']), secrets));
  const unreadable = unreadableCoding(codings);
  if (res.statusCode < 200 || res.statusCode >= 300) {
    // Whatever length it declares, the start of an error body says what went wrong (when it can be decoded).
    let bytes: Buffer = Buffer.alloc(0);
    if (unreadable) discard(res.body);
    else ({ bytes } = await readDecoded(res, codings, Math.min(ERROR_BODY_BYTES, limit), undefined).catch(withoutBrokenEncoding));
    const text = bytes.toString('utf8');
    const parsedBody = parseErrorBody(text, secrets);
    throw new PlatformError(codeForStatus(res.statusCode), statusMessage(res.statusCode, parsedBody, secrets), {
      statusCode: res.statusCode,
      body: text,
      secrets,
      parsedBody,
      retryAfterMs: parseRetryAfter(headerValue(res.headers['retry-after'])),
    });
  }
  if (unreadable) {
    discard(res.body);
    throw new PlatformError('BAD_RESPONSE', catalogText('error.unknownEncoding', { encoding: unreadable }), { statusCode: res.statusCode });
  }
  const { bytes, complete, declaredBytes } = await readDecoded(res, codings, limit, declaredLength);
  if (!complete) throw tooLarge(kind, limit, res.statusCode, declaredBytes);
  const parsed = kind === 'buffer' ? scrubBytes(bytes, secrets) : parseJson(bytes, res.statusCode, secrets);
  return { statusCode: res.statusCode, body: parsed as T, contentType, location: redactHeader(headerValue(res.headers.location), secrets) };
}

/**
 * Reads the body decoded (see `decodedBody`), within `limit` decoded bytes and `limit` bytes received.
 * A broken encoding is BAD_RESPONSE, not a network error: the same request would get the same response.
 */
async function readDecoded(res: Dispatcher.ResponseData, codings: readonly string[], limit: number, declaredLength: string | undefined): Promise<BoundedBody> {
  const decoded = decodedBody(res.body, codings, limit);
  try {
    const read = await readBounded(decoded.stream, limit, declaredLength);
    return decoded.overLimit() ? { ...read, complete: false } : read;
  } catch (err) {
    if (decoded.overLimit()) return { bytes: Buffer.alloc(0), complete: false };
    const failure = decoded.failure();
    if (!failure) throw err;
    // An empty body declared as encoded (a 204, an empty 200) has nothing to decode: it is empty.
    if (decoded.received() === 0) return { bytes: Buffer.alloc(0), complete: true };
    throw new PlatformError('BAD_RESPONSE', catalogText('error.badEncoding', { encoding: failure.coding, cause: failure.error.message }), {
      statusCode: res.statusCode,
      cause: failure.error,
    });
  }
}

/** Stops reading a body, which aborts the request and closes its connection (the abort error that follows is expected). */
function discard(body: Readable): void {
  body.once('error', () => undefined);
  body.destroy();
}

/** An error body whose encoding is broken is read as empty: its status still says what went wrong. */
function withoutBrokenEncoding(err: unknown): BoundedBody {
  if (err instanceof SvcError && err.code === 'BAD_RESPONSE') return { bytes: Buffer.alloc(0), complete: true };
  throw err;
}

function headerValue(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

function parseJson(raw: Buffer, statusCode: number, secrets: readonly string[]): unknown {
  const text = raw.toString('utf8');
  if (text.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new PlatformError('BAD_RESPONSE', catalogText('error.notJson', { statusCode }), {
      statusCode,
      body: text,
      secrets,
      // The parser quotes the text around the fault, which may be a secret the request carried.
      cause: new SyntaxError(redact(err instanceof Error ? err.message : String(err), secrets)),
    });
  }
  return scrubBody(parsed, text, secrets);
}

/** The error for a response past its limit, naming the limit and the setting that changes it. */
function tooLarge(kind: ResponseKind, limit: number, statusCode: number, declaredBytes: number | undefined): SvcError {
  const setting = catalogText(kind === 'buffer' ? 'setting.maxFileSize' : 'setting.maxAnswerSize');
  const text =
    declaredBytes === undefined
      ? catalogText('error.tooLarge', { limit: describeSize(limit), setting })
      : catalogText('error.declaredTooLarge', { size: describeSize(declaredBytes), limit: describeSize(limit), setting });
  return new PlatformError('BAD_RESPONSE', text, { statusCode });
}

/** An error response's body as JSON, the request's secrets masked; undefined when it is not JSON (the excerpt keeps the text). */
function parseErrorBody(text: string, secrets: readonly string[]): unknown {
  try {
    return scrubBody(JSON.parse(text) as unknown, text, secrets);
  } catch {
    return undefined;
  }
}

function statusMessage(status: number, body: unknown, secrets: readonly string[]): CatalogText {
  let detail = '';
  if (body && typeof body === 'object') {
    const record = body as Record<string, unknown>;
    const text = record.message ?? record.error_description ?? record.error ?? record.detail;
    if (typeof text === 'string') detail = `: ${text}`;
  }
  return catalogText('error.status', { statusCode: status, detail: redact(detail, secrets).slice(0, 200) });
}

/** Reads the token from the token endpoint's response; the member's name is not given by the spec. */
export function readTokenResponse(body: unknown): TokenResponse {
  if (typeof body === 'string' && body.length > 0 && isHeaderValue(body)) return { token: body };
  if (body && typeof body === 'object') {
    const record = body as Record<string, unknown>;
    const token = record.access_token ?? record.accessToken ?? record.token;
    // The token goes into a header: one with CR, LF or another control would split the requests it is sent with.
    if (typeof token === 'string' && token.length > 0 && isHeaderValue(token)) {
      const expiresIn = Number(record.expires_in ?? record.expiresIn);
      return { token, expiresIn: Number.isFinite(expiresIn) ? expiresIn : undefined };
    }
  }
  throw new PlatformError('BAD_RESPONSE', catalogText('error.noToken'), { statusCode: 200 });
}
