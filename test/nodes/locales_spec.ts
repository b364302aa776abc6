import fs from 'node:fs';
import path from 'node:path';
import should from 'should';
import ts from 'typescript';
import { nodeFolders, PARTIALS_FOLDER } from '../../build/copy-assets';
import { runEditorScripts } from '../support/editor-script';
import { NODES_DIR, REPO_ROOT, SOURCE_NODES_DIR } from '../support/paths';

/**
 * The editor's message catalogs and help in every language the pack ships: the same keys in each,
 * every key the editor asks for present, no key left unused, and help pages of the same shape
 * in Node-RED's help style.
 */

const LANGUAGES = ['en-US', 'ja'] as const;
type Language = (typeof LANGUAGES)[number];

/** The h3 headings of a help page, as Node-RED's core help names them in each language. */
const HELP_SECTIONS: Record<'node' | 'config', Record<Language, string[]>> = {
  node: { 'en-US': ['Inputs', 'Outputs', 'Details', 'References'], ja: ['入力', '出力', '詳細', '参考'] },
  config: { 'en-US': ['Properties', 'Details', 'References'], ja: ['プロパティ', '詳細', '参考'] },
};

/** Every node type: a folder `nodes/<type>/` holding its runtime `<type>.ts`. */
const nodeTypes = nodeFolders(SOURCE_NODES_DIR);

type Catalog = { [key: string]: string | Catalog };

/** Every leaf key of a catalog, dotted (`svc-geocode.label.server`). */
function flatKeys(catalog: Catalog, prefix = ''): string[] {
  return Object.entries(catalog).flatMap(([key, value]) => (typeof value === 'string' ? [`${prefix}${key}`] : flatKeys(value, `${prefix}${key}.`)));
}

function catalogKeys(type: string, language: Language): string[] {
  const file = path.join(SOURCE_NODES_DIR, type, 'locales', language, `${type}.json`);
  return flatKeys(JSON.parse(fs.readFileSync(file, 'utf8')) as Catalog).sort();
}

/** The partials a help page takes (`{{> name}}`) or frames its lines with (`{{#> name}}`), in order. */
function includedPartials(page: string): string[] {
  return [...page.matchAll(/\{\{#?> ([\w-]+)\}\}/g)].map((match) => match[1]);
}

/** The dialogs the editor scripts write from their tables of rows (nodes/lib/editor/). */
const EDITOR_FORMS = runEditorScripts(nodeTypes).forms;

interface EditorKeys {
  /** Keys asked for literally: data-i18n attributes, node._('...') calls and the rows of the node's dialog form. */
  keys: string[];
  /** Prefixes of keys built at run time: node._('svc-topic.operation.' + op). */
  prefixes: string[];
}

/** The catalog keys the editor file of a node type uses. */
function editorKeys(type: string): EditorKeys {
  // The .html as the build writes it from the node's editor definition (a string's escaped quotes unescaped).
  const html = fs.readFileSync(path.join(NODES_DIR, type, `${type}.html`), 'utf8').replace(/\\"/g, '"');
  const keys = new Set<string>();
  const prefixes = new Set<string>();
  for (const [, attribute] of html.matchAll(/data-i18n="([^"]*)"/g)) {
    // `[placeholder]key;other` sets several attributes; `ns:key` names another namespace.
    for (const part of attribute.split(';')) {
      const key = part.replace(/^\[[^\]]*\]/, '').trim();
      if (key !== '' && !key.includes(':')) keys.add(key);
    }
  }
  // The bundle writes strings in double quotes, the rest of the page in single quotes.
  for (const [, , key, concatenated] of html.matchAll(/\._\(\s*(['"])([^'"]+)\1\s*(\+)?/g)) {
    (concatenated ? prefixes : keys).add(key);
  }
  for (const key of sharedEditorKeys(type)) (key.endsWith('.') ? prefixes : keys).add(key);
  for (const key of EDITOR_FORMS.get(type)?.keys ?? []) if (!key.includes(':')) keys.add(key);
  const runtime = RUNTIME_TEXTS.get(type);
  for (const key of runtime?.keys ?? []) keys.add(key);
  for (const prefix of runtime?.prefixes ?? []) prefixes.add(prefix);
  return { keys: [...keys].sort(), prefixes: [...prefixes].sort() };
}

/**
 * Where runtime texts (statuses, warnings, errors) live: a text only one node uses (its node file, or
 * modules of lib/ that only that node imports) in that node's catalog, section `runtime`; any other in
 * svc-config's catalog, section `common` (node-red/i18n.ts finds each key in the catalog that holds it).
 */
const COMMON_CATALOG = 'svc-config';
const RUNTIME_SECTIONS = ['runtime', 'common'];
/**
 * Runtime keys as the code writes them: the first argument of every catalogText(…) call, whatever
 * its section (so a mistyped key is caught), and keys of the catalogs' sections written elsewhere.
 */
const RUNTIME_KEYS = [/\bcatalogText\(\s*['`]([\w.]+)(\$\{)?/g, /['`]((?:error|status|warn|log|label|value|config|setting|source)\.[\w.]*)(\$\{)?/g];
/** An import that loads a module of ours (a type-only import loads nothing). */
const IMPORT = /^\s*(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s+'(\.[^']+)'/gm;

/** The code of a TypeScript source without its comments: a key a comment names is not used by the code. */
function withoutComments(text: string): string {
  const comments: ts.CommentRange[] = [];
  const visit = (node: ts.Node): void => {
    comments.push(...(ts.getLeadingCommentRanges(text, node.pos) ?? []), ...(ts.getTrailingCommentRanges(text, node.end) ?? []));
    ts.forEachChild(node, visit);
  };
  const source = ts.createSourceFile('source.ts', text, ts.ScriptTarget.ESNext);
  visit(source);
  visit(source.endOfFileToken);
  let code = text;
  for (const { pos, end } of comments) code = code.slice(0, pos) + ' '.repeat(end - pos) + code.slice(end);
  return code;
}

/** The TypeScript sources of the nodes and their lib, by path below nodes/ (`lib/geo/locations.ts`). */
function nodeSources(): Array<{ file: string; text: string }> {
  return (
    (fs.readdirSync(SOURCE_NODES_DIR, { recursive: true }) as string[])
      // The editor code runs on the editor page: its keys are the built .html's and the shared editor code's (editorKeys).
      .filter((file) => file.endsWith('.ts') && path.basename(file) !== 'editor.ts' && !file.startsWith(path.join('lib', 'editor')))
      .map((file) => ({ file, text: fs.readFileSync(path.join(SOURCE_NODES_DIR, file), 'utf8') }))
  );
}

/** For each source file, the node types whose node file loads it, itself or through other modules. */
function nodesLoading(sources: Array<{ file: string; text: string }>): Map<string, Set<string>> {
  const imports = new Map(sources.map(({ file, text }) => [file, [...text.matchAll(IMPORT)].map((match) => path.join(path.dirname(file), `${match[1]}.ts`))]));
  const loading = new Map<string, Set<string>>();
  for (const type of nodeTypes) {
    const pending = [path.join(type, `${type}.ts`)];
    const seen = new Set<string>();
    for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
      if (seen.has(file)) continue;
      seen.add(file);
      loading.set(file, (loading.get(file) ?? new Set()).add(type));
      pending.push(...(imports.get(file) ?? []));
    }
  }
  return loading;
}

/** The runtime keys (leaf paths below `runtime.`/`common.`) the en-US catalogs hold, all catalogs together. */
function catalogRuntimeKeys(): string[] {
  return nodeTypes.flatMap((type) => {
    const catalog = JSON.parse(fs.readFileSync(path.join(SOURCE_NODES_DIR, type, 'locales', 'en-US', `${type}.json`), 'utf8')) as Catalog;
    return RUNTIME_SECTIONS.flatMap((section) => (typeof catalog[section] === 'object' ? flatKeys(catalog[section]) : []));
  });
}

/** The runtime keys each catalog must hold, with their section (`runtime.error.geocode.address`), and prefixes of keys completed at run time. */
function runtimeTexts(): Map<string, EditorKeys> {
  const sources = nodeSources();
  const loading = nodesLoading(sources);
  const available = catalogRuntimeKeys();
  const usedBy = new Map<string, Set<string>>();
  const prefixUsedBy = new Map<string, Set<string>>();
  const use = (uses: Map<string, Set<string>>, key: string, file: string) => uses.set(key, (uses.get(key) ?? new Set()).add(file));
  for (const { file, text } of sources) {
    const code = withoutComments(text);
    for (const [, key, interpolated] of RUNTIME_KEYS.flatMap((pattern) => [...code.matchAll(pattern)])) {
      if (interpolated) use(prefixUsedBy, key, file);
      else if (!key.endsWith('.')) use(usedBy, key, file);
    }
  }
  // A key built at run time (`setting.${name}`) is used wherever its prefix is.
  for (const [prefix, files] of prefixUsedBy)
    for (const key of available.filter((candidate) => candidate.startsWith(prefix))) for (const file of files) use(usedBy, key, file);
  const home = (files: Set<string>): [string, string] => {
    const nodes = new Set([...files].flatMap((file) => [...(loading.get(file) ?? [])]));
    return nodes.size === 1 ? [[...nodes][0], 'runtime'] : [COMMON_CATALOG, 'common'];
  };
  const texts = new Map<string, EditorKeys>(nodeTypes.map((type) => [type, { keys: [], prefixes: [] }]));
  for (const [key, files] of usedBy) {
    const [catalog, section] = home(files);
    texts.get(catalog)?.keys.push(`${section}.${key}`);
  }
  for (const [prefix, files] of prefixUsedBy) {
    const [catalog, section] = home(files);
    texts.get(catalog)?.prefixes.push(`${section}.${prefix}`);
  }
  return texts;
}

const RUNTIME_TEXTS = runtimeTexts();

/**
 * Calls that give people a text written in the code instead of a catalog message: an error, a status,
 * a warning or a log line with a string literal (`new InputError('…')`, `node.warn(\`…\`)`).
 */
const LITERAL_TEXT =
  /(?:\bnew (?:InputError|ConfigError)\(|\bnew (?:SvcError|PlatformError)\(\s*'[A-Z_]+',|\bnew CsvError\(|\.(?:warn|log|error|info|done|warning)\()\s*['`]/g;

const EDITOR_DIR = path.join(REPO_ROOT, 'nodes', 'lib', 'editor');
const PACKAGE_NAME = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string }).name;

/**
 * Keys of a node type's catalog that the shared editor code (nodes/lib/editor/) names with the catalog's
 * namespace, `'<package>/<type>:<key>'` (a key ending in `.` is a prefix completed at run time).
 */
function sharedEditorKeys(type: string): string[] {
  const files = fs.readdirSync(EDITOR_DIR).filter((file) => file.endsWith('.ts'));
  const namespace = `'${PACKAGE_NAME}/${type}:`;
  return files.flatMap((file) =>
    fs
      .readFileSync(path.join(EDITOR_DIR, file), 'utf8')
      .split(namespace)
      .slice(1)
      .map((rest) => rest.slice(0, rest.indexOf("'"))),
  );
}

interface HelpShape {
  helpName: string | undefined;
  h3: string[];
  h4Count: number;
  dtCount: number;
  startsWithParagraph: boolean;
  /** Sentences of the first paragraph, the palette tooltip. */
  tooltipSentences: number;
}

/** Sentences in a plain text: each ends with a full stop (a Japanese 。, or a `.` before the next capital). */
function sentenceCount(text: string, language: Language): number {
  const endings = language === 'ja' ? text.match(/。/g) : text.match(/[.!?](\s+[A-Z]|\s*$)/g);
  return endings?.length ?? 0;
}

/** The shape of a help page as Node-RED serves it: built, its shared sections included. */
function helpShape(type: string, language: Language): HelpShape {
  const html = fs.readFileSync(path.join(NODES_DIR, type, 'locales', language, `${type}.html`), 'utf8');
  const body = html.replace(/^[\s\S]*?<script[^>]*>/, '').trim();
  return {
    helpName: /<script type="text\/html" data-help-name="([^"]+)">/.exec(html)?.[1],
    h3: [...html.matchAll(/<h3>([^<]*)<\/h3>/g)].map((match) => match[1].trim()),
    h4Count: (html.match(/<h4>/g) ?? []).length,
    dtCount: (html.match(/<dt[\s>]/g) ?? []).length,
    startsWithParagraph: body.startsWith('<p>'),
    tooltipSentences: sentenceCount((/<p>([\s\S]*?)<\/p>/.exec(body)?.[1] ?? '').replace(/<[^>]*>/g, '').trim(), language),
  };
}

describe('message catalogs and help', function () {
  it('has no runtime text written in the code: errors, statuses, warnings and log lines are catalog messages', function () {
    const literals = nodeSources().flatMap(({ file, text }) =>
      [...text.matchAll(LITERAL_TEXT)].map((match) => `${file}: ${text.slice(match.index, match.index + 60)}`),
    );
    should(literals).deepEqual([]);
  });

  it('writes each shared help section once: every partial in both languages, included by two pages or more, none left in the build', function () {
    const partials = (language: Language) =>
      fs
        .readdirSync(path.join(SOURCE_NODES_DIR, 'locales', language, PARTIALS_FOLDER))
        .map((file) => path.basename(file, '.html'))
        .sort();
    should(partials('ja')).deepEqual(partials('en-US'));
    const sourcePage = (type: string, language: Language) => fs.readFileSync(path.join(SOURCE_NODES_DIR, type, 'locales', language, `${type}.html`), 'utf8');
    for (const type of nodeTypes) should(includedPartials(sourcePage(type, 'ja'))).deepEqual(includedPartials(sourcePage(type, 'en-US')), type);
    const uses = nodeTypes.flatMap((type) => includedPartials(sourcePage(type, 'en-US')));
    for (const partial of partials('en-US')) should(uses.filter((use) => use === partial).length).be.above(1, `${partial} is shared`);
    for (const language of LANGUAGES) {
      should(fs.existsSync(path.join(NODES_DIR, 'locales'))).be.false();
      for (const type of nodeTypes) should(fs.existsSync(path.join(NODES_DIR, type, 'locales', language, PARTIALS_FOLDER))).be.false();
      for (const type of nodeTypes) should(fs.readFileSync(path.join(NODES_DIR, type, 'locales', language, `${type}.html`), 'utf8')).not.match(/\{\{/);
    }
  });

  it('covers every node type that package.json registers', function () {
    const packageJson = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { 'node-red': { nodes: Record<string, string> } };
    should(nodeTypes).deepEqual(Object.keys(packageJson['node-red'].nodes).sort());
  });

  for (const type of nodeTypes) {
    describe(type, function () {
      it('has the same catalog keys in en-US and ja', function () {
        should(catalogKeys(type, 'ja')).deepEqual(catalogKeys(type, 'en-US'));
      });

      for (const language of LANGUAGES) {
        it(`has every key the editor and the runtime use in ${language}, each runtime text in its catalog, and no unused key`, function () {
          const available = catalogKeys(type, language);
          const { keys, prefixes } = editorKeys(type);
          should(keys.filter((key) => !available.includes(key))).deepEqual([], `missing from ${language}/${type}.json`);
          for (const prefix of prefixes) {
            should(available.some((key) => key.startsWith(prefix))).be.true(`no ${prefix}* keys in ${language}/${type}.json`);
          }
          const unused = available.filter((key) => !keys.includes(key) && !prefixes.some((prefix) => key.startsWith(prefix)));
          should(unused).deepEqual([], `unused in ${language}/${type}.json`);
        });
      }

      it('has help of the same shape in en-US and ja, in Node-RED help style', function () {
        const sections = type === 'svc-config' ? HELP_SECTIONS.config : HELP_SECTIONS.node;
        const english = helpShape(type, 'en-US');
        const japanese = helpShape(type, 'ja');
        for (const [language, shape] of [
          ['en-US', english],
          ['ja', japanese],
        ] as const) {
          should(shape.helpName).equal(type, `${language} data-help-name`);
          should(shape.h3).deepEqual(sections[language], `${language} h3 headings`);
          should(shape.startsWithParagraph).be.true(`${language} help must start with the tooltip paragraph`);
          should(shape.tooltipSentences).equal(1, `${language} tooltip: one sentence`);
        }
        should(japanese.h4Count).equal(english.h4Count, 'h4 subsections');
        should(japanese.dtCount).equal(english.dtCount, 'documented properties (dt)');
      });
    });
  }
});
