import type { Credentials, Defaults } from '../lib/node-red/editor-definition';
import { NAME } from '../lib/node-red/editor-definition';

/** The flow properties of svc-webhook-in and their defaults: the editor's, the runtime's and the tests' (editor-definition.ts). */
export const defaults = {
  ...NAME,
  // A node dropped as is listens here (docs/decisions.md): a saved node keeps the path it has.
  url: { value: '/svc-webhook', required: true, validate: 'webhookPath' },
  verify: { value: 'signature' },
  tolerance: { value: 300, required: true, validate: 'positive' },
  headerName: { value: '', validate: { regex: "^([!#$%&'*+.^_`|~0-9A-Za-z-]+)?$" } },
  maxBodyKb: { value: 1024, required: true, validate: 'positive' },
  server: { value: '', type: 'svc-config', required: false },
} satisfies Defaults;

export const credentials = {
  secret: { type: 'password' },
  previousSecret: { type: 'password' },
  headerValue: { type: 'password' },
} satisfies Credentials;
