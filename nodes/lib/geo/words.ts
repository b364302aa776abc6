import { InputError } from '../util/errors';
import { describeValue } from '../util/values';
import { catalogText } from '../util/catalog-text';

/** The full stop, and the ideographic, halfwidth and fullwidth ones that Japanese and Chinese text uses. */
const SEPARATOR = /[.\u3002\uFF61\uFF0E]/;
/** A word is letters of any script, with their combining marks (Devanagari, Thai …). */
const WORD = /^[\p{L}\p{M}]+$/u;
const LEADING_SLASHES = '///';
/** Far more than any three-word address needs; longer text is refused before it is split or echoed. */
const MAX_LENGTH = 200;

/**
 * Reads a three-word address: `word.word.word`, optionally after `///`, with spaces around it,
 * in any letter case and any script. Returns the three words in lower case (Unicode NFC);
 * anything else is an INVALID_INPUT error.
 */
export function parseThreeWords(value: unknown): string[] {
  const candidate = value !== null && typeof value === 'object' && !Array.isArray(value) && 'words' in value ? value.words : value;
  if (typeof candidate !== 'string') {
    throw new InputError(catalogText('error.words.notString', { value: describeValue(candidate) }));
  }
  if (candidate.length > MAX_LENGTH) {
    throw new InputError(catalogText('error.words.tooLong', { max: MAX_LENGTH, length: candidate.length }));
  }
  let text = candidate.trim().normalize('NFC');
  if (text.startsWith(LEADING_SLASHES)) text = text.slice(LEADING_SLASHES.length);
  const words = text.split(SEPARATOR);
  if (words.length !== 3 || !words.every((word) => WORD.test(word))) {
    throw new InputError(catalogText('error.words.notWords', { value: candidate }));
  }
  return words.map((word) => word.toLowerCase());
}

/** `///word.word.word`, the usual way to write the address. */
export function formatThreeWords(words: readonly string[]): string {
  return `${LEADING_SLASHES}${words.join('.')}`;
}
