import type { IncomingHttpHeaders } from 'node:http';
import { isCredentialName } from '../util/masking';
import { JsonTextProblem, readJsonText } from '../util/text';
import type { RawBody } from './raw-body';
import type { ReplayGuard, Unrecorded } from './replays';
import { SIGNATURE_HEADER, SignatureRejection, SignatureVerifier, constantTimeEqual } from './signature';

/** What one webhook path accepts. */
export interface ReceiverConfig {
  path: string;
  /** Absent: unsigned requests are accepted (and nothing is checked against replays). */
  verifier?: SignatureVerifier;
  /** A custom header every request must carry, its name in lowercase. */
  header?: { name: string; value: string };
  maxBodyBytes: number;
}

/** Why a request is refused: a reason code, sent as it is in the HTTP response. */
export type Rejection = SignatureRejection | JsonTextProblem | 'not JSON' | 'body too large' | 'header mismatch';

/**
 * What became of a request: `refused` (a 4xx), `consumed` (another body parser read the body first:
 * a 500, a setup problem), or what the replay record made of it (see `Admission`; one older than
 * what the record vouches for is refused as a stale timestamp).
 */
export type Verdict =
  | { outcome: 'refused'; status: 400 | 401 | 413; reason: Rejection }
  | { outcome: 'consumed' }
  | { outcome: 'delivered' | 'duplicate' | 'withdrawn' | 'full' }
  | ({ outcome: 'unrecorded' } & Unrecorded);

/** The message a delivered request becomes. */
export type WebhookMessage = {
  payload: unknown;
  webhook: { timestamp?: number; receivedAt: number; headers: IncomingHttpHeaders };
};

/** What the sender gets for a verdict: a 2xx only when a message left (or, for a duplicate, left before); a 503 asks it to try again. */
export interface Reply {
  status: number;
  body?: { error: string };
  retryAfterSec?: number;
}

/** Arrays and objects nested deeper than this are refused (400 `too deep`); platform events are a few levels deep. */
const MAX_JSON_DEPTH = 128;
/** What a 503 response asks the sender to wait before trying again, in seconds. */
const RETRY_AFTER_SEC = 5;
const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;

/**
 * The checks of one webhook path, in order: media type, size, custom header, one JSON text,
 * signature, then replays. Knows nothing of the server it runs in: it is given the headers and a
 * way to read the body, and returns a verdict the caller replies with (`replyTo`).
 */
export class WebhookReceiver {
  private closed = false;

  constructor(
    private readonly config: ReceiverConfig,
    private readonly replays: ReplayGuard,
  ) {}

  /** From now on nothing is delivered: a request under way is `withdrawn`, so its sender tries again. */
  close(): void {
    this.closed = true;
  }

  async receive(
    headers: IncomingHttpHeaders,
    readBody: (limit: number) => Promise<RawBody>,
    send: (message: WebhookMessage) => void,
    receivedAt = Date.now(),
  ): Promise<Verdict> {
    const { config } = this;
    if (!isJsonOrUnstated(headers['content-type'])) return refused(400, 'not JSON');
    const body = await readBody(config.maxBodyBytes);
    // Closed (redeployed) while the body arrived: the sender should try again, not lose the event.
    if (this.closed) return { outcome: 'withdrawn' };
    if (body === 'too large') return refused(413, 'body too large');
    if (body === 'consumed') return { outcome: 'consumed' };
    if (config.header && !headerMatches(headers, config.header)) return refused(401, 'header mismatch');
    // One JSON text before the digest decides anything: a length-extended body (the spec's digest
    // is plain SHA-256) is never one, so its response is the same whatever secret length was guessed.
    const json = readJsonText(body, MAX_JSON_DEPTH);
    if (!json.ok) return refused(400, json.reason);
    const verified = config.verifier?.verify(headers[SIGNATURE_HEADER], body, receivedAt);
    if (verified && !verified.ok) return refused(401, verified.reason);
    // Sent before the response: a 2xx means a message left.
    const deliver = () => {
      if (this.closed) return false;
      send({ payload: json.value, webhook: { timestamp: verified?.timestampMs, receivedAt, headers: visibleHeaders(headers, config.header?.name) } });
      return true;
    };
    if (!verified || !config.verifier) return { outcome: deliver() ? 'delivered' : 'withdrawn' };
    const admission = await this.replays.admit(config.verifier.replayEntry(verified), deliver, receivedAt);
    if (admission.outcome === 'unrecorded') return admission;
    // Older than what the journal vouches for (a tolerance raised since): stale, as under the tolerance it may have been delivered under.
    if (admission.outcome === 'forgotten') return refused(401, 'stale timestamp');
    return { outcome: admission.outcome };
  }
}

export function replyTo(verdict: Verdict): Reply {
  switch (verdict.outcome) {
    case 'refused':
      return { status: verdict.status, body: { error: verdict.reason } };
    case 'consumed':
      return { status: 500, body: { error: 'body unavailable' } };
    case 'withdrawn':
      return { status: 503, body: { error: 'restarting' }, retryAfterSec: RETRY_AFTER_SEC };
    case 'full':
      return { status: 503, body: { error: 'replays full' }, retryAfterSec: RETRY_AFTER_SEC };
    case 'unrecorded':
      return { status: 503, body: { error: 'journal unavailable' }, retryAfterSec: RETRY_AFTER_SEC };
    default:
      return { status: 200 };
  }
}

function refused(status: 400 | 401 | 413, reason: Rejection): Verdict {
  return { outcome: 'refused', status, reason };
}

/** A JSON media type, or none at all (the spec does not show the webhook's headers; the body then decides). */
function isJsonOrUnstated(contentType: string | undefined): boolean {
  const mediaType = (contentType ?? '').split(';')[0].trim();
  return mediaType === '' || JSON_MEDIA_TYPE.test(mediaType);
}

function headerMatches(headers: IncomingHttpHeaders, expected: { name: string; value: string }): boolean {
  const received = headers[expected.name];
  return typeof received === 'string' && constantTimeEqual(received.trim(), expected.value);
}

/** The request headers for `msg.webhook`, without those named like credentials (`isCredentialName`) and the custom header, whose value is a key. */
function visibleHeaders(headers: IncomingHttpHeaders, customHeader: string | undefined): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !isCredentialName(name) && name !== customHeader));
}
