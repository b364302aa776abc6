import { SANDBOX_DEFAULTS } from './options';

/** The secret the examples' subscriptions sign with and their webhook receivers check, under `npm start` (and `svc-sandbox --print-settings`). */
export const DEMO_WEBHOOK_SECRET = 'sandbox-webhook-secret';

/**
 * The sandbox's credentials as the fields of an `svc-config` name them (README's try-it section lists
 * the same), printed when the sandbox starts: what to type back after trying a wrong key, or into a
 * config node of your own.
 */
export function credentialLines(url: string): string[] {
  return [
    `  Base URL, Token URL, Words URL  ${url}`,
    `  Audience                        ${SANDBOX_DEFAULTS.audience}`,
    `  Project id                      ${SANDBOX_DEFAULTS.projectId}`,
    `  Client id / Client secret       ${SANDBOX_DEFAULTS.clientId} / ${SANDBOX_DEFAULTS.clientSecret}`,
    `  API key                         ${SANDBOX_DEFAULTS.apiKey}`,
    `  Topics API key                  ${SANDBOX_DEFAULTS.pubsubApiKey}`,
    `  Webhook secret (examples)       ${DEMO_WEBHOOK_SECRET}`,
  ];
}

/** The settings of an `svc-config` node for the sandbox at `url`, named as its fields (`svc-sandbox --print-settings`). */
export function sandboxSettings(url: string): Record<string, string> {
  return {
    baseUrl: url,
    authUrl: url,
    sandboxUrl: url,
    audience: SANDBOX_DEFAULTS.audience,
    projectId: SANDBOX_DEFAULTS.projectId,
    clientId: SANDBOX_DEFAULTS.clientId,
    clientSecret: SANDBOX_DEFAULTS.clientSecret,
    apiKey: SANDBOX_DEFAULTS.apiKey,
    pubsubApiKey: SANDBOX_DEFAULTS.pubsubApiKey,
    webhookSecret: DEMO_WEBHOOK_SECRET,
  };
}
