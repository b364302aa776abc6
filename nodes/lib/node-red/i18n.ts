import type { Node, NodeAPI } from './types';
import { PlatformError } from '../util/errors';
import { CatalogText, TextLog, englishTemplate, fill, stringParams } from '../util/catalog-text';

/**
 * The one place where runtime texts (statuses, warnings, errors) are put into the language of the
 * Node-RED runtime (its `lang` setting, else the system locale), through RED._() and the pack's
 * runtime catalog: `runtime.*` in svc-config's message files, which every flow of the pack has.
 */

type Translate = (key: string, params: Record<string, string>) => string;
let runtimeCatalog: Translate | undefined;

/**
 * Texts already translated, by key and parameters. A node shows the same few status texts for
 * message after message, and i18next's lookup cost more than all the rest of a status update (a
 * fifth of Node-RED's CPU per svc-geocode message in the bench's profile). Short texts only, and
 * a bounded number of them.
 */
const translated = new Map<string, string>();
const TRANSLATED_MAX_ENTRIES = 500;
const TRANSLATED_MAX_KEY_LENGTH = 200;

/** Called by svc-config's registration: its RED._ reads its own catalog, whatever the module's name. */
export function useRuntimeCatalog(RED: NodeAPI): void {
  runtimeCatalog = (key, params) => RED._(key, params);
  translated.clear();
}

/** A message in the runtime's language; en-US where the runtime has no catalog for it (a test helper, say). */
export function translate(text: CatalogText | string): string {
  if (typeof text === 'string') return text;
  const cacheKey = cacheKeyOf(text);
  const known = translated.get(cacheKey);
  if (known !== undefined) return known;
  const result = translateNow(text);
  if (cacheKey.length <= TRANSLATED_MAX_KEY_LENGTH) {
    if (translated.size >= TRANSLATED_MAX_ENTRIES) translated.clear();
    translated.set(cacheKey, result);
  }
  return result;
}

/** The key and parameters as one string; flat parameters without JSON.stringify, which showed in the profile too. */
function cacheKeyOf(text: CatalogText): string {
  let key = text.key;
  for (const name in text.params) {
    const value = text.params[name];
    key += typeof value === 'object' ? `\u0001${name}=${JSON.stringify(value)}` : `\u0001${name}=${value}`;
  }
  return key;
}

function translateNow(text: CatalogText): string {
  const params = stringParams(text.params, translate);
  const key = `runtime.${text.key}`;
  const inCatalog = runtimeCatalog?.(key, params);
  // i18next answers a missing key with the key itself.
  if (inCatalog === undefined || inCatalog === '' || inCatalog.endsWith(key)) return fill(englishTemplate(text.key) ?? text.key, params);
  return inCatalog;
}

/** The error with its message in the runtime's language, ready for done(err), a Catch node and the log. */
export function localize<T>(err: T): T {
  if (err instanceof PlatformError && err.text) err.message = translate(err.text);
  return err;
}

/** A node's log for the layers below the glue: their messages go to node.warn and node.log, translated. */
export function nodeLog(node: Pick<Node, 'warn' | 'log'>): TextLog {
  return { warn: (text) => node.warn(translate(text)), info: (text) => node.log(translate(text)) };
}

/** The runtime's log, translated, for what belongs to no node (a config node's stored jobs file). */
export function runtimeLog(RED: Pick<NodeAPI, 'log'>): TextLog {
  const line = (text: CatalogText) => `[svc-location] ${translate(text)}`;
  return { warn: (text) => RED.log.warn(line(text)), info: (text) => RED.log.info(line(text)) };
}
