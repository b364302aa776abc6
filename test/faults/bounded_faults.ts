import os from 'node:os';
import path from 'node:path';
import should from 'should';
import { request } from 'undici';
import { Fault, LoggedRequest, Sandbox, startSandbox } from '../../sandbox';
import { addTopic } from '../../sandbox/pubsub-state';
import { Child } from '../bench/rpc';
import type { NodeRedMethods } from '../bench/nodered-process';
import { deployTo, waitFor } from '../bench/bench';
import { FlowNode, configNode, functionNode, httpIn, httpResponse, tab } from '../bench/flows';

/**
 * Issue 13, point 4, end to end: a real Node-RED process (embedded as an application embeds it) runs
 * every node of the pack against the sandbox, which responds on one endpoint at a time with a huge body
 * (chunked, or declaring its size), an endless one, one that drips a byte every 50 ms forever, or a
 * gzip bomb (256 KB that decode to 256 MB).
 * For every endpoint family and every such response: each message gets exactly one outcome, an error
 * naming the limit or the timeout, within a bounded time; the client stops reading (the sandbox could
 * hand over no more than the limit plus what loopback socket buffers hold) and Node-RED's resident
 * memory grows by far less than the bodies sent.
 */

const MB = 1024 * 1024;
/** The config node's limits for this suite: small, so that every body sent is far past them. */
const MAX_RESPONSE_MB = 1;
const MAX_FILE_MB = 2;
const TIMEOUT_MS = 1500;
const MAX_RETRIES = 1;
/** Messages sent at once per case. */
const MESSAGES = 3;
const HUGE_BYTES = 256 * MB;
/** What loopback socket buffers may hold besides what the client read. */
const SOCKET_BUFFERS = 16 * MB;
/** Node-RED's resident memory may grow by this much at most while a case runs (the bodies sent are 256 MB or endless). */
const RSS_GROWTH_BOUND = 64 * MB;
/** Two attempts of TIMEOUT_MS with a backoff between, for a few requests in a row (a job's start, polls, download). */
const CASE_DEADLINE_MS = 15_000;
/** After the last response, how long a second outcome for a message is waited for. */
const DUPLICATE_GRACE_MS = 1000;

type Fields = Record<string, unknown>;

interface NamedFault {
  name: string;
  fault: Fault;
  /** The error the message fails with. */
  code: string;
  message: RegExp;
}

const FAULTS = (limitMb: number, setting: string): NamedFault[] => [
  {
    name: 'a huge body',
    fault: { hugeBodyBytes: HUGE_BYTES },
    code: 'BAD_RESPONSE',
    message: new RegExp(`the response is larger than ${limitMb} MB \\(the "${setting}" of the svc-config node\\)`),
  },
  {
    name: 'a huge body declaring its size',
    fault: { hugeBodyBytes: HUGE_BYTES, declareLength: true },
    code: 'BAD_RESPONSE',
    message: new RegExp(`the response declares 256 MB, more than ${limitMb} MB \\(the "${setting}"`),
  },
  { name: 'an endless body', fault: { endlessBody: true }, code: 'BAD_RESPONSE', message: new RegExp(`larger than ${limitMb} MB`) },
  // 256 MB of JSON in 256 KB of gzip (issue 20 point 7): the limit is on the decoded bytes.
  {
    name: 'a gzip bomb',
    fault: { compressionBomb: 'gzip', bombBytes: HUGE_BYTES },
    code: 'BAD_RESPONSE',
    message: new RegExp(`the response is larger than ${limitMb} MB \\(the "${setting}"`),
  },
  { name: 'a body dripping forever', fault: { dripMs: 50 }, code: 'TIMEOUT', message: new RegExp(`no complete response within ${TIMEOUT_MS} ms`) },
];

interface Endpoint {
  /** The sandbox endpoint that misbehaves. */
  endpoint: string;
  type: string;
  node?: Fields;
  /** The members of a message that reaches the endpoint. */
  msg: (topicId: number) => Fields;
  file?: boolean;
}

const from = { lat: 52.52, lon: 13.405 };
const to = { lat: 52.5, lon: 13.38 };
/**
 * An accepted job waits out responses that time out until its Max wait (a dripping status or download
 * response is one): short here, so that the job ends with TIMEOUT, naming the last failure, within the case's deadline.
 */
const polling = { pollIntervalSec: 0.05, maxWait: 6 };
const words = { payload: 'index.home.raft' };
const addresses = { payload: ['12 Main Street, Sandbox City', '7 Elm Road'] };
const isoline = (async: boolean) => ({ payload: { origins: [from], range: { type: 'time', value: 600 }, async } });
const sequence = (async: boolean) => ({ payload: { waypoints: [from, to, { lat: 52.51, lon: 13.39 }], async } });

const ENDPOINTS: Endpoint[] = [
  { endpoint: 'geocode', type: 'svc-geocode', msg: () => ({ payload: '12 Main Street, Sandbox City' }) },
  { endpoint: 'words', type: 'svc-words', msg: () => words },
  { endpoint: 'token', type: 'svc-words', msg: () => words },
  { endpoint: 'bulk-upload', type: 'svc-bulk-geocode', node: polling, msg: () => addresses },
  { endpoint: 'bulk-status', type: 'svc-bulk-geocode', node: polling, msg: () => addresses },
  { endpoint: 'bulk-download', type: 'svc-bulk-geocode', node: polling, msg: () => addresses, file: true },
  { endpoint: 'isoline', type: 'svc-isoline', node: polling, msg: () => isoline(false) },
  { endpoint: 'isoline-job', type: 'svc-isoline', node: polling, msg: () => isoline(true) },
  { endpoint: 'sequence', type: 'svc-sequence', node: polling, msg: () => sequence(false) },
  { endpoint: 'sequence-job', type: 'svc-sequence', node: polling, msg: () => sequence(true) },
  { endpoint: 'route', type: 'svc-route', msg: () => ({ payload: { waypoints: [from, to] } }) },
  { endpoint: 'topic-publish', type: 'svc-topic-publish', msg: (topicId) => ({ topicId, locationId: 'cell-1', payload: { reading: 1 } }) },
  { endpoint: 'topic-create', type: 'svc-topic', msg: () => ({ operation: 'create-topic', payload: { Name: 'bounded', Description: 'limits' } }) },
  { endpoint: 'topic-list', type: 'svc-topic', msg: () => ({ operation: 'list-topics' }) },
  { endpoint: 'topic-get', type: 'svc-topic', msg: (topicId) => ({ operation: 'get-topic', topicId }) },
  { endpoint: 'topic-delete', type: 'svc-topic', msg: (topicId) => ({ operation: 'delete-topic', topicId }) },
  {
    endpoint: 'subscription-create',
    type: 'svc-topic',
    msg: (topicId) => ({ operation: 'create-subscription', topicId, payload: { WebhookAddress: 'http://127.0.0.1:9/hook', LocationIds: ['cell-1'] } }),
  },
];

/** Counts every outcome (an output or a caught error) per `faultId` in global context; GET /bounded/outcomes reads them. */
const COUNT_OUTCOME =
  "const seen = global.get('boundedOutcomes') || {}; seen[msg.faultId] = (seen[msg.faultId] || 0) + 1; global.set('boundedOutcomes', seen);";

/**
 * One tab: `http in` (the test's request: `{faultId, msg}`) → a function putting the members of `msg`
 * on the message → the node → count and respond with 200; its errors → count and respond with 500 and code and message.
 */
function flowsFor(target: Endpoint, sandboxUrl: string): FlowNode[] {
  const z = 'bounded';
  return [
    tab(z, 'bounded responses'),
    configNode('bounded-cfg', sandboxUrl, {
      timeout: TIMEOUT_MS,
      maxRetries: MAX_RETRIES,
      maxConcurrency: 16,
      maxResponseSize: MAX_RESPONSE_MB,
      maxFileSize: MAX_FILE_MB,
    }),
    httpIn('bounded-in', z, '/bounded/message', 'bounded-prepare'),
    functionNode('bounded-prepare', z, 'msg.faultId = msg.payload.faultId; Object.assign(msg, msg.payload.msg); return msg;', [['bounded-node']]),
    { id: 'bounded-node', type: target.type, z, name: '', server: 'bounded-cfg', x: 300, y: 100, ...target.node, wires: [['bounded-ok']] },
    functionNode('bounded-ok', z, `${COUNT_OUTCOME} msg.payload = { ok: true }; return msg;`, [['bounded-out']]),
    { id: 'bounded-catch', type: 'catch', z, name: '', scope: ['bounded-node'], uncaught: false, x: 100, y: 200, wires: [['bounded-error']] },
    functionNode(
      'bounded-error',
      z,
      `${COUNT_OUTCOME} msg.statusCode = 500; msg.payload = { code: msg.error && msg.error.code, message: msg.error && msg.error.message }; return msg;`,
      [['bounded-out']],
    ),
    httpResponse('bounded-out', z),
    httpIn('bounded-outcomes-in', z, '/bounded/outcomes', 'bounded-outcomes', 'get'),
    functionNode('bounded-outcomes', z, "msg.payload = global.get('boundedOutcomes') || {}; return msg;", [['bounded-outcomes-out']]),
    httpResponse('bounded-outcomes-out', z),
  ];
}

async function call(url: string, method: 'GET' | 'POST', body?: unknown): Promise<{ status: number; body: Fields }> {
  const res = await request(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    headersTimeout: CASE_DEADLINE_MS * 2,
    bodyTimeout: CASE_DEADLINE_MS * 2,
  });
  return { status: res.statusCode, body: (await res.body.json()) as Fields };
}

describe('bounded responses in a real Node-RED: huge, endless and dripping responses on every endpoint', function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let nodeRed: Child<NodeRedMethods, { url: string; adminUrl: string }>;
  let topicId = 0;
  let nextId = 0;

  before(async function () {
    sandbox = await startSandbox({ jobPolls: 1 });
    nodeRed = await Child.start<NodeRedMethods, { url: string; adminUrl: string }>('node-red', path.join(__dirname, '..', 'bench', 'nodered-process.js'), {
      execArgv: ['--expose-gc'],
      logFile: path.join(os.tmpdir(), `svc-bounded-node-red-${process.pid}.log`),
    });
  });
  after(async function () {
    await nodeRed?.stop();
    await sandbox?.close();
  });

  /** The requests that met the fault, once their connections have closed (the client gave up on them). */
  async function faultedRequests(endpoint: string): Promise<LoggedRequest[]> {
    const faulted = () => sandbox.requests(endpoint).filter((r) => r.faultBodyBytes !== undefined);
    await waitFor(`the ${endpoint} connections to close`, async () => (faulted().every((r) => r.closedAt !== undefined) ? true : undefined), 10_000, 20);
    return faulted();
  }

  for (const target of ENDPOINTS) {
    describe(target.endpoint, function () {
      before(async function () {
        topicId = addTopic(sandbox, `bounded ${target.endpoint}`).id;
        await deployTo(nodeRed, flowsFor(target, sandbox.url));
      });

      const [limitMb, setting] = target.file ? [MAX_FILE_MB, 'Max file size'] : [MAX_RESPONSE_MB, 'Max response size'];
      for (const { name, fault, code, message } of FAULTS(limitMb, setting)) {
        it(`${name}: one ${code} per message, reading stopped, memory bounded`, async function () {
          sandbox.clearFaults();
          sandbox.log.splice(0);
          sandbox.setFault(target.endpoint, fault);
          const ids = Array.from({ length: MESSAGES }, () => nextId++);
          await nodeRed.call('watchMemory', undefined);
          const started = Date.now();
          const responses = await Promise.all(ids.map((faultId) => call(`${nodeRed.info.url}/bounded/message`, 'POST', { faultId, msg: target.msg(topicId) })));
          const elapsedMs = Date.now() - started;
          const memory = await nodeRed.call('memoryPeak', undefined);
          sandbox.clearFaults();

          for (const response of responses) {
            should(response.status).equal(500, JSON.stringify(response.body));
            should(response.body.code).equal(code, JSON.stringify(response.body));
            should(response.body.message).match(message);
          }
          should(elapsedMs).be.below(CASE_DEADLINE_MS);
          const faulted = await faultedRequests(target.endpoint);
          should(faulted.length).be.above(0);
          for (const request of faulted) should(request.faultBodyBytes).be.below(limitMb * MB + SOCKET_BUFFERS);
          const growth = memory.peakRssBytes - memory.baselineRssBytes;
          const mostSent = Math.max(...faulted.map((r) => r.faultBodyBytes ?? 0));
          console.log(
            `        ${elapsedMs} ms, resident memory +${(growth / MB).toFixed(1)} MB, at most ${(mostSent / MB).toFixed(1)} MB handed to a connection`,
          );
          should(growth).be.below(RSS_GROWTH_BOUND, `resident memory grew by ${(growth / MB).toFixed(1)} MB`);

          await new Promise((resolve) => setTimeout(resolve, DUPLICATE_GRACE_MS));
          const outcomes = (await call(`${nodeRed.info.url}/bounded/outcomes`, 'GET')).body;
          for (const id of ids) should(outcomes[id]).equal(1, `message ${id}: ${JSON.stringify(outcomes[id] ?? 0)} outcomes`);
        });
      }
    });
  }
});
