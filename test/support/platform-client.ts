import should from 'should';
import { PlatformClient } from '../../nodes/lib/platform/client';
import type { ClientConfig, PlatformRequest } from '../../nodes/lib/platform/types';
import { SvcError } from '../../nodes/lib/util/errors';
import { Sandbox, SANDBOX_DEFAULTS, startSandbox } from '../../sandbox';

/** A PlatformClient pointed at a sandbox, for the unit specs of the platform layer and their suites. */

/** Client settings matching the harness's config node: no rate limit, short timeout, two retries. */
export function sandboxClientConfig(sandbox: Sandbox, overrides: Partial<ClientConfig> = {}): ClientConfig {
  return {
    baseUrl: sandbox.url,
    authUrl: sandbox.url,
    sandboxUrl: sandbox.url,
    audience: SANDBOX_DEFAULTS.audience,
    projectId: SANDBOX_DEFAULTS.projectId,
    credentials: {
      clientId: SANDBOX_DEFAULTS.clientId,
      clientSecret: SANDBOX_DEFAULTS.clientSecret,
      apiKey: SANDBOX_DEFAULTS.apiKey,
      pubsubApiKey: SANDBOX_DEFAULTS.pubsubApiKey,
    },
    timeoutMs: 2000,
    maxResponseBytes: 5 * 1024 * 1024,
    maxFileBytes: 100 * 1024 * 1024,
    ratePerMinute: 0,
    maxConcurrency: 8,
    maxQueue: 1000,
    maxRetries: 2,
    tokenLifetimeSec: 3600,
    ...overrides,
  };
}

/** A single-geocode request to the sandbox; `extra` changes any part of it. */
export const geocode = (extra: Partial<PlatformRequest> = {}): PlatformRequest => ({
  auth: 'project',
  rate: 'geocode',
  method: 'POST',
  path: '/v1/geocode',
  query: { address: '12 Main Street' },
  retry: 'read',
  ...extra,
});

/** Tracks the clients a suite creates so that `closeClients()` in afterEach closes every one. */
export function clientFactory(): {
  create(sandbox: Sandbox, overrides?: Partial<ClientConfig>): PlatformClient;
  closeClients(): Promise<void>;
} {
  const open: PlatformClient[] = [];
  return {
    create(sandbox, overrides = {}) {
      const client = new PlatformClient(sandboxClientConfig(sandbox, overrides));
      open.push(client);
      return client;
    },
    async closeClients() {
      await Promise.all(open.splice(0).map((client) => client.close()));
    },
  };
}

/**
 * A sandbox for a client suite, with `addRoutes` run once it listens; between tests every client the
 * suite created is closed and faults and log are cleared.
 */
export function clientSuite(addRoutes: (sandbox: Sandbox) => void = () => undefined): {
  clients: ReturnType<typeof clientFactory>;
  readonly sandbox: Sandbox;
} {
  const clients = clientFactory();
  let sandbox: Sandbox | undefined;
  before(async function () {
    // Jobs complete on their third poll (the sandbox's test knob), as in the node suites.
    sandbox = await startSandbox({ jobPolls: 3 });
    addRoutes(sandbox);
  });
  afterEach(async function () {
    await clients.closeClients();
    sandbox?.clearFaults();
    sandbox?.log.splice(0);
  });
  after(async function () {
    await sandbox?.close();
  });
  return {
    clients,
    get sandbox(): Sandbox {
      if (!sandbox) throw new Error('sandbox not started');
      return sandbox;
    },
  };
}

/** The promise's rejection as one of the pack's errors (SvcError); fails the test if it resolves or rejects otherwise. */
export async function rejectionOf(promise: Promise<unknown>): Promise<SvcError> {
  try {
    await promise;
  } catch (err) {
    should(err).be.instanceOf(SvcError);
    return err as SvcError;
  }
  throw new Error('expected a rejection, got a result');
}
