import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import helper from 'node-red-node-test-helper';
type TestNode = helper.TestNode;
import { Sandbox, SANDBOX_DEFAULTS, SandboxOptions, startSandbox } from '../../sandbox';
import { NODES_DIR, NODE_RED_DIR } from './paths';
import { localJobStore } from '../../nodes/lib/node-red/resumable';
import type { JobStore } from '../../nodes/lib/state/job-store';

/**
 * Shared test plumbing: Node-RED (4.x by default, another build with NODE_RED_PATH),
 * a sandbox per suite, a config node pointed at it, and one-message-one-outcome helpers.
 */
helper.init(require.resolve(NODE_RED_DIR));

export { helper, Sandbox, SANDBOX_DEFAULTS };
export type { TestNode };

export const CONFIG_ID = 'cfg';

/** The compiled node module of a node type, ready for helper.load(). */
export function nodeModule(type: string): unknown {
  return require(path.join(NODES_DIR, type, `${type}.js`));
}

export type Fields = Record<string, unknown>;

/** A svc-config node pointed at the sandbox; `overrides` change its properties. */
export function configNode(sandbox: Sandbox, overrides: Fields = {}): Fields {
  return {
    id: CONFIG_ID,
    type: 'svc-config',
    name: 'sandbox',
    baseUrl: sandbox.url,
    authUrl: sandbox.url,
    sandboxUrl: sandbox.url,
    audience: SANDBOX_DEFAULTS.audience,
    projectId: SANDBOX_DEFAULTS.projectId,
    timeout: 2000,
    rateLimit: 0,
    maxConcurrency: 8,
    maxQueue: 1000,
    maxRetries: 2,
    tokenLifetime: 3600,
    // A closing node stops its messages at once, as before drains existed; the drain's own tests set it.
    drainSeconds: 0,
    ...overrides,
  };
}

export function sandboxCredentials(overrides: Fields = {}): Record<string, Record<string, string>> {
  return {
    [CONFIG_ID]: {
      clientId: SANDBOX_DEFAULTS.clientId,
      clientSecret: SANDBOX_DEFAULTS.clientSecret,
      apiKey: SANDBOX_DEFAULTS.apiKey,
      pubsubApiKey: SANDBOX_DEFAULTS.pubsubApiKey,
      ...(overrides as Record<string, string>),
    },
  };
}

export interface LoadOptions {
  /** Node types to load besides svc-config. */
  types: string[];
  /** The node under test and any others; a helper node `out` is added and wired from `nodeId`. */
  nodes: Fields[];
  config?: Fields;
  credentials?: Fields;
  /** Extra credentials for other nodes, by id. */
  nodeCredentials?: Record<string, Record<string, string>>;
}

/** Loads svc-config + the given nodes with a helper node `out` wired to the first node's output. */
export async function loadWithSandbox(sandbox: Sandbox, options: LoadOptions): Promise<void> {
  const first = options.nodes[0];
  const flow: Fields[] = [
    configNode(sandbox, options.config),
    ...options.nodes.map((n, i) => (i === 0 ? { wires: [['out']], ...n, server: n.server ?? CONFIG_ID } : n)),
    { id: 'out', type: 'helper' },
  ];
  if (!first) throw new Error('loadWithSandbox needs a node');
  await helper.load(['svc-config', ...options.types].map(nodeModule), flow, { ...sandboxCredentials(options.credentials), ...(options.nodeCredentials ?? {}) });
}

export type Outcome = { kind: 'output'; msg: Fields } | { kind: 'error'; error: Error & Fields; msg: Fields };

/** Everything one input message led to: the messages that reached `out`, and the error it ended with, if any. */
export interface Collected {
  outputs: Fields[];
  error?: { error: Error & Fields; msg: Fields };
}

interface NodeInternals {
  // A function-typed member: it is taken off the node and called back with its `this`.
  _complete: (this: NodeInternals, msg: unknown, error?: unknown) => void;
}

/**
 * Sends one message to `nodeId` and collects what came of it until the node calls done() for it:
 * every message that reached `out`, and the error done(err) reported (it reaches node.error, and so
 * Catch nodes). Rejects if the node does not call done within `timeoutMs`.
 */
export function sendAndCollect(nodeId: string, msg: Fields, timeoutMs = 5000): Promise<Collected> {
  return new Promise((resolve, reject) => {
    const node = helper.getNode(nodeId);
    const internals = node as unknown as NodeInternals;
    const out = helper.getNode('out');
    const collected: Collected = { outputs: [] };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`${nodeId} did not call done() within ${timeoutMs} ms (${collected.outputs.length} outputs so far)`));
    }, timeoutMs);
    const onOutput = (received: Fields) => collected.outputs.push(received);
    const onError = (call: { args: unknown[] }) => {
      if (collected.error) reject(new Error(`${nodeId} reported a second error: ${String(call.args[0])}`));
      collected.error = { error: call.args[0] as Error & Fields, msg: (call.args[1] ?? {}) as Fields };
    };
    // done() ends in Node._complete: watched on this instance, so the outcome is known only once the node says it is done.
    const complete = internals._complete;
    internals._complete = function (this: NodeInternals, doneMsg: unknown, error?: unknown) {
      complete.call(this, doneMsg, error);
      // The spies report node.send and node.error on the next tick, and Node-RED delivers messages on setImmediate.
      setImmediate(() =>
        setImmediate(() => {
          cleanup();
          resolve(collected);
        }),
      );
    };
    function cleanup(): void {
      clearTimeout(timer);
      out.removeListener('input', onOutput);
      node.removeListener('call:error', onError);
      delete (internals as Partial<NodeInternals>)._complete;
    }
    out.on('input', onOutput);
    node.on('call:error', onError);
    node.receive(msg);
  });
}

/**
 * Sends one message and resolves with its one outcome: the output at `out`, or the error.
 * Rejects when the node breaks the one-outcome contract: output and error for one message,
 * several outputs, or done() with neither.
 */
export async function sendAndWait(nodeId: string, msg: Fields, timeoutMs = 5000): Promise<Outcome> {
  const { outputs, error } = await sendAndCollect(nodeId, msg, timeoutMs);
  if (error && outputs.length > 0)
    throw new Error(`${nodeId} both sent ${outputs.length} message(s) and reported an error (${error.error.message}) for one input`);
  if (error) return { kind: 'error', ...error };
  if (outputs.length !== 1) throw new Error(`${nodeId} sent ${outputs.length} messages for one input and reported no error`);
  return { kind: 'output', msg: outputs[0] };
}

/** Sends one message and expects an output; fails the test with the error otherwise. */
export async function expectOutput(nodeId: string, msg: Fields, timeoutMs?: number): Promise<Fields> {
  const outcome = await sendAndWait(nodeId, msg, timeoutMs);
  if (outcome.kind === 'error') throw new Error(`expected an output, got error: ${outcome.error.message}`);
  return outcome.msg;
}

/** Sends one message and expects an error; returns it with the message it was reported with. */
export async function expectError(nodeId: string, msg: Fields, timeoutMs?: number): Promise<{ error: Error & Fields; msg: Fields }> {
  const outcome = await sendAndWait(nodeId, msg, timeoutMs);
  if (outcome.kind === 'output') throw new Error(`expected an error, got output: ${JSON.stringify(outcome.msg).slice(0, 300)}`);
  return outcome;
}

let userDir: string | undefined;

/**
 * The Node-RED user directory of the running test: each test of a suite that uses `useSandbox` gets
 * a new one, so that what a test stores (jobs, daily counts) is that test's own, as on a fresh install.
 */
export function testUserDir(): string {
  if (!userDir) throw new Error('no test user directory: call useSandbox() in the suite');
  return userDir;
}

/** Node-RED settings for the running test's next load, on the test's own user directory; the next test starts from the defaults. */
export function testSettings(settings: Fields = {}): void {
  helper.settings({ userDir: testUserDir(), ...settings });
}

/** The job store of the running test's Node-RED (the config node `cfg`'s file in the test's user directory). */
export function storedJobStore(): JobStore {
  return localJobStore(testUserDir(), CONFIG_ID);
}

/** Polls a job takes in the node suites unless a suite says otherwise (`jobPolls: undefined`: by the sandbox's clock). */
export const TEST_JOB_POLLS = 3;

/** Starts a sandbox before the suite and stops it after; faults and logs are cleared between tests. */
export function useSandbox(options: SandboxOptions = {}): { readonly sandbox: Sandbox } {
  const holder: { sandbox?: Sandbox } = {};
  before(async () => {
    holder.sandbox = await startSandbox({ jobPolls: TEST_JOB_POLLS, ...options });
  });
  // Suites nested in one that uses a sandbox may use their own: the test still gets one user directory.
  beforeEach(() => {
    if (userDir) return;
    userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-unit-'));
    testSettings();
  });
  afterEach(async () => {
    await helper.unload();
    if (userDir) {
      await storedJobStore().flush();
      fs.rmSync(userDir, { recursive: true, force: true });
      userDir = undefined;
      helper.settings({});
    }
    holder.sandbox?.clearFaults();
    holder.sandbox?.log.splice(0);
  });
  after(async () => {
    await holder.sandbox?.close();
  });
  return {
    get sandbox(): Sandbox {
      if (!holder.sandbox) throw new Error('sandbox not started');
      return holder.sandbox;
    },
  };
}
