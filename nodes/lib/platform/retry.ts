import { ConnectionSettings, PlatformError, SvcError, describeCause } from '../util/errors';
import { redact } from '../util/masking';
import { catalogText } from '../util/catalog-text';
import { PROXY_TUNNEL_CODE } from './dispatcher';
import type { RetryPolicy } from './types';

/**
 * What a failed attempt was (the PlatformError it becomes) and whether and when the client tries
 * again: the retry policy, Retry-After and exponential backoff.
 */

const RETRY_BASE_MS = 250;
const RETRY_CAP_MS = 8_000;
/** A Retry-After longer than this is not waited out: the message fails with RATE_LIMITED instead. */
const MAX_RETRY_AFTER_MS = 120_000;
/** Error codes of failures that happen before a single byte of the request left this process. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', PROXY_TUNNEL_CODE]);

/** Node's codes for certificate and TLS handshake failures. */
const TLS_CODE = /CERT|^ERR_TLS_|^ERR_SSL_/;

/** Retry-After as seconds or an HTTP date, in milliseconds. */
export function parseRetryAfter(value: string): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** How long to wait before the next attempt, or undefined when this failure must not be retried. */
export function retryDelay(error: SvcError, policy: RetryPolicy, attempt: number): number | undefined {
  const retryable =
    error.code === 'RATE_LIMITED' ||
    (error.notSent && error.code === 'NETWORK') ||
    (policy === 'read' && (error.code === 'SERVER' || error.code === 'NETWORK' || error.code === 'TIMEOUT'));
  if (!retryable) return undefined;
  if (error.retryAfterMs !== undefined) return error.retryAfterMs <= MAX_RETRY_AFTER_MS ? error.retryAfterMs : undefined;
  // Exponential backoff with full jitter, so many nodes retrying at once do not stampede.
  return Math.random() * Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** attempt);
}

/** A failure as an SvcError; a failed connection carries the settings it depends on (`connection`), for what to do to name them. */
export function toSvcError(err: unknown, secrets: readonly string[], connection: ConnectionSettings): SvcError {
  if (err instanceof SvcError) return err;
  const code = (err as { code?: unknown })?.code;
  const text = redact(describeCause(err), secrets);
  const notSent = typeof code === 'string' && NOT_SENT_CODES.has(code);
  if (typeof code === 'string' && TLS_CODE.test(code)) {
    // A certificate problem does not go away by trying again: report it at once.
    return new PlatformError('TLS', catalogText('error.tls', { text, code }), { cause: err, notSent: true, connection });
  }
  return new PlatformError('NETWORK', catalogText('error.network', { text, code: typeof code === 'string' ? ` (${code})` : '' }), {
    cause: err,
    notSent,
    connection,
  });
}
