import path from 'node:path';
import should from 'should';
import { CONFIG_ID, Fields, configNode, helper, nodeModule, sandboxCredentials, useSandbox } from '../support/harness';
import { currentVersion } from '../support/migrations';
import type { Defaults } from '../../nodes/lib/node-red/editor-definition';
import { defaults as geocodeDefaults } from '../../nodes/svc-geocode/defaults';
import { defaults as isolineDefaults } from '../../nodes/svc-isoline/defaults';
import { defaults as routeDefaults } from '../../nodes/svc-route/defaults';
import { defaults as sequenceDefaults } from '../../nodes/svc-sequence/defaults';
import { defaults as wordsDefaults } from '../../nodes/svc-words/defaults';
import { defaults as bulkDefaults } from '../../nodes/svc-bulk-geocode/defaults';
import { defaults as topicDefaults } from '../../nodes/svc-topic/defaults';
import { defaults as publishDefaults } from '../../nodes/svc-topic-publish/defaults';
import { addTopic, resetPubsub } from '../../sandbox/pubsub-state';

/**
 * Issue 54: every node runs as dropped. Each node has the settings the editor gives a node dropped from
 * the palette (its defaults, at its current settings version), behind core inject and, where it needs a
 * location, svc-geocode as dropped (through split and join for several); the message reaches the end.
 */

const CORE = path.dirname(require.resolve('node-red'));
const core = (file: string): unknown => require(require.resolve(`@node-red/nodes/core/${file}`, { paths: [CORE] }));

/** A node as the editor drops it: every default's value, the settings version, on the test's config node. */
function dropped(type: string, defaults: Defaults, id: string, wires: string[]): Fields {
  const settings = Object.fromEntries(Object.entries(defaults).map(([name, d]) => [name, d.value]));
  return { ...settings, id, type, version: currentVersion(type), server: CONFIG_ID, wires: [wires] };
}

describe('nodes dropped as is (issue 54)', function () {
  const ctx = useSandbox();

  /** Loads the flow, clicks the inject node and resolves with the message that reaches `out`. */
  async function run(types: string[], nodes: Fields[], payload: unknown, props: Array<{ p: string; v: string; vt: string }> = []): Promise<Fields> {
    const inject = {
      id: 'in',
      type: 'inject',
      props: [{ p: 'payload' }, ...props],
      payload: JSON.stringify(payload),
      payloadType: 'json',
      wires: [[nodes[0].id]],
    };
    await helper.load(
      [nodeModule('svc-config'), ...types.map(nodeModule), core('common/20-inject.js'), core('sequence/17-split.js')],
      [configNode(ctx.sandbox), inject, ...nodes, { id: 'out', type: 'helper' }],
      sandboxCredentials(),
    );
    const reached = new Promise<Fields>((resolve) => helper.getNode('out').once('input', resolve));
    helper.getNode('in').receive({});
    return reached;
  }

  const geocode = (id: string, next: string) => dropped('svc-geocode', geocodeDefaults, id, [next]);
  const split = { id: 'splitter', type: 'split', wires: [['g']] };
  const join = (next: string) => ({ id: 'joiner', type: 'join', mode: 'auto', wires: [[next]] });

  it('svc-isoline has a fixed range, time 600 s', function () {
    should(isolineDefaults.rangeType.value).equal('time');
    should(isolineDefaults.rangeTypeType.value).equal('fixed');
    should(isolineDefaults.rangeValue.value).equal('600');
    should(isolineDefaults.rangeValueType.value).equal('num');
  });

  it('svc-geocode → svc-isoline: the GeoJSON FeatureCollection is the origin', async function () {
    const msg = await run(
      ['svc-geocode', 'svc-isoline'],
      [geocode('g', 'iso'), dropped('svc-isoline', isolineDefaults, 'iso', ['out'])],
      '1 Main Street, Berlin',
    );
    const [sent] = ctx.sandbox.requests('isoline');
    const body = JSON.parse(sent.body) as Fields;
    should(body.range).eql({ type: 'time', value: 600 });
    should(body.origins).have.length(1);
    should((msg.geojson as Fields).type).equal('FeatureCollection');
  });

  it('split → svc-geocode → join → svc-route: the joined FeatureCollections are the waypoints', async function () {
    const msg = await run(
      ['svc-geocode', 'svc-route'],
      [split, geocode('g', 'joiner'), join('route'), dropped('svc-route', routeDefaults, 'route', ['out'])],
      ['1 Main Street, Berlin', '2 Station Road, Potsdam'],
    );
    const body = JSON.parse(ctx.sandbox.requests('route')[0].body) as { waypoints: Fields[] };
    should(body.waypoints.map((waypoint) => waypoint.type)).eql(['point', 'point']);
    should(msg.statusCode).equal(200);
  });

  it('split → svc-geocode → join → svc-sequence: the joined FeatureCollections are the waypoints', async function () {
    const msg = await run(
      ['svc-geocode', 'svc-sequence'],
      [split, geocode('g', 'joiner'), join('seq'), dropped('svc-sequence', sequenceDefaults, 'seq', ['out'])],
      ['1 Main Street, Berlin', '2 Station Road, Potsdam', '3 Harbour Lane, Berlin'],
    );
    const body = JSON.parse(ctx.sandbox.requests('sequence')[0].body) as { waypoints: Fields[] };
    should(body.waypoints).have.length(3);
    should(msg.order).have.length(3);
  });

  it('svc-geocode alone: inject → node → out', async function () {
    const msg = await run(['svc-geocode'], [geocode('g', 'out')], '1 Main Street, Berlin');
    should(msg.location).have.properties(['lat', 'lon']);
  });

  it('svc-words alone: a what3words address in, its location out', async function () {
    const msg = await run(['svc-words'], [dropped('svc-words', wordsDefaults, 'w', ['out'])], '///wheat.ribbon.magnet');
    should(msg.statusCode).equal(200);
    should(ctx.sandbox.requests('words')).have.length(1);
  });

  it('svc-bulk-geocode alone: an array of addresses in, their results out', async function () {
    const msg = await run(
      ['svc-bulk-geocode'],
      [dropped('svc-bulk-geocode', bulkDefaults, 'b', ['out'])],
      ['1 Main Street, Berlin', '2 Station Road, Potsdam'],
    );
    should(msg.payload).be.an.Array().and.have.length(2);
  });

  it('svc-topic alone: lists the topics (fixed to list-topics, read-only)', async function () {
    resetPubsub(ctx.sandbox);
    addTopic(ctx.sandbox, 'sensors');
    const msg = await run(['svc-topic'], [dropped('svc-topic', topicDefaults, 't', ['out'])], '');
    should((msg.payload as { items: Fields[] }).items.map((topic) => topic.name)).eql(['sensors']);
    should(ctx.sandbox.requests('topic-list')).have.length(1);
  });

  it('a saved 1.0.0 svc-topic without an operation setting still reads msg.operation', async function () {
    resetPubsub(ctx.sandbox);
    await helper.load(
      [nodeModule('svc-config'), nodeModule('svc-topic')],
      [configNode(ctx.sandbox), { id: 't', type: 'svc-topic', server: CONFIG_ID, wires: [['out']] }, { id: 'out', type: 'helper' }],
      sandboxCredentials(),
    );
    const reached = new Promise<Fields>((resolve) => helper.getNode('out').once('input', resolve));
    helper.getNode('t').receive({ operation: 'create-topic', payload: { Name: 'sensors' } });
    should((await reached).topicId).be.a.Number();
  });

  // The spec has no default topic or cell: the inject carries both, as the node's help's minimal flow does.
  it('svc-topic-publish alone: msg.topicId of a topic, msg.locationId and msg.payload in, published', async function () {
    resetPubsub(ctx.sandbox);
    const topicId = addTopic(ctx.sandbox, 'sensors').id;
    const msg = await run(['svc-topic-publish'], [dropped('svc-topic-publish', publishDefaults, 'p', ['out'])], { temperature: 21.5 }, [
      { p: 'topicId', v: String(topicId), vt: 'num' },
      { p: 'locationId', v: 'cell-1', vt: 'str' },
    ]);
    should(msg.statusCode).equal(200);
  });

  it('a current svc-isoline whose settings lack the range reads the dropped node’s range, time 600 s', async function () {
    await helper.load(
      [nodeModule('svc-config'), nodeModule('svc-isoline')],
      [
        configNode(ctx.sandbox),
        { id: 'iso', type: 'svc-isoline', version: currentVersion('svc-isoline'), server: CONFIG_ID, wires: [['out']] },
        { id: 'out', type: 'helper' },
      ],
      sandboxCredentials(),
    );
    const reached = new Promise<Fields>((resolve) => helper.getNode('out').once('input', resolve));
    helper.getNode('iso').receive({ payload: { lat: 52.52, lon: 13.405 } });
    await reached;
    should((JSON.parse(ctx.sandbox.requests('isoline')[0].body) as Fields).range).eql({ type: 'time', value: 600 });
  });

  it('a saved 1.0.0 svc-isoline without range settings still reads the range from the message', async function () {
    await helper.load(
      [nodeModule('svc-config'), nodeModule('svc-isoline')],
      [configNode(ctx.sandbox), { id: 'iso', type: 'svc-isoline', server: CONFIG_ID, wires: [['out']] }, { id: 'out', type: 'helper' }],
      sandboxCredentials(),
    );
    const reached = new Promise<Fields>((resolve) => helper.getNode('out').once('input', resolve));
    helper.getNode('iso').receive({ payload: { origins: { lat: 52.52, lon: 13.405 }, range: { type: 'distance', value: 900 } } });
    await reached;
    should((JSON.parse(ctx.sandbox.requests('isoline')[0].body) as Fields).range).eql({ type: 'distance', value: 900 });
  });
});
