import should from 'should';
import { PlatformClient } from '../nodes/lib/platform/client';
import type { ClientConfig, PlatformRequest } from '../nodes/lib/platform/types';
import type { Clock } from '../nodes/lib/util/async';
import { SvcError } from '../nodes/lib/util/errors';
import { Sandbox, SANDBOX_DEFAULTS, startSandbox } from './sandbox';

/**
 * Plumbing shared by the foundation specs (token manager, platform client, request gate,
 * config, geocode, sandbox): a PlatformClient pointed at a sandbox, waiting for conditions,
 * and counting the process's open handles for the "close leaves nothing behind" checks.
 */

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
    sandbox = await startSandbox();
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

/** Resolves once `predicate` holds; polls, so it never depends on how fast the machine is. */
export async function waitUntil(predicate: () => boolean, what: string, timeoutMs = 4000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
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

/** Open timers and sockets of this process, by kind (`Timeout`, `TCPSocketWrap`, …). */
export function openHandles(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

/**
 * The open handles to compare against later. Taken after a turn of the event loop, so that
 * the test runner's own timeout timer (armed after a test function starts) is already counted.
 */
export async function handleBaseline(): Promise<Record<string, number>> {
  await new Promise((resolve) => setImmediate(resolve));
  return openHandles();
}

/**
 * Waits until no more timers and sockets are open than in `baseline` (the test's own handles,
 * such as the sandbox's listening socket, are in the baseline). Sockets close asynchronously
 * on both ends, hence the wait; a leak keeps the count up and fails after `timeoutMs`.
 */
export async function expectHandlesBackTo(baseline: Record<string, number>, timeoutMs = 3000): Promise<void> {
  const kinds = ['Timeout', 'TCPSocketWrap'];
  const excess = () => kinds.filter((kind) => (openHandles()[kind] ?? 0) > (baseline[kind] ?? 0));
  try {
    await waitUntil(() => excess().length === 0, 'handles to close', timeoutMs);
  } catch {
    throw new Error(`still open after close: ${JSON.stringify(openHandles())}, before: ${JSON.stringify(baseline)}`);
  }
}

/** A clock that moves only when told to, firing the timers that fall due on the way. */
export class ManualClock implements Clock {
  private time = 1_000_000;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();
  private nextId = 1;

  now(): number {
    return this.time;
  }

  setTimer(callback: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + ms, callback });
    return id;
  }

  clearTimer(timer: unknown): void {
    this.timers.delete(timer as number);
  }

  get pendingTimers(): number {
    return this.timers.size;
  }

  /** How far ahead the earliest timer is due; undefined when none is set. */
  nextTimerIn(): number | undefined {
    const next = Math.min(...[...this.timers.values()].map((timer) => timer.at));
    return Number.isFinite(next) ? Math.max(0, next - this.time) : undefined;
  }

  /** Moves time on by `ms` without firing any timer, as a stalled event loop does. */
  stall(ms: number): void {
    this.time += ms;
  }

  /** Moves time on by `ms`, firing each timer at its own time, in order, and letting promises settle after each. */
  async advance(ms: number): Promise<void> {
    const end = this.time + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, timer]) => timer.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      // An overdue timer (after `stall`) fires late, at the present time.
      this.time = Math.max(this.time, due[1].at);
      due[1].callback();
      await settle();
    }
    this.time = end;
    await settle();
  }
}

/** Lets resolved promises run their callbacks. */
export const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
