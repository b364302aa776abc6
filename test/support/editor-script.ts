import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { NODES_DIR, REPO_ROOT } from './paths';

/**
 * The editor scripts of the pack (resources/editor.js and a node's .html, as the build writes them) run
 * outside a browser, for unit specs: with a stand-in for jQuery that holds a dialog's input values by
 * property name (widgets and events do nothing) and keeps the dialog templates the scripts write, and a
 * stand-in for Node-RED's RED that keeps the definitions. The browser suite runs the same scripts in the
 * real editor.
 */

type Validator = (this: Record<string, unknown>, value: unknown, opt?: unknown) => boolean | string;

/** What resources/editor.js offers (window.SvcEditor), as far as the specs use it. */
export interface SvcEditor {
  form(type: string, rows: unknown[], options: { config?: boolean; migrations: SvcMigrations }): EditorForm;
  validate: Record<'positive' | 'positiveOrEmpty' | 'wholeNumber' | 'memberPath' | 'pollInterval', Validator>;
}

export interface EditorForm {
  type: string;
  /** Every catalog key the dialog asks for, with its type (`svc-isoline.label.origins`) or namespace. */
  keys: string[];
  /** oneditprepare: `node` is the node as the editor holds it (its settings, its type and its catalog's `_`). */
  prepare(node: Record<string, unknown> & { type: string; _: (key: string) => string }): void;
}

/** A node's settings migrations as its .html ships them (nodes/<type>/migrations.ts). */
export interface SvcMigrations {
  migrate<T extends { type: string }>(settings: T): T;
  version: number;
}

export interface EditorDefinition {
  defaults: Record<string, { value?: unknown; validate?: Validator }>;
}

export interface EditorScripts {
  SvcEditor: SvcEditor;
  /** The settings migrations each node's .html gave its form, by node type. */
  migrations: Map<string, SvcMigrations>;
  /** The dialog forms written while the scripts ran, by node type. */
  forms: Map<string, EditorForm>;
  /** The dialog templates written, by node type. */
  templates: Map<string, string>;
  /** The node definitions registered, by node type. */
  definitions: Map<string, EditorDefinition>;
}

const ELEMENT_ID = /^#node-(?:config-)?input-/;

/**
 * Runs resources/editor.js, then the editor scripts of `types` (the <script> blocks without src of their built .html).
 * `fields` holds the dialog's input values by property name; the scripts read and write it.
 */
export function runEditorScripts(types: string[] = [], fields: Record<string, string> = {}): EditorScripts {
  const templates = new Map<string, string>();
  const forms = new Map<string, EditorForm>();
  const definitions: EditorScripts['definitions'] = new Map();
  const migrations = new Map<string, SvcMigrations>();
  const $ = (selector: string) => {
    if (!ELEMENT_ID.test(selector)) {
      // The one element the scripts make: a dialog template, `$('<script>').attr({...}).text(markup).appendTo('body')`.
      let name = '';
      const element = {
        attr: (attributes: Record<string, string>) => ((name = attributes['data-template-name']), element),
        text: (markup: string) => (templates.set(name, markup), element),
        appendTo: () => element,
      };
      return element;
    }
    const id = selector.replace(ELEMENT_ID, '');
    const input = {
      length: 1,
      val: (value?: string) => (value === undefined ? (fields[id] ?? '') : ((fields[id] = value), input)),
      // No input here is a checkbox, a TypedInput or a spinner: their widgets and events do nothing.
      is: () => false,
      data: () => undefined,
      closest: () => input,
      find: () => input,
      toggle: () => input,
      on: () => input,
      spinner: () => input,
      typedInput: () => input,
    };
    return input;
  };
  const accept = () => () => true;
  const RED = {
    // Node-RED responds with the text; the key, without its catalog's namespace, says which text.
    _: (key: string) => key.replace(/^[^:]*:/, ''),
    validators: { typedInput: accept, number: accept, regex: (re: RegExp) => (v: unknown) => re.test(String(v)) },
    nodes: {
      registerType: (type: string, definition: EditorDefinition) => definitions.set(type, definition),
      // An empty workspace: validators that compare with other nodes find none.
      eachNode: () => undefined,
    },
  };
  const window: { SvcEditor?: SvcEditor } = {};
  const context = vm.createContext({ window, $, RED });
  // Each node's .html loads it first.
  vm.runInContext(fs.readFileSync(path.join(REPO_ROOT, 'resources', 'editor.js'), 'utf8'), context);
  const SvcEditor = window.SvcEditor;
  if (!SvcEditor) throw new Error('resources/editor.js defined no window.SvcEditor');
  const writeForm = SvcEditor.form.bind(SvcEditor);
  SvcEditor.form = (type, rows, options) => {
    const form = writeForm(type, rows, options);
    forms.set(type, form);
    migrations.set(type, options.migrations);
    return form;
  };
  (context as { SvcEditor?: SvcEditor }).SvcEditor = SvcEditor;
  for (const type of types) {
    const html = fs.readFileSync(path.join(NODES_DIR, type, `${type}.html`), 'utf8');
    for (const [, code] of html.matchAll(/<script type="text\/javascript">([\s\S]*?)<\/script>/g)) vm.runInContext(code, context);
  }
  return { SvcEditor, migrations, forms, templates, definitions };
}
