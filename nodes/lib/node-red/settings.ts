import type { Polling } from '../platform/jobs';
import { MAX_GEOHASH_LENGTH } from '../geo/geohash';
import { toNumber } from '../util/values';
import type { Defaults, NumberKey, SettingsOf, TextKey, polling } from './editor-definition';

/**
 * The one parser of each kind of node setting, as flow JSON stores it (a number, or the text of an
 * editor field). A value that cannot be read gives the node's default, as an empty field does.
 */

/** A positive number; undefined lets the caller's default apply. */
export function positiveSetting(value: unknown): number | undefined {
  const n = toNumber(value);
  return n !== undefined && n > 0 ? n : undefined;
}

/** A number where 0 is meaningful ("off", "no cap"); negative or unreadable gives the default. */
export function nonNegativeSetting(value: unknown, fallback: number): number {
  const n = toNumber(value);
  return n !== undefined && n >= 0 ? n : fallback;
}

/** A count (batch size, parallel jobs, pages): a positive number, rounded down, at least 1. */
export function countSetting(value: unknown, fallback: number): number {
  return Math.max(1, Math.floor(positiveSetting(value) ?? fallback));
}

/** A text setting (a member path, a name), trimmed; empty gives the default. */
export function textSetting(value: unknown, fallback = ''): string {
  return (typeof value === 'string' ? value.trim() : '') || fallback;
}

/** Geohash length: a whole number from 1 to 12. */
export function precisionSetting(value: unknown, fallback: number): number {
  const n = positiveSetting(value);
  return n !== undefined && Number.isInteger(n) && n <= MAX_GEOHASH_LENGTH ? n : fallback;
}

/** Poll settings as flow JSON holds them (a 1.0.0 `pollInterval` is moved by the node's migration, node-red/migrations.ts). */
export interface PollSettings {
  /** The first wait before polling a job, in seconds. */
  pollIntervalSec?: unknown;
  /** The longest wait for a job, in seconds. */
  maxWait?: unknown;
}

/** A job node's poll defaults (its defaults.ts, from `polling()`). */
export type PollDefaults = Pick<ReturnType<typeof polling>, 'pollIntervalSec' | 'maxWait'>;

/** How a node polls its jobs. Every poll setting is in seconds. */
export function pollingOf(def: PollSettings, defaults: PollDefaults): Polling {
  return {
    intervalMs: (positiveSetting(def.pollIntervalSec) ?? defaults.pollIntervalSec.value) * 1000,
    maxWaitMs: (positiveSetting(def.maxWait) ?? defaults.maxWait.value) * 1000,
  };
}

/**
 * A node's settings read against its defaults.ts, the one source of their defaults: a key its
 * defaults lack fails tsc, and a missing or unreadable value gives the key's default.
 */
export function readSettings<D extends Defaults>(def: SettingsOf<D>, defaults: D) {
  // NumberKey and TextKey name only keys whose default value is a number or a text.
  const number = (key: NumberKey<D>) => defaults[key].value as number;
  const text = (key: TextKey<D>) => defaults[key].value as string;
  return {
    positive: (key: NumberKey<D>): number => positiveSetting(def[key]) ?? number(key),
    nonNegative: (key: NumberKey<D>): number => nonNegativeSetting(def[key], number(key)),
    count: (key: NumberKey<D>): number => countSetting(def[key], number(key)),
    precision: (key: NumberKey<D>): number => precisionSetting(def[key], number(key)),
    text: (key: TextKey<D>): string => textSetting(def[key], text(key)),
    /** One of `choices` (the key's default among them), else the default. */
    choice: <C extends string>(key: TextKey<D>, choices: readonly C[]): C => {
      const value: unknown = def[key];
      const isChoice = (v: unknown): v is C => (choices as readonly unknown[]).includes(v);
      return isChoice(value) ? value : (text(key) as C);
    },
  };
}
