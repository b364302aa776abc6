import { InputError, PlatformError, SvcError, codeForStatus } from '../util/errors';
import { excerpt, redact } from '../util/masking';
import type { PlatformClient } from './client';
import type { PlatformRequest, PlatformResponse } from './types';
import { describeValue } from '../util/values';
import { isHeaderName, isHeaderValue } from '../util/text';
import { Label, catalogText } from '../util/catalog-text';
import { pathSegment } from './paths';

/** Data topic and subscription endpoints (spec: "Data topics"), all under `/v1/pubsub`. */
export const TOPICS_PATH = '/v1/pubsub/topics';
export const SUBSCRIPTIONS_PATH = '/v1/pubsub/subscriptions';

export function topicPath(topicId: number): string {
  return `${TOPICS_PATH}/${pathSegment(topicId, catalogText('label.topicId'), 'input')}`;
}

/** The Topic response envelope: `{ isSuccess, data }`. */
interface TopicEnvelope {
  isSuccess: boolean;
  data?: unknown;
  [member: string]: unknown;
}

function isEnvelope(body: unknown): body is TopicEnvelope {
  return body !== null && typeof body === 'object' && !Array.isArray(body) && typeof (body as TopicEnvelope).isSuccess === 'boolean';
}

/**
 * A data-topic request (header `apikey`). A response whose envelope says `isSuccess: false` is an
 * error, whatever the HTTP status, whose `cause` (which a Catch node sees as `msg.error.cause`) is the
 * start of the response, bounded and with every secret masked (see `excerpt`), never the envelope
 * itself; other responses are returned as sent.
 */
export async function pubsubRequest(client: PlatformClient, request: Omit<PlatformRequest, 'auth' | 'rate'>): Promise<PlatformResponse> {
  let response: PlatformResponse;
  try {
    response = await client.request({ ...request, auth: 'pubsub', rate: 'topics' });
  } catch (err) {
    throw withFailedEnvelope(err);
  }
  if (isEnvelope(response.body) && !response.body.isSuccess) {
    throw envelopeError(response.body, response.statusCode);
  }
  return response;
}

/** The envelope's `data` when the body is an envelope, else the body as sent (empty included). */
export function unwrapEnvelope(body: unknown): unknown {
  return isEnvelope(body) ? body.data : body;
}

/** The error of a failed envelope; the client has already masked the request's secrets in it. */
function envelopeError(envelope: TopicEnvelope, statusCode: number): SvcError {
  const reason = envelope.message ?? envelope.error ?? envelope.errors;
  const detail = reason === undefined ? '' : `: ${redact(typeof reason === 'string' ? reason : JSON.stringify(reason)).slice(0, 200)}`;
  const code = statusCode >= 200 && statusCode < 300 ? 'BAD_REQUEST' : codeForStatus(statusCode);
  const body = excerpt(JSON.stringify(envelope));
  return new PlatformError(code, catalogText('error.envelope', { statusCode, detail }), { statusCode, body, cause: body });
}

/** A failed status whose body (secrets masked by the client) is an envelope becomes the envelope error; others pass. */
function withFailedEnvelope(err: unknown): unknown {
  if (!(err instanceof SvcError) || err.statusCode === undefined) return err;
  return isEnvelope(err.parsedBody) && !err.parsedBody.isSuccess ? envelopeError(err.parsedBody, err.statusCode) : err;
}

/** The value part of a `WebhookHeader` read by `readWebhookHeader`: the secret in it. */
export function webhookHeaderValue(header: string): string {
  return header.slice(header.indexOf(':') + 1).trim();
}

/** An integer of at least `min`, given as a number or as a string of digits. */
export function readInteger(value: unknown, field: Label, min: number): number {
  const n = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min) {
    throw new InputError(catalogText('error.topic.notInteger', { field, min, value: describeValue(value) }));
  }
  return n;
}

/** A topic id: an integer (the service assigns them), as a number or a string of digits. */
export function readTopicId(value: unknown, field: Label = catalogText('label.topicId')): number {
  return readInteger(value, field, 0);
}

/** A required text field: a string that is not blank once trimmed. */
export function readRequiredText(value: unknown, field: Label): string {
  if (typeof value !== 'string') throw new InputError(catalogText('error.topic.notString', { field, value: describeValue(value) }));
  const text = value.trim();
  if (text === '') throw new InputError(catalogText('error.topic.empty', { field }));
  return text;
}

/** An optional text field: undefined stays undefined, anything else must be a string. */
export function readOptionalText(value: unknown, field: Label): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new InputError(catalogText('error.topic.notString', { field, value: describeValue(value) }));
  return value;
}

/** `LocationIds`: a non-empty array of non-empty strings, or one string of comma-separated ids. */
export function readLocationIds(value: unknown): string[] {
  const list = typeof value === 'string' ? value.split(',') : value;
  if (!Array.isArray(list)) throw new InputError(catalogText('error.topic.locationIdsNotList', { value: describeValue(value) }));
  const ids = list.map((item, index) => readRequiredText(item, `LocationIds[${index}]`));
  if (ids.length === 0) throw new InputError(catalogText('error.topic.locationIdsEmpty'));
  return ids;
}

/** `WebhookAddress`: an absolute http(s) URL. */
export function readWebhookAddress(value: unknown): string {
  const text = readRequiredText(value, 'WebhookAddress');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InputError(catalogText('error.topic.webhookAddressInvalid'));
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InputError(catalogText('error.topic.webhookAddressNotHttp', { protocol: url.protocol }));
  }
  return text;
}

/**
 * `WebhookHeader`: `<header-name>:<header-value>`. Its value may be a key for the receiver, so no
 * error message repeats it (and a request declares it among its secrets: see `webhookHeaderValue`).
 */
export function readWebhookHeader(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new InputError(catalogText('error.topic.notString', { field: 'WebhookHeader', value: describeValue(value) }));
  const separator = value.indexOf(':');
  if (separator < 0) throw new InputError(catalogText('error.topic.headerNoColon'));
  const name = value.slice(0, separator).trim();
  if (!isHeaderName(name)) throw new InputError(catalogText('error.topic.headerName'));
  if (value.slice(separator + 1).trim() === '') throw new InputError(catalogText('error.topic.headerValueEmpty'));
  // The service sets it as a header of every webhook request: CR or LF there (even at an end) would add headers of the sender's choosing.
  if (!isHeaderValue(value)) throw new InputError(catalogText('error.topic.headerValueControl'));
  return value.trim();
}
