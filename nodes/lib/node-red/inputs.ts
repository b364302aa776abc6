import type { Node, NodeAPI, NodeMessage } from './types';
import { InputError, causeOf } from '../util/errors';
import { CatalogText, catalogText } from '../util/catalog-text';
import { Element, LocationOptions, Place, payloadAsLocations, readLocations } from '../geo/locations';

/** One TypedInput of a node: the name errors use, its source type and value, and its default `msg` path. */
interface TypedInput {
  name: string;
  type: string;
  value: string;
  defaultPath: string;
}

/**
 * The TypedInputs a node reads, by the names errors use: each the default `msg` path, or
 * `{ property, defaultPath, initial }`: the flow property when it has another name, and the source a
 * node whose settings lack the property reads (its editor default, as a dropped node saves it; the
 * node's migrations give older settings their sources); `defaultPath` otherwise.
 */
type InputFields<K extends string> = Record<K, string | { property?: string; defaultPath: string; initial?: { type: string; value: string } }>;

/**
 * Fields whose default `msg` path is their TypedInput's default in the node's defaults.ts (its
 * `typedInputs` rows), so that the path is written once: `msgPaths(defaults, ['address'])`.
 */
export function msgPaths<const K extends string>(defaults: Record<K, { value: string }>, keys: readonly K[]): Record<K, string> {
  return Object.fromEntries(keys.map((key) => [key, defaults[key].value])) as Record<K, string>;
}

/** The TypedInputs of a node, read from its definition (`<property>` and `<property>Type`). */
interface NodeInputs<K extends string> {
  readonly inputs: Record<K, TypedInput>;
  /**
   * Evaluates the given inputs (all by default) for one message, in order. A source that holds
   * nothing, or an editor field left empty, comes out undefined; any failure to evaluate a source is
   * INVALID_INPUT naming the input and the cause.
   */
  read: (msg: NodeMessage, keys?: readonly K[]) => Promise<Partial<Record<K, unknown>>>;
}

/** The one reader of TypedInputs for every node of the pack. */
export function nodeInputs<K extends string>(RED: NodeAPI, node: Node, def: object, fields: InputFields<K>): NodeInputs<K> {
  const record = def as Record<string, unknown>;
  const keys = Object.keys(fields) as K[];
  const inputs = Object.fromEntries(
    keys.map((key) => {
      const field = fields[key];
      const { property = key, defaultPath, initial } = typeof field === 'string' ? { defaultPath: field } : field;
      const stored =
        initial && record[property] === undefined && record[`${property}Type`] === undefined
          ? { [property]: initial.value, [`${property}Type`]: initial.type }
          : record;
      return [key, typedInput(stored, key, property, defaultPath)];
    }),
  ) as Record<K, TypedInput>;
  return {
    inputs,
    async read(msg, wanted = keys) {
      const values: Partial<Record<K, unknown>> = {};
      for (const key of wanted) values[key] = await readInput(RED, node, msg, inputs[key]);
      return values;
    },
  };
}

/** A TypedInput as stored in flow JSON: `<property>` and `<property>Type`, an empty `msg` path meaning the default. */
function typedInput(def: Record<string, unknown>, name: string, property: string, defaultPath: string): TypedInput {
  const storedType = def[`${property}Type`];
  const type = typeof storedType === 'string' && storedType !== '' ? storedType : 'msg';
  const raw = def[property];
  const value = typeof raw === 'string' ? raw : typeof raw === 'number' || typeof raw === 'boolean' ? String(raw) : '';
  return { name, type, value: type === 'msg' && value === '' ? defaultPath : value, defaultPath };
}

/** A TypedInput that reads a fixed `msg` path. */
export function messageInput(name: string, path: string): TypedInput {
  return { name, type: 'msg', value: path, defaultPath: path };
}

/** True when the input reads its default member of the message. */
export function readsDefault(input: TypedInput): boolean {
  return input.type === 'msg' && input.value === input.defaultPath;
}

/**
 * Evaluates one TypedInput for one message. A value fixed in the editor wins; an editor field left
 * empty is "not set". A `msg` path through a missing member (`payload.range.type` on a message
 * without `payload.range`) reads as unset, since a message may carry only part of a request.
 * Context reads go through the callback form, which works with asynchronous context stores.
 */
export async function readInput(RED: NodeAPI, node: Node, msg: NodeMessage, input: TypedInput): Promise<unknown> {
  if (input.type !== 'msg' && input.value === '') return undefined;
  try {
    if (input.type === 'msg') return messageMember(RED, msg, input.value);
    if (input.type === 'env') return environmentValue(RED, node, input.value);
    return await new Promise((resolve, reject) => {
      RED.util.evaluateNodeProperty(input.value, input.type, node, msg, (err: Error | null, value: unknown) => {
        if (err) reject(err);
        else resolve(value);
      });
    });
  } catch (err) {
    throw new InputError(catalogText('error.input.unreadable', { name: input.name, source: sourceOf(input), cause: causeOf(err) }));
  }
}

function messageMember(RED: NodeAPI, msg: NodeMessage, path: string): unknown {
  try {
    return RED.util.getMessageProperty(msg, path);
  } catch (err) {
    // getMessageProperty throws a TypeError when an intermediate member is missing; a bad path is another error.
    if (err instanceof TypeError) return undefined;
    throw err;
  }
}

/** `NAME` or `${NAME}` must be set (in the flow, group or process environment); a template `a${NAME}b` is read as Node-RED reads it. */
function environmentValue(RED: NodeAPI, node: Node, value: string): unknown {
  const name = /^\$\{([^}]+)\}$/.exec(value)?.[1] ?? (/\$\{\S+\}/.test(value) ? undefined : value);
  const util = RED.util as NodeAPI['util'] & { getSetting?: (node: Node, name: string) => unknown };
  if (name !== undefined && util.getSetting && util.getSetting(node, name) === undefined) {
    throw new InputError(catalogText('error.input.envNotSet', { name }));
  }
  return RED.util.evaluateNodeProperty(value, 'env', node, {});
}

function sourceOf(input: TypedInput): CatalogText {
  switch (input.type) {
    case 'msg':
      return catalogText('source.msg', { path: input.value });
    case 'flow':
    case 'global':
      return catalogText('source.context', { scope: input.type, key: input.value });
    case 'jsonata':
      return catalogText('source.jsonata');
    case 'env':
      return catalogText('source.env');
    default:
      return catalogText('source.other', { type: input.type });
  }
}

/**
 * The origins or waypoints of a message: what their input holds or, when the input reads its default
 * member of `msg.payload` and finds nothing, `msg.payload` itself if it is one location or a list of them.
 */
export function locationsOf(value: unknown, input: TypedInput, msg: NodeMessage, element: Element, options: LocationOptions): Place[] {
  const raw = value ?? (readsDefault(input) ? payloadAsLocations(msg.payload) : undefined);
  if (raw === undefined) {
    throw new InputError(catalogText('error.input.noLocations', { name: input.name, path: input.defaultPath }));
  }
  const places = readLocations(raw, element, options);
  if (places.length === 0) throw new InputError(catalogText('error.input.emptyList', { name: input.name }));
  return places;
}
