import type { Defaults } from '../lib/node-red/editor-definition';
import { MAP_OUTPUT, PLATFORM_NODE, polling, typedInputs } from '../lib/node-red/editor-definition';

/** The flow properties of svc-isoline and their defaults: the editor's, the runtime's and the tests' (editor-definition.ts). */
export const defaults = {
  ...MAP_OUTPUT,
  ...polling(1, 300),
  ...PLATFORM_NODE,
  ...typedInputs({
    origins: 'payload.origins',
    async: 'payload.async',
    mode: 'payload.mode',
    transportMode: 'payload.transportMode',
    avoid: 'payload.avoid',
    optimizeFor: 'payload.optimizeFor',
  }),
  originFormat: { value: 'coordinates' },
  precision: { value: 9, required: true, validate: 'number' },
  lonLatArrays: { value: false },
  // A node dropped as is runs: 10 minutes of travel time (svc-isoline.ts gives these to settings without them).
  rangeType: { value: 'time', validate: { typedInput: 'rangeTypeType' } },
  rangeTypeType: { value: 'fixed' },
  // Fixed ranges: one or more positive numbers, comma-separated (the editor's own validator).
  rangeValue: { value: '600' },
  rangeValueType: { value: 'num' },
  avoidMember: { value: 'features', validate: { regex: '^[A-Za-z_$][\\w$]*$' } },
  // A fixed number of shape points: a whole number above 30, or empty for the platform's own (the editor's own validator).
  shape: { value: 'payload.shape' },
  shapeType: { value: 'msg' },
} satisfies Defaults;
