import fs from 'node:fs';
import path from 'node:path';
import type { Node, NodeAPI } from './types';
import { SvcError } from '../util/errors';
import { CatalogText, PLACEHOLDER, TextLog, fill, fillParts, stringParams, templateParts, useEnglishCatalog } from '../util/catalog-text';

/**
 * The one place where runtime texts (statuses, warnings, errors) are put into the language of the
 * Node-RED runtime (its `lang` setting, else the system locale), through RED._().
 *
 * Node-RED registers the message catalog of each node set, `locales/<lang>/<type>.json`, as the
 * namespace `<module>/<type>`. A node's own runtime texts are in its catalog's `runtime` section; the
 * texts several nodes or the lower layers use are in the `common` section of svc-config's catalog,
 * which every install of the pack has. The code names a text by its key alone
 * (`error.geocode.address`): each key is in one catalog (test/nodes/locales_spec), and the en-US catalogs,
 * read here, say which. RED._ of any node set reads any namespace named in the key, so texts do not
 * depend on which node registered first.
 */

type Catalog = { [key: string]: string | Catalog };

/** Where a key's text is: its catalog's namespace and its path there (`<section>.<key>`); and its en-US template. */
interface CatalogEntry {
  namespace: string;
  path: string;
  english: string;
}

/** The node folders (dist/nodes/<type>/, each with its catalogs in locales/), two folders above; the package's package.json four above. */
const NODES_DIR = path.join(__dirname, '..', '..');
const PACKAGE_JSON = path.join(__dirname, '..', '..', '..', '..', 'package.json');
const SECTIONS = ['runtime', 'common'];

let entries: Map<string, CatalogEntry> | undefined;

function catalogEntries(): Map<string, CatalogEntry> {
  if (entries) return entries;
  const moduleName = (JSON.parse(fs.readFileSync(PACKAGE_JSON, 'utf8')) as { name: string }).name;
  const found = new Map<string, CatalogEntry>();
  for (const type of fs.readdirSync(NODES_DIR)) {
    const file = path.join(NODES_DIR, type, 'locales', 'en-US', `${type}.json`);
    if (!fs.existsSync(file)) continue;
    const catalog = JSON.parse(fs.readFileSync(file, 'utf8')) as Catalog;
    const namespace = `${moduleName}/${type}`;
    for (const section of SECTIONS) {
      const texts = catalog[section];
      if (typeof texts !== 'object') continue;
      for (const [key, english] of leaves(texts)) found.set(key, { namespace, path: `${section}.${key}`, english });
    }
  }
  entries = found;
  return found;
}

function leaves(catalog: Catalog, prefix = ''): Array<[string, string]> {
  return Object.entries(catalog).flatMap(([key, value]): Array<[string, string]> =>
    typeof value === 'string' ? [[`${prefix}${key}`, value]] : leaves(value, `${prefix}${key}.`),
  );
}

// The lower layers write English (an error's first `message`) from the templates the glue hands down.
useEnglishCatalog((key) => catalogEntries().get(key)?.english);

type Translate = (key: string, params: Record<string, string>) => string;
let runtimeTranslate: Translate | undefined;

/**
 * Each key's template in the runtime's language, its placeholders kept, so that a text is its
 * template filled in here. A node shows a status per message, with figures that differ each time
 * (`found (123/50000)`), and i18next's lookup and interpolation cost more than all the rest of a
 * status update (docs/performance.md has the profile). The
 * catalogs use plain `__name__` placeholders only (no plurals, no nesting), which `fill` fills as
 * i18next would; one entry per catalog key, split at its placeholders once (`templateParts`).
 */
const templates = new Map<string, string[]>();

/** Called by each node's registration with its RED: any node set's RED._ reads every catalog of the pack. */
export function translateWith(RED: Pick<NodeAPI, '_'>): void {
  runtimeTranslate = (key, params) => RED._(key, params);
  templates.clear();
}

/** A catalog text in the runtime's language; en-US where the runtime has no catalog for it (a test helper, say). */
export function translate(text: CatalogText | string): string {
  if (typeof text === 'string') return text;
  const params = stringParams(text.params, translate);
  const entry = catalogEntries().get(text.key);
  if (!entry) return fill(text.key, params);
  return fillParts(templateOf(text.key, entry), params);
}

/** The template of `key` in the runtime's language (the en-US one where the runtime's catalogs lack the key), split at its placeholders. */
function templateOf(key: string, entry: CatalogEntry): string[] {
  const known = templates.get(key);
  if (known !== undefined) return known;
  // Each placeholder filled with itself: i18next returns the template with the placeholders where they were.
  const placeholders = Object.fromEntries([...entry.english.matchAll(PLACEHOLDER)].map(([placeholder, name]) => [name, placeholder]));
  const inCatalog = runtimeTranslate?.(`${entry.namespace}:${entry.path}`, placeholders);
  // i18next translates a key it lacks (or one of a namespace it does not know) to the key itself.
  const template = templateParts(inCatalog === undefined || inCatalog === '' || inCatalog.endsWith(entry.path) ? entry.english : inCatalog);
  // Not remembered before a node set gave RED._: the runtime's language may not be known yet.
  if (runtimeTranslate) templates.set(key, template);
  return template;
}

/** The error with its message in the runtime's language, ready for done(err), a Catch node and the log. */
export function localize<T>(err: T): T {
  if (err instanceof SvcError && err.text) err.message = translate(err.text);
  return err;
}

/** A node's log for the layers below the glue: their texts go to node.warn and node.log, translated. */
export function nodeLog(node: Pick<Node, 'warn' | 'log'>): TextLog {
  return { warn: (text) => node.warn(translate(text)), info: (text) => node.log(translate(text)) };
}

/** The runtime's log, translated, for what belongs to no node (a config node's stored jobs file). */
export function runtimeLog(RED: Pick<NodeAPI, 'log'>): TextLog {
  const line = (text: CatalogText) => `[svc-location] ${translate(text)}`;
  return { warn: (text) => RED.log.warn(line(text)), info: (text) => RED.log.info(line(text)) };
}
