import { Message, english, isMessage, message } from './messages';

/** Short machine-readable error codes; nodes and users can switch on them in a Catch flow. */
export type ErrorCode =
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'RATE_LIMITED'
  | 'TIMEOUT'
  | 'NETWORK'
  | 'TLS'
  | 'SERVER'
  | 'BAD_REQUEST'
  | 'NOT_FOUND'
  | 'BAD_RESPONSE'
  | 'INVALID_INPUT'
  | 'CONFIG_INVALID'
  | 'QUEUE_FULL'
  | 'QUOTA_EXCEEDED'
  | 'JOB_FAILED'
  | 'CANCELLED';

const EXCERPT_LENGTH = 300;
/**
 * How much of a body the excerpt is taken from: redacting a whole answer of many MB would hold up
 * Node-RED for seconds. A credential cut at this point is masked all the same (see `excerpt`).
 */
const EXCERPT_SOURCE_LENGTH = 16 * 1024;

export interface PlatformErrorOptions {
  statusCode?: number;
  /** The body as received: only a short excerpt is kept, with credentials and `secrets` masked. */
  body?: string;
  secrets?: readonly string[];
  cause?: unknown;
  /** True when the request certainly never reached the server, so any request may be retried. */
  notSent?: boolean;
  retryAfterMs?: number;
  /** A short figure for the node status, safe to show (e.g. `50000/50000` for a used-up quota). */
  statusDetail?: string;
  /** The text already says what to do (which field of which node): the code's general advice is not added when it is reported. */
  saysWhatToDo?: boolean;
}

/** Every failure the pack reports is one of these, so a Catch node sees `code` and `statusCode`. */
export class PlatformError extends Error {
  readonly code: ErrorCode;
  readonly statusCode?: number;
  /** Redacted, shortened copy of the response body, for diagnosis. */
  readonly bodyExcerpt?: string;
  readonly notSent: boolean;
  readonly retryAfterMs?: number;
  /** What `message` says, as a catalog key and parameters: the Node-RED glue translates it. */
  readonly text?: Message;
  readonly statusDetail?: string;
  readonly saysWhatToDo: boolean;

  /** `text` is a catalog message (see util/messages), or plain English for texts that are not translated. */
  constructor(code: ErrorCode, text: string | Message, options: PlatformErrorOptions = {}) {
    super(english(text), options.cause === undefined ? undefined : { cause: options.cause });
    if (typeof text !== 'string') this.text = text;
    this.name = 'PlatformError';
    this.code = code;
    this.statusCode = options.statusCode;
    this.bodyExcerpt = options.body === undefined ? undefined : excerpt(options.body, options.secrets);
    this.notSent = options.notSent ?? false;
    this.retryAfterMs = options.retryAfterMs;
    this.statusDetail = options.statusDetail;
    this.saysWhatToDo = options.saysWhatToDo ?? false;
  }

  /** The text alone: Node-RED puts an error's toString() in msg.error.message, where a class name helps no one. */
  override toString(): string {
    return this.message;
  }
}

export function invalidInput(text: string | Message): PlatformError {
  return new PlatformError('INVALID_INPUT', text, { notSent: true });
}

/**
 * The text of a failure, whatever was thrown: an Error's message, the message and code of an error
 * object that is not an Error (JSONata throws those), or the value as JSON; never `[object Object]`.
 */
export function describeCause(err: unknown): string {
  if (err instanceof Error && err.message !== '') return err.message;
  if (err !== null && typeof err === 'object') {
    const { message, code } = err as { message?: unknown; code?: unknown };
    const text = typeof message === 'string' && message !== '' ? message : undefined;
    const suffix = typeof code === 'string' && code !== '' ? ` (${code})` : '';
    if (text !== undefined) return `${text}${suffix}`;
    if (suffix !== '') return `error${suffix}`;
    try {
      return JSON.stringify(err) ?? 'an unknown error';
    } catch {
      return 'an unknown error';
    }
  }
  if (typeof err === 'string' || typeof err === 'number' || typeof err === 'boolean' || typeof err === 'bigint') return String(err);
  return 'an unknown error';
}

/**
 * What went wrong, to put in another message: the catalog message of an error that carries one as
 * `text` (a PlatformError, a CsvError), else its text.
 */
export function causeOf(err: unknown): string | Message {
  const text = err instanceof Error ? (err as { text?: unknown }).text : undefined;
  return isMessage(text) ? text : describeCause(err);
}

export function cancelled(what: 'request' | 'message' = 'request'): PlatformError {
  return new PlatformError('CANCELLED', message(what === 'request' ? 'error.cancelledRequest' : 'error.cancelledMessage'), { notSent: true });
}

/**
 * A credential-named member or header and its value: a quoted string (whole, spaces included; an
 * unterminated one to the end of the text, as in a cut-off body) or a bare word. Linear: the value's
 * alternatives start with different characters and each part of a quoted string matches one way only.
 */
const SECRET_MEMBER =
  /("?(?:access_token|id_token|refresh_token|client_secret|secret|secrettoken|token|x-svc-api-key|apikey|api_key|api-key|password|authorization)"?\s*[:=]\s*)(?:"(?:[^"\\]|\\.)*(?:"|$)|[^",&\s}]+)/gi;
const BEARER = /(bearer\s+)[A-Za-z0-9._~+/=-]+/gi;
const QUOTE = 34;

/** Removes anything that looks like a credential from text that may reach logs or messages. */
export function redact(text: string, secrets: readonly string[] = []): string {
  // Bearer first, so `authorization: Bearer <token>` loses the token and not just the word "Bearer".
  let out = text
    .replace(BEARER, '$1***')
    .replace(SECRET_MEMBER, (match: string, name: string) => (match.charCodeAt(name.length) === QUOTE ? `${name}"***"` : `${name}***`));
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join('***');
  }
  return out;
}

/**
 * The start of a body, safe to show: redacted, then shortened. Only its first part is redacted; a
 * credential cut there is still masked: a member's value up to the cut by the patterns above, and
 * the beginning of a configured secret by dropping it.
 */
export function excerpt(body: string, secrets: readonly string[] = []): string {
  if (body.length <= EXCERPT_SOURCE_LENGTH) return redact(body, secrets).slice(0, EXCERPT_LENGTH);
  let start = body.slice(0, EXCERPT_SOURCE_LENGTH);
  for (const secret of secrets) {
    for (let length = Math.min(secret.length - 1, start.length); length > 0; length--) {
      if (start.endsWith(secret.slice(0, length))) {
        start = start.slice(0, -length);
        break;
      }
    }
  }
  return redact(start, secrets).slice(0, EXCERPT_LENGTH);
}

/** Maps an HTTP status to the error code users see. */
export function codeForStatus(status: number): ErrorCode {
  if (status === 401) return 'UNAUTHORIZED';
  if (status === 403) return 'FORBIDDEN';
  if (status === 404) return 'NOT_FOUND';
  if (status === 429) return 'RATE_LIMITED';
  if (status >= 500) return 'SERVER';
  return 'BAD_REQUEST';
}
