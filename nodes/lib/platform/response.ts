import { PlatformError, SvcError, codeForStatus } from '../util/errors';
import { redact, redactHeader, scrubBody, scrubBytes } from '../util/masking';
import { CatalogText, catalogText } from '../util/catalog-text';
import { BodyPlan, ReceivedResponse, ResponseHeaders, contentCodings, describeSize, unreadableCoding } from './body';
import { isHeaderValue } from '../util/text';
import type { PlatformResponse, ResponseKind } from './types';
import { parseRetryAfter } from './retry';
import type { TokenResponse } from './token-manager';

/** Reading the platform's responses: the body within its limit, JSON, error statuses, the token endpoint's response. */

/** An error response is read only this far: enough for its message and an excerpt, whatever its size. */
const ERROR_BODY_BYTES = 64 * 1024;

/**
 * How to read a response's body, from its status and headers (see `receive`): a 2xx within `limit`,
 * any other status only as far as its message and excerpt need; none of it in a coding the client
 * does not read (undefined).
 */
export function bodyPlan(statusCode: number, headers: ResponseHeaders, limit: number, secrets: readonly string[]): BodyPlan | undefined {
  const codings = codingsOf(headers, secrets);
  if (unreadableCoding(codings)) return undefined;
  // Whatever length it declares, the start of an error body says what went wrong (when it can be decoded).
  if (statusCode < 200 || statusCode >= 300) return { limit: Math.min(ERROR_BODY_BYTES, limit), codings };
  return { limit, codings, declaredLength: headerValue(headers['content-length']) || undefined };
}

/**
 * A response read by its `bodyPlan`: a 2xx as its parsed body (the bytes for `buffer`), any other
 * status as a PlatformError with the start of its body. `secrets` (everything secret the request
 * carried) never come back: masked in errors, and in the response itself wherever it repeats one,
 * its headers included (a header's text can become a job id, or part of an error).
 */
export function readResponse<T>(res: ReceivedResponse, kind: ResponseKind, limit: number, secrets: readonly string[]): PlatformResponse<T> {
  const { statusCode, headers, body } = res;
  if (statusCode < 200 || statusCode >= 300) {
    // An error body in a coding the client does not read, or whose encoding is broken, is read as empty: its status still says what went wrong.
    const text = body && !body.brokenCoding ? body.bytes.toString('utf8') : '';
    const parsedBody = parseErrorBody(text, secrets);
    throw new PlatformError(codeForStatus(statusCode), statusMessage(statusCode, parsedBody, secrets), {
      statusCode,
      statusDetail: statusCode === 429 ? limitOf(parsedBody) : undefined,
      body: text,
      secrets,
      parsedBody,
      retryAfterMs: parseRetryAfter(headerValue(headers['retry-after'])),
    });
  }
  if (!body) {
    throw new PlatformError('BAD_RESPONSE', catalogText('error.unknownEncoding', { encoding: unreadableCoding(codingsOf(headers, secrets)) ?? '' }), {
      statusCode,
    });
  }
  const { brokenCoding } = body;
  if (brokenCoding) {
    // Not a network error: the same request would get the same response.
    throw new PlatformError('BAD_RESPONSE', catalogText('error.badEncoding', { encoding: brokenCoding.coding, cause: brokenCoding.error.message }), {
      statusCode,
      cause: brokenCoding.error,
    });
  }
  if (!body.complete) throw tooLarge(kind, limit, statusCode, body.declaredBytes);
  const parsed = kind === 'buffer' ? scrubBytes(body.bytes, secrets) : parseJson(body.bytes, statusCode, secrets);
  const response: PlatformResponse<T> = {
    statusCode,
    body: parsed as T,
    contentType: redactHeader(headerValue(headers['content-type']), secrets),
    location: redactHeader(headerValue(headers.location), secrets),
  };
  const retryAfterMs = parseRetryAfter(headerValue(headers['retry-after']));
  if (retryAfterMs !== undefined) response.retryAfterMs = retryAfterMs;
  return response;
}

/** The response's content codings; the header masked first, since an unknown one is named in an error. */
function codingsOf(headers: ResponseHeaders, secrets: readonly string[]): string[] {
  return contentCodings(redactHeader(headerValue(headers['content-encoding']), secrets));
}

function headerValue(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

function parseJson(raw: Buffer, statusCode: number, secrets: readonly string[]): unknown {
  if (raw.length === 0) return undefined;
  const text = raw.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    // Blank is empty too; only a body that does not parse is looked at for it (trimming every body copied it).
    if (text.trim() === '') return undefined;
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

/**
 * Which limit a 429 names, for the status (`RATE_LIMITED (429) daily_limit_exceeded`): the body's `error`
 * when it is a code (`rate_limited`, `daily_limit_exceeded`, as the sandbox sends), shown as sent.
 */
function limitOf(body: unknown): string | undefined {
  const error = body && typeof body === 'object' ? (body as Record<string, unknown>).error : undefined;
  return typeof error === 'string' && /^[a-z][a-z0-9_]{0,39}$/.test(error) ? error : undefined;
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
