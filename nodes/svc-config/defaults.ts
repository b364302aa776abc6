import type { Credentials, Defaults } from '../lib/node-red/editor-definition';
import { NAME } from '../lib/node-red/editor-definition';

/** The flow properties of svc-config and their defaults: the editor's, the runtime's and the tests' (editor-definition.ts). */
export const defaults = {
  ...NAME,
  // 'sandbox': the built-in sandbox, served by this Node-RED (nothing to type); 'account': the platform, at the
  // addresses and with the credentials below. A new node starts on the sandbox, so a node dropped in runs at
  // once; a node saved before this setting existed is migrated to 'account' (migrations.ts).
  platform: { value: 'sandbox' },
  // Required while the platform is 'account' (the validator reads the Platform choice).
  baseUrl: { value: '', validate: 'accountUrl' },
  authUrl: { value: '', validate: 'httpUrlOrEmpty' },
  sandboxUrl: { value: '', validate: 'httpUrlOrEmpty' },
  audience: { value: '' },
  projectId: { value: '' },
  timeout: { value: 30000, required: true, validate: 'number' },
  // Which rate limit applies to which node: docs/configuration.md "Rate limits", and the help.
  rateScope: { value: 'family' },
  // The platform's recommended rate for single geocode (spec: 80 requests per minute); the other families are off.
  rateLimit: { value: 80, required: true, validate: 'number' },
  // Not required: the editor leaves a number input holding 0 empty, which means the default (off).
  rateWords: { value: 0, validate: 'numberOrEmpty' },
  rateRouting: { value: 0, validate: 'numberOrEmpty' },
  rateBulk: { value: 0, validate: 'numberOrEmpty' },
  rateTopics: { value: 0, validate: 'numberOrEmpty' },
  maxConcurrency: { value: 8, required: true, validate: 'number' },
  maxQueue: { value: 1000, required: true, validate: 'number' },
  maxRetries: { value: 3, required: true, validate: 'number' },
  tokenLifetime: { value: 3600, required: true, validate: 'number' },
  // Not required: config nodes saved before these settings existed lack them, and the runtime then uses the default.
  // Geocode, route and isoline responses run to some hundred KB, bulk result files to some MB per 1000 rows.
  maxResponseSize: { value: 5, validate: 'positiveOrEmpty' },
  maxFileSize: { value: 100, validate: 'positiveOrEmpty' },
  // The platform's daily limit for single geocode (spec: 50,000 requests per day).
  dailyLimit: { value: 50000, validate: 'numberOrEmpty' },
  // Not required: the editor leaves a number input holding 0 empty, which means the default (off).
  cacheTtl: { value: 0, validate: 'numberOrEmpty' },
  // Not required: config nodes saved before it existed lack it, and drain for the default time.
  drainSeconds: { value: 5, validate: 'numberOrEmpty' },
  tls: { type: 'tls-config', required: false },
  proxy: { type: 'http proxy', required: false },
} satisfies Defaults;

export const credentials = {
  clientId: { type: 'text' },
  clientSecret: { type: 'password' },
  apiKey: { type: 'password' },
  pubsubApiKey: { type: 'password' },
  redisUrl: { type: 'password' },
} satisfies Credentials;
