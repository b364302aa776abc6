import type { Defaults } from '../lib/node-red/editor-definition';
import { MAP_OUTPUT, PLATFORM_NODE, typedInputs } from '../lib/node-red/editor-definition';

/** The flow properties of svc-route and their defaults: the editor's, the runtime's and the tests' (editor-definition.ts). */
export const defaults = {
  ...MAP_OUTPUT,
  ...PLATFORM_NODE,
  ...typedInputs({
    waypoints: 'payload.waypoints',
    transportMode: 'payload.transportMode',
    arriveBy: 'payload.arriveBy',
    departAt: 'payload.departAt',
    avoid: 'payload.avoid',
    preference: 'payload.preference',
  }),
  lonLatArrays: { value: false },
} satisfies Defaults;
