import { SANDBOX_DEFAULTS } from '../../sandbox';
import { LEAST_NODE_TYPE } from './least-node';

/**
 * The flows the benchmark deploys through the admin API. Every flow is a tab of its own; the config
 * node carries its credentials in the flow JSON, as the editor sends them on deploy.
 */

export type FlowNode = Record<string, unknown> & { id: string; type: string };

export const WEBHOOK_SECRET = 'bench-webhook-secret';

/** The addresses every geocoding request of the benchmark uses. */
export const BENCH_ADDRESS = '12 Main Street, Sandbox City';

export function tab(id: string, label: string): FlowNode {
  return { id, type: 'tab', label, disabled: false, info: '' };
}

/** A svc-config node pointed at the sandbox with its test credentials; `overrides` change its properties. */
export function configNode(id: string, sandboxUrl: string, overrides: Record<string, unknown> = {}, credentials: Record<string, string> = {}): FlowNode {
  return {
    id,
    type: 'svc-config',
    // Not the id: Node-RED reads any property holding a config node's id as a reference to it.
    name: `bench ${id.replace(/-cfg$/, '')}`,
    baseUrl: sandboxUrl,
    authUrl: sandboxUrl,
    sandboxUrl,
    audience: SANDBOX_DEFAULTS.audience,
    projectId: SANDBOX_DEFAULTS.projectId,
    timeout: 30_000,
    rateLimit: 0,
    maxConcurrency: 128,
    maxQueue: 5000,
    maxRetries: 2,
    tokenLifetime: 3600,
    ...overrides,
    credentials: {
      clientId: SANDBOX_DEFAULTS.clientId,
      clientSecret: SANDBOX_DEFAULTS.clientSecret,
      apiKey: SANDBOX_DEFAULTS.apiKey,
      pubsubApiKey: SANDBOX_DEFAULTS.pubsubApiKey,
      ...credentials,
    },
  };
}

export function httpIn(id: string, z: string, url: string, next: string, method = 'post'): FlowNode {
  return { id, type: 'http in', z, name: '', url, method, upload: false, swaggerDoc: '', x: 100, y: 100, wires: [[next]] };
}

export function httpResponse(id: string, z: string): FlowNode {
  return { id, type: 'http response', z, name: '', statusCode: '', headers: {}, x: 500, y: 100, wires: [] };
}

export function functionNode(id: string, z: string, func: string, wires: string[][]): FlowNode {
  return {
    id,
    type: 'function',
    z,
    name: '',
    func,
    outputs: wires.length,
    timeout: 0,
    noerr: 0,
    initialize: '',
    finalize: '',
    libs: [],
    x: 300,
    y: 100,
    wires,
  };
}

/** Catch for `scope` node ids (all nodes of the tab when null) responding to the HTTP request with 500 and the error. */
export function catchTo500(prefix: string, z: string, scope: string[] | null): FlowNode[] {
  return [
    { id: `${prefix}-catch`, type: 'catch', z, name: '', scope, uncaught: false, x: 100, y: 200, wires: [[`${prefix}-500`]] },
    functionNode(`${prefix}-500`, z, 'msg.statusCode = 500; msg.payload = { error: String(msg.error && msg.error.message) }; return msg;', [[`${prefix}-out`]]),
  ];
}

/** `http in` → `node` → `http response`, with errors of `node` returned as 500. */
function serveThrough(prefix: string, z: string, url: string, node: FlowNode): FlowNode[] {
  return [
    httpIn(`${prefix}-in`, z, url, node.id),
    { x: 300, y: 100, ...node, z, wires: [[`${prefix}-out`]] },
    httpResponse(`${prefix}-out`, z),
    ...catchTo500(prefix, z, [node.id]),
  ];
}

/** Load 1: the four ways through Node-RED to a geocode response, each at its own path. */
export function throughputFlows(sandboxUrl: string): FlowNode[] {
  const z = 'bench-throughput';
  const query = encodeURIComponent(BENCH_ADDRESS);
  return [
    tab(z, 'throughput'),
    // No daily limit: the default 50,000 a day would stop these runs part way, and counting is not what they measure.
    configNode('tp-cfg', sandboxUrl, { dailyLimit: 0 }),
    httpIn('floor-in', z, '/bench/floor', 'floor-fn'),
    functionNode('floor-fn', z, 'msg.payload = { address: msg.payload.address, ok: true }; return msg;', [['floor-out']]),
    httpResponse('floor-out', z),
    httpIn('request-in', z, '/bench/http-request', 'request-node'),
    {
      id: 'request-node',
      type: 'http request',
      z,
      name: '',
      method: 'POST',
      ret: 'obj',
      paytoqs: 'ignore',
      url: `${sandboxUrl}/v1/geocode?address=${query}`,
      tls: '',
      persist: true,
      proxy: '',
      insecureHTTPParser: false,
      authType: '',
      senderr: false,
      headers: [
        { keyType: 'other', keyValue: 'accept', valueType: 'other', valueValue: 'application/json' },
        { keyType: 'other', keyValue: 'x-svc-project-id', valueType: 'other', valueValue: SANDBOX_DEFAULTS.projectId },
        { keyType: 'other', keyValue: 'x-svc-api-key', valueType: 'other', valueValue: SANDBOX_DEFAULTS.apiKey },
      ],
      x: 300,
      y: 200,
      wires: [['request-out']],
    },
    httpResponse('request-out', z),
    ...serveThrough('geocode', z, '/bench/geocode', { id: 'geocode-node', type: 'svc-geocode', name: '', server: 'tp-cfg' }),
  ];
}

/** Where `defaultLimitGeocodeFlow` serves its flow `index`. */
export function defaultLimitGeocodePath(index: number): string {
  return `/bench/geocode-default/${index}`;
}

/**
 * `http in` → svc-geocode → `http response` with svc-config's default daily limit (50,000 a day,
 * counted in the user directory's counter file), on a config of its own whose client id (which single
 * geocodes do not use, but the daily count is kept per) is flow `index`'s, so that the bench can give
 * each measurement a flow whose day's limit no earlier one has used up. Always the same tab: deploying
 * the next index replaces the flow before it.
 */
export function defaultLimitGeocodeFlow(sandboxUrl: string, index: number): FlowNode[] {
  const z = 'bench-geocode-default';
  return [
    tab(z, 'svc-geocode, default config'),
    configNode(`dl${index}-cfg`, sandboxUrl, {}, { clientId: `${SANDBOX_DEFAULTS.clientId}-bench-${index}` }),
    ...serveThrough(`geocode-default-${index}`, z, defaultLimitGeocodePath(index), {
      id: `geocode-default-${index}-node`,
      type: 'svc-geocode',
      name: '',
      server: `dl${index}-cfg`,
    }),
  ];
}

/** Where `countingGeocodeFlows` serves. */
export const COUNTING_GEOCODE_PATH = '/bench/geocode-counting';

/**
 * `http in` → svc-geocode → `http response` with a daily limit too high to reach (10,000,000 a day):
 * every message does all the daily limit's work (the count, its file, the count in the status) for as
 * many messages as the bench sends it, where the default 50,000 would stop a run part way.
 */
export function countingGeocodeFlows(sandboxUrl: string): FlowNode[] {
  const z = 'bench-geocode-counting';
  return [
    tab(z, 'svc-geocode, daily limit counted'),
    configNode('counting-cfg', sandboxUrl, { dailyLimit: 10_000_000 }, { clientId: `${SANDBOX_DEFAULTS.clientId}-bench-counting` }),
    ...serveThrough('geocode-counting', z, COUNTING_GEOCODE_PATH, { id: 'geocode-counting-node', type: 'svc-geocode', name: '', server: 'counting-cfg' }),
  ];
}

/** The bench's geocode request straight to the sandbox, as raw undici, the floor with undici and the least node send it. */
export const GEOCODE_PATH = `/v1/geocode?address=${encodeURIComponent(BENCH_ADDRESS)}`;
export const GEOCODE_HEADERS: Record<string, string> = {
  accept: 'application/json',
  'x-svc-project-id': SANDBOX_DEFAULTS.projectId,
  'x-svc-api-key': SANDBOX_DEFAULTS.apiKey,
};

/** The floor with one pooled undici exchange made by its function node: what a hand-written flow reaches. */
export function undiciFloorFlows(sandboxUrl: string): FlowNode[] {
  const z = 'bench-floor-undici';
  const func = [
    "let pool = context.get('pool');",
    `if (!pool) { pool = new (global.get('undici').Pool)(${JSON.stringify(sandboxUrl)}); context.set('pool', pool); }`,
    `const res = await pool.request({ path: ${JSON.stringify(GEOCODE_PATH)}, method: 'POST', headers: ${JSON.stringify(GEOCODE_HEADERS)} });`,
    'msg.payload = await res.body.json();',
    'return msg;',
  ].join('\n');
  return [
    tab(z, 'floor with undici'),
    httpIn('floor-undici-in', z, '/bench/floor-undici', 'floor-undici-fn'),
    functionNode('floor-undici-fn', z, func, [['floor-undici-out']]),
    httpResponse('floor-undici-out', z),
  ];
}

/** Where `leastNodeFlows` serves. */
export const LEAST_NODE_PATH = '/bench/least-node';

/** `http in` → the least node → `http response`: the geocode exchange and nothing else, made by a node. */
export function leastNodeFlows(sandboxUrl: string): FlowNode[] {
  const z = 'bench-least-node';
  const node = { id: 'least-node-node', type: LEAST_NODE_TYPE, name: '', origin: sandboxUrl, path: GEOCODE_PATH, headers: JSON.stringify(GEOCODE_HEADERS) };
  return [tab(z, 'least node'), ...serveThrough('least-node', z, LEAST_NODE_PATH, node)];
}

/**
 * The floor flow responding with `response` (the sandbox's geocode response) instead of a few bytes: the
 * same `http response` work as the svc-geocode flow, so that what is left between them is the
 * outgoing request and the node.
 */
export function sameResponseFloorFlows(response: unknown): FlowNode[] {
  const z = 'bench-floor-response';
  return [
    tab(z, 'floor with the response'),
    httpIn('floor-response-in', z, '/bench/floor-response', 'floor-response-fn'),
    functionNode('floor-response-fn', z, `msg.payload = ${JSON.stringify(response)}; return msg;`, [['floor-response-out']]),
    httpResponse('floor-response-out', z),
  ];
}

/**
 * A burst inside Node-RED: POST `<path>` with `{count}` makes a function node send `count` messages
 * to `target` in one go (so they arrive together, not as fast as HTTP brings them), built by
 * `makeMessage(i)` (function-node code). Outputs and errors are counted in flow context;
 * GET `<path>` reports `{expected, outputs, errors, startedAt, finishedAt, firstError}`.
 */
export function burstFlows(z: string, label: string, path: string, target: FlowNode, makeMessage: string, extra: FlowNode[]): FlowNode[] {
  const key = JSON.stringify(`burst-${z}`);
  const count = (member: 'outputs' | 'errors') =>
    `const s = flow.get(${key}); s.${member}++;` +
    (member === 'errors' ? ' if (!s.firstError) s.firstError = String(msg.error && msg.error.message);' : '') +
    ' if (s.outputs + s.errors === s.expected) s.finishedAt = Date.now(); flow.set(' +
    key +
    ', s); return null;';
  return [
    tab(z, label),
    ...extra,
    httpIn(`${z}-start`, z, path, `${z}-fan`),
    functionNode(
      `${z}-fan`,
      z,
      `const count = msg.payload.count; const burst = [];
for (let i = 0; i < count; i++) burst.push(${makeMessage});
flow.set(${key}, { expected: count, outputs: 0, errors: 0, startedAt: Date.now(), finishedAt: 0, firstError: '' });
msg.payload = { started: count };
return [burst, msg];`,
      [[target.id], [`${z}-ack`]],
    ),
    httpResponse(`${z}-ack`, z),
    { x: 300, y: 100, ...target, z, wires: [[`${z}-outputs`]] },
    functionNode(`${z}-outputs`, z, count('outputs'), []),
    { id: `${z}-catch`, type: 'catch', z, name: '', scope: [target.id], uncaught: false, x: 100, y: 200, wires: [[`${z}-errors`]] },
    functionNode(`${z}-errors`, z, count('errors'), []),
    httpIn(`${z}-report-in`, z, path, `${z}-report`, 'get'),
    functionNode(`${z}-report`, z, `msg.payload = flow.get(${key}) || null; return msg;`, [[`${z}-report-out`]]),
    httpResponse(`${z}-report-out`, z),
  ];
}

/** Load 2: svc-words under a burst. */
export function tokenStormFlows(sandboxUrl: string): FlowNode[] {
  const words = JSON.stringify(['index.home.raft', 'filled.count.soap', 'daring.lion.race', 'table.lamp.chair']);
  return burstFlows(
    'bench-storm',
    'token storm',
    '/bench/storm',
    { id: 'storm-words', type: 'svc-words', name: '', server: 'storm-cfg' },
    `{ payload: ${words}[i % 4], burst: i }`,
    [configNode('storm-cfg', sandboxUrl, { maxConcurrency: 64 })],
  );
}

/** Load 5: svc-geocode at the recommended 80 requests a minute, more messages waiting than the limit lets through. */
export function rateLimitFlows(sandboxUrl: string): FlowNode[] {
  return burstFlows(
    'bench-rate',
    'rate limit',
    '/bench/rate',
    { id: 'rate-geocode', type: 'svc-geocode', name: '', server: 'rate-cfg' },
    `{ payload: ${JSON.stringify(BENCH_ADDRESS)}, burst: i }`,
    [configNode('rate-cfg', sandboxUrl, { rateLimit: 80, maxConcurrency: 8, maxQueue: 1000 })],
  );
}

/** Load 3: `count` generated addresses through svc-bulk-geocode; the response says whether the rows came back in order. */
export function bulkFlows(sandboxUrl: string, settings: { batchSize: number; parallel: number; pollIntervalMs: number }): FlowNode[] {
  const z = 'bench-bulk';
  return [
    tab(z, 'bulk'),
    configNode('bulk-cfg', sandboxUrl),
    httpIn('bulk-in', z, '/bench/bulk', 'bulk-addresses'),
    functionNode(
      'bulk-addresses',
      z,
      `const count = msg.payload.count; const addresses = new Array(count);
for (let i = 0; i < count; i++) addresses[i] = 'Row ' + i + ' Station Road';
msg.payload = addresses; return msg;`,
      [['bulk-node']],
    ),
    {
      id: 'bulk-node',
      type: 'svc-bulk-geocode',
      z,
      name: '',
      server: 'bulk-cfg',
      batchSize: settings.batchSize,
      parallel: settings.parallel,
      pollInterval: settings.pollIntervalMs,
      maxWait: 600,
      x: 300,
      y: 100,
      wires: [['bulk-check']],
    },
    functionNode(
      'bulk-check',
      z,
      `const rows = msg.payload; let inOrder = true, located = 0, failed = 0;
for (let i = 0; i < rows.length; i++) {
  const row = rows[i];
  if (!row || row.index !== i || row.input !== 'Row ' + i + ' Station Road') inOrder = false;
  if (row && row.location) located++;
  if (row && row.error) failed++;
}
msg.payload = { rows: rows.length, inOrder, located, failed, jobs: msg.jobs.length };
delete msg.jobs;
return msg;`,
      [['bulk-out']],
    ),
    httpResponse('bulk-out', z),
    ...catchTo500('bulk', z, ['bulk-node']),
  ];
}

/** Load 4: svc-webhook-in verifying signatures, and the core `http in` → `http response` taking the same requests unchecked. */
export function webhookFlows(): FlowNode[] {
  const z = 'bench-webhook';
  return [
    tab(z, 'webhooks'),
    {
      id: 'hook-node',
      type: 'svc-webhook-in',
      z,
      name: '',
      url: '/bench/hook',
      verify: 'signature',
      tolerance: 300,
      credentials: { secret: WEBHOOK_SECRET },
      x: 100,
      y: 100,
      wires: [[]],
    },
    httpIn('plain-in', z, '/bench/plain', 'plain-out'),
    httpResponse('plain-out', z),
  ];
}

/** The request each soak path takes; the webhook's is signed by the load generator. */
export interface SoakRoute {
  type: string;
  path: string;
  body: unknown;
}

/**
 * Load 6: every node of the pack that is installed, each behind its own path, webhook receiver included.
 * With `control`, the same flow with a function node (`return msg;`) in place of each of ours and a core
 * `http in` → `http response` in place of the webhook receiver: what Node-RED itself keeps per redeploy.
 */
export function soakFlows(sandboxUrl: string, available: Set<string>, topicId: number, control = false): { flows: FlowNode[]; routes: SoakRoute[] } {
  const z = 'bench-soak';
  const from = { lat: 52.52, lon: 13.405 };
  const to = { lat: 52.5, lon: 13.38 };
  const fromPayload = (member: string) => ({ [member]: `payload.${member}`, [`${member}Type`]: 'msg' });
  const nodes: Array<SoakRoute & { settings: Record<string, unknown> }> = [
    { type: 'svc-geocode', path: '/soak/geocode', body: { address: BENCH_ADDRESS }, settings: {} },
    { type: 'svc-words', path: '/soak/words', body: { words: 'index.home.raft' }, settings: {} },
    {
      type: 'svc-bulk-geocode',
      path: '/soak/bulk',
      body: ['1 Main Street', '2 High Street', '3 Station Road'],
      settings: { batchSize: 2, parallel: 2, pollInterval: 50 },
    },
    {
      type: 'svc-isoline',
      path: '/soak/isoline',
      body: { origins: [from], range: { type: 'time', value: 600 }, async: true },
      settings: { pollInterval: 0.05 },
    },
    {
      type: 'svc-sequence',
      path: '/soak/sequence',
      body: { waypoints: [from, to, { lat: 52.51, lon: 13.39 }], async: true },
      settings: { pollInterval: 0.05 },
    },
    { type: 'svc-route', path: '/soak/route', body: { waypoints: [from, to] }, settings: {} },
    {
      type: 'svc-topic-publish',
      path: '/soak/publish',
      body: { topicId, locationId: 'cell-1', data: { temperature: 21.5 } },
      settings: { ...fromPayload('topicId'), ...fromPayload('locationId'), ...fromPayload('data') },
    },
    { type: 'svc-topic', path: '/soak/topic', body: { operation: 'get-topic', topicId }, settings: { ...fromPayload('operation'), ...fromPayload('topicId') } },
  ];
  const present = nodes.filter((node) => available.has(node.type));
  const flows: FlowNode[] = [tab(z, 'redeploy soak'), configNode('soak-cfg', sandboxUrl, { maxConcurrency: 16, timeout: 5000 })];
  for (const node of present) {
    const prefix = node.type.replace(/^svc-/, 'soak-');
    const inner = control
      ? functionNode(`${prefix}-node`, z, 'return msg;', [[]])
      : { id: `${prefix}-node`, type: node.type, name: '', server: 'soak-cfg', ...node.settings };
    flows.push(...serveThrough(prefix, z, node.path, inner));
  }
  const routes: SoakRoute[] = present.map(({ type, path, body }) => ({ type, path, body }));
  if (available.has('svc-webhook-in') && control) {
    flows.push(httpIn('soak-hook', z, '/soak/hook', 'soak-hook-out'), httpResponse('soak-hook-out', z));
    routes.push({ type: 'svc-webhook-in', path: '/soak/hook', body: { temperature: 21.5 } });
  } else if (available.has('svc-webhook-in')) {
    flows.push({
      id: 'soak-hook',
      type: 'svc-webhook-in',
      z,
      name: '',
      url: '/soak/hook',
      verify: 'signature',
      credentials: { secret: WEBHOOK_SECRET },
      x: 100,
      y: 400,
      wires: [[]],
    });
    routes.push({ type: 'svc-webhook-in', path: '/soak/hook', body: { temperature: 21.5 } });
  }
  return { flows, routes };
}
