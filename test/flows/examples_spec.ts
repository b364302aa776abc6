import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import should from 'should';
import { memberAt } from '../../nodes/lib/util/values';
import { runEditorScripts } from '../support/editor-script';
import { Fields, SANDBOX_DEFAULTS, helper, nodeModule, useSandbox } from '../support/harness';
import { NODE_RED_DIR, REPO_ROOT } from '../support/paths';
import { buildFlows, devSettings } from '../sandbox/start';
import { pubsubState } from '../../sandbox/pubsub-state';

/**
 * Every flow in examples/ deploys in Node-RED with the core nodes it uses and runs against the
 * sandbox: each inject a user clicks produces the expected message at its debug node (debug nodes are
 * swapped for helper nodes), nothing reaches its Catch nodes unless the example shows an error on
 * purpose, and nothing is logged as an error or warning.
 * worldmap nodes (node-red-contrib-web-worldmap, a devDependency) are swapped for helper nodes too:
 * what reaches them is what worldmap would draw; the browser suite checks the drawing itself.
 */

const EXAMPLES_DIR = path.join(REPO_ROOT, 'examples');
/** The shared config node of every example (see examples/geocode-an-address.json). */
const SANDBOX_CONFIG_ID = 'svc-sandbox';
/** Where the examples tell the platform to reach this Node-RED (webhook subscriptions); the test server stands in. */
const EXAMPLE_NODE_RED_URL = 'http://127.0.0.1:1880';
/** The demo secret both ends of a signed webhook get, as `npm start` provides one. */
const DEMO_WEBHOOK_SECRET = 'example-webhook-secret';
const STEP_TIMEOUT_MS = 8000;
const TAB_ID = 'example-tab';
/** Node-RED log levels (see @node-red/util log): errors and warnings are numbered 20 and 30. */
const LOG_WARN = 30;
/** Node types the examples may use besides the pack's and the core's: the map of the Map outputs. */
const DISPLAY_TYPES = new Set(['debug', 'worldmap']);
/** One shape or several: what a Map output message carries. */
const shapesOf = (msg: Fields): Fields[] => (Array.isArray(msg.payload) ? msg.payload : [msg.payload]) as Fields[];
/**
 * The Map output messages of one result: named shapes on the node's layer (its type: the example nodes have no name),
 * the first carrying the command that shows them all (issue 29 point 4).
 */
const drawnOn = (layer: string, check: (shapes: Fields[]) => void) => (msg: Fields) => {
  const shapes = shapesOf(msg);
  for (const shape of shapes) should(shape).have.properties({ layer }).and.have.property('name').which.is.a.String();
  should(shapes[0].command).be.an.Object();
  check(shapes);
};
/** The Map tab's debug node shows each result (issue 29 point 4). */
const shownInDebug: Expectation = { at: 'ex-map-debug', check: (msg) => should(msg).have.property('payload') };

type FlowNode = Fields & { id: string; type: string; wires?: string[][] };

/** Core node modules of the Node-RED the harness runs (NODE_RED_PATH or the dev dependency), by node type. */
function coreModules(): Map<string, string> {
  const coreDir = path.join(path.dirname(require.resolve('@node-red/nodes/package.json', { paths: [NODE_RED_DIR] })), 'core');
  const byType = new Map<string, string>();
  for (const group of fs.readdirSync(coreDir)) {
    const dir = path.join(coreDir, group);
    if (!fs.statSync(dir).isDirectory()) continue;
    for (const file of fs.readdirSync(dir).filter((name) => name.endsWith('.js'))) {
      const source = fs.readFileSync(path.join(dir, file), 'utf8');
      for (const [, type] of source.matchAll(/registerType\(\s*["']([^"']+)["']/g)) byType.set(type, path.join(dir, file));
    }
  }
  return byType;
}
const CORE_MODULES = coreModules();

/** The RED.httpNode app of the loaded flow: the test server hands it every request, as Node-RED's own server does. */
const nodeApi: { httpNode?: (req: http.IncomingMessage, res: http.ServerResponse, next: () => void) => void } = {};
function captureNodeApi(red: { httpNode: typeof nodeApi.httpNode }): void {
  nodeApi.httpNode = red.httpNode;
}

interface Expectation {
  /** A debug node of the example; its message must hold what the debug node shows, and pass `check`. */
  at: string;
  check: (msg: Fields) => void;
  /** The Map output's messages of one result (one per shape, in one send), checked together as one `{ payload: shapes }`. */
  shapes?: true;
  /** The message as it is, even when the member the debug node shows is not set (a delete's response has no data). */
  raw?: true;
}

interface Step {
  /** The inject node to fire; none for a step that an inject fires by itself at deploy. */
  trigger?: string;
  expect: Expectation[];
}

/** How each example runs: inject steps, or requests to the pages it serves. */
interface ExampleRun {
  steps?: Step[];
  pages?: (baseUrl: string) => Promise<void>;
  /** Members the comment names as what the user sends (not what a debug node shows): left out of the claims check. */
  inputs?: string[];
}

/**
 * What an example's comment says the run shows, checked against the messages its debug and Catch nodes
 * received (issue 29 point 5): every `msg.<member>` it names is set in one of them; every member of a
 * `{ a, b, … }` it gives for `msg.payload` is in a payload (an object, or the rows of an array); a
 * `msg.error.cause` said to be text is a string.
 */
function checkClaims(info: string, seen: Fields[], inputs: string[]): string[] {
  const problems: string[] = [];
  for (const [, member] of info.matchAll(/`msg\.([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)`/g)) {
    if (inputs.includes(member)) continue;
    if (!seen.some((msg) => memberAt(msg, member) !== undefined)) problems.push(`msg.${member} is in no message shown`);
  }
  const payloadShape = /`msg\.payload`[^`]*`\{ ([\w, ]+) \}`/.exec(info);
  if (payloadShape) {
    const keys = new Set(
      seen.flatMap((msg) => {
        const payload = msg.payload;
        const objects: unknown[] = Array.isArray(payload) ? payload : [payload];
        return objects.flatMap((object) => (object !== null && typeof object === 'object' ? Object.keys(object) : []));
      }),
    );
    for (const key of payloadShape[1].split(/, */)) if (!keys.has(key)) problems.push(`msg.payload.${key} is in no payload shown`);
  }
  if (/`msg\.error\.cause` holds [^.]* as text/.test(info)) {
    const causes = seen.map((msg) => memberAt(msg, 'error.cause')).filter((cause) => cause !== undefined);
    if (causes.length === 0 || !causes.every((cause) => typeof cause === 'string')) problems.push('msg.error.cause is not text');
  }
  return problems;
}

const isNumber = (value: unknown) => should(value).be.a.Number();

const RUNS: Record<string, ExampleRun> = {
  'geocode-an-address.json': {
    steps: [
      {
        trigger: 'ex-geocode-inject',
        expect: [{ at: 'ex-geocode-debug', check: (msg) => (isNumber((msg.location as Fields).lat), should(msg.geohash).have.length(9)) }],
      },
      { trigger: 'ex-geocode-inject-landmark', expect: [{ at: 'ex-geocode-debug', check: (msg) => isNumber((msg.location as Fields).lat) }] },
    ],
  },
  'three-words-to-location.json': {
    steps: [
      { trigger: 'ex-words-inject', expect: [{ at: 'ex-words-debug', check: (msg) => isNumber((msg.location as Fields).lon) }] },
      { trigger: 'ex-words-inject-unicode', expect: [{ at: 'ex-words-debug', check: (msg) => isNumber((msg.location as Fields).lon) }] },
      // The example's third inject shows an error reaching its Catch node.
      { trigger: 'ex-words-inject-unknown', expect: [{ at: 'ex-words-error', check: (msg) => should((msg.error as Fields).code).equal('NOT_FOUND') }] },
    ],
  },
  'bulk-geocode-addresses.json': {
    steps: [
      {
        trigger: 'ex-bulk-inject-list',
        expect: [
          {
            at: 'ex-bulk-debug',
            check: (msg) => {
              const rows = msg.payload as Fields[];
              should(rows.map((row) => row.index)).deepEqual([0, 1, 2, 3, 4]);
              should(rows.filter((row) => row.error !== undefined).map((row) => row.input)).deepEqual(['nowhere at all']);
            },
          },
        ],
      },
      {
        trigger: 'ex-bulk-inject-csv',
        expect: [
          {
            at: 'ex-bulk-debug',
            check: (msg) => {
              const rows = msg.payload as Fields[];
              should(rows.map((row) => row.index)).deepEqual([0, 1, 2, 3]);
              should(rows.map((row) => (row.input as Fields).customer)).deepEqual(['Ada', 'Grace', 'Linus', 'Ken']);
            },
          },
        ],
      },
    ],
  },
  'isoline-from-a-position.json': {
    steps: [
      {
        trigger: 'ex-isoline-inject',
        expect: [
          {
            at: 'ex-isoline-debug',
            check: (msg) => {
              const features = (msg.geojson as { features: Array<{ properties: Fields }> }).features;
              should(features.map((feature) => feature.properties.range)).deepEqual([
                { type: 'time', value: 300 },
                { type: 'time', value: 600 },
              ]);
            },
          },
        ],
      },
      {
        trigger: 'ex-isoline-inject-async',
        expect: [
          {
            at: 'ex-isoline-debug',
            check: (msg) => (should(msg.jobs).have.length(1), should((msg.geojson as { features: Fields[] }).features).have.length(2)),
          },
        ],
      },
    ],
  },
  'sequence-delivery-stops.json': {
    // The example's comment promises this order.
    steps: [{ trigger: 'ex-sequence-inject', expect: [{ at: 'ex-sequence-debug-order', check: (msg) => should(msg.order).deepEqual([0, 2, 4, 1, 3]) }] }],
  },
  'map-every-result.json': {
    steps: [
      {
        trigger: 'ex-map-inject-streets',
        expect: [
          {
            at: 'ex-map-worldmap',
            shapes: true,
            check: (msg) => {
              const [streets] = msg.payload as Array<{
                name: string;
                layer: string;
                geojson: { features: Array<{ properties: { class: string; stroke: string } }> };
              }>;
              should(streets).have.properties({ name: 'town streets', layer: 'town streets' });
              should(streets.geojson.features.length).be.above(1000);
              should(new Set(streets.geojson.features.map((f) => f.properties.class))).containEql('arterial');
              should(streets.geojson.features.every((f) => /^#[0-9a-f]{6}$/.test(f.properties.stroke))).be.true();
            },
          },
        ],
      },
      {
        trigger: 'ex-map-inject-geocode',
        expect: [shownInDebug, { at: 'ex-map-worldmap', shapes: true, check: drawnOn('geocoded addresses', (s) => should(s).have.length(1)) }],
      },
      {
        trigger: 'ex-map-inject-words',
        expect: [
          shownInDebug,
          { at: 'ex-map-worldmap', shapes: true, check: drawnOn('three-word cells', (s) => should(s[0].name).equal('///wheat.ribbon.magnet')) },
        ],
      },
      {
        trigger: 'ex-map-inject-sequence',
        expect: [
          shownInDebug,
          {
            at: 'ex-map-worldmap',
            shapes: true,
            check: drawnOn('visiting orders', (s) => should(s.map((shape) => shape.label).filter(Boolean)).eql(['1', '2', '3', '4', '5'])),
          },
        ],
      },
      {
        trigger: 'ex-map-inject-isoline',
        expect: [shownInDebug, { at: 'ex-map-worldmap', shapes: true, check: drawnOn('5 and 10 minutes by car', (s) => should(s).have.length(2)) }],
      },
      {
        trigger: 'ex-map-inject-route',
        expect: [
          shownInDebug,
          { at: 'ex-map-worldmap', shapes: true, check: drawnOn('routes', (s) => should(s.filter((shape) => shape.line)).have.length(2)) },
        ],
      },
      {
        trigger: 'ex-map-inject-bulk',
        expect: [shownInDebug, { at: 'ex-map-worldmap', shapes: true, check: drawnOn('bulk geocode rows', (s) => should(s).have.length(4)) }],
      },
    ],
  },
  'route-with-instructions.json': {
    steps: [
      {
        trigger: 'ex-route-inject',
        expect: [
          { at: 'ex-route-debug-instructions', check: (msg) => should(msg.instructions).be.an.Array().and.not.be.empty() },
          { at: 'ex-route-debug-summary', check: (msg) => isNumber((msg.summary as Fields).length) },
          { at: 'ex-route-debug-geojson', check: (msg) => should((msg.geojson as { features: Fields[] }).features).not.be.empty() },
        ],
      },
      {
        trigger: 'ex-route-inject-indoor',
        expect: [
          { at: 'ex-route-debug-instructions', check: (msg) => should(msg.instructions).be.an.Array().and.not.be.empty() },
          { at: 'ex-route-debug-summary', check: (msg) => isNumber((msg.summary as Fields).length) },
          { at: 'ex-route-debug-geojson', check: (msg) => should((msg.geojson as { features: Fields[] }).features).not.be.empty() },
        ],
      },
    ],
  },
  'topic-management.json': {
    steps: [
      { trigger: 'ex-topics-create', expect: [{ at: 'ex-topics-response', check: (msg) => isNumber((msg.payload as Fields).id) }] },
      { trigger: 'ex-topics-list', expect: [{ at: 'ex-topics-response', check: (msg) => should((msg.payload as Fields).items).not.be.empty() }] },
      { trigger: 'ex-topics-get', expect: [{ at: 'ex-topics-response', check: (msg) => should((msg.payload as Fields).name).equal('deliveries') }] },
      { trigger: 'ex-topics-subscribe', expect: [{ at: 'ex-topics-response', check: (msg) => isNumber((msg.payload as Fields).topicId) }] },
      {
        trigger: 'ex-topics-list-all',
        expect: [{ at: 'ex-topics-response', check: (msg) => should((msg.payload as Fields).items).have.length((msg.payload as Fields).totalCount as number) }],
      },
      // A delete's response has no data: its msg.payload debug node shows undefined.
      {
        trigger: 'ex-topics-delete',
        expect: [{ at: 'ex-topics-response', raw: true, check: (msg) => should(msg).match({ statusCode: 204, payload: { deleted: true } }) }],
      },
      // The deleted topic is unknown: the error reaches the Catch node, its cause the start of the response as text.
      {
        trigger: 'ex-topics-get',
        expect: [
          {
            at: 'ex-topics-errors',
            check: (msg) =>
              should((msg.error as Fields).cause)
                .be.a.String()
                .and.match(/"isSuccess":\s*false/),
          },
        ],
      },
    ],
  },
  'topic-publish.json': {
    steps: [
      { trigger: 'ex-publish-create', expect: [{ at: 'ex-publish-created', check: (msg) => isNumber((msg.payload as Fields).id) }] },
      { trigger: 'ex-publish-inject', expect: [{ at: 'ex-publish-response', check: (msg) => should(msg.statusCode).equal(200) }] },
    ],
  },
  'webhook-round-trip.json': {
    steps: [
      { trigger: 'ex-roundtrip-start', expect: [{ at: 'ex-roundtrip-subscribed', check: (msg) => should(msg.statusCode).equal(200) }] },
      {
        trigger: 'ex-roundtrip-publish',
        expect: [
          {
            at: 'ex-roundtrip-received',
            check: (msg) => (should(JSON.stringify(msg.payload)).containEql('21.5'), isNumber((msg.webhook as Fields).timestamp)),
          },
        ],
      },
    ],
  },
  'scenario-vehicle-isoline.json': {
    steps: [
      {
        trigger: 'ex-vehicle-tick',
        expect: [
          {
            at: 'ex-vehicle-area',
            check: (msg) => {
              const features = (msg.geojson as { features: Array<{ properties: Fields; geometry: Fields }> }).features;
              should(features).have.length(1);
              should(features[0].geometry.type).equal('Polygon');
              should(features[0].properties.range).deepEqual({ type: 'time', value: 600 });
            },
          },
        ],
      },
    ],
  },
  'scenario-delivery-route.json': {
    steps: [
      {
        trigger: 'ex-delivery-inject',
        expect: [
          { at: 'ex-delivery-instructions', check: (msg) => should(msg.instructions).be.an.Array().and.not.be.empty() },
          {
            at: 'ex-delivery-summary',
            // Five stops give four legs, each with at least a departure and an arrival segment.
            check: (msg) => should((msg.summary as Fields).segments).be.aboveOrEqual(8),
          },
        ],
      },
    ],
  },
  'scenario-csv-bulk-geocode.json': {
    steps: [
      {
        trigger: 'ex-csvbulk-start',
        expect: [
          {
            at: 'ex-csvbulk-done',
            check: (msg) => {
              should(msg.filename).equal(path.join(os.tmpdir(), 'svc-addresses-geocoded.csv'));
              const lines = fs
                .readFileSync(msg.filename as string, 'utf8')
                .trim()
                .split('\n');
              should(lines[0]).equal('address,lat,lon,match_type,error');
              should(lines).have.length(5);
              should(lines[1]).match(/^"12 Main Street, Sandbox City",-?\d+\.\d+,-?\d+\.\d+,exact,$/);
              should(lines[4]).match(/^nowhere in particular,,,,\S/);
              for (const name of ['svc-addresses.csv', 'svc-addresses-geocoded.csv']) fs.rmSync(path.join(os.tmpdir(), name), { force: true });
            },
          },
        ],
      },
    ],
  },
  'scenario-sensor-webhook.json': {
    steps: [
      // Set up, once: topic, then subscription; a second click finds the topic and creates nothing.
      { trigger: 'ex-sensor-setup', expect: [{ at: 'ex-sensor-subscribed', check: (msg) => should(msg.statusCode).equal(200) }] },
      { trigger: 'ex-sensor-setup', expect: [{ at: 'ex-sensor-ready', check: (msg) => should(msg.payload).match({ name: 'greenhouse sensors' }) }] },
      {
        trigger: 'ex-sensor-tick',
        expect: [
          {
            at: 'ex-sensor-received',
            check: (msg) => (should(JSON.stringify(msg.payload)).containEql('greenhouse-1'), isNumber((msg.webhook as Fields).timestamp)),
          },
        ],
      },
    ],
  },
  'scenario-three-words-form.json': {
    inputs: ['payload.words'],
    pages: async (baseUrl) => {
      const form = await fetch(`${baseUrl}/three-words`);
      should(form.status).equal(200);
      should(await form.text()).match(/<form method="post" action="three-words">/);
      const lookup = (words: string) =>
        fetch(`${baseUrl}/three-words`, { method: 'POST', body: new URLSearchParams({ words }) }).then(async (res) => ({
          status: res.status,
          body: await res.text(),
        }));
      const found = await lookup('index.home.raft');
      should(found.status).equal(200);
      should(found.body)
        .match(/Latitude -?\d/)
        .and.match(/Geohash <code>[0-9a-z]+<\/code>/);
      const unknown = await lookup('nowhere.to.be');
      should(unknown.status).equal(404);
      // The page speaks to its visitor (issue 29 point 6): what to do, not the flow's error message.
      should(unknown.body).containEql('Sorry, no location').and.containEql('No place has the three words “nowhere.to.be”: check their spelling.');
      should(unknown.body).not.containEql('fix the message');
      const invalid = await lookup('<b>two words</b>');
      should(invalid.status).equal(400);
      // The user's text comes back HTML-escaped.
      should(invalid.body).not.containEql('<b>').and.containEql('&lt;b&gt;two words&lt;&#x2F;b&gt;” is not a three-word address: type three words');
      should(invalid.body).not.containEql('fix the message');
    },
  },
};

/** Messages arriving at the helper nodes that stand in for debug nodes, in order, per node. */
class Arrivals {
  private readonly received = new Map<string, Fields[]>();
  private readonly waiting = new Map<string, (msg: Fields) => void>();

  watch(id: string): void {
    this.received.set(id, []);
    helper.getNode(id).on('input', (msg: Fields) => {
      const waiter = this.waiting.get(id);
      this.waiting.delete(id);
      if (waiter) waiter(msg);
      else this.received.get(id)?.push(msg);
    });
  }

  all(id: string): Fields[] {
    return this.received.get(id) ?? [];
  }

  next(id: string): Promise<Fields> {
    const queued = this.received.get(id)?.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`no message at ${id} within ${STEP_TIMEOUT_MS} ms`));
      }, STEP_TIMEOUT_MS);
      this.waiting.set(id, (msg) => {
        clearTimeout(timer);
        resolve(msg);
      });
    });
  }
}

/**
 * An example's flow, this Node-RED at `nodeRedUrl`: in its texts, and in the webhook addresses, which the
 * examples give as paths (the built-in sandbox resolves them; the test sandbox here needs whole URLs).
 * A request to the built-in sandbox itself (the Map's streets) goes to `sandboxUrl`, the test's sandbox.
 */
function readExample(file: string, nodeRedUrl: string, sandboxUrl?: string): FlowNode[] {
  const text = fs.readFileSync(path.join(EXAMPLES_DIR, file), 'utf8');
  const toSandbox = sandboxUrl === undefined ? text : text.split(`${EXAMPLE_NODE_RED_URL}/svc-sandbox`).join(sandboxUrl);
  const addresses = nodeRedUrl === EXAMPLE_NODE_RED_URL ? toSandbox : toSandbox.replace(/(\\"WebhookAddress\\":\s*\\")\//g, `$1${nodeRedUrl}/`);
  return JSON.parse(addresses.split(EXAMPLE_NODE_RED_URL).join(nodeRedUrl)) as FlowNode[];
}

/** The credentials `npm start` gives the examples: the sandbox's, and one demo secret for both ends of a signed webhook. */
function exampleCredentials(flow: FlowNode[]): Record<string, Record<string, string>> {
  const credentials: Record<string, Record<string, string>> = {
    [SANDBOX_CONFIG_ID]: {
      clientId: SANDBOX_DEFAULTS.clientId,
      clientSecret: SANDBOX_DEFAULTS.clientSecret,
      apiKey: SANDBOX_DEFAULTS.apiKey,
      pubsubApiKey: SANDBOX_DEFAULTS.pubsubApiKey,
    },
  };
  for (const node of flow) {
    if (node.type === 'svc-webhook-in' && node.verify !== 'none') credentials[node.id] = { secret: DEMO_WEBHOOK_SECRET };
    if (node.type === 'svc-topic' && node.operationType === 'operation' && node.operation === 'create-subscription') {
      credentials[node.id] = { secretToken: DEMO_WEBHOOK_SECRET };
    }
  }
  return credentials;
}

function nodeModuleFor(type: string): unknown {
  if (type.startsWith('svc-')) return nodeModule(type);
  const file = CORE_MODULES.get(type);
  if (!file) throw new Error(`node type "${type}" is neither this pack's nor a core node`);
  return require(file);
}

/** What a log call says, for a failure message. */
function logText(call: { args: unknown[] }): string {
  const entry = call.args[0] as { level: number; type?: string; id?: string; msg?: unknown };
  return `${entry.level === LOG_WARN ? 'warn' : 'error'} [${entry.type}:${entry.id}] ${String(entry.msg)}`;
}

describe('examples', function () {
  const ctx = useSandbox({ jobPolls: 1 });
  let server: http.Server;
  let nodeRedUrl: string;

  before(async function () {
    server = http.createServer((req, res) => {
      const notFound = () => res.writeHead(404).end();
      if (nodeApi.httpNode) nodeApi.httpNode(req, res, notFound);
      else notFound();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    nodeRedUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async function () {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const files = fs
    .readdirSync(EXAMPLES_DIR)
    .filter((file) => file.endsWith('.json'))
    .sort();
  const sandboxConfig = readExample('geocode-an-address.json', EXAMPLE_NODE_RED_URL).find((node) => node.id === SANDBOX_CONFIG_ID);

  it('examples/ holds flow files only: Import > Examples lists each folder in it, and an empty one says nothing (issue 29 point 7)', function () {
    should(fs.readdirSync(EXAMPLES_DIR).filter((entry) => !entry.endsWith('.json'))).deepEqual([]);
  });

  it('knows how to run every example', function () {
    should(files.filter((file) => !RUNS[file])).deepEqual([]);
  });

  it("sets every select of the pack's nodes' dialogs: none opens blank (Node-RED's import fills no default in, issue 54 point 5)", function () {
    const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { 'node-red': { nodes: Record<string, string> } };
    const { templates } = runEditorScripts(Object.keys(manifest['node-red'].nodes));
    const blank: string[] = [];
    for (const file of files) {
      for (const node of readExample(file, EXAMPLE_NODE_RED_URL).filter((n) => n.type.startsWith('svc-'))) {
        for (const [, field] of (templates.get(node.type) ?? '').matchAll(/<select id="node-(?:config-)?input-(\w+)"/g)) {
          if (node[field] === undefined) blank.push(`${file} ${node.id}: ${field}`);
        }
      }
    }
    should(blank).deepEqual([]);
  });

  it("sets on the pack's nodes only properties their editor defines, each accepted by its validator", function () {
    const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { 'node-red': { nodes: Record<string, string> } };
    const { definitions } = runEditorScripts(Object.keys(manifest['node-red'].nodes));
    const flowMembers = new Set(['id', 'type', 'x', 'y', 'z', 'g', 'wires']);
    const problems: string[] = [];
    for (const file of files) {
      for (const node of readExample(file, EXAMPLE_NODE_RED_URL).filter((n) => n.type.startsWith('svc-'))) {
        const defaults = definitions.get(node.type)?.defaults;
        if (!defaults) problems.push(`${file} ${node.id}: no editor definition for ${node.type}`);
        for (const [property, value] of Object.entries(node)) {
          if (flowMembers.has(property)) continue;
          const defined = defaults?.[property];
          if (!defined) problems.push(`${file} ${node.id}: ${property} is not a property of ${node.type}`);
          else if (defined.validate && defined.validate.call(node, value) !== true) problems.push(`${file} ${node.id}: ${property} is refused by the editor`);
        }
      }
    }
    should(problems).deepEqual([]);
  });

  it("the shared config node holds every setting of the editor's defaults, so its dialog shows each default as a new one does (issue 21 point 5)", function () {
    const { definitions } = runEditorScripts(['svc-config']);
    // The settings `version` is not a setting the dialog shows: the examples stay as 1.0.0 wrote config nodes there.
    const defaults = Object.fromEntries(Object.entries(definitions.get('svc-config')?.defaults ?? {}).filter(([property]) => property !== 'version'));
    const config = sandboxConfig as Fields;
    const blank = Object.entries(defaults)
      .filter(([property, defined]) => typeof defined.value === 'number' && (config[property] === undefined || config[property] === ''))
      .map(([property]) => property);
    should(blank).deepEqual([]);
    for (const [property, defined] of Object.entries(defaults)) {
      if (typeof defined.value === 'number') should(config[property]).equal(defined.value, `${property}: the example keeps the default`);
    }
  });

  it('deployed all together as `npm start` deploys them, twice, the examples do nothing on their own: no request, no message, no topic (issue 21 point 3)', async function () {
    // What npm start deploys, the displays (debug, worldmap) replaced by helpers that count what reaches them, and the
    // Catch nodes too (the test helper registers the catch type once per Catch node); errors are read from the log.
    const flow = buildFlows().map((node): FlowNode =>
      DISPLAY_TYPES.has(node.type) || node.type === 'catch' ? { id: node.id, type: 'helper', name: node.name, z: node.z, wires: [] } : node,
    );
    const types = new Set(flow.map((node) => node.type).filter((type) => type !== 'helper' && type !== 'tab'));
    const shown: string[] = [];
    const watchDisplays = () => {
      for (const node of flow) if (node.type === 'helper') helper.getNode(node.id)?.on('input', () => shown.push(node.id));
    };
    await helper.load([...new Set([...types].map(nodeModuleFor)), captureNodeApi], flow, exampleCredentials(flow));
    watchDisplays();
    // Longer than any "inject once" delay the examples ever had (1 s).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await helper.setFlows(flow, 'full', exampleCredentials(flow));
    watchDisplays();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    should(shown).deepEqual([]);
    should(ctx.sandbox.log.map((entry) => `${entry.method} ${entry.path}`)).deepEqual([]);
    should(pubsubState(ctx.sandbox).topics.size).equal(0);
    const errors = helper
      .log()
      .getCalls()
      .filter((call) => (call.args[0] as { level: number }).level <= LOG_WARN && (call.args[0] as { type?: string }).type?.startsWith('svc-'));
    should(errors.map(logText)).deepEqual([]);
    // A repeating inject is off (disabled) and says so in its name; no inject fires at deploy.
    for (const node of flow.filter((n) => n.type === 'inject')) {
      should(node.once === true).equal(false, `${node.id} fires at deploy`);
      if (node.repeat || node.crontab) {
        should(node.d).equal(true, `${node.id} repeats and is not off`);
        should(String(node.name)).match(/\boff\b/, `${node.id} does not say it is off`);
      }
    }
  });

  it("`npm start` turns Node-RED's welcome tour off (issue 21 point 3)", function () {
    should(devSettings(1880).editorTheme).match({ tours: false });
  });

  it('gives every example node ids of its own (npm start deploys them all at once)', function () {
    const owners = new Map<string, string[]>();
    for (const file of files) {
      for (const node of readExample(file, EXAMPLE_NODE_RED_URL).filter((n) => n.id !== SANDBOX_CONFIG_ID)) {
        owners.set(node.id, [...(owners.get(node.id) ?? []), file]);
      }
    }
    should([...owners].filter(([, inFiles]) => inFiles.length > 1)).deepEqual([]);
  });

  for (const file of files) {
    describe(file, function () {
      it('follows the conventions: a leading comment, no z members, the shared sandbox config node, core nodes only', function () {
        const flow = readExample(file, EXAMPLE_NODE_RED_URL);
        should(flow[0].type).equal('comment');
        should(flow[0].name).be.a.String().and.not.be.empty();
        should(flow[0].info).be.a.String().and.not.be.empty();
        should(flow.filter((node) => 'z' in node).map((node) => node.id)).deepEqual([]);
        should(flow.find((node) => node.id === SANDBOX_CONFIG_ID)).deepEqual(sandboxConfig);
        if (flow.some((node) => node.type === 'worldmap')) should(flow[0].info).match(/node-red-contrib-web-worldmap/, 'an example using worldmap says so');
        for (const node of flow) {
          if (node.type.startsWith('svc-') && node.type !== 'svc-config') should(node.server ?? SANDBOX_CONFIG_ID).equal(SANDBOX_CONFIG_ID, node.id);
          should(node.type.startsWith('svc-') || CORE_MODULES.has(node.type) || DISPLAY_TYPES.has(node.type)).be.true(
            `${node.id}: ${node.type} is not a core node`,
          );
        }
      });

      it('deploys against the sandbox and produces the expected output', async function () {
        const run = RUNS[file];
        const example = readExample(file, nodeRedUrl, ctx.sandbox.url);
        const shows = new Map(example.filter((node) => DISPLAY_TYPES.has(node.type)).map((node) => [node.id, node]));
        // On a tab of its own, as `npm start` and an import place it: nodes with a position get the tab's `z`, config nodes stay global.
        const flow: FlowNode[] = [{ id: TAB_ID, type: 'tab', label: file }];
        for (const node of example) {
          // The suite's sandbox (one job poll), as an account: the built-in sandbox is tested in builtin_sandbox_process_slow.
          // Fast tests: the examples' pacing of 80 requests per minute is the platform's advice, not part of what is tested.
          if (node.id === SANDBOX_CONFIG_ID)
            flow.push({
              ...node,
              platform: 'account',
              baseUrl: ctx.sandbox.url,
              authUrl: ctx.sandbox.url,
              sandboxUrl: ctx.sandbox.url,
              audience: SANDBOX_DEFAULTS.audience,
              projectId: SANDBOX_DEFAULTS.projectId,
              rateLimit: 0,
            });
          else if (!('x' in node)) flow.push(node);
          else if (DISPLAY_TYPES.has(node.type)) flow.push({ id: node.id, type: 'helper', name: node.name, z: TAB_ID, wires: [] });
          else flow.push({ ...node, z: TAB_ID });
        }
        const types = new Set(flow.map((node) => node.type).filter((type) => type !== 'helper' && type !== 'tab'));
        // A core module may register several types (file, file in): each module is loaded once.
        const modules = new Set([...types].map(nodeModuleFor));
        await helper.load([...modules, captureNodeApi], flow, exampleCredentials(flow));

        const arrivals = new Arrivals();
        for (const id of shows.keys()) arrivals.watch(id);
        const errorSinks = example.filter((node) => node.type === 'catch').flatMap((node) => node.wires?.flat() ?? []);

        const seen: Fields[] = [];
        for (const step of run.steps ?? []) {
          const outputs = step.expect.map((expectation) => arrivals.next(expectation.at));
          if (step.trigger) helper.getNode(step.trigger).receive({});
          const messages = await Promise.all(outputs);
          // The other messages of the same send have arrived by the next turn.
          await new Promise((resolve) => setImmediate(resolve));
          step.expect.forEach((expectation, i) => {
            if (expectation.shapes) messages[i] = { payload: [messages[i], ...arrivals.all(expectation.at).splice(0)].map((msg) => msg.payload) };
          });
          step.expect.forEach((expectation, i) => {
            const shown = shows.get(expectation.at) as FlowNode;
            const complete = shown.complete as string;
            if (shown.targetType === 'msg' && !expectation.raw)
              should(memberAt(messages[i], complete)).not.equal(undefined, `msg.${complete} at ${expectation.at}`);
            expectation.check(messages[i]);
            if (!expectation.shapes) seen.push(messages[i]);
          });
        }
        const comment = example[0].info as string;
        should(checkClaims(comment, [...seen, ...[...shows.keys()].flatMap((id) => arrivals.all(id))], run.inputs ?? [])).deepEqual(
          [],
          'what the comment says the run shows',
        );
        await run.pages?.(nodeRedUrl);

        for (const id of errorSinks) should(arrivals.all(id)).deepEqual([], `a Catch node of ${file} reported an error`);
        const flowIds = new Set(flow.map((node) => node.id));
        const logged = helper
          .log()
          .getCalls()
          .filter((call) => {
            const entry = call.args[0] as { level: number; id?: string };
            return entry.level <= LOG_WARN && entry.id !== undefined && flowIds.has(entry.id);
          });
        should(logged.map(logText)).deepEqual([]);
      });
    });
  }
});
