import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { BuildOptions, build } from 'esbuild';
import type { Default, EditorDefinition, Validator } from '../nodes/lib/node-red/editor-definition';

/**
 * Writes the .html Node-RED loads for a node from its editor definition (`nodes/<type>/editor.ts`,
 * type-checked by tsconfig.editor.json) and its migrations (`nodes/<type>/migrations.ts`):
 *
 * - one script bundled by esbuild from both, with what they import, so that the editor runs the
 *   definition's functions as written (closures, module constants) and migrates with the very code
 *   the runtime runs;
 * - the `RED.nodes.registerType` call as an object literal whose `defaults` (the `version` default
 *   is the migrations' version), `credentials`, `icon`, `color`, `inputs` and `outputs` are literals,
 *   where the Flow Library and the scorecard (node-red-dev) read them statically; its functions are
 *   the bundle's (`bundle.editor.label`) or the shared editor code's (`SvcEditor.labelStyle`, nodes/lib/editor/).
 *
 * The build reads the literals from the same bundle, run once in an empty context: an editor
 * definition's top level is data, its functions run only on the editor page.
 */

// The editor side's types (EditorNode, SvcRow, SvcForm) do not exist in Node: here a function is a function.
type Definition = EditorDefinition<unknown, unknown, unknown>;

/** What a node's bundle exports (the script's variable `bundle`). */
interface Bundle {
  editor: Definition;
  migrations: { version: number };
}

const MODULE = '@svc/node-red-location';
const INDENT = '    ';
/** The language level of the editor's scripts: Node-RED 4.1 and 5 support current browsers only. */
export const BROWSER_TARGET = 'es2020';
/** How every editor script is bundled: one self-contained script for the editor page. */
const EDITOR_SCRIPT: BuildOptions = {
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: BROWSER_TARGET,
  charset: 'utf8',
  legalComments: 'none',
};

/** The bundle of `<nodeDir>/editor.ts` and `<nodeDir>/migrations.ts`: a script that assigns their exports to `var bundle`. */
export async function editorBundle(nodeDir: string): Promise<string> {
  const result = await build({
    stdin: {
      contents: "export { default as editor } from './editor';\nexport { migrations } from './migrations';\n",
      resolveDir: nodeDir,
      sourcefile: 'editor-entry.ts',
      loader: 'ts',
    },
    ...EDITOR_SCRIPT,
    write: false,
    globalName: 'bundle',
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

/**
 * resources/editor.js, which every node's .html loads first: the shared editor code (nodes/lib/editor/)
 * bundled into one script, since Node-RED serves a module's editor files from its resources/ folder.
 */
export async function writeEditorScript(repoRoot: string): Promise<void> {
  await build({
    entryPoints: [path.join(repoRoot, 'nodes', 'lib', 'editor', 'index.ts')],
    outfile: path.join(repoRoot, 'resources', 'editor.js'),
    ...EDITOR_SCRIPT,
    logLevel: 'warning',
  });
}

/** The bundle's exports, for the literals of the registerType call. */
function exportsOf(script: string): Bundle {
  return vm.runInNewContext(`${script}\nbundle;`, {}) as Bundle;
}

function literal(value: unknown): string {
  return typeof value === 'string' ? `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : JSON.stringify(value);
}

function key(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : literal(name);
}

function member(object: string, name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? `${object}.${name}` : `${object}[${literal(name)}]`;
}

function validatorCode(validator: Validator): string {
  if (typeof validator === 'object') {
    return 'typedInput' in validator
      ? `RED.validators.typedInput(${literal(validator.typedInput)})`
      : `RED.validators.regex(new RegExp(${literal(validator.regex)}))`;
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
  if (definition.validators?.[name]) members.push(`validate: ${member('bundle.editor.validators', name)}`);
  else if (property.validate !== undefined) members.push(`validate: ${validatorCode(property.validate)}`);
  return `{ ${members.join(', ')} }`;
}

/** Lines of an object literal's members, indented by `depth` levels. */
function objectLines(members: Array<[string, string]>, depth: number): string {
  const pad = INDENT.repeat(depth);
  return `{\n${members.map(([name, code]) => `${pad}${INDENT}${key(name)}: ${code}`).join(',\n')}\n${pad}}`;
}

/** The .html of node `type` from its bundle (editorBundle). */
export function editorHtml(type: string, script: string): string {
  const { editor: definition, migrations } = exportsOf(script);
  const config = definition.category === 'config';
  const hasRow = (name: string) => definition.rows.includes(name);
  const unknownValidators = Object.keys(definition.validators ?? {}).filter((name) => !(name in definition.defaults));
  if (unknownValidators.length > 0) throw new Error(`${type}: validators for properties without a default: ${unknownValidators.join(', ')}`);
  const defaults: Array<[string, string]> = [
    ['version', `{ value: ${migrations.version} }`],
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
  if (definition.label) members.push(['label', 'bundle.editor.label']);
  else if (definition.paletteLabel !== undefined) members.push(['label', `SvcEditor.nameOr(${literal(definition.paletteLabel)})`]);
  if (!config) members.push(['labelStyle', 'SvcEditor.labelStyle']);
  // The platform row, or svc-webhook-in's optional config row of the same property: a new node takes the only svc-config.
  const serverRow =
    hasRow('server') || definition.rows.some((row) => typeof row === 'object' && row !== null && (row as { config?: unknown }).config === 'server');
  if (serverRow) members.push(['onadd', 'SvcEditor.pickOnlyConfig']);
  const prepare = definition.prepare ? `\n${INDENT.repeat(3)}bundle.editor.prepare.call(this, form);` : '';
  members.push(['oneditprepare', `function () {\n${INDENT.repeat(3)}form.prepare(this);${prepare}\n${INDENT.repeat(2)}}`]);
  if (hasRow('mapOutput')) members.push(['oneditsave', 'form.save']);
  const options = config ? '{ config: true, migrations: bundle.migrations }' : '{ migrations: bundle.migrations }';
  return [
    `<!-- Written by the build from nodes/${type}/editor.ts, defaults.ts and migrations.ts: edit those. -->`,
    `<script type="text/javascript" src="resources/${MODULE}/editor.js"></script>`,
    '<script type="text/javascript">',
    '(function () {',
    `${INDENT}// nodes/${type}/editor.ts and migrations.ts, bundled.`,
    script
      .trimEnd()
      .split('\n')
      .map((line) => (line === '' ? line : INDENT + line))
      .join('\n'),
    `${INDENT}var form = SvcEditor.form(${literal(type)}, bundle.editor.rows, ${options});`,
    '',
    `${INDENT}RED.nodes.registerType(${literal(type)}, ${objectLines(members, 1)});`,
    '})();',
    '</script>',
    '',
  ].join('\n');
}

/** Writes `<distNodes>/<type>/<type>.html` for node `type`, from its sources in `<sourceNodes>/<type>/`. */
export async function writeEditorHtml(type: string, sourceNodes: string, distNodes: string): Promise<void> {
  const html = editorHtml(type, await editorBundle(path.join(sourceNodes, type)));
  fs.writeFileSync(path.join(distNodes, type, `${type}.html`), html);
}
