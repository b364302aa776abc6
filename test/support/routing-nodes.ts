import { createHook } from 'node:async_hooks';
import fs from 'node:fs';
import path from 'node:path';
import should from 'should';
import { CONFIG_ID, storedJobStore, expectError, expectOutput, helper, loadWithSandbox, sendAndWait, testUserDir, Fields, Sandbox } from './harness';
import type { StoredJob } from '../../nodes/lib/state/job-store';
import { NODES_DIR } from './paths';
import { waitUntil } from './wait';

/** Test plumbing shared by the isoline, sequencing and routing specs. */

export interface NodeUnderTest {
  ctx: { readonly sandbox: Sandbox };
  type: string;
  /** The sandbox endpoint name the node's first request goes to. */
  endpoint: string;
  node: Fields;
  /** A message that succeeds. */
  msg: () => Fields;
}

/** Headers of the endpoint families, with the sandbox's default project and key. */
export const PROJECT_HEADERS = { 'x-svc-project-id': 'sandbox-project', 'x-svc-api-key': 'sandbox-api-key' };
export const VPM_HEADERS = { 'x-svc-vpm-id': 'sandbox-project', 'x-svc-api-key': 'sandbox-api-key' };

/** One raw request to the sandbox, to check the instrument itself. */
export async function callSandbox(
  sandbox: Sandbox,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; body: Fields }> {
  const res = await fetch(sandbox.url + path, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Fields };
}

/** Checks that the sandbox responds to each request with the status and a JSON error message matching the pattern. */
export function sandboxRefusals(
  ctx: { readonly sandbox: Sandbox },
  cases: Array<[string, { method?: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: unknown }, number, RegExp]>,
): void {
  for (const [what, call, status, message] of cases) {
    it(`responds with ${status} to ${what}`, async function () {
      const response = await callSandbox(ctx.sandbox, call.method ?? 'POST', call.path, call.headers, call.body);
      should(response.status).equal(status);
      should(response.body.message).match(message);
    });
  }
}

/** Parsed JSON bodies of the requests logged for an endpoint. */
export function bodies(sandbox: Sandbox, endpoint: string): Fields[] {
  return sandbox.requests(endpoint).map((r) => JSON.parse(r.body) as Fields);
}

export function lastBody(sandbox: Sandbox, endpoint: string): Fields {
  const all = bodies(sandbox, endpoint);
  should(all.length).be.above(0, `no request reached ${endpoint}`);
  return all[all.length - 1];
}

/**
 * Records timers created from the pack's runtime code (their creation stack passes through
 * `nodes/`) until `stop()`, which returns the stacks of those still pending and holding the
 * process open (unref'd timers, such as undici's shared clock, keep nothing alive).
 */
function trackPackTimers(): { open(): string[]; stop(): string[] } {
  const pending = new Map<number, { timer: NodeJS.Timeout; stack: string }>();
  const hook = createHook({
    init(id, type, _trigger, resource) {
      if (type !== 'Timeout') return;
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 100;
      const stack = new Error().stack ?? '';
      Error.stackTraceLimit = limit;
      if (stack.includes(NODES_DIR)) pending.set(id, { timer: resource as NodeJS.Timeout, stack });
    },
    destroy(id) {
      pending.delete(id);
    },
  }).enable();
  const open = () => [...pending.values()].filter(({ timer }) => timer.hasRef()).map(({ stack }) => stack);
  return {
    open,
    stop() {
      hook.disable();
      return open();
    },
  };
}

/** Texts the node's status showed. */
export function statusTexts(nodeId: string): string[] {
  const calls = helper.getNode(nodeId).status.getCalls?.() ?? [];
  return calls.map((call) => String((call.args[0] as { text?: string }).text ?? ''));
}

/**
 * Messages the node refuses before any request, with INVALID_INPUT, a message naming the problem, and the message kept;
 * the status shows the problem too (issue 54): the start of the message, up to what to do.
 */
export function refusalTests(ctx: { readonly sandbox: Sandbox }, load: () => Promise<void>, endpoint: string, cases: Array<[string, Fields, RegExp]>): void {
  for (const [what, msg, message] of cases) {
    it(`refuses ${what}`, async function () {
      await load();
      const { error, msg: kept } = await expectError('n1', msg);
      should(error.code).equal('INVALID_INPUT');
      should(error.message).match(message);
      should(kept.payload).eql(msg.payload);
      should(ctx.sandbox.requests(endpoint)).have.length(0);
      const status = statusTexts('n1').at(-1) ?? '';
      should(status).startWith('INVALID_INPUT: ');
      should(error.message.replace(/ — .*$/, '')).startWith(status.slice('INVALID_INPUT: '.length).replace(/…$/, ''));
    });
  }
}

/** The fault tests every routing node passes: 401, 429, 5xx, timeouts, resets and malformed JSON. */
export function faultTests(t: NodeUnderTest): void {
  const load = (extra: { credentials?: Fields; config?: Fields } = {}) => loadWithSandbox(t.ctx.sandbox, { types: [t.type], nodes: [t.node], ...extra });

  it('reports a 401 from a key without permission as UNAUTHORIZED with msg.statusCode', async function () {
    await load({ credentials: { apiKey: 'sandbox-geocode-only-key' } });
    const { error, msg } = await expectError(t.node.id as string, t.msg());
    should(error.code).equal('UNAUTHORIZED');
    should(msg.statusCode).equal(401);
    should(error.message).equal("svc-config 'sandbox': API key refused (401): check the API key and Project id fields");
    should(t.ctx.sandbox.requests(t.endpoint)).have.length(1);
  });

  it('retries a 429 after Retry-After and succeeds', async function () {
    await load();
    t.ctx.sandbox.setFault(t.endpoint, { status: 429, retryAfter: '0', times: 1 });
    await expectOutput(t.node.id as string, t.msg());
    should(t.ctx.sandbox.requests(t.endpoint).map((r) => r.status)).eql([429, 200]);
  });

  it('gives up on a persistent 429 with RATE_LIMITED', async function () {
    await load();
    t.ctx.sandbox.setFault(t.endpoint, { status: 429, retryAfter: '0' });
    const { error, msg } = await expectError(t.node.id as string, t.msg());
    should(error.code).equal('RATE_LIMITED');
    should(msg.statusCode).equal(429);
    should(t.ctx.sandbox.requests(t.endpoint)).have.length(3);
  });

  it('retries a 503 (the computation is a read) and succeeds', async function () {
    await load();
    t.ctx.sandbox.setFault(t.endpoint, { status: 503, times: 1 });
    await expectOutput(t.node.id as string, t.msg());
    should(t.ctx.sandbox.requests(t.endpoint).map((r) => r.status)).eql([503, 200]);
  });

  it('reports a persistent 500 as SERVER with msg.statusCode', async function () {
    await load();
    t.ctx.sandbox.setFault(t.endpoint, { status: 500 });
    const { error, msg } = await expectError(t.node.id as string, t.msg());
    should(error.code).equal('SERVER');
    should(msg.statusCode).equal(500);
  });

  it('times out a slow response with TIMEOUT after its retries', async function () {
    await load({ config: { timeout: 200 } });
    t.ctx.sandbox.setFault(t.endpoint, { delayMs: 1000 });
    const { error } = await expectError(t.node.id as string, t.msg(), 8000);
    should(error.code).equal('TIMEOUT');
    should(t.ctx.sandbox.requests(t.endpoint)).have.length(3);
  });

  it('retries a connection reset and succeeds', async function () {
    await load();
    t.ctx.sandbox.setFault(t.endpoint, { reset: true, times: 1 });
    await expectOutput(t.node.id as string, t.msg());
  });

  it('reports malformed JSON as BAD_RESPONSE', async function () {
    await load();
    t.ctx.sandbox.setFault(t.endpoint, { malformedJson: true });
    const { error, msg } = await expectError(t.node.id as string, t.msg());
    should(error.code).equal('BAD_RESPONSE');
    should(msg.statusCode).equal(200);
  });
}

/** The jobs stored for a node by the unit tests' Node-RED. */
function storedJobs(nodeId: string): Promise<StoredJob[]> {
  return storedJobStore().list(nodeId);
}

/**
 * An asynchronous job cancelled while polling: closing the node ends the message with CANCELLED;
 * a redeploy (helper.unload) stops the polling and leaves no timer behind.
 */
export function cancelledJobTests(t: NodeUnderTest & { jobEndpoint: string }): void {
  async function whilePolling(run: () => Promise<void>, polls = 1000): Promise<void> {
    const { sandbox } = t.ctx;
    const jobPolls = sandbox.options.jobPolls;
    sandbox.options.jobPolls = polls;
    try {
      await run();
    } finally {
      sandbox.options.jobPolls = jobPolls;
    }
  }

  it('ends a polled job with CANCELLED and drops it when the node is removed', async function () {
    await whilePolling(async () => {
      await loadWithSandbox(t.ctx.sandbox, { types: [t.type], nodes: [t.node] });
      const outcome = sendAndWait(t.node.id as string, t.msg());
      await waitUntil(() => t.ctx.sandbox.requests(t.jobEndpoint).length >= 2, 'two polls');
      await (helper.getNode(t.node.id as string) as unknown as { close(removed: boolean): Promise<void> }).close(true);
      const result = await outcome;
      should(result.kind).equal('error');
      should((result as { error: Fields }).error.code).equal('CANCELLED');
      should(await storedJobs(t.node.id as string)).eql([]);
    });
  });

  it('resumes a polled job in the node that replaces it on a deploy, as a new message with msg.resumed', async function () {
    const { sandbox } = t.ctx;
    await whilePolling(async () => {
      await loadWithSandbox(sandbox, { types: [t.type], nodes: [t.node] });
      const errors: unknown[] = [];
      helper.getNode(t.node.id as string).on('call:error', (call: { args: unknown[] }) => errors.push(call.args[0]));
      helper.getNode(t.node.id as string).receive({ ...t.msg(), tag: 'first', buffer: Buffer.from('x'), req: { socket: {} } });
      await waitUntil(() => sandbox.requests(t.jobEndpoint).length >= 2, 'two polls');
      await helper.unload();
      should(errors).eql([]);
      const [stored] = await storedJobs(t.node.id as string);
      should(stored.msg).eql({ tag: 'first' });
      await loadWithSandbox(sandbox, { types: [t.type], nodes: [t.node] });
      const resumed = await new Promise<Fields>((resolve) => helper.getNode('out').once('input', resolve));
      should(resumed).have.properties({ resumed: true, tag: 'first' });
      should(resumed).not.have.properties(['req', 'buffer']);
      should((resumed.jobs as Fields[])[0]).have.property('jobId', (stored.job.state as Fields).jobId);
      should(await storedJobs(t.node.id as string)).eql([]);
    }, 8);
  });

  it('stores only what a resumed flow needs: no headers, cookies or members named like credentials, at any depth', async function () {
    const { sandbox } = t.ctx;
    await whilePolling(async () => {
      await loadWithSandbox(sandbox, { types: [t.type], nodes: [t.node] });
      const secrets = ['Bearer from-elsewhere-1', 'cookie-value-2', 'token-value-3', 'password-value-4', 'key-value-5', 'secret-value-6', 'session-7'];
      helper.getNode(t.node.id as string).receive({
        ...t.msg(),
        tag: 'first',
        headers: { authorization: secrets[0], 'content-type': 'application/json' },
        cookies: { sid: secrets[1] },
        responseCookies: { sid: { value: secrets[1] } },
        token: secrets[2],
        auth: { user: 'u', password: secrets[3] },
        shipment: { id: 7, apiKey: secrets[4], lines: [{ sku: 'a', client_secret: secrets[5] }], 'X-Session-Id': secrets[6] },
      });
      await waitUntil(() => sandbox.requests(t.jobEndpoint).length >= 2, 'two polls');
      await helper.unload();
      await storedJobStore().flush();
      const [stored] = await storedJobs(t.node.id as string);
      should(stored.msg).eql({ tag: 'first', shipment: { id: 7, lines: [{ sku: 'a' }] } });
      const file = fs.readFileSync(path.join(testUserDir(), 'svc-location', `jobs-${CONFIG_ID}.json`), 'utf8');
      for (const secret of secrets) should(file).not.containEql(secret);
      await loadWithSandbox(sandbox, { types: [t.type], nodes: [t.node] });
      const resumed = await new Promise<Fields>((resolve) => helper.getNode('out').once('input', resolve));
      should(resumed).have.properties({ resumed: true, tag: 'first', shipment: { id: 7, lines: [{ sku: 'a' }] } });
      should(resumed).not.have.properties(['headers', 'cookies', 'responseCookies', 'token', 'auth']);
    }, 8);
  });

  it('resumes a job with its stored state: the wait limit counts from when the service accepted it, not from the resume', async function () {
    const { sandbox } = t.ctx;
    await whilePolling(async () => {
      await loadWithSandbox(sandbox, { types: [t.type], nodes: [{ ...t.node, maxWait: 600 }] });
      const acceptedBefore = Date.now();
      helper.getNode(t.node.id as string).receive(t.msg());
      await waitUntil(() => sandbox.requests(t.jobEndpoint).length >= 2, 'two polls');
      await helper.unload();
      const store = storedJobStore();
      const [stored] = await store.list(t.node.id as string);
      const state = stored.job.state as Fields;
      should(state.statusPath).equal(sandbox.requests(t.jobEndpoint)[0].path);
      should(state.statusPath).endWith(`/${String(state.jobId)}`);
      should(state.createdAt).be.within(acceptedBefore, Date.now());
      should(state.polls).be.aboveOrEqual(1);
      // As if the job had been accepted 601 s ago: the resumed job is already past its 600 s limit.
      await store.update(stored.key, { ...stored.job, state: { ...state, createdAt: Date.now() - 601_000 } });
      const polls = sandbox.requests(t.jobEndpoint).length;
      await loadWithSandbox(sandbox, { types: [t.type], nodes: [{ ...t.node, maxWait: 600 }] });
      // The node's error spy records the call even if it came before this line.
      const errors = () => (helper.getNode(t.node.id as string).error as unknown as { getCalls(): Array<{ args: Fields[] }> }).getCalls();
      await waitUntil(() => errors().length > 0, 'the resumed job to fail');
      const error = errors()[0].args[0];
      should(error.code).equal('TIMEOUT');
      should(error.message).match(/600 s/);
      should(sandbox.requests(t.jobEndpoint)).have.length(polls);
      should(await storedJobs(t.node.id as string)).eql([]);
    });
  });

  it('stops polling on redeploy and leaves no timer behind', async function () {
    await whilePolling(async () => {
      const { sandbox } = t.ctx;
      const timers = trackPackTimers();
      await loadWithSandbox(sandbox, { types: [t.type], nodes: [t.node] });
      helper.getNode(t.node.id as string).receive(t.msg());
      await waitUntil(() => sandbox.requests(t.jobEndpoint).length >= 2, 'two polls');
      await helper.unload();
      const polls = sandbox.requests(t.jobEndpoint).length;
      // With no timer of the pack left, no poll can start any more.
      await waitUntil(() => timers.open().length === 0, 'the pack timers to end');
      should(timers.stop()).eql([]);
      should(sandbox.requests(t.jobEndpoint).length).equal(polls);
      // The job is kept for the node's next start.
      should(await storedJobs(t.node.id as string)).have.length(1);
    });
  });
}
