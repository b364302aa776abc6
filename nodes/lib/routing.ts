import type { Node, NodeAPI, NodeMessage, TypedProperty } from './node-red';
import { evaluateProperty, typedProperty } from './node-red';
import { PlatformError, invalidInput } from './errors';
import { LocationOptions, Place, payloadAsLocations, readLocations } from './locations';
import type { PlatformClient } from './platform-client';
import type { InputContext } from './runner';
import { jobFailed, pollJob, statusReadsAsFailed } from './poll';
import { positiveSetting } from './values';

/** What the isoline, sequencing and routing nodes share: request fields, sync and async computation, instruction text. */

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

/** The members that are set: optional request fields left unset stay off the wire. */
export function setMembers(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}

/** How an asynchronous job is polled: first wait, growing by half each time, up to a limit. */
export interface Polling {
  intervalMs: number;
  maxWaitMs: number;
}

const DEFAULT_POLL_INTERVAL_S = 1;
const DEFAULT_MAX_WAIT_S = 300;

/** The poll settings of a node (`pollInterval` and `maxWait`, in seconds). */
export function pollingOf(def: { pollInterval?: unknown; maxWait?: unknown }): Polling {
  return {
    intervalMs: (positiveSetting(def.pollInterval) ?? DEFAULT_POLL_INTERVAL_S) * 1000,
    maxWaitMs: (positiveSetting(def.maxWait) ?? DEFAULT_MAX_WAIT_S) * 1000,
  };
}

export interface Computation {
  client: PlatformClient;
  /** The POST path of the computation. */
  path: string;
  body: Record<string, unknown>;
  /** The status path of a job. */
  jobPath: (jobId: string) => string;
  /** True when an answer carries the finished result (for example an `isoline` member). */
  isResult: (body: unknown) => boolean;
  polling: Polling;
  context: InputContext;
}

export interface ComputationResult {
  body: unknown;
  statusCode: number;
  jobId?: string;
  polls: number;
}

/**
 * Runs a computation: the POST answer is the result, or a job handle `{jobId, status, message}`
 * that is polled until its answer carries the result, its status reads as failed, the wait runs out,
 * or the node closes.
 */
export async function compute(computation: Computation): Promise<ComputationResult> {
  const { client, context } = computation;
  const { signal, onWait, status } = context;
  const first = await client.request({ auth: 'project', method: 'POST', path: computation.path, json: computation.body, retry: 'read', signal, onWait });
  if (computation.isResult(first.body)) return { body: first.body, statusCode: first.statusCode, polls: 0 };
  const handle = jobHandle(first.body);
  status.progress(`job ${handle.status ?? 'accepted'}`);
  let statusCode = first.statusCode;
  const { answer, polls } = await pollJob({
    signal,
    initialIntervalMs: computation.polling.intervalMs,
    maxWaitMs: computation.polling.maxWaitMs,
    poll: async (pollSignal) => {
      const res = await client.request({ auth: 'project', method: 'GET', path: computation.jobPath(handle.jobId), retry: 'read', signal: pollSignal, onWait });
      statusCode = res.statusCode;
      return res.body;
    },
    result: (body) => {
      if (computation.isResult(body)) return body;
      const state = jobHandle(body, handle.jobId);
      if (statusReadsAsFailed(state.status)) throw jobFailed(state.status, state.message);
      return undefined;
    },
    onPoll: (body, count) => {
      if (!computation.isResult(body)) status.progress(`job ${jobHandle(body, handle.jobId).status ?? 'running'} (poll ${count})`);
    },
  });
  return { body: answer, statusCode, jobId: handle.jobId, polls };
}

interface JobHandle {
  jobId: string;
  status?: string;
  message?: string;
}

/** Reads a job handle; a POST answer that is neither a result nor a handle is a bad response. */
function jobHandle(body: unknown, knownJobId?: string): JobHandle {
  const record = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const status = typeof record.status === 'string' ? record.status : undefined;
  const message = typeof record.message === 'string' ? record.message : undefined;
  if (statusReadsAsFailed(status)) throw jobFailed(status, message);
  const jobId = typeof record.jobId === 'string' || typeof record.jobId === 'number' ? String(record.jobId) : knownJobId;
  if (!jobId) {
    throw new PlatformError('BAD_RESPONSE', 'the service answered with neither a result nor a job handle (jobId)', {
      body: JSON.stringify(body) ?? '',
    });
  }
  return { jobId, status, message };
}

/** The plain text of a navigation instruction: HTML markup removed, entities decoded, spaces tidied. */
export function plainText(html: string): string {
  return decodeEntities(html.replace(/<br\s*\/?>/gi, ' ').replace(/<[^>]*>/g, ''))
    .replace(/\s+/g, ' ')
    .trim();
}

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity: string, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
    }
    return NAMED_ENTITIES[name.toLowerCase()] ?? entity;
  });
}
