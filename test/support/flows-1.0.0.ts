import fs from 'node:fs';
import path from 'node:path';
import { SANDBOX_DEFAULTS } from '../../sandbox';
import { REPO_ROOT } from './paths';

/** The flows file 1.0.0 wrote (test/fixtures/flows-1.0.0.json), pointed at a sandbox. */
export function fixtureNodes<T>(sandboxUrl: string): T[] {
  const file = path.join(REPO_ROOT, 'test', 'fixtures', 'flows-1.0.0.json');
  return JSON.parse(fs.readFileSync(file, 'utf8').replaceAll('__SANDBOX_URL__', sandboxUrl)) as T[];
}

/** The credentials its owner typed, by node id: the file, an export, carries none. */
export const FIXTURE_CREDENTIALS = {
  cfg: {
    clientId: SANDBOX_DEFAULTS.clientId,
    clientSecret: SANDBOX_DEFAULTS.clientSecret,
    apiKey: SANDBOX_DEFAULTS.apiKey,
    pubsubApiKey: SANDBOX_DEFAULTS.pubsubApiKey,
  },
  webhook: { secret: 'fixture-secret', previousSecret: 'fixture-previous-secret', headerValue: 'fixture-key' },
  'create-topic': { secretToken: 'fixture-token', webhookHeader: 'x-key:fixture' },
};
