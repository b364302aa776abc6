/**
 * Secret masking: what keeps credentials out of error texts, statuses, logs and messages. Members and
 * headers named like credentials, bearer tokens, and the secrets a request carried, in every form they
 * can take in a body (as written, JSON- or URL-escaped, spelt with \uXXXX escapes).
 */

const EXCERPT_LENGTH = 300;
/** How much of a body the excerpt is taken from, as redacting a huge body would hold up Node-RED; a credential cut here is still masked. */
const EXCERPT_SOURCE_LENGTH = 16 * 1024;

/**
 * The one list of credential-like names, for every place that keeps credentials out of sight (`redact`, svc-webhook-in's
 * `msg.webhook.headers`, a stored job's message): a name, in any case, that is one of `CREDENTIAL_NAMES` whole or holds
 * one of `CREDENTIAL_NAME_PARTS`. Masking more than needed is safe; masking less never is, so a name goes into the list.
 */
export const CREDENTIAL_NAMES: readonly string[] = ['auth', 'pass', 'pwd', 'jwt'];
export const CREDENTIAL_NAME_PARTS: readonly string[] = [
  'authorization',
  'authorisation',
  'token',
  'secret',
  'password',
  'passwd',
  'passphrase',
  'apikey',
  'api-key',
  'api_key',
  'accesskey',
  'access-key',
  'access_key',
  'privatekey',
  'private-key',
  'private_key',
  'credential',
  'cookie',
  'session',
  'bearer',
];
/** Linear: alternatives of plain words only. */
const CREDENTIAL_NAME = new RegExp(`^(?:${CREDENTIAL_NAMES.join('|')})$|${CREDENTIAL_NAME_PARTS.join('|')}`, 'i');

/** True for a member or header name that holds a credential (see `CREDENTIAL_NAMES`). */
export function isCredentialName(name: string): boolean {
  return CREDENTIAL_NAME.test(name);
}

/**
 * A member or header name and what separates it from its value (`"token": `, `api_key=`, `Authorization: `).
 * Linear: a name is tried only where one starts, and each part of the separator matches one way only.
 */
const NAMED_VALUE = /(?<![\w-])([\w-]+)"?\s*[:=]\s*/g;
/**
 * The value after a credential's name: a quoted string (an unterminated one to the end, as in a cut-off body) or a bare
 * word. Linear: the alternatives start with different characters and each part matches one way only.
 */
const NAMED_VALUE_TEXT = /"(?:[^"\\]|\\.)*(?:"|$)|[^",&\s}]+/y;
const BEARER = /(bearer\s+)[A-Za-z0-9._~+/=-]+/gi;

const MASK = '***';
const MASK_BYTES = Buffer.from(MASK);
/** A `\uXXXX` escape in JSON text, which could spell a secret out of sight of a plain search. */
const UNICODE_ESCAPE = /\\u([0-9a-fA-F]{4})/g;

/**
 * Removes anything that looks like a credential from text that may reach logs or messages: values named like credentials,
 * bearer tokens, and every one of `secrets` as written, JSON-escaped or URL-encoded, also when spelt with `\uXXXX` escapes.
 */
export function redact(text: string, secrets: readonly string[] = []): string {
  // Bearer first, so `authorization: Bearer <token>` loses the token and not just the word "Bearer".
  const out = maskCredentialValues(unescapeUnicode(text).replace(BEARER, '$1***'));
  return maskForms(out, secretForms(secrets));
}

/** The text with the value of every member or header named like a credential masked (a quoted value stays quoted). */
function maskCredentialValues(text: string): string {
  const names = NAMED_VALUE;
  names.lastIndex = 0;
  let out = '';
  let copied = 0;
  for (let found = names.exec(text); found; found = names.exec(text)) {
    if (!isCredentialName(found[1])) continue;
    NAMED_VALUE_TEXT.lastIndex = names.lastIndex;
    const value = NAMED_VALUE_TEXT.exec(text);
    if (!value) continue;
    out += text.slice(copied, names.lastIndex) + (value[0].startsWith('"') ? '"***"' : MASK);
    copied = names.lastIndex = NAMED_VALUE_TEXT.lastIndex;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/** A percent-escape of a character that URLs never need to escape (RFC 3986, 2.3): it means that character. */
const UNRESERVED_ESCAPE = /%(2[dDeE]|3[0-9]|[46][1-9a-fA-F]|[57][0-9aA]|5[fF]|7[eE])/g;

/**
 * A response header's text redacted as a body's is (`redact`), with escapes of unreserved characters written out first,
 * as they mean the same URL, so that none spells a secret out of sight (`/jobs/%6Bey`).
 */
export function redactHeader(value: string, secrets: readonly string[]): string {
  if (value === '') return value;
  // Most responses carry the same few header texts (`application/json; charset=utf-8`): each is redacted once per list of secrets.
  const { headers } = secretSet(secrets);
  let redacted = headers.get(value);
  if (redacted === undefined) {
    const plain = value.includes('%') ? value.replace(UNRESERVED_ESCAPE, (_escape, hex: string) => String.fromCharCode(parseInt(hex, 16))) : value;
    redacted = redact(plain, secrets);
    if (value.length <= KNOWN_HEADER_MAX_LENGTH) {
      if (headers.size >= KNOWN_HEADERS_MAX_ENTRIES) headers.clear();
      headers.set(value, redacted);
    }
  }
  return redacted;
}

/** Every way a secret can come back in text, longest first so that a longer form is masked whole before a shorter one inside it. */
function secretForms(secrets: readonly string[]): string[] {
  return secretSet(secrets).forms;
}

/** A list of secrets as the searches need it: their forms, their characters, and how a `\uXXXX` escape of one begins. */
interface SecretSet {
  forms: string[];
  chars: Set<string>;
  escapeStarts: string[];
  /** Response header texts redacted for these secrets (`redactHeader`), by the text as received. */
  headers: Map<string, string>;
}

const knownSets = new Map<string, SecretSet>();
const KNOWN_SETS_MAX_ENTRIES = 100;
/** A frozen list of secrets (a client's own, passed for each of its requests) finds its set without joining it. */
const setsOfLists = new WeakMap<readonly string[], SecretSet>();
/** Header texts kept per set; short ones, and the kept texts start again when full. */
const KNOWN_HEADERS_MAX_ENTRIES = 32;
const KNOWN_HEADER_MAX_LENGTH = 256;

function secretSet(secrets: readonly string[]): SecretSet {
  const known = setsOfLists.get(secrets);
  if (known) return known;
  // Every response is checked for its request's secrets, mostly the same few: their forms are worked out once.
  const key = secrets.join('\u0000');
  let set = knownSets.get(key);
  if (!set) {
    const chars = new Set(secrets.join(''));
    const escapeStarts = new Set<string>();
    for (const char of chars) {
      const high = char.charCodeAt(0).toString(16).padStart(4, '0').slice(0, 2);
      escapeStarts.add(`\\u${high}`).add(`\\u${high.toUpperCase()}`);
    }
    set = { forms: formsOf(secrets), chars, escapeStarts: [...escapeStarts], headers: new Map() };
    if (knownSets.size >= KNOWN_SETS_MAX_ENTRIES) knownSets.clear();
    knownSets.set(key, set);
  }
  if (Object.isFrozen(secrets)) setsOfLists.set(secrets, set);
  return set;
}

function formsOf(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret === '') continue;
    const json = JSON.stringify(secret).slice(1, -1);
    forms.add(secret).add(json).add(json.split('/').join('\\/'));
    try {
      forms.add(encodeURIComponent(secret)).add(new URLSearchParams({ s: secret }).toString().slice(2));
    } catch {
      // A lone surrogate has no URL-encoded form; it cannot have been sent as one either.
    }
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/** JSON's `\uXXXX` escapes of visible characters written out (quotes, backslashes and controls stay escaped). */
function unescapeUnicode(text: string): string {
  if (!text.includes('\\u')) return text;
  return text.replace(UNICODE_ESCAPE, (escape: string, hex: string) => {
    const code = parseInt(hex, 16);
    return code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff) ? escape : String.fromCharCode(code);
  });
}

/**
 * A parsed response body with every secret masked in its strings and member names; `text` is the body as received, which
 * says cheaply whether any secret can be in it (when none is, the body is returned as it is).
 */
export function scrubBody<T>(value: T, text: string, secrets: readonly string[]): T {
  const { forms, chars, escapeStarts } = secretSet(secrets);
  if (forms.length === 0 || (!forms.some((form) => text.includes(form)) && !escapesAnyOf(text, chars, escapeStarts))) return value;
  return scrubValue(value, forms) as T;
}

/** True when the text has a `\uXXXX` escape of a character some secret holds: only then can a secret hide from the search for its forms. */
function escapesAnyOf(text: string, chars: ReadonlySet<string>, escapeStarts: readonly string[]): boolean {
  if (!escapeStarts.some((start) => text.includes(start))) return false;
  for (let at = text.indexOf('\\u'); at >= 0; at = text.indexOf('\\u', at + 2)) {
    if (chars.has(String.fromCharCode(parseInt(text.slice(at + 2, at + 6), 16)))) return true;
  }
  return false;
}

function scrubValue(value: unknown, forms: readonly string[]): unknown {
  if (typeof value === 'string') return maskForms(value, forms);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => scrubValue(item, forms));
  const copy: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(value)) copy[maskForms(name, forms)] = scrubValue(member, forms);
  return copy;
}

/** A string of a response with the secrets' forms masked, and nothing else changed. */
function maskForms(text: string, forms: readonly string[]): string {
  let out = text;
  for (const form of forms) if (out.includes(form)) out = out.split(form).join(MASK);
  return out;
}

/** A file (bulk results) with every secret, as written, JSON-escaped or URL-encoded, masked in its bytes. */
export function scrubBytes(bytes: Buffer, secrets: readonly string[]): Buffer {
  let out = bytes;
  for (const form of secretForms(secrets)) {
    const needle = Buffer.from(form, 'utf8');
    let at = out.indexOf(needle);
    if (at < 0) continue;
    const parts: Buffer[] = [];
    let from = 0;
    while (at >= 0) {
      parts.push(out.subarray(from, at), MASK_BYTES);
      from = at + needle.length;
      at = out.indexOf(needle, from);
    }
    parts.push(out.subarray(from));
    out = Buffer.concat(parts);
  }
  return out;
}

/**
 * The start of a body, safe to show: its first part redacted, then shortened. A credential cut there is still masked: a
 * member's value by the patterns above, the beginning of a configured secret by dropping it.
 */
export function excerpt(body: string, secrets: readonly string[] = []): string {
  if (body.length <= EXCERPT_SOURCE_LENGTH) return redact(body, secrets).slice(0, EXCERPT_LENGTH);
  let start = body.slice(0, EXCERPT_SOURCE_LENGTH);
  for (const secret of secretForms(secrets)) {
    for (let length = Math.min(secret.length - 1, start.length); length > 0; length--) {
      if (start.endsWith(secret.slice(0, length))) {
        start = start.slice(0, -length);
        break;
      }
    }
  }
  return redact(start, secrets).slice(0, EXCERPT_LENGTH);
}
