/**
 * Texts for people, as keys of the pack's runtime catalogs with their parameters. The lower layers
 * build them without knowing Node-RED or its files; the Node-RED glue translates them into the
 * runtime's language (node-red/i18n.ts) and hands down the en-US templates (`useEnglishCatalog`),
 * from which `english` writes every error's `message` until the glue translates it.
 */
export interface CatalogText {
  key: string;
  params?: TextParams;
}

/** Parameters are filled in as they are, except catalog texts, which are translated first (a list of them joined by "; "). */
export type TextParams = Record<string, string | number | CatalogText | CatalogText[]>;

/** What a text names an element by: a member or setting name as written (`transportMode`), or a catalog text ("waypoint 3"). */
export type Label = string | CatalogText;

/**
 * Where the layers below the Node-RED glue report what people should know outside of an error (Redis
 * lost, stored jobs unreadable): they give catalog texts, and the glue passes a log that translates them.
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

/** The en-US template of a key, or undefined for a key the catalogs lack. */
type EnglishCatalog = (key: string) => string | undefined;

let englishCatalog: EnglishCatalog = () => undefined;

/** Called by the Node-RED glue, which reads the en-US catalogs: until then a text is written as its key. */
export function useEnglishCatalog(catalog: EnglishCatalog): void {
  englishCatalog = catalog;
}

/** A catalog text in English (its key where the en-US catalogs have no such key). */
export function english(text: CatalogText | string): string {
  if (typeof text === 'string') return text;
  return fill(englishCatalog(text.key) ?? text.key, stringParams(text.params, english));
}

/** The parameters as text, nested catalog texts rendered by `render`. */
export function stringParams(params: TextParams | undefined, render: (text: CatalogText) => string): Record<string, string> {
  // A loop rather than Object.entries/fromEntries: this runs for every status of every message.
  const strings: Record<string, string> = {};
  for (const name in params) {
    const value = params[name];
    strings[name] = Array.isArray(value) ? value.map(render).join('; ') : isCatalogText(value) ? render(value) : String(value);
  }
  return strings;
}

/** A `__name__` placeholder of a catalog template, the name captured. */
export const PLACEHOLDER = /__(\w+?)__/g;

/** Fills `__name__` placeholders, as Node-RED's i18next does. */
export function fill(template: string, params: Record<string, string>): string {
  return fillParts(templateParts(template), params);
}

/** A template split at its placeholders: text, name, text, …, text (names at odd indices). */
export function templateParts(template: string): string[] {
  return template.split(PLACEHOLDER);
}

/** `fill` for a template split once by `templateParts`: joins its parts, without a search per text. */
export function fillParts(parts: readonly string[], params: Record<string, string>): string {
  let text = parts[0];
  for (let i = 1; i < parts.length; i += 2) text += (params[parts[i]] ?? `__${parts[i]}__`) + parts[i + 1];
  return text;
}
