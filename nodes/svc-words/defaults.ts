import type { Defaults } from '../lib/node-red/editor-definition';
import { MAP_OUTPUT, PLATFORM_NODE, typedInputs } from '../lib/node-red/editor-definition';

/** The flow properties of svc-words and their defaults: the editor's, the runtime's and the tests' (editor-definition.ts). */
export const defaults = {
  ...MAP_OUTPUT,
  // What msg.payload holds; flows saved without it keep the whole response there.
  output: { value: 'response' },
  ...PLATFORM_NODE,
  ...typedInputs({ words: 'payload' }),
} satisfies Defaults;
