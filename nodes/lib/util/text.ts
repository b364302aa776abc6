/**
 * Text as the platform writes it for people (navigation instructions with HTML markup), and trims.
 * This text comes from answers and messages, so every function here runs in time linear in its
 * length: plain scans, or patterns that cannot backtrack over what they have already read.
 */

/** The plain text of a navigation instruction: HTML markup removed, entities decoded, spaces tidied. */
export function plainText(html: string): string {
  return decodeEntities(stripTags(html))
    .replace(/\s+/g, ' ')
    .trim();
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

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity: string, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
    }
    return NAMED_ENTITIES[name.toLowerCase()] ?? entity;
  });
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
