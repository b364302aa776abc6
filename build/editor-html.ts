import fs from 'node:fs';
import path from 'node:path';
import * as prettier from 'prettier';
import ts from 'typescript';
import type { Default, EditorDefinition, Validator } from '../nodes/lib/node-red/editor-definition';

/**
 * Writes the .html Node-RED loads for a node from its editor definition (`nodes/<type>/editor.ts`,
 * type-checked by `npm run lint` through tsconfig.editor.json) and its migrations
 * (`nodes/<type>/migrations.ts`, compiled by tsc for the runtime):
 *
 * - the defaults inline in `RED.nodes.registerType`, as object literals with each named validator
 *   written as code, where the Flow Library and the scorecard (node-red-dev) read them statically;
 *   the `version` default is the node's migrations' version;
 * - the dialog's rows as data for `SvcEditor.form` (resources/editor.js, the shared dialog code);
 * - the node's own functions (label, validators, prepare) by their source;
 * - the compiled migrations table with the modules it imports, so the editor migrates with the very
 *   code the runtime runs.
 *
 * The editor definition is compiled here, without type-checking (lint and the build's
 * `tsc -p tsconfig.editor.json` check it), and its relative imports are the compiled modules in dist.
 * The script is laid out by Prettier, in the style of resources/editor.js, so that the pieces
 * written out as they come (the compiled modules, the functions as the compiler printed them) read
 * as one consistently indented script.
 */

// The editor side's types (EditorNode, SvcRow, SvcForm) do not exist in Node: here a function is a function.
type Definition = EditorDefinition<unknown, unknown, unknown>;

const MODULE = '@svc/node-red-location';
const INDENT = '    ';
/** The layout of the editor's script: resources/editor.js's (.prettierrc), which runs in the same page. */
const SCRIPT_STYLE: prettier.Options = { parser: 'babel', singleQuote: true, printWidth: 160, tabWidth: 4, trailingComma: 'none' };

/** A compiled CommonJS module's relative requires. */
const REQUIRE = /\brequire\("([^"]+)"\)/g;

/** The node's editor definition, run from its TypeScript with its relative imports from dist. */
function loadDefinition(sourceFile: string, compiledDir: string): Definition {
  const output = ts.transpileModule(fs.readFileSync(sourceFile, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2020, esModuleInterop: true },
    fileName: sourceFile,
  }).outputText;
  const exports: { default?: Definition } = {};
  const load = (specifier: string): unknown => {
    if (!specifier.startsWith('.')) throw new Error(`${sourceFile} imports ${specifier}: an editor definition imports only modules of the pack`);
    // The compiled modules of the pack, loaded by their path at build time.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(path.resolve(compiledDir, specifier));
  };
  // The definition's compiled code, run once to read its data and its functions' sources.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const run = new Function('exports', 'require', output) as (exports: object, load: (specifier: string) => unknown) => void;
  run(exports, load);
  if (!exports.default) throw new Error(`${sourceFile} has no default export (its editor definition)`);
  return exports.default;
}

/**
 * The compiled module `entry` (below `root`) and every module it requires, as one script whose value
 * is the entry's exports. They may require only each other (relative paths).
 */
export function bundle(root: string, entry: string): string {
  const modules = new Map<string, string>();
  const pending = [entry];
  for (let id = pending.pop(); id !== undefined; id = pending.pop()) {
    if (modules.has(id)) continue;
    const code = fs.readFileSync(path.join(root, id), 'utf8');
    modules.set(id, code);
    for (const [, specifier] of code.matchAll(REQUIRE)) {
      if (!specifier.startsWith('.')) throw new Error(`${id} requires ${specifier}: a module shipped to the editor requires only modules of the pack`);
      pending.push(path.posix.join(path.posix.dirname(id), `${specifier}.js`));
    }
  }
  const sources = [...modules].map(([id, code]) => `${JSON.stringify(id)}: function (module, exports, require) {\n${code.trim()}\n}`);
  return [
    '(function () {',
    `var sources = {\n${sources.join(',\n')}\n};`,
    'var loaded = {};',
    'function load(id) {',
    '    if (!loaded[id]) {',
    '        var module = { exports: {} };',
    '        loaded[id] = module;',
    '        sources[id](module, module.exports, function (specifier) {',
    "            var parts = id.split('/').slice(0, -1);",
    "            specifier.split('/').forEach(function (part) {",
    "                if (part === '..') parts.pop();",
    "                else if (part !== '.') parts.push(part);",
    '            });',
    "            return load(parts.join('/') + '.js');",
    '        });',
    '    }',
    '    return loaded[id].exports;',
    '}',
    `return load(${JSON.stringify(entry)});`,
    '})()',
  ].join('\n');
}

/** A function of the definition, written out as its source. */
function source(fn: (...args: never[]) => unknown, what: string): string {
  const text = fn.toString();
  if (!/^function\b/.test(text)) throw new Error(`${what} must be a function expression (function (...) {...}), not ${text.slice(0, 40)}...`);
  return text;
}

function literal(value: unknown): string {
  return typeof value === 'string' ? `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : JSON.stringify(value);
}

function key(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : literal(name);
}

function validatorCode(validator: Validator): string {
  if (typeof validator === 'object') {
    return 'typedInput' in validator ? `RED.validators.typedInput(${literal(validator.typedInput)})` : `RED.validators.regex(/${validator.regex}/)`;
  }
  switch (validator) {
    case 'number':
      return 'RED.validators.number()';
    case 'numberOrEmpty':
      return 'RED.validators.number(true)';
    case 'httpUrl':
      return 'SvcEditor.validate.httpUrl(true)';
    case 'httpUrlOrEmpty':
      return 'SvcEditor.validate.httpUrl(false)';
    default:
      return `SvcEditor.validate.${validator}`;
  }
}

/** A default as an object literal: value, required, type, validate (the node's own validator or the named one). */
function defaultCode(name: string, property: Default, definition: Definition): string {
  const members: string[] = [];
  if ('value' in property) members.push(`value: ${literal(property.value)}`);
  if (property.type !== undefined) members.push(`type: ${literal(property.type)}`);
  if (property.required !== undefined) members.push(`required: ${String(property.required)}`);
  const own = definition.validators?.[name];
  if (own) members.push(`validate: ${source(own, `validators.${name}`)}`);
  else if (property.validate !== undefined) members.push(`validate: ${validatorCode(property.validate)}`);
  return `{ ${members.join(', ')} }`;
}

/** Lines of an object literal's members, indented by `depth` levels. */
function objectLines(members: Array<[string, string]>, depth: number): string {
  const pad = INDENT.repeat(depth);
  return `{\n${members.map(([name, code]) => `${pad}${INDENT}${key(name)}: ${code}`).join(',\n')}\n${pad}}`;
}

/** The .html of node `type` from its definition and its compiled migrations (their version, and their bundle). */
export async function editorHtml(type: string, definition: Definition, migrations: { version: number; bundle: string }): Promise<string> {
  const config = definition.category === 'config';
  const hasRow = (name: string) => definition.rows.includes(name);
  const unknownValidators = Object.keys(definition.validators ?? {}).filter((name) => !(name in definition.defaults));
  if (unknownValidators.length > 0) throw new Error(`${type}: validators for properties without a default: ${unknownValidators.join(', ')}`);
  const version = `{ value: ${migrations.version} }`;
  const defaults: Array<[string, string]> = [
    ['version', version],
    ...Object.entries(definition.defaults).map(([name, property]): [string, string] => [name, defaultCode(name, property, definition)]),
  ];
  const members: Array<[string, string]> = [['category', literal(definition.category)]];
  if (definition.color !== undefined) members.push(['color', literal(definition.color)]);
  members.push(['defaults', objectLines(defaults, 2)]);
  if (definition.credentials)
    members.push([
      'credentials',
      objectLines(
        Object.entries(definition.credentials).map(([name, credential]) => [name, `{ type: ${literal(credential.type)} }`]),
        2,
      ),
    ]);
  if (definition.inputs !== undefined) members.push(['inputs', String(definition.inputs)]);
  if (definition.outputs !== undefined) members.push(['outputs', String(definition.outputs)]);
  if (hasRow('mapOutput')) members.push(['outputLabels', 'SvcEditor.outputLabels']);
  if (!config) members.push(['icon', literal(`${type}.svg`)]);
  if (definition.paletteLabel !== undefined) members.push(['paletteLabel', literal(definition.paletteLabel)]);
  if (definition.label) members.push(['label', source(definition.label, 'label')]);
  else if (definition.paletteLabel !== undefined) members.push(['label', `SvcEditor.nameOr(${literal(definition.paletteLabel)})`]);
  if (!config) members.push(['labelStyle', 'SvcEditor.labelStyle']);
  // The platform row, or svc-webhook-in's optional config row of the same property: a new node takes the only svc-config.
  const serverRow =
    hasRow('server') || definition.rows.some((row) => typeof row === 'object' && row !== null && (row as { config?: unknown }).config === 'server');
  if (serverRow) members.push(['onadd', 'SvcEditor.pickOnlyConfig']);
  const prepare = definition.prepare ? `\n${INDENT.repeat(3)}(${source(definition.prepare, 'prepare')}).call(this, form);` : '';
  members.push(['oneditprepare', `function () {\n${INDENT.repeat(3)}form.prepare(this);${prepare}\n${INDENT.repeat(2)}}`]);
  if (hasRow('mapOutput')) members.push(['oneditsave', 'form.save']);
  const options = config ? '{ config: true, migrations: migrations }' : '{ migrations: migrations }';
  const script = [
    '(function () {',
    `${INDENT}// The node's settings migrations, compiled from nodes/${type}/migrations.ts as the runtime runs them.`,
    `${INDENT}var migrations = ${migrations.bundle}.migrations;`,
    `${INDENT}var form = SvcEditor.form(${literal(type)}, ${JSON.stringify(definition.rows)}, ${options});`,
    '',
    `${INDENT}RED.nodes.registerType(${literal(type)}, ${objectLines(members, 1)});`,
    '})();',
  ].join('\n');
  return [
    `<!-- Written by the build from nodes/${type}/editor.ts, defaults.ts and migrations.ts: edit those. -->`,
    `<script type="text/javascript" src="resources/${MODULE}/editor.js"></script>`,
    '<script type="text/javascript">',
    indentedOnce((await prettier.format(script, SCRIPT_STYLE)).trimEnd()),
    '</script>',
    '',
  ].join('\n');
}

/** Every line of `code` one level in, inside its `<script>` tag; a line that starts inside a template literal stays as it is (its indentation is part of the string). */
function indentedOnce(code: string): string {
  const inTemplate = new Set<number>();
  const file = ts.createSourceFile('editor.js', code, ts.ScriptTarget.ES2020, true, ts.ScriptKind.JS);
  const visit = (node: ts.Node): void => {
    if (ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node)) {
      const first = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
      const last = file.getLineAndCharacterOfPosition(node.end).line;
      for (let line = first + 1; line <= last; line++) inTemplate.add(line);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return code
    .split('\n')
    .map((line, at) => (line === '' || inTemplate.has(at) ? line : INDENT + line))
    .join('\n');
}

/** Writes `<distNodes>/<type>/<type>.html` for node `type`, from its sources in `<sourceNodes>/<type>/`. */
export async function writeEditorHtml(type: string, sourceNodes: string, distNodes: string): Promise<void> {
  const definition = loadDefinition(path.join(sourceNodes, type, 'editor.ts'), path.join(distNodes, type));
  // The compiled table, loaded by its path at build time for its version.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const table = require(path.join(distNodes, type, 'migrations.js')) as { migrations: { version: number } };
  const html = await editorHtml(type, definition, { version: table.migrations.version, bundle: bundle(distNodes, `${type}/migrations.js`) });
  fs.writeFileSync(path.join(distNodes, type, `${type}.html`), html);
}
