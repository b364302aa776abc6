import type { Defaults } from '../lib/node-red/editor-definition';
import { MAP_OUTPUT, PLATFORM_NODE, polling, typedInputs } from '../lib/node-red/editor-definition';

/** The flow properties of svc-bulk-geocode and their defaults: the editor's, the runtime's and the tests' (editor-definition.ts). */
export const defaults = {
  ...MAP_OUTPUT,
  ...polling(2, 1800),
  ...PLATFORM_NODE,
  ...typedInputs({ addresses: 'payload' }),
  batchSize: { value: 1000, required: true, validate: 'wholeNumber' },
  parallel: { value: 2, required: true, validate: 'wholeNumber' },
  rawFiles: { value: false },
  output: { value: 'message' },
  // Required while the output is a file (the editor's own validator).
  outputFile: { value: '' },
  rawCsv: { value: false },
  // Parts mode: no summary message after the parts, which a core join in automatic mode would warn about (migration 2 keeps it for older settings).
  partsSummary: { value: false },
  jobIdPath: { value: '', validate: 'memberPath' },
  downloadPath: { value: '', validate: 'memberPath' },
  statusPath: { value: '', validate: 'memberPath' },
} satisfies Defaults;
