import type { Defaults } from '../lib/node-red/editor-definition';
import { PLATFORM_NODE, typedInputs } from '../lib/node-red/editor-definition';

/** The flow properties of svc-topic-publish and their defaults: the editor's, the runtime's and the tests' (editor-definition.ts). */
export const defaults = {
  ...PLATFORM_NODE,
  ...typedInputs({ topicId: 'topicId', locationId: 'locationId', data: 'payload' }),
  wrapValue: { value: false },
} satisfies Defaults;
