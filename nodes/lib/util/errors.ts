import { CatalogText, english, isCatalogText, catalogText } from './catalog-text';
import { excerpt } from './masking';

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
  | 'CANCELLED'
  | 'CLIENT_CLOSED';

interface SvcErrorOptions {
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
  /** An error response's JSON body, parsed, with the request's secrets masked: for the layer that knows the service's error format. */
  parsedBody?: unknown;
  /** A connection that failed (NETWORK, TLS): the settings it depends on, which what to do names. */
  connection?: ConnectionSettings;
}

/** The svc-config settings a request's connection depends on: the address setting it went to (Base URL, Token URL, Words URL), and the proxy when one is set. */
export interface ConnectionSettings {
  address: CatalogText;
  proxy: boolean;
}

/**
 * Every failure the pack reports is one of these, so a Catch node sees `code` and `statusCode`: a
 * `PlatformError` for a failure the platform responded with (or a request that got no usable response), an
 * `InputError` for a message that cannot be sent as it is, a `ConfigError` for a configuration that
 * cannot serve it, and this class itself for the pack's own limits (CANCELLED, QUEUE_FULL, QUOTA_EXCEEDED).
 */
export class SvcError extends Error {
  readonly code: ErrorCode;
  readonly statusCode?: number;
  /** Redacted, shortened copy of the response body, for diagnosis. */
  readonly bodyExcerpt?: string;
  readonly notSent: boolean;
  readonly retryAfterMs?: number;
  /** What `message` says, as a catalog key and parameters: the Node-RED glue translates it. */
  readonly text?: CatalogText;
  readonly statusDetail?: string;
  readonly saysWhatToDo: boolean;
  /** See SvcErrorOptions.parsedBody. */
  readonly parsedBody?: unknown;
  /** See SvcErrorOptions.connection. */
  readonly connection?: ConnectionSettings;

  /** `text` is a catalog message (util/catalog-text.ts), or plain English for texts that are not translated. */
  constructor(code: ErrorCode, text: string | CatalogText, options: SvcErrorOptions = {}) {
    super(english(text), options.cause === undefined ? undefined : { cause: options.cause });
    if (typeof text !== 'string') this.text = text;
    this.name = new.target.name;
    this.code = code;
    this.statusCode = options.statusCode;
    this.bodyExcerpt = options.body === undefined ? undefined : excerpt(options.body, options.secrets);
    this.notSent = options.notSent ?? false;
    this.retryAfterMs = options.retryAfterMs;
    this.statusDetail = options.statusDetail;
    this.saysWhatToDo = options.saysWhatToDo ?? false;
    this.parsedBody = options.parsedBody;
    this.connection = options.connection;
  }

  /** The text alone: Node-RED puts an error's toString() in msg.error.message, where a class name helps no one. */
  override toString(): string {
    return this.message;
  }
}

/**
 * A failure the platform responded with (an error status, a body that is not usable, a failed job), or a request
 * that got no response (NETWORK, TLS, TIMEOUT).
 */
export class PlatformError extends SvcError {}

/** A message that cannot be sent as it is (INVALID_INPUT): nothing was sent. */
export class InputError extends SvcError {
  constructor(text: string | CatalogText) {
    super('INVALID_INPUT', text, { notSent: true });
  }
}

/** A configuration that cannot serve the message (CONFIG_INVALID): nothing was sent, and nothing is retried. */
export class ConfigError extends SvcError {
  /** `saysWhatToDo`: the text says what to change itself (a node's own setting, not the svc-config node's). */
  constructor(text: string | CatalogText, options: { saysWhatToDo?: boolean } = {}) {
    super('CONFIG_INVALID', text, { notSent: true, saysWhatToDo: options.saysWhatToDo ?? false });
  }
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
 * `text` (an SvcError), else its text.
 */
export function causeOf(err: unknown): string | CatalogText {
  const text = err instanceof Error ? (err as { text?: unknown }).text : undefined;
  return isCatalogText(text) ? text : describeCause(err);
}

export function cancelled(what: 'request' | 'message' = 'request'): SvcError {
  return new SvcError('CANCELLED', catalogText(what === 'request' ? 'error.cancelledRequest' : 'error.cancelledMessage'), { notSent: true });
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
