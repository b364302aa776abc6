/**
 * What a node's editor is written as: `nodes/<type>/defaults.ts` and `editor.ts`, which the build bundles into the .html
 * Node-RED loads (build/editor-html.ts). The values below run both in Node.js and on the editor page, so use neither.
 * The defaults are data, written inline into `RED.nodes.registerType`, where the Flow Library and the scorecard read them
 * statically. Settings and dialog rows are typed by the keys of the defaults, so a misspelt key fails tsc.
 */

/** A validator by name: Node-RED's `number`, `typedInput` of the named type property, `regex`, or one of nodes/lib/editor/validators.ts. */
export type Validator =
  | 'number'
  | 'numberOrEmpty'
  | 'positive'
  | 'positiveOrEmpty'
  | 'wholeNumber'
  | 'memberPath'
  | 'pollInterval'
  | 'webhookPath'
  | 'httpUrl'
  | 'httpUrlOrEmpty'
  | 'accountUrl'
  | { typedInput: string }
  | { regex: string };

/** A flow property of a node: its value when the node is added, and how the editor checks it. */
export interface Default {
  value?: string | number | boolean;
  required?: boolean;
  /** A config node's type: the property holds such a node's id. */
  type?: string;
  validate?: Validator;
}

/** The flow properties of a node, by name (its `version` default is its migrations' version, added by the build). */
export type Defaults = Record<string, Default>;

export type Credentials = Record<string, { type: 'text' | 'password' }>;

/** What flow JSON holds for a default: a number may be an editor field's text; a config node's id is text. */
type Stored<D> = D extends { value: infer V } ? (V extends number ? number | string : V extends boolean ? boolean : string) : string;

/** A node's settings as flow JSON holds them: each may be missing (a node saved before the setting existed). */
export type SettingsOf<D extends Defaults> = { [K in keyof D]?: Stored<D[K]> };

export type NumberKey<D extends Defaults> = { [K in keyof D]: D[K] extends { value: number } ? K : never }[keyof D];

export type TextKey<D extends Defaults> = { [K in keyof D]: D[K] extends { value: string } ? K : never }[keyof D];

/** The members of a dialog row that name a flow property or credential. */
type RowProperty = 'typed' | 'text' | 'password' | 'config' | 'spinner' | 'number' | 'select' | 'checkbox' | 'hidden';

/** A dialog row whose property names are keys (`K`) of the node's defaults or credentials (any row where `Row` is unknown, as the build reads it). */
export type RowOf<Row, K extends string> = unknown extends Row
  ? unknown
  : Omit<Row, RowProperty | 'when'> & { [P in RowProperty]?: K } & { when?: Partial<Record<K, unknown[]>> };

/** The dialog rows that several nodes share, by name (nodes/lib/editor/rows.ts). */
export type NamedRow = 'server' | 'name' | 'mapOutput';

/**
 * A node's editor, typed by its defaults (`D`) and credentials (`C`); `Node`, `Row` and `Form` are the editor page's
 * (types/editor-globals.d.ts). The functions are called with the node as `this`: write them as `function` expressions.
 */
export interface EditorDefinition<Node, Row, Form, D extends Defaults = Defaults, C extends Credentials = Credentials> {
  /** `location` for the palette's category of the pack, `config` for a config node. */
  category: 'location' | 'config';
  color?: string;
  defaults: D;
  credentials?: C;
  inputs?: 0 | 1;
  outputs?: 1;
  /** The node's palette label; its label too while it has no name, unless `label` says otherwise. */
  paletteLabel?: string;
  label?: (this: Node) => string;
  /** The dialog's rows (nodes/lib/editor/rows.ts lists their kinds). */
  rows: Array<RowOf<Row, Extract<keyof D | (string extends keyof C ? never : keyof C), string>> | NamedRow>;
  /** Validators of the node's own, by property: they take the place of a default's named one. */
  validators?: Partial<Record<keyof D, (this: Node, value: unknown, opt?: unknown) => boolean | string>>;
  /** Runs when the dialog opens, after the form has filled it in. */
  prepare?: (this: Node, form: Form) => void;
}

export const LOCATION_NODE = { category: 'location', color: '#a6d4e8', inputs: 1, outputs: 1 } as const;

/** The shared rows' defaults (nodes/lib/editor/rows.ts's named rows `name`, `server`, `mapOutput` and the poll rows). */
export const NAME = { name: { value: '' } } satisfies Defaults;
export const PLATFORM_NODE = { ...NAME, server: { value: '', type: 'svc-config', required: true } } satisfies Defaults;
/** The Map output option: a second output with ready-to-draw worldmap messages; `outputs` rewires the ports on save. */
export const MAP_OUTPUT = {
  worldmap: { value: false },
  worldmapLayer: { value: '' },
  worldmapTtl: { value: '', validate: 'positiveOrEmpty' },
  worldmapClear: { value: false },
  outputs: { value: 1 },
} satisfies Defaults;

/** The poll rows of the job nodes, in seconds; a 1.0.0 `pollInterval` is moved into `pollIntervalSec` by the node's migration. */
export function polling(pollIntervalSec: number, maxWait: number) {
  return {
    pollIntervalSec: { value: pollIntervalSec, validate: 'pollInterval' },
    maxWait: { value: maxWait, required: true, validate: 'positive' },
    pollInterval: { value: '' },
  } satisfies Defaults;
}

type TypedInputDefault = Default & { value: string };

/** TypedInput rows' properties, each read from the `msg` member given, with their type properties (`waypointsType`). */
export function typedInputs<Name extends string>(members: Record<Name, string>): Record<Name | `${Name}Type`, TypedInputDefault> {
  const defaults: Record<string, TypedInputDefault> = {};
  for (const [name, member] of Object.entries<string>(members)) {
    defaults[name] = { value: member, validate: { typedInput: `${name}Type` } };
    defaults[`${name}Type`] = { value: 'msg' };
  }
  return defaults;
}
