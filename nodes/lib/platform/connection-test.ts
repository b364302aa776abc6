import { SvcError } from '../util/errors';
import { CatalogText, catalogText } from '../util/catalog-text';
import type { PlatformClient } from './client';

/**
 * The editor's "Test connection": each credential of a config node checked with the cheapest request
 * that tells an accepted credential from a refused one and creates nothing. Which secrets may be used
 * is decided by the Node-RED glue; this module only asks and reports, in the pack's own words: the
 * text of a response never reaches the report (the address tested may be anyone's).
 */

/** The credentials a config node holds, in the order the report names them. */
export const CREDENTIALS = ['token', 'apiKey', 'topicsKey'] as const;
export type Credential = (typeof CREDENTIALS)[number];

/**
 * - `accepted`: the request got a 2xx response;
 * - `refused`: the platform refused the credential (401; 401 or 403 at the token endpoint);
 * - `failed`: any other failure (no response, another status, a setting missing);
 * - `notSet`: the dialog holds no such secret;
 * - `retype`: a stored secret that this test may not use (see the glue): the user types it again.
 */
export type Outcome = 'accepted' | 'refused' | 'failed' | 'notSet' | 'retype';

export interface CheckResult {
  credential: Credential;
  outcome: Outcome;
  /** An error code (`UNAUTHORIZED`, `NETWORK` …), or null when accepted or not set. */
  code: string | null;
  statusCode: number | null;
  message: CatalogText;
}

/** Why a stored secret is not used: no running node with that id, or a setting it goes with has changed. */
export type RetypeReason = { kind: 'notRunning' } | { kind: 'changed'; settings: CatalogText[] };

/** What to do with each credential: check it (with the client's credentials), or report it at once. */
export type Plan = Record<Credential, { check: true } | { check: false; notSet: true } | { check: false; retype: RetypeReason }>;

/** Fixed on the server, never taken from the request: a test reads little and waits briefly. */
export const TEST_LIMITS = {
  timeoutMs: 10_000,
  maxResponseBytes: 64 * 1024,
  maxFileBytes: 64 * 1024,
} as const;

/**
 * The query the API key is checked with: one single geocode, which every geocoding key may make and
 * which creates nothing (job status reads would be free, but a key limited to geocoding is refused there).
 */
const API_KEY_PROBE = { path: '/v1/geocode', query: { address: 'Test connection' } } as const;
/** The topics key: listing topics reads, and creates nothing. */
const TOPICS_KEY_PROBE = { path: '/v1/pubsub/topics' } as const;

const SETTINGS_TO_CHECK: Record<Credential, CatalogText> = {
  token: catalogText('test.fix.token'),
  apiKey: catalogText('test.fix.apiKey'),
  topicsKey: catalogText('test.fix.topicsKey'),
};

/** Runs the checks the plan asks for, side by side; never rejects. */
export async function checkCredentials(client: PlatformClient, plan: Plan): Promise<CheckResult[]> {
  return Promise.all(CREDENTIALS.map((credential) => checkOne(client, credential, plan[credential])));
}

async function checkOne(client: PlatformClient, credential: Credential, step: Plan[Credential]): Promise<CheckResult> {
  if (!step.check) {
    if ('notSet' in step) return { credential, outcome: 'notSet', code: null, statusCode: null, message: catalogText('test.notSet') };
    const text =
      step.retype.kind === 'notRunning'
        ? catalogText('test.retype.notRunning', { secret: catalogText(`test.secret.${credential}`) })
        : catalogText('test.retype.changed', { secret: catalogText(`test.secret.${credential}`), settings: step.retype.settings });
    return { credential, outcome: 'retype', code: 'INVALID_INPUT', statusCode: null, message: text };
  }
  try {
    await probe(client, credential);
    return { credential, outcome: 'accepted', code: null, statusCode: null, message: catalogText(`test.accepted.${credential}`) };
  } catch (err) {
    return failure(credential, err);
  }
}

function probe(client: PlatformClient, credential: Credential): Promise<unknown> {
  switch (credential) {
    case 'token':
      return client.fetchToken();
    case 'apiKey':
      return client.request({ auth: 'project', rate: 'geocode', method: 'POST', ...API_KEY_PROBE, retry: 'read' });
    case 'topicsKey':
      return client.request({ auth: 'pubsub', rate: 'topics', method: 'GET', ...TOPICS_KEY_PROBE, retry: 'read' });
  }
}

function failure(credential: Credential, err: unknown): CheckResult {
  if (!(err instanceof SvcError)) {
    return { credential, outcome: 'failed', code: 'NETWORK', statusCode: null, message: catalogText('test.failed.other') };
  }
  const statusCode = err.statusCode ?? null;
  // A 2xx whose body is too large or not JSON still says the credential was accepted.
  if (statusCode !== null && statusCode >= 200 && statusCode < 300 && credential !== 'token') {
    return { credential, outcome: 'accepted', code: null, statusCode: null, message: catalogText(`test.accepted.${credential}`) };
  }
  if (isRefusal(credential, err)) {
    return {
      credential,
      outcome: 'refused',
      code: err.code,
      statusCode,
      message: catalogText('test.refused', { statusCode: String(statusCode), fix: SETTINGS_TO_CHECK[credential] }),
    };
  }
  return { credential, outcome: 'failed', code: err.code, statusCode, message: failureText(err) };
}

/** The platform refuses a key with 401 (spec); the token endpoint also with 403 (a wrong audience). */
function isRefusal(credential: Credential, err: SvcError): boolean {
  return err.code === 'UNAUTHORIZED' || (credential === 'token' && err.code === 'FORBIDDEN');
}

/**
 * The pack's own text for a failure: the status, the error code of a failed connection (ECONNREFUSED,
 * CERT_HAS_EXPIRED …) or the settings that are missing; never what the response said.
 */
function failureText(err: SvcError): CatalogText {
  if (err.code === 'CONFIG_INVALID' && err.text) return err.text;
  if (err.code === 'TIMEOUT') return catalogText('test.failed.timeout', { seconds: TEST_LIMITS.timeoutMs / 1000 });
  if (err.statusCode !== undefined) {
    return err.code === 'BAD_RESPONSE'
      ? catalogText('test.failed.unreadable', { statusCode: err.statusCode })
      : catalogText('test.failed.status', { statusCode: err.statusCode });
  }
  // The address setting the failed connection went to, as the client names it (the token's at the Token URL).
  if (err.connection) {
    const params = { cause: causeCode(err.cause), address: err.connection.address };
    if (err.code === 'TLS') return catalogText('test.failed.tls', params);
    if (err.code === 'NETWORK') return catalogText('test.failed.network', params);
  }
  return catalogText('test.failed.other');
}

/** The system or library code of a failed connection, a fixed word such as ECONNREFUSED; `?` if there is none. */
function causeCode(cause: unknown): string {
  const code = (cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{2,64}$/.test(code) ? code : '?';
}
