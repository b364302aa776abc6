import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import should from 'should';
import { Fields, expectOutput, helper, nodeModule, useSandbox } from '../support/harness';
import { FIXTURE_CREDENTIALS, fixtureNodes } from '../support/flows-1.0.0';

/**
 * A flows file written by 1.0.0, with every node and every option set away from its default
 * (test/fixtures/flows-1.0.0.json), loads and runs unchanged: later versions may add options, never
 * rename or reinterpret the ones users' flows already hold. Only the sandbox's address is filled in,
 * and the debug nodes are swapped for helper nodes that see what they would show.
 */

const PACK_TYPES = [
  'svc-config',
  'svc-geocode',
  'svc-words',
  'svc-bulk-geocode',
  'svc-isoline',
  'svc-sequence',
  'svc-route',
  'svc-topic',
  'svc-topic-publish',
  'svc-webhook-in',
];
/** Node-RED log levels (see @node-red/util log): errors and warnings are numbered 20 and 30. */
const LOG_WARN = 30;
const JOB_TIMEOUT_MS = 10_000;

type FlowNode = Fields & { id: string; type: string };

/** The RED.httpNode of the running load (the test helper gives each load its own, and serves none of them). */
const nodeApi: { httpNode?: Express } = {};
function captureNodeApi(red: { httpNode: Express }): void {
  nodeApi.httpNode = red.httpNode;
}

/** POSTs a body signed as the platform signs webhooks to RED.httpNode, served at "/" on a port of its own. */
async function postSigned(url: string, body: string, secret: string, headers: Record<string, string>): Promise<number> {
  const server = http.createServer((req, res) => {
    nodeApi.httpNode?.(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const t = Math.floor(Date.now() / 1000);
    const digest = createHash('sha256').update(`${t}.${secret}.${body}`).digest('hex');
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${url}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'svc-signature': `t=${t},digestV1=${digest}`, ...headers },
      body,
    });
    await response.arrayBuffer();
    return response.status;
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

function fixtureFlow(sandboxUrl: string): FlowNode[] {
  return fixtureNodes<FlowNode>(sandboxUrl).map((node) => (node.type === 'debug' ? { id: node.id, z: node.z, type: 'helper' } : node));
}

describe('a flows file written by 1.0.0', function () {
  const ctx = useSandbox();
  const mapMessages: Fields[] = [];

  beforeEach(async function () {
    mapMessages.length = 0;
    const flow = fixtureFlow(ctx.sandbox.url);
    await helper.load([...PACK_TYPES.map(nodeModule), captureNodeApi], flow, FIXTURE_CREDENTIALS);
    helper.getNode('map').on('input', (msg: Fields) => mapMessages.push(msg));
  });

  it('loads every node with nothing logged as a warning or error', function () {
    const flow = fixtureFlow(ctx.sandbox.url);
    for (const node of flow.filter((n) => n.type !== 'tab')) should.exist(helper.getNode(node.id), `${node.type} ${node.id} did not start`);
    const ids = new Set(flow.map((node) => node.id));
    const logged = helper
      .log()
      .getCalls()
      .map((call) => call.args[0] as { level: number; id?: string; msg?: unknown; type?: string })
      .filter((entry) => entry.level <= LOG_WARN && entry.id !== undefined && ids.has(entry.id));
    should(logged.map((entry) => `${entry.type ?? ''}: ${String(entry.msg)}`)).deepEqual([]);
  });

  it('geocodes from msg.query at precision 7, with the Map output', async function () {
    const msg = await expectOutput('geocode', { query: '12 Main Street, Sandbox City' });
    should(msg.location).have.properties(['lat', 'lon']);
    should(msg.geohash).be.a.String().and.have.length(7);
    should(mapMessages).have.length(1);
    should(mapMessages[0].payload).have.properties({ layer: 'fixture layer' });
  });

  it('looks up three words from msg.query', async function () {
    const msg = await expectOutput('words', { query: 'index.home.raft' });
    should(msg.geohash).be.a.String();
    should(mapMessages).have.length(1);
  });

  it('bulk geocodes from msg.query in batches of two, keeping the raw files', async function () {
    const addresses = ['12 Main Street, Sandbox City', '3 High Street, Sandbox City', '8 Station Road, Sandbox City'];
    const msg = await expectOutput('bulk', { query: addresses }, JOB_TIMEOUT_MS);
    should(msg.payload).be.an.Array().and.have.length(3);
    should(msg.jobs).be.an.Array().and.have.length(2);
    should(msg.files).be.an.Array().and.have.length(2);
  });

  it('computes isolines asynchronously for fixed distances, origins as geohashes', async function () {
    const msg = await expectOutput('isoline', { query: [13.405, 52.52] }, JOB_TIMEOUT_MS);
    const [sent] = ctx.sandbox.requests('isoline');
    const body = JSON.parse(sent.body) as Fields & { origins: Fields[] };
    should(body).match({ async: true, range: { type: 'distance' }, mode: 'short', transportMode: ['pedestrian'], optimizeFor: 'quality', shape: 120 });
    should(body.origins[0]).have.properties({ type: 'geohash' });
    should(msg.jobs).be.an.Array().and.have.length(1);
    should((msg.geojson as { features: unknown[] }).features).not.be.empty();
  });

  it('orders waypoints asynchronously, by truck, shortest', async function () {
    const waypoints = [
      [13.405, 52.52],
      [13.38, 52.5],
      [13.42, 52.53],
    ];
    const msg = await expectOutput('sequence', { query: waypoints }, JOB_TIMEOUT_MS);
    should(msg.order).be.an.Array().and.have.length(3);
    const [sent] = ctx.sandbox.requests('sequence');
    should(JSON.parse(sent.body)).match({ async: true, transportMode: ['truck'], routeMode: 'shortest' });
  });

  it('routes by bicycle, shortest, departing at the fixed time', async function () {
    const msg = await expectOutput('route', {
      query: [
        [13.405, 52.52],
        [13.38, 52.5],
      ],
    });
    should(msg.summary).have.properties(['length', 'duration']);
    const [sent] = ctx.sandbox.requests('route');
    should(JSON.parse(sent.body)).match({ preference: 'shortest', departAt: '2026-05-01T08:00:00Z' });
  });

  it('creates a topic from fixed fields, then publishes a wrapped value to it', async function () {
    const created = await expectOutput('create-topic', {});
    should(created.topicId).be.a.Number();
    const published = await expectOutput('publish', { topic: created.topicId, cell: 'cell-1', reading: 21.5 });
    should(published.statusCode).equal(200);
    should(JSON.parse(ctx.sandbox.requests('topic-publish')[0].body)).eql({ LocationId: 'cell-1', Data: { value: 21.5 } });
  });

  it('receives a webhook signed with the previous secret, carrying the custom header, on its path', async function () {
    const delivered = new Promise<Fields>((resolve) => helper.getNode('out').once('input', resolve));
    const status = await postSigned('/fixture-hook', JSON.stringify({ reading: 21.5 }), 'fixture-previous-secret', { 'x-fixture-key': 'fixture-key' });
    should(status).equal(200);
    should((await delivered).payload).eql({ reading: 21.5 });
  });
});
