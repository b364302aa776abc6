import fs from 'node:fs';
import path from 'node:path';

/**
 * Texts for people, as keys of the pack's runtime catalog (`runtime.*` in `locales/<lang>/svc-config.json`)
 * with their parameters. The platform layer builds them without knowing Node-RED; the Node-RED glue
 * translates them into the runtime's language (node-red/i18n.ts), and `english` gives the en-US text,
 * which is also every error's `message` until then.
 */
export interface CatalogText {
  key: string;
  params?: TextParams;
}

/** Parameters are filled in as they are, except messages, which are translated first (a list of them joined by "; "). */
export type TextParams = Record<string, string | number | CatalogText | CatalogText[]>;

/** What a text names an element by: a member or setting name as written (`transportMode`), or a catalog message ("waypoint 3"). */
export type Label = string | CatalogText;

/**
 * Where the layers below the Node-RED glue report what people should know outside of an error (Redis
 * lost, stored jobs unreadable): they give messages, and the glue passes a log that translates them.
 */
export interface TextLog {
  warn(text: CatalogText): void;
  info(text: CatalogText): void;
}

export function catalogText(key: string, params?: TextParams): CatalogText {
  return params === undefined ? { key } : { key, params };
}

export function isCatalogText(value: unknown): value is CatalogText {
  return value !== null && typeof value === 'object' && typeof (value as CatalogText).key === 'string';
}

type Catalog = { [key: string]: string | Catalog };

/** The en-US catalog beside the compiled code (dist/nodes/locales, copied from nodes/locales). */
const ENGLISH_CATALOG = path.join(__dirname, '..', '..', 'locales', 'en-US', 'svc-config.json');
let english_: Catalog | undefined;

function englishCatalog(): Catalog {
  english_ ??= (JSON.parse(fs.readFileSync(ENGLISH_CATALOG, 'utf8')) as { runtime: Catalog }).runtime;
  return english_;
}

/** The en-US template of a key, or undefined when the catalog has none. */
export function englishTemplate(key: string): string | undefined {
  let node: string | Catalog | undefined = englishCatalog();
  for (const part of key.split('.')) node = typeof node === 'object' ? node[part] : undefined;
  return typeof node === 'string' ? node : undefined;
}

/** A message in English. */
export function english(text: CatalogText | string): string {
  if (typeof text === 'string') return text;
  return fill(englishTemplate(text.key) ?? text.key, stringParams(text.params, english));
}

/** The parameters as text, nested messages rendered by `render`. */
export function stringParams(params: TextParams | undefined, render: (text: CatalogText) => string): Record<string, string> {
  const text = (value: string | number | CatalogText | CatalogText[]): string =>
    Array.isArray(value) ? value.map(render).join('; ') : isCatalogText(value) ? render(value) : String(value);
  return Object.fromEntries(Object.entries(params ?? {}).map(([name, value]) => [name, text(value)]));
}

/** Fills `__name__` placeholders, as Node-RED's i18next does. */
export function fill(template: string, params: Record<string, string>): string {
  return template.replace(/__(\w+?)__/g, (placeholder, name: string) => params[name] ?? placeholder);
}
