import { InputError, PlatformError } from '../util/errors';
import { Label, catalogText } from '../util/catalog-text';

/**
 * Values that go into request paths (job ids, topic ids, the project id, three-word addresses): each
 * is one path segment, checked and percent-encoded here, so that none can climb up the path or add
 * segments to it, whoever gave it.
 */

/** Where a value came from: the platform's response (a bad one is BAD_RESPONSE) or the node's input or settings (INVALID_INPUT). */
type SegmentSource = 'response' | 'input';

/** Far longer than any id the platform hands out; longer values are refused rather than sent. */
export const MAX_SEGMENT_LENGTH = 1024;
/** How much of a refused value its error shows. */
const SHOWN_LENGTH = 40;
/** A segment that URL parsers resolve as `.` or `..` (WHATWG URL also reads `%2e` as a dot). */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/**
 * `value` as one path segment: percent-encoded, `/` included. Empty, `.`, `..`, longer than
 * MAX_SEGMENT_LENGTH or not encodable (a lone surrogate) is refused, as BAD_RESPONSE or INVALID_INPUT by `from`.
 */
export function pathSegment(value: string | number, what: Label, from: SegmentSource): string {
  const text = String(value);
  let encoded: string | undefined;
  if (text !== '' && text !== '.' && text !== '..' && text.length <= MAX_SEGMENT_LENGTH) {
    try {
      encoded = encodeURIComponent(text);
    } catch {
      // A lone surrogate: not text that a URL can carry.
    }
  }
  if (encoded !== undefined) return encoded;
  const shown = text === '' ? catalogText('value.emptyString') : JSON.stringify(text.length > SHOWN_LENGTH ? `${text.slice(0, SHOWN_LENGTH)}…` : text);
  const refusal = catalogText('error.pathSegment', { what, value: shown, max: MAX_SEGMENT_LENGTH });
  throw from === 'response' ? new PlatformError('BAD_RESPONSE', refusal) : new InputError(refusal);
}

/** True when a path (already encoded) has a segment that a URL parser would resolve away: the last check before a request is sent. */
export function hasDotSegment(path: string): boolean {
  return path.split('/').some((segment) => DOT_SEGMENT.test(segment));
}
