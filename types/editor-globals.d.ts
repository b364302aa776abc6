/**
 * What the pack's editor code (nodes/lib/editor/ and nodes/<type>/editor.ts, checked by `tsc -p tsconfig.editor.json`) uses of the
 * page Node-RED's editor gives them: RED and the jQuery calls they make, typed as far as they use them
 * (Node-RED 4.1 and 5; @types/node-red__editor-client describes 1.3 and lacks most of these).
 */

/** A node in the editor: its settings by property name, and its catalog's `_`. */
interface EditorNode {
  id: string;
  type: string;
  /** The tab (workspace or subflow) the node is on. */
  z: string;
  /** Set while the node is disabled. */
  d?: boolean;
  name?: string;
  version?: unknown;
  _(key: string, substitutions?: Record<string, unknown>): string;
  [property: string]: unknown;
}

interface EditorTab {
  id: string;
  label?: string;
  name?: string;
}

interface EditorTabStrip {
  addTab(tab: { id: string; label: string }): void;
}

interface EditorRED {
  _(key: string, substitutions?: Record<string, unknown>): string;
  settings: { httpNodeRoot?: string };
  nodes: {
    eachNode(visit: (node: EditorNode) => boolean | void): void;
    eachConfig(visit: (node: EditorNode) => boolean | void): void;
    workspace(id: string): EditorTab | null | undefined;
    subflow(id: string): EditorTab | null | undefined;
  };
  utils: { getNodeLabel(node: EditorNode, fallback?: string): string };
  tabs: { create(options: { id: string; onchange(tab: { id: string }): void }): EditorTabStrip };
}

/** A TypedInput's choice: a type name, or a type with fixed options. */
type TypedInputOption = string | { value: string; label?: string };
/** A typedInput type; `valueLabel` writes what the closed field shows (for `multiple`: the chosen options). */
type TypedInputType =
  | string
  | {
      value: string;
      label: string;
      icon?: string;
      options: TypedInputOption[];
      multiple?: boolean;
      valueLabel?: (container: EditorQuery, chosen: TypedInputOption[]) => void;
    };

/** The jQuery calls of the editor scripts (jQuery, jQuery UI's spinner and Node-RED's typedInput widget). */
interface EditorQuery {
  length: number;
  val(): string | number | string[] | undefined;
  val(value: string | number): EditorQuery;
  is(selector: string): boolean;
  prop(name: 'checked', value: boolean): EditorQuery;
  attr(attributes: Record<string, string>): EditorQuery;
  text(text: string): EditorQuery;
  empty(): EditorQuery;
  css(property: string, value: string): EditorQuery;
  addClass(name: string): EditorQuery;
  appendTo(target: string | EditorQuery): EditorQuery;
  closest(selector: string): EditorQuery;
  find(selector: string): EditorQuery;
  children(): EditorQuery;
  toggle(show: boolean): EditorQuery;
  show(): EditorQuery;
  hide(): EditorQuery;
  on(event: string, handler: () => void): EditorQuery;
  data(key: string): unknown;
  spinner(options: { min?: number; max?: number; step?: number | 'any' }): EditorQuery;
  typedInput(options: { default: string; types: TypedInputType[]; typeField: string }): EditorQuery;
  typedInput(method: 'type' | 'value'): string;
}

declare const RED: EditorRED;
/** What a jQuery request returns (svc-config's Test connection). */
interface EditorRequest {
  done(handler: (response: SvcTestResponse) => void): EditorRequest;
  fail(handler: (xhr: { status: number; statusText: string }) => void): EditorRequest;
}

declare const $: {
  (selector: string): EditorQuery;
  ajax(options: { url: string; type: string; contentType: string; data: string }): EditorRequest;
};

/** The fixed choices of a TypedInput row (`fixed`, nodes/lib/editor/typed-input.ts), shown before the sources. */
interface SvcFixedChoice {
  value: string;
  /** A key of the node's catalog. */
  label: string;
  options: string[];
  /** Keys of the node's catalog, one per option. */
  optionLabels?: string[];
  multiple?: boolean;
}

/** A row of a dialog's table (its kinds are listed in nodes/lib/editor/rows.ts). */
interface SvcRow {
  typed?: string;
  types?: string[];
  fixed?: string[] | SvcFixedChoice;
  multiple?: boolean;
  text?: string;
  password?: string;
  config?: string;
  spinner?: string;
  number?: string;
  min?: number;
  max?: number;
  step?: number | 'any';
  select?: string;
  options?: string[];
  checkbox?: string;
  caption?: string;
  tip?: string;
  warning?: boolean;
  hidden?: string;
  html?: string;
  /** Starts a tab of the dialog: the rows after it, up to the next tab, are on it (label `tabs.<name>`). */
  tab?: string;
  /** The poll rows of the job nodes; `units`: the catalog keys of their units. */
  poll?: boolean;
  units?: [string, string];
  icon?: string;
  label?: string;
  placeholder?: string;
  example?: string;
  unit?: string;
  when?: Record<string, unknown[]>;
}

/** A dialog written by `SvcEditor.form`. */
interface SvcForm {
  type: string;
  rows: SvcRow[];
  /** Every catalog key the dialog uses. */
  keys: string[];
  /** The names of the dialog's tabs, in order (none: one page of rows). */
  tabs: string[];
  /** The id of the input that edits `field`. */
  id(field: string): string;
  /** For oneditprepare. */
  prepare(node: EditorNode): void;
  /** For oneditsave. */
  save(): void;
}

/** A validator of a node's defaults: `this` is the node; with `opt`, a text says what is wrong. */
type SvcValidator = (this: EditorNode, value: unknown, opt?: unknown) => boolean | string;

/** The pack's shared editor code (nodes/lib/editor/, bundled into resources/editor.js). */
interface Window {
  SvcEditor?: unknown;
}

/** A node's settings migrations (nodes/<type>/migrations.ts), shipped into its .html by the build. */
type SvcMigrations = import('../nodes/lib/node-red/migrations').Migrations;

/** What the editor definitions' functions (nodes/<type>/editor.ts) use of window.SvcEditor (nodes/lib/editor/). */
declare const SvcEditor: {
  validate: {
    positive(value: unknown): boolean;
    /** A validator that applies `test` while the property's type (in `typeProperty`) is one of `types`. */
    typedAs(typeProperty: string, types: string[], test: (value: unknown) => boolean): SvcValidator;
  };
};

/** What svc-config's Test connection receives (nodes/lib/node-red/test-connection.ts). */
interface SvcTestResponse {
  ok: boolean;
  message: string;
  checks?: Array<{ credential: string; outcome: string; message: string }>;
}
