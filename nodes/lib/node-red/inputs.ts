import type { Node, NodeAPI, NodeDef, NodeMessage, NodeMessageInFlow } from 'node-red';
import { invalidInput } from '../util/errors';
import { LocationOptions, Place, payloadAsLocations, readLocations } from '../geo/locations';

export type { Node, NodeAPI, NodeDef, NodeMessage, NodeMessageInFlow };

/** A TypedInput as stored in flow JSON: the value and, beside it, `<name>Type`. */
export interface TypedProperty {
  value: string;
  type: string;
}

/** Output messages carry whatever the node adds; Node-RED messages are open objects. */
export type OutputMessage = NodeMessageInFlow & Record<string, unknown>;

/** Reads `<name>` and `<name>Type` from a node definition, defaulting to `msg.<defaultPath>`. */
export function typedProperty(def: Record<string, unknown>, name: string, defaultPath: string): TypedProperty {
  const type = typeof def[`${name}Type`] === 'string' && def[`${name}Type`] !== '' ? (def[`${name}Type`] as string) : 'msg';
  const raw = def[name];
  const value = typeof raw === 'string' ? raw : typeof raw === 'number' || typeof raw === 'boolean' ? String(raw) : '';
  return type === 'msg' && value === '' ? { type, value: defaultPath } : { type, value };
}

/**
 * Evaluates a TypedInput for one message: a value fixed in the editor wins, `msg` reads the message.
 * A `msg` path through a missing member (`payload.range.type` on a message without `payload.range`)
 * reads as unset, since a message may carry only part of a request. Context reads go through the
 * callback form, which works with asynchronous context stores.
 */
export function evaluateProperty(RED: NodeAPI, node: Node, msg: NodeMessage, property: TypedProperty): Promise<unknown> {
  if (property.type === 'msg') {
    try {
      return Promise.resolve(RED.util.getMessageProperty(msg, property.value));
    } catch (err) {
      // getMessageProperty throws a TypeError when an intermediate member is missing.
      if (err instanceof TypeError) return Promise.resolve(undefined);
      return Promise.reject(err);
    }
  }
  return new Promise((resolve, reject) => {
    RED.util.evaluateNodeProperty(property.value, property.type, node, msg, (err: Error | null, value: unknown) => {
      if (err) reject(err);
      else resolve(value);
    });
  });
}

/** Evaluates several TypedInputs; members whose source holds nothing come out undefined. */
export async function evaluateProperties<K extends string>(
  RED: NodeAPI,
  node: Node,
  msg: NodeMessage,
  properties: Record<K, TypedProperty>,
): Promise<Record<K, unknown>> {
  const entries = await Promise.all(
    (Object.keys(properties) as K[]).map(async (key) => {
      const property = properties[key];
      // An editor field left empty means "not set", not an empty fixed value.
      const value = property.type !== 'msg' && property.value === '' ? undefined : await evaluateProperty(RED, node, msg, property);
      return [key, value] as const;
    }),
  );
  return Object.fromEntries(entries) as Record<K, unknown>;
}

/** The TypedInputs of a node's request fields, each defaulting to its member of `msg.payload`. */
export function requestInputs<K extends string>(def: object, defaultPaths: Record<K, string>): Record<K, TypedProperty> {
  const record = def as Record<string, unknown>;
  const keys = Object.keys(defaultPaths) as K[];
  return Object.fromEntries(keys.map((key) => [key, typedProperty(record, key, defaultPaths[key])])) as Record<K, TypedProperty>;
}

/**
 * The origins or waypoints of a message: what their field holds or, when the field reads its default
 * member of `msg.payload` and finds nothing, `msg.payload` itself if it is one location or a list of them.
 */
export function locationsOf(
  value: unknown,
  property: TypedProperty,
  defaultPath: string,
  msg: NodeMessage,
  names: { field: string; element: string },
  options: LocationOptions,
): Place[] {
  const fromPayload = property.type === 'msg' && property.value === defaultPath ? payloadAsLocations(msg.payload) : undefined;
  const raw = value ?? fromPayload;
  if (raw === undefined) {
    throw invalidInput(`no ${names.field}: set msg.${defaultPath}, or send a location or an array of locations as msg.payload`);
  }
  const places = readLocations(raw, names.element, options);
  if (places.length === 0) throw invalidInput(`${names.field}: the list is empty`);
  return places;
}

/**
 * Evaluates the request fields of one message. A default source such as `msg.payload.range.type`
 * reads as "not set" when `msg.payload.range` is missing (Node-RED's reader throws there);
 * an editor field left empty is "not set" too. Other failures name the field.
 */
export async function readRequestFields<K extends string>(
  RED: NodeAPI,
  node: Node,
  msg: NodeMessage,
  properties: Record<K, TypedProperty>,
): Promise<Partial<Record<K, unknown>>> {
  const fields: Partial<Record<K, unknown>> = {};
  for (const key of Object.keys(properties) as K[]) {
    const property = properties[key];
    if (property.type !== 'msg' && property.value === '') continue;
    try {
      fields[key] = await evaluateProperty(RED, node, msg, property);
    } catch (err) {
      throw invalidInput(`${key}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return fields;
}
