import type { NodeAPI, NodeDef, Node, OutputMessage } from '../lib/node-red/types';
import { messageInput, msgPaths, nodeInputs, readInput, readsDefault } from '../lib/node-red/inputs';
import { configFor } from '../lib/node-red/config';
import type { BuiltinSandboxConnection } from '../lib/node-red/builtin-sandbox';
import { InputError, PlatformError } from '../lib/util/errors';
import type { PlatformClient } from '../lib/platform/client';
import type { PlatformRequest } from '../lib/platform/types';
import { HandlerResult, InputContext, handleInputs } from '../lib/node-red/runner';
import {
  SUBSCRIPTIONS_PATH,
  TOPICS_PATH,
  pubsubRequest,
  readInteger,
  readLocationIds,
  readOptionalText,
  readRequiredText,
  readTopicId,
  readWebhookAddress,
  readWebhookHeader,
  topicPath,
  unwrapEnvelope,
  webhookHeaderValue,
} from '../lib/platform/topics';
import { describeValue } from '../lib/util/values';
import { readSettings } from '../lib/node-red/settings';
import type { SettingsOf } from '../lib/node-red/editor-definition';
import { CatalogText, catalogText } from '../lib/util/catalog-text';
import { translate, translateWith } from '../lib/node-red/i18n';
import { defaults } from './defaults';
import { migrations } from './migrations';

const OPERATIONS = ['create-topic', 'list-topics', 'get-topic', 'delete-topic', 'create-subscription'] as const;
type Operation = (typeof OPERATIONS)[number];

const DEFAULT_LIMIT = 100;

type TopicDef = NodeDef & SettingsOf<typeof defaults>;

/** Values that may be kept out of the flow: when set here they win over the message. */
interface TopicCredentials {
  secretToken?: string;
  webhookHeader?: string;
}

/** A page of the topic listing: `limit`, `offset`, `totalCount`, `items`. */
interface TopicPage {
  limit: number;
  offset: number;
  totalCount: number;
  items: unknown[];
}

/** The node's TypedInputs, each defaulting to its member of the message. */
const FIELDS = {
  operation: { defaultPath: 'operation', initial: { type: defaults.operationType.value, value: defaults.operation.value } },
  ...msgPaths(defaults, ['topicId', 'topicName', 'topicDescription', 'webhookAddress', 'locationIds', 'limit', 'offset']),
  webhookHeader: { property: 'webhookHeaderFrom', defaultPath: defaults.webhookHeaderFrom.value },
  secretToken: { property: 'secretTokenFrom', defaultPath: defaults.secretTokenFrom.value },
};
type Field = keyof typeof FIELDS;

/** A subscription request names its topic `TopicId`: read when msg.topicId, the default, holds none. */
const REQUEST_TOPIC_ID = messageInput('TopicId', 'payload.TopicId');

/** The inputs each operation reads, so that an unrelated field's source is never evaluated. */
const INPUTS_OF: Record<Operation, Field[]> = {
  'create-topic': ['topicName', 'topicDescription'],
  'list-topics': ['limit', 'offset'],
  'get-topic': ['topicId'],
  'delete-topic': ['topicId'],
  'create-subscription': ['topicId', 'webhookAddress', 'webhookHeader', 'secretToken', 'locationIds'],
};

interface Settings {
  allPages: boolean;
  maxPages: number;
  credentials: TopicCredentials;
  warn: (text: CatalogText) => void;
}

/** What an operation works with: the client, the message (becoming the output) and its inputs. */
interface OperationCall {
  platform: PlatformClient;
  /** The config node's built-in sandbox, if it uses one. */
  sandbox?: BuiltinSandboxConnection;
  out: OutputMessage;
  values: Partial<Record<Field, unknown>>;
  context: InputContext;
  settings: Settings;
}

export = function register(RED: NodeAPI): void {
  function SvcTopic(this: Node<TopicCredentials>, def: TopicDef): void {
    RED.nodes.createNode(this, def);
    def = migrations.migrate(def);
    const config = configFor(RED, this, def.server, 'pubsub');
    const { inputs, read } = nodeInputs(RED, this, def, FIELDS);
    const settings: Settings = {
      allPages: def.allPages === true,
      maxPages: readSettings(def, defaults).count('maxPages'),
      credentials: this.credentials ?? {},
      warn: (text) => this.warn(translate(text)),
    };

    handleInputs(this, async (msg, context) => {
      const { client: platform, builtinSandbox: sandbox } = config();
      const op = readOperation((await read(msg, ['operation'])).operation);
      const values = await read(msg, INPUTS_OF[op]);
      if (values.topicId === undefined && readsDefault(inputs.topicId)) {
        values.topicId = await readInput(RED, this, msg, REQUEST_TOPIC_ID);
      }
      return OPERATION_HANDLERS[op]({ platform, sandbox, out: msg, values, context, settings });
    });
  }

  translateWith(RED);
  RED.nodes.registerType<Node<TopicCredentials>, TopicDef, unknown, TopicCredentials>('svc-topic', SvcTopic, {
    credentials: {
      secretToken: { type: 'password' },
      webhookHeader: { type: 'password' },
    },
  });
};

const OPERATION_HANDLERS: Record<Operation, (call: OperationCall) => Promise<HandlerResult>> = {
  'create-topic': createTopic,
  'list-topics': listTopics,
  'get-topic': getTopic,
  'delete-topic': deleteTopic,
  'create-subscription': createSubscription,
};

async function createTopic(call: OperationCall): Promise<HandlerResult> {
  const { out, values } = call;
  const request = {
    Name: readRequiredText(values.topicName, 'Name'),
    Description: readOptionalText(values.topicDescription, 'Description') ?? '',
  };
  const topic = await send(call, { method: 'POST', path: TOPICS_PATH, json: request, retry: 'create' });
  out.payload = topic;
  const id = topicIdOf(topic);
  if (id !== undefined) out.topicId = id;
  return { msg: out, statusText: id === undefined ? catalogText('status.created') : catalogText('status.createdTopic', { id }) };
}

async function listTopics(call: OperationCall): Promise<HandlerResult> {
  const { out, values, context, settings } = call;
  const limit = readCount(values.limit, 'limit', 1) ?? DEFAULT_LIMIT;
  const firstOffset = readCount(values.offset, 'offset', 0) ?? 0;
  const fetchPage = (offset: number) => send(call, { method: 'GET', path: TOPICS_PATH, query: { limit, offset }, retry: 'read' });
  const first = await fetchPage(firstOffset);
  if (!settings.allPages) {
    out.payload = first;
    return {
      msg: out,
      statusText: isPage(first) ? catalogText('status.page', { count: first.items.length, total: first.totalCount }) : catalogText('status.listed'),
    };
  }
  // "All pages": follow offset and totalCount until every item is in, within the safety cap.
  let page = readPage(first);
  const items = [...page.items];
  for (let pages = 1; page.items.length > 0 && page.offset + page.items.length < page.totalCount; pages++) {
    if (pages >= settings.maxPages) {
      settings.warn(catalogText('warn.listingCapped', { pages, count: items.length, total: page.totalCount }));
      break;
    }
    const nextOffset = page.offset + page.items.length;
    context.status.progress(catalogText('status.listingPage', { page: pages + 1, count: items.length, total: page.totalCount }));
    page = readPage(await fetchPage(nextOffset));
    if (page.items.length > 0 && page.offset + page.items.length <= nextOffset) {
      throw new PlatformError('BAD_RESPONSE', catalogText('error.topic.noProgress', { offset: nextOffset }));
    }
    items.push(...page.items);
  }
  out.payload = { limit: page.limit, offset: firstOffset, totalCount: page.totalCount, items };
  const capped = items.length < page.totalCount;
  return {
    msg: out,
    statusText: capped ? catalogText('status.capped', { count: items.length, total: page.totalCount }) : catalogText('status.topics', { count: items.length }),
  };
}

async function getTopic(call: OperationCall): Promise<HandlerResult> {
  const { out, values } = call;
  const topicId = readTopicId(values.topicId);
  out.payload = await send(call, { method: 'GET', path: topicPath(topicId), retry: 'read' });
  return { msg: out, statusText: catalogText('status.topic', { id: topicId }) };
}

async function deleteTopic(call: OperationCall): Promise<HandlerResult> {
  const { out, values } = call;
  const topicId = readTopicId(values.topicId);
  // DELETE is idempotent, so it is retried like a read (see the help for a retried delete's 404).
  // A response without a body (204) says the deletion as `{ id, deleted: true }`, not undefined.
  out.payload = (await send(call, { method: 'DELETE', path: topicPath(topicId), retry: 'read' })) ?? { id: topicId, deleted: true };
  return { msg: out, statusText: catalogText('status.deleted', { id: topicId }) };
}

async function createSubscription(call: OperationCall): Promise<HandlerResult> {
  const { out, values, settings, sandbox } = call;
  const { credentials } = settings;
  // With the built-in sandbox (sandbox-only conveniences): a path is this Node-RED's own httpNode route, and
  // without a secret the subscription signs with the sandbox's webhook secret, which linked svc-webhook-in nodes check.
  const address =
    sandbox && typeof values.webhookAddress === 'string' && values.webhookAddress.startsWith('/')
      ? sandbox.ownUrl(values.webhookAddress)
      : values.webhookAddress;
  const request = {
    WebhookAddress: readWebhookAddress(address),
    WebhookHeader: readWebhookHeader(credentials.webhookHeader || values.webhookHeader),
    // Optional; an empty value means none. Never repeated in an error.
    SecretToken: readOptionalText(credentials.secretToken || values.secretToken, 'SecretToken') || sandbox?.webhookSecret,
    LocationIds: readLocationIds(values.locationIds),
    TopicId: readTopicId(values.topicId, 'TopicId'),
  };
  // The token and the header's value are secrets of this request: masked wherever the response repeats them.
  const secrets = [request.SecretToken, request.WebhookHeader && webhookHeaderValue(request.WebhookHeader)].filter((s): s is string => !!s);
  out.payload = await send(call, { method: 'POST', path: SUBSCRIPTIONS_PATH, json: request, retry: 'create', secrets });
  return { msg: out, statusText: catalogText('status.subscribed') };
}

/**
 * One pubsub request of an operation, aborted with its message: the response's body out of its
 * envelope; the response's status code goes on the output message.
 */
async function send({ platform, out, context }: OperationCall, request: Omit<PlatformRequest, 'auth' | 'rate' | 'signal' | 'onWait'>): Promise<unknown> {
  const response = await pubsubRequest(platform, { ...request, signal: context.signal, onWait: context.onWait });
  out.statusCode = response.statusCode;
  return unwrapEnvelope(response.body);
}

function readOperation(value: unknown): Operation {
  if (typeof value === 'string' && (OPERATIONS as readonly string[]).includes(value)) return value as Operation;
  throw new InputError(
    catalogText('error.topic.operation', { allowed: OPERATIONS.join(', '), value: typeof value === 'string' ? `"${value}"` : describeValue(value) }),
  );
}

/** A paging parameter: unset, or an integer of at least `min`. */
function readCount(value: unknown, field: string, min: number): number | undefined {
  return value === undefined || value === null || value === '' ? undefined : readInteger(value, field, min);
}

function isPage(value: unknown): value is TopicPage {
  if (value === null || typeof value !== 'object') return false;
  const page = value as Partial<TopicPage>;
  return Array.isArray(page.items) && Number.isFinite(page.totalCount) && Number.isFinite(page.offset);
}

function readPage(value: unknown): TopicPage {
  if (!isPage(value)) {
    throw new PlatformError('BAD_RESPONSE', catalogText('error.topic.notPage'));
  }
  return value;
}

function topicIdOf(topic: unknown): number | undefined {
  const id = topic !== null && typeof topic === 'object' ? (topic as { id?: unknown }).id : undefined;
  return typeof id === 'number' && Number.isSafeInteger(id) ? id : undefined;
}
