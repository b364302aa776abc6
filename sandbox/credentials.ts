import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The built-in sandbox's own credentials: made at random the first time a user directory
 * runs it, then read back from `sandbox.json` in its folder (mode 0600, written through a temporary
 * file and a rename), so no two installs share them and nobody types them. Never printed or logged.
 */
export interface GeneratedCredentials {
  clientId: string;
  clientSecret: string;
  apiKey: string;
  pubsubApiKey: string;
  /** The secret the built-in sandbox's subscriptions sign with by default, and its webhook receivers check. */
  webhookSecret: string;
}

const FIELDS: Array<keyof GeneratedCredentials> = ['clientId', 'clientSecret', 'apiKey', 'pubsubApiKey', 'webhookSecret'];

const CREDENTIALS_FILE = 'sandbox.json';

/** The credentials kept in `folder`, made and written there when there are none (or they cannot be read); without a folder, made for this run only. */
export function generatedCredentials(folder: string | undefined): GeneratedCredentials {
  const file = folder === undefined ? undefined : path.join(folder, CREDENTIALS_FILE);
  const kept = file === undefined ? undefined : readCredentials(file);
  if (kept) return kept;
  const made: GeneratedCredentials = {
    clientId: `sandbox-client-${randomBytes(6).toString('hex')}`,
    clientSecret: randomBytes(24).toString('base64url'),
    apiKey: randomBytes(24).toString('base64url'),
    pubsubApiKey: randomBytes(24).toString('base64url'),
    webhookSecret: randomBytes(24).toString('base64url'),
  };
  if (folder === undefined || file === undefined) return made;
  fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, JSON.stringify({ version: 1, ...made }, null, 2), { mode: 0o600 });
  fs.renameSync(temporary, file);
  return made;
}

function readCredentials(file: string): GeneratedCredentials | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const record = parsed as Record<string, unknown>;
  if (!FIELDS.every((field) => typeof record[field] === 'string' && record[field] !== '')) return undefined;
  return Object.fromEntries(FIELDS.map((field) => [field, record[field]])) as unknown as GeneratedCredentials;
}
