import { randomUUID } from 'node:crypto';
import { ReplyError } from 'ioredis';
import { redisDeployment } from './redis-deployment';
import { DEFAULT_KEY_PREFIX } from './shared-state';
import { redact } from '../util/masking';

/** What Test connection found of a shared-state URL (see checkSharedState). */
export interface SharedCheck {
  outcome: 'accepted' | 'failed';
  /** `url` (not one of the forms), `connect`, `auth`, `readonly`, `refused` (another refusal, `code` says which); null when accepted. */
  problem: 'url' | 'connect' | 'auth' | 'readonly' | 'refused' | null;
  /** A Redis reply code (`NOAUTH`, `READONLY`, `OOM` …) or CONFIG_INVALID / NETWORK; null when accepted. */
  code: string | null;
  /** The URL without credentials, or the reason it is not one. */
  address: string;
  /** Why a connection could not be made, without a secret of the URL. */
  cause: string;
}

const TEST_TIMEOUT_MS = 5000;
/** A write that leaves nothing: the key is removed by the same script (and expires in a second anyway). */
const TEST_WRITE = `redis.call('SET', KEYS[1], ARGV[1], 'PX', 1000)
redis.call('DEL', KEYS[1])
return 1`;
const AUTH_REFUSED = /NOAUTH|WRONGPASS|invalid password|invalid username-password/i;

/**
 * Test connection's look at shared state: the URL is one of the forms, its servers can be reached
 * (through the Sentinels, or the cluster's seed nodes), they take the credentials, and the master
 * accepts a write (a script that sets and removes a key of its own: nothing lasts). Never rejects.
 */
export async function checkSharedState(url: string, keyPrefix = DEFAULT_KEY_PREFIX): Promise<SharedCheck> {
  let deployment: ReturnType<typeof redisDeployment>;
  try {
    deployment = redisDeployment(url);
  } catch (err) {
    return { outcome: 'failed', problem: 'url', code: 'CONFIG_INVALID', address: '', cause: err instanceof Error ? err.message : String(err) };
  }
  const failed = (err: unknown): SharedCheck => {
    const cause = redact(err instanceof Error ? err.message : String(err), deployment.secrets);
    const code = err instanceof ReplyError ? cause.split(' ')[0] : 'NETWORK';
    if (AUTH_REFUSED.test(cause)) return { outcome: 'failed', problem: 'auth', code, address: deployment.address, cause };
    if (code === 'READONLY') return { outcome: 'failed', problem: 'readonly', code, address: deployment.address, cause };
    return { outcome: 'failed', problem: err instanceof ReplyError ? 'refused' : 'connect', code, address: deployment.address, cause };
  };
  let client: ReturnType<typeof deployment.connect>;
  try {
    client = deployment.connect({
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: TEST_TIMEOUT_MS,
      connectTimeout: TEST_TIMEOUT_MS,
      connectionName: 'node-red-location-test',
      lazyConnect: true,
      // One attempt: a test reports what it finds rather than wait for a server to come.
      retryStrategy: () => null,
    });
  } catch (err) {
    // ioredis refusing its options: reported as any other failure, so that the route always responds.
    return failed(err);
  }
  let firstError: Error | undefined;
  client.on('error', (err: Error) => (firstError ??= err));
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(firstError ?? new Error(`no connection within ${TEST_TIMEOUT_MS / 1000} s`)), TEST_TIMEOUT_MS);
    });
    await Promise.race([client.connect(), timeout]);
    await Promise.race([client.eval(TEST_WRITE, 1, `${keyPrefix}{test}:${randomUUID()}`, '1'), timeout]);
    return { outcome: 'accepted', problem: null, code: null, address: deployment.address, cause: '' };
  } catch (err) {
    return failed(err instanceof ReplyError ? err : (firstError ?? err));
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}
