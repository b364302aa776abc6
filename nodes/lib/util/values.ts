import { InputError } from './errors';
import { Label, CatalogText, catalogText } from './catalog-text';

/** Readers for request values as users give them: enums exactly as the spec spells them, booleans, numbers. */

/** False for the values that mean "not set": undefined, null, the empty string and the empty list. */
export function isSet(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '' && !(Array.isArray(value) && value.length === 0);
}

/** One value of an enum, exactly as the spec spells it; undefined when not set. */
export function readChoice<T extends string>(value: unknown, allowed: readonly T[], field: Label): T | undefined {
  return isSet(value) ? oneOf(value, allowed, field) : undefined;
}

/** Several enum values, from an array or a comma-separated list; undefined when not set. */
export function readChoices<T extends string>(value: unknown, allowed: readonly T[], field: Label): T[] | undefined {
  const items =
    typeof value === 'string'
      ? value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : value;
  if (!isSet(items)) return undefined;
  if (!Array.isArray(items)) throw new InputError(catalogText('error.value.notList', { field, allowed: allowed.join(', ') }));
  return items.map((item) => oneOf(item, allowed, field));
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], field: Label): T {
  if (!(allowed as readonly unknown[]).includes(value)) {
    throw new InputError(catalogText('error.value.notOneOf', { field, value: JSON.stringify(value), allowed: allowed.join(', ') }));
  }
  return value as T;
}

export function readBoolean(value: unknown, field: string): boolean | undefined {
  if (!isSet(value)) return undefined;
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new InputError(catalogText('error.value.notBoolean', { field, value: JSON.stringify(value) }));
}

export function readNumber(value: unknown, field: string): number | undefined {
  if (!isSet(value)) return undefined;
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value.trim()) : NaN;
  if (!Number.isFinite(n)) throw new InputError(catalogText('error.value.notNumber', { field, value: JSON.stringify(value) }));
  return n;
}

/** How an unexpected value reads in an error message: "null", "an array", "an empty string", "number" … */
export function describeValue(value: unknown): CatalogText {
  if (value === null) return catalogText('value.null');
  if (Array.isArray(value)) return catalogText('value.array');
  if (typeof value === 'string') return catalogText(value.trim() === '' ? 'value.emptyString' : 'value.string');
  return catalogText('value.type', { type: typeof value });
}

/** A JSON value, as a job and the message that started it are stored. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [member: string]: JsonValue };
export type JsonObject = { [member: string]: JsonValue };

/** An object read from a message or a response whose members are not checked yet: each is `unknown` until read. */
export type Fields = Record<string, unknown>;

/** A JSON object: not null, not an array. */
export function isRecord(value: unknown): value is Fields {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A finite number from a number or a numeric string (CSV fields are text), else undefined. */
export function toNumber(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  return Number.isFinite(n) ? n : undefined;
}

/** Reads a member by dotted path (`payload.links.download`), for user-configured overrides. */
export function memberAt(value: unknown, path: string): unknown {
  let current = value;
  for (const key of path.split('.').filter(Boolean)) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** The members that are set: optional request fields left unset stay off the wire. */
export function setMembers<T extends object>(record: T): T {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as T;
}
