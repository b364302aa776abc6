import type { Credentials, Defaults } from '../lib/node-red/editor-definition';
import { PLATFORM_NODE, typedInputs } from '../lib/node-red/editor-definition';

/** The flow properties of svc-topic and their defaults: the editor's, the runtime's and the tests' (editor-definition.ts). */
export const defaults = {
  ...PLATFORM_NODE,
  ...typedInputs({
    topicId: 'topicId',
    topicName: 'payload.Name',
    topicDescription: 'payload.Description',
    webhookAddress: 'payload.WebhookAddress',
    webhookHeaderFrom: 'payload.WebhookHeader',
    secretTokenFrom: 'payload.SecretToken',
    locationIds: 'payload.LocationIds',
    limit: 'payload.limit',
    offset: 'payload.offset',
  }),
  // A node dropped as is runs, read-only: it lists the topics (svc-topic.ts gives these to settings without them).
  operation: { value: 'list-topics', validate: { typedInput: 'operationType' } },
  operationType: { value: 'operation' },
  allPages: { value: false },
  maxPages: { value: 100, required: true, validate: 'number' },
} satisfies Defaults;

export const credentials = {
  secretToken: { type: 'password' },
  webhookHeader: { type: 'password' },
} satisfies Credentials;
