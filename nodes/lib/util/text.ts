import { decodeHTML } from 'entities';

/**
 * Text as the platform writes it for people (navigation instructions with HTML markup), and trims.
 * This text comes from responses and messages, so every function here runs in time linear in its
 * length: plain scans, or patterns that cannot backtrack over what they have already read.
 */

/**
 * The plain text of a navigation instruction: HTML markup removed, character references decoded as a
 * browser decodes them in text (HTML5's whole named table, `&eacute;`, `&ndash;`, numeric references,
 * the legacy names a browser reads without `;`: the `entities` library, one pass over the text), spaces tidied.
 */
export function plainText(html: string): string {
  return decodeHTML(stripTags(html)).replace(/\s+/g, ' ').trim();
}

const LINE_BREAK_TAG = /^br\s*\/?$/i;

/**
 * Removes each `<…>` (from a `<` to the first `>` after it), a `<br>` leaving a space. A `<` with no
 * `>` after it is text, and so is everything from there: the scan never looks at a character twice,
 * where a pattern such as `<[^>]*>` reads to the end of the text again from every `<`.
 */
function stripTags(html: string): string {
  const parts: string[] = [];
  let from = 0;
  for (;;) {
    const open = html.indexOf('<', from);
    const close = open < 0 ? -1 : html.indexOf('>', open + 1);
    if (close < 0) break;
    parts.push(html.slice(from, open));
    if (LINE_BREAK_TAG.test(html.slice(open + 1, close))) parts.push(' ');
    from = close + 1;
  }
  parts.push(html.slice(from));
  return parts.join('');
}

/**
 * `text` without the `character`s at its end (`trimTrailing('https://a/b//', '/')` is `https://a/b`).
 * A scan from the end: `/\/+$/` would read every run of the character to its end again from each position.
 */
export function trimTrailing(text: string, character: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === character) end--;
  return text.slice(0, end);
}

/** An HTTP header name: one or more token characters (RFC 9110). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function isHeaderName(text: string): boolean {
  return HEADER_NAME.test(text);
}

/** Why a body is not one JSON text a message can carry. */
export type JsonTextProblem = 'invalid JSON' | 'too deep';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Exactly one JSON text (RFC 8259: UTF-8, a leading byte-order mark allowed and dropped), nested at
 * most `maxDepth` arrays and objects deep: deeper values are refused before JSON.parse and before
 * anything else recurses into them (cloning a message, the debug sidebar).
 */
export function readJsonText(bytes: Buffer, maxDepth: number): { ok: true; value: unknown } | { ok: false; reason: JsonTextProblem } {
  let text: string;
  try {
    // TextDecoder drops one leading BOM by itself.
    text = strictUtf8.decode(bytes);
  } catch {
    return { ok: false, reason: 'invalid JSON' };
  }
  if (nestingDepth(text) > maxDepth) return { ok: false, reason: 'too deep' };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, reason: 'invalid JSON' };
  }
}

/** The deepest nesting of arrays and objects in a text (outside strings); stops counting past the first excess. */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c) i++;
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x5b || code === 0x7b) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (code === 0x5d || code === 0x7d) depth--;
  }
  return deepest;
}

/** What an HTTP header value may hold (RFC 9110 field-value, as undici checks it): no CR, LF, NUL or other control but tab. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

export function isHeaderValue(text: string): boolean {
  return HEADER_VALUE.test(text);
}
