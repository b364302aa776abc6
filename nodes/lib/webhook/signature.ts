import { createHash, timingSafeEqual } from 'node:crypto';

/** The header a signed webhook request carries: `t=<timestamp>,digestV1=<hex digest>`. */
export const SIGNATURE_HEADER = 'svc-signature';

/**
 * The unit of `t` is not in the spec, so it is read by magnitude: from this value on it is taken as
 * milliseconds (1e11 seconds is the year 5138; 1e11 milliseconds is March 1973).
 */
const MILLISECONDS_FROM = 1e11;
const TIMESTAMP = /^\d{1,16}(\.\d{1,6})?$/;
const SHA256_HEX = /^[0-9a-f]{64}$/i;

interface ParsedSignature {
  /** `t` exactly as sent: the digest covers this text, not a re-formatted number. */
  timestamp: string;
  /** Every `digestV1` given, decoded from hex (32 bytes each). */
  digests: Buffer[];
}

/** Why a request was refused: a reason code, sent as it is in the HTTP response (the node status shows its translation). */
export type SignatureRejection = 'missing signature' | 'malformed signature' | 'stale timestamp' | 'future timestamp' | 'signature mismatch';

interface AcceptedSignature {
  timestamp: string;
  timestampMs: number;
  digest: string;
  /** The lowercase hex SHA-256 of `<t>.<body>`: what the request is, whichever secret signed it. */
  identity: string;
}

/**
 * What identifies an accepted request against replays: `key`, `<t>:<identity>` (no secret in it, so a
 * copy is the same request under any secret), and `legacyKey`, `<t>:<digest>`, the key that earlier
 * versions recorded (their journal and Redis keys are still read); `timestampMs` is t, and `expiresAt`
 * the last millisecond the time check it passed accepts it (rounded up, for a `t` with a fraction of
 * a millisecond).
 */
export interface ReplayEntry {
  key: string;
  legacyKey: string;
  timestampMs: number;
  expiresAt: number;
}

type VerifyResult = ({ ok: true } & AcceptedSignature) | { ok: false; reason: SignatureRejection };

/** The lowercase hex SHA-256 of `<t>.<secret>.<body>`, over the body's exact bytes. */
export function computeDigest(timestamp: string, secret: string, body: Buffer | string): string {
  return createHash('sha256').update(`${timestamp}.${secret}.`, 'utf8').update(body).digest('hex');
}

/**
 * Reads `t=<timestamp>,digestV1=<hex>`. Parts may come in any order with spaces around them; several
 * `digestV1` parts are all candidates; other keys are ignored (room for later digest versions).
 * Returns undefined when the header is absent, repeated, or not of that form.
 */
export function parseSignatureHeader(value: string | string[] | undefined): ParsedSignature | undefined {
  if (typeof value !== 'string') return undefined;
  let timestamp: string | undefined;
  const digests: Buffer[] = [];
  for (const part of value.split(',')) {
    const separator = part.indexOf('=');
    if (separator < 0) return undefined;
    const key = part.slice(0, separator).trim().toLowerCase();
    const text = part.slice(separator + 1).trim();
    if (key === 't') {
      if (timestamp !== undefined || !TIMESTAMP.test(text)) return undefined;
      timestamp = text;
    } else if (key === 'digestv1') {
      if (!SHA256_HEX.test(text)) return undefined;
      digests.push(Buffer.from(text, 'hex'));
    }
  }
  return timestamp !== undefined && digests.length > 0 ? { timestamp, digests } : undefined;
}

/** `t` in milliseconds since the epoch, whether it was sent in seconds or in milliseconds. */
export function timestampToMs(timestamp: string): number {
  const value = Number(timestamp);
  return value >= MILLISECONDS_FROM ? value : value * 1000;
}

/** Compares two texts in time that depends on neither their content nor their lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  const digestA = createHash('sha256').update(a, 'utf8').digest();
  const digestB = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(digestA, digestB);
}

interface VerifierOptions {
  /** The current secret first, then the previous one during a rotation. Empty strings are ignored. */
  secrets: string[];
  toleranceSec: number;
}

/**
 * Checks `svc-signature` headers: form, timestamp within the tolerance window (both directions,
 * edges included: accepted if and only if |now - t| <= tolerance) and digest against every secret in
 * constant time. Replays are the receiver's to refuse, with `replayEntry`: the replay journal must
 * outlive a verifier, which a redeploy, a new tolerance or a secret rotation replaces.
 */
export class SignatureVerifier {
  private readonly secrets: string[];
  private readonly toleranceMs: number;

  constructor(options: VerifierOptions) {
    this.secrets = options.secrets.filter((secret) => secret !== '');
    if (this.secrets.length === 0) throw new Error('a signature verifier needs at least one secret');
    this.toleranceMs = options.toleranceSec * 1000;
  }

  verify(header: string | string[] | undefined, body: Buffer, now = Date.now()): VerifyResult {
    if (header === undefined) return { ok: false, reason: 'missing signature' };
    const signature = parseSignatureHeader(header);
    if (!signature) return { ok: false, reason: 'malformed signature' };
    const timestampMs = timestampToMs(signature.timestamp);
    if (timestampMs < now - this.toleranceMs) return { ok: false, reason: 'stale timestamp' };
    if (timestampMs > now + this.toleranceMs) return { ok: false, reason: 'future timestamp' };
    const matched = this.matchingDigest(signature, body);
    if (matched === undefined) return { ok: false, reason: 'signature mismatch' };
    const identity = createHash('sha256').update(`${signature.timestamp}.`, 'utf8').update(body).digest('hex');
    return { ok: true, timestamp: signature.timestamp, timestampMs, digest: matched, identity };
  }

  /** What identifies an accepted request against replays, and until when this verifier accepts it. */
  replayEntry(result: AcceptedSignature): ReplayEntry {
    return {
      key: `${result.timestamp}:${result.identity}`,
      legacyKey: `${result.timestamp}:${result.digest}`,
      timestampMs: result.timestampMs,
      expiresAt: Math.ceil(result.timestampMs + this.toleranceMs),
    };
  }

  /** The hex digest that one of the secrets produces and the header carries, if any. */
  private matchingDigest(signature: ParsedSignature, body: Buffer): string | undefined {
    let matched: string | undefined;
    // Every secret is tried even after a match, so the time taken does not tell which one matched.
    for (const secret of this.secrets) {
      const expected = Buffer.from(computeDigest(signature.timestamp, secret, body), 'hex');
      for (const given of signature.digests) {
        if (timingSafeEqual(given, expected) && matched === undefined) matched = expected.toString('hex');
      }
    }
    return matched;
  }
}
