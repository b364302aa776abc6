import type { Defaults } from '../lib/node-red/editor-definition';
import { MAP_OUTPUT, PLATFORM_NODE, polling, typedInputs } from '../lib/node-red/editor-definition';

/** The flow properties of svc-sequence and their defaults: the editor's, the runtime's and the tests' (editor-definition.ts). */
export const defaults = {
  ...MAP_OUTPUT,
  ...polling(1, 300),
  ...PLATFORM_NODE,
  ...typedInputs({
    waypoints: 'payload.waypoints',
    async: 'payload.async',
    departure: 'payload.departure',
    transportMode: 'payload.transportMode',
    avoid: 'payload.avoid',
    routeMode: 'payload.routeMode',
  }),
  waypointFormat: { value: 'coordinates' },
  precision: { value: 9, required: true, validate: 'number' },
  lonLatArrays: { value: false },
  departureFormat: { value: 'zoned' },
} satisfies Defaults;
