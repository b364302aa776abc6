import fs from 'node:fs';
import path from 'node:path';
import should from 'should';
import { escapeHtml, placeLabel, MapShape } from '../../../nodes/lib/geo/worldmap';
import { geocodeShapes, isolineShapes, wordsShapes, bulkShapes } from '../../../nodes/lib/geo/worldmap-places';
import { routeLegs, routeShapes, sequenceShapes } from '../../../nodes/lib/geo/worldmap-routes';
import { mapOutputOf, mapMessages, MapOutput } from '../../../nodes/lib/node-red/map-output';
import type { Place } from '../../../nodes/lib/geo/locations';
import { CONFIG_ID, configNode, expectError, helper, loadWithSandbox, nodeModule, sandboxCredentials, useSandbox, Fields } from '../../support/harness';
import { REPO_ROOT } from '../../support/paths';

/** Shapes as a list, whatever the payload. */
const list = (payload: unknown): MapShape[] => (Array.isArray(payload) ? payload : [payload]) as MapShape[];

describe('worldmap shapes (geo/worldmap)', function () {
  const berlin = { lat: 52.52, lon: 13.405 };
  const feature = {
    type: 'Feature' as const,
    geometry: { type: 'Point', coordinates: [13.405, 52.52] },
    properties: { address_components: { place: { label: 'Main St <12>' } }, quality_metrics: { match_type: 'exact', accuracy: 'Point' } },
  };

  it('names a geocode marker after the address, escaped, with the match quality in its popup', function () {
    const shape = geocodeShapes('12 <b>Main</b> St', feature, berlin, 'geocode') as MapShape;
    should(shape).containEql({ name: '12 &lt;b&gt;Main&lt;/b&gt; St', layer: 'geocode', lat: 52.52, lon: 13.405, icon: 'map-marker' });
    should(shape.popup)
      .match(/match_type<\/td><td>exact/)
      .and.match(/accuracy<\/td><td>Point/)
      .and.match(/Main St &lt;12&gt;/);
    should(geocodeShapes('nowhere', undefined, undefined, 'geocode')).be.undefined();
  });

  it('names a words marker ///a.b.c with words, elevation and geohash in its popup', function () {
    const shape = wordsShapes('///index.home.raft', { ...berlin, elevation: 34 }, 'u33dc0', { coordinates: { elevationType: 'ground' } }, 'w') as MapShape;
    should(shape).containEql({ name: '///index.home.raft', lat: 52.52, lon: 13.405, layer: 'w' });
    should(shape.popup)
      .match(/34 m/)
      .and.match(/ground/)
      .and.match(/u33dc0/)
      .and.match(/index\.home\.raft/);
  });

  it('draws one bulk marker per located row, uniquely named by address and row', function () {
    const rows = [
      { index: 0, input: 'Main Street', result: feature, location: berlin },
      { index: 1, input: { Address: 'Main Street' }, result: {}, location: { lat: 1, lon: 2 } },
      { index: 2, input: 'nowhere', result: {}, location: undefined },
    ];
    const shapes = list(bulkShapes(rows, 'bulk'));
    should(shapes.map((s) => s.name)).eql(['Main Street (row 1)', 'Main Street (row 2)']);
    should(shapes[1]).containEql({ lat: 1, lon: 2, layer: 'bulk' });
  });

  it('draws one named polygon per origin and range, larger ranges first, coloured by range', function () {
    const ring = [
      [13, 52],
      [13.1, 52],
      [13.1, 52.1],
      [13, 52],
    ];
    const polygon = (value: number) => ({
      type: 'Feature',
      geometry: { type: 'Polygon', coordinates: [ring] },
      properties: { range: { type: 'time', value } },
    });
    const origins: Place[] = [{ point: berlin }, { geohash: 'u33d', point: { lat: 52.5, lon: 13.4 } }];
    const shapes = list(isolineShapes([polygon(300), polygon(600), polygon(300), polygon(600)], origins, 2, 'iso'));
    should(shapes.map((s) => s.name)).eql(['isoline 52.52000,13.40500 600 s', 'isoline u33d 600 s', 'isoline 52.52000,13.40500 300 s', 'isoline u33d 300 s']);
    should(shapes[0].color).equal(shapes[1].color);
    should(shapes[0].color).not.equal(shapes[2].color);
    should((shapes[0].geojson as Fields).geometry).eql({ type: 'Polygon', coordinates: [ring] });
    // A count that does not match origins × ranges: polygons are numbered.
    should(list(isolineShapes([polygon(300)], origins, 2, 'iso'))[0].name).equal('isoline polygon 1 300 s');
  });

  it('draws sequence stops labelled in visiting order and the legs as one line', function () {
    const stop = (lon: number, input: number, extra: Fields = {}) => ({
      type: 'Feature',
      geometry: { type: 'Point', coordinates: [lon, 52.5] },
      properties: { input, estimatedArrival: '10:00', ...extra },
    });
    const places: Place[] = [13.3, 13.32, 13.31].map((lon) => ({ point: { lat: 52.5, lon } }));
    const geojson = {
      type: 'FeatureCollection',
      features: [stop(13.3, 0), stop(13.31, 2), stop(13.32, 1), { type: 'Feature', geometry: { type: 'LineString', coordinates: [] } }],
    };
    const shapes = list(sequenceShapes(geojson, places, 'seq'));
    const query = 'sequence 52.50000,13.30000 → 52.50000,13.32000 → 52.50000,13.31000';
    should(shapes.map((s) => s.name)).eql([`${query} legs`, `${query} #1`, `${query} #2`, `${query} #3`]);
    should(shapes.slice(1).map((s) => s.label)).eql(['1', '2', '3']);
    should(shapes[0].line).eql([
      [52.5, 13.3],
      [52.5, 13.31],
      [52.5, 13.32],
    ]);
    should(shapes[2].popup)
      .match(/52\.50000,13\.31000/)
      .and.match(/10:00/);
  });

  it('cuts a route line at its waypoints and marks stretches touching an indoor waypoint', function () {
    const line = [0, 1, 2, 3, 4, 5, 6].map((lon) => ({ lat: 0, lon }));
    const places: Place[] = [{ point: { lat: 0, lon: 0 } }, { point: { lat: 0.001, lon: 3 } }, { venueId: 'v1' }, { point: { lat: 0, lon: 6 } }];
    should(routeLegs(line, places)).eql([
      { from: 0, to: 1, start: 0, end: 3, indoor: false },
      { from: 1, to: 3, start: 3, end: 6, indoor: true },
    ]);
  });

  it('draws a route as its line with the instructions in the popup, start and end markers, and dashed indoor legs', function () {
    const coordinates = [
      [13.3, 52.5],
      [13.31, 52.5],
      [13.32, 52.5],
    ];
    const geojson = {
      type: 'FeatureCollection',
      features: [
        { type: 'Feature', geometry: { type: 'LineString', coordinates }, properties: { length: 1400, duration: 100, segments: 2 } },
        { type: 'Feature', geometry: null, properties: { plainText: 'Head east on <Main> Street' } },
        { type: 'Feature', geometry: null, properties: { plainText: 'Arrive at B' } },
      ],
    };
    const places: Place[] = [
      { point: { lat: 52.5, lon: 13.3 }, name: 'A' },
      { venueId: 'mall', point: { lat: 52.5, lon: 13.32 }, name: 'B' },
    ];
    const shapes = list(routeShapes(geojson, places, 'route'));
    should(shapes.map((s) => s.name)).eql(['route A → B', 'route A → B indoor 1', 'route A → B start', 'route A → B end']);
    should(shapes[0].line).eql(coordinates.map(([lon, lat]) => [lat, lon]));
    should(shapes[0].popup).match(/<ol><li>Head east on &lt;Main&gt; Street<\/li><li>Arrive at B<\/li><\/ol>/);
    // With units (issue 29 point 7).
    should(shapes[0].popup).containEql('<tr><td>length</td><td>1.4 km</td></tr><tr><td>duration</td><td>1 min 40 s</td></tr>');
    should(shapes[1]).containEql({ dashArray: '4 8' });
    should(shapes[2]).containEql({ lat: 52.5, lon: 13.3, icon: 'play' });
    should(shapes[3]).containEql({ lat: 52.5, lon: 13.32, icon: 'building' });
  });

  it('labels places by name, geohash or rounded coordinates, and escapes HTML', function () {
    should(placeLabel({ name: 'van 7', point: berlin })).equal('van 7');
    should(placeLabel({ geohash: 'u33d', point: berlin })).equal('u33d');
    should(placeLabel({ venueId: 'mall', unitId: '12' })).equal('mall/12');
    should(escapeHtml(`<a href="x">'&'</a>`)).equal('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });
});

describe('Map output option (node-red/map-output)', function () {
  const onL: MapOutput = { layer: 'L', clear: false };
  const input = { _msgid: 'm1' };

  it('draws on the configured layer, else the node name, else its type; none when off', function () {
    should(mapOutputOf({ type: 'svc-geocode', worldmap: true, worldmapLayer: ' depots ', name: 'n' })).eql({ layer: 'depots', ttl: undefined, clear: false });
    should(mapOutputOf({ type: 'svc-geocode', worldmap: true, name: 'my geocoder' })?.layer).equal('my geocoder');
    // Unnamed: what the node's kind draws, not its type (issue 54 point 5).
    should(mapOutputOf({ type: 'svc-geocode', worldmap: true, worldmapLayer: '', name: '' })?.layer).equal('geocoded addresses');
    should(mapOutputOf({ type: 'svc-bulk-geocode', worldmap: true })?.layer).equal('bulk geocode rows');
    should(mapOutputOf({ type: 'svc-geocode', worldmapLayer: 'x' })).be.undefined();
  });

  it("reads the ttl in seconds (empty, 0 or unreadable: worldmap's own) and the clear option", function () {
    should(mapOutputOf({ type: 't', worldmap: true, worldmapLayer: 't', worldmapTtl: '90', worldmapClear: true })).eql({ layer: 't', ttl: 90, clear: true });
    should(mapOutputOf({ type: 't', worldmap: true, worldmapTtl: 30 })?.ttl).equal(30);
    for (const none of ['', 0, '0', 'abc', -5, undefined]) should(mapOutputOf({ type: 't', worldmap: true, worldmapTtl: none })?.ttl).be.undefined();
  });

  it('sends a fresh message per shape, the first with the command that shows them all, or null when there is nothing to draw (issue 29 point 4)', function () {
    should(mapMessages((layer) => ({ name: 'a', layer, lat: 1, lon: 2 }), onL, input, false)).eql([
      { payload: { name: 'a', layer: 'L', lat: 1, lon: 2, command: { lat: 1, lon: 2, zoom: 16 } } },
    ]);
    const line = {
      name: 'r',
      layer: 'L',
      line: [
        [1, 2],
        [3, 4],
      ],
    };
    const polygon = {
      name: 'p',
      layer: 'L',
      geojson: {
        type: 'Feature',
        geometry: {
          type: 'Polygon',
          coordinates: [
            [
              [5, -1],
              [6, -1],
              [5, 0],
              [5, -1],
            ],
          ],
        },
      },
    };
    should(mapMessages(() => [line, polygon], onL, input, false)).eql([
      {
        payload: {
          ...line,
          command: {
            bounds: [
              [-1, 2],
              [3, 6],
            ],
          },
        },
      },
      { payload: polygon },
    ]);
    should(mapMessages(() => [], onL, input, false)).be.null();
    should(mapMessages(() => undefined, onL, input, false)).be.null();
    should(mapMessages(undefined, onL, input, false)).be.null();
  });

  it("puts worldmap's ttl on every shape, and clears the layer first when asked, even with nothing to draw", function () {
    const shapes = () => [
      { name: 'a', layer: 'L', lat: 1, lon: 2 },
      { name: 'b', layer: 'L', lat: 3, lon: 4 },
    ];
    const messages = mapMessages(shapes, { layer: 'L', ttl: 60, clear: true }, input, true);
    should(messages?.map((m) => m.payload)).eql([
      { command: { clearlayer: 'L', map: { delete: 'L' } } },
      {
        name: 'a',
        layer: 'L',
        lat: 1,
        lon: 2,
        ttl: 60,
        command: {
          bounds: [
            [1, 2],
            [3, 4],
          ],
        },
      },
      { name: 'b', layer: 'L', lat: 3, lon: 4, ttl: 60 },
    ]);
    // The runner asks for the clearing once per input (clearFirst false for its later parts).
    should(mapMessages(shapes, { layer: 'L', clear: true }, input, false)?.map((m) => m.payload)).eql(
      shapes().map((s, i) =>
        i === 0
          ? {
              ...s,
              command: {
                bounds: [
                  [1, 2],
                  [3, 4],
                ],
              },
            }
          : s,
      ),
    );
    should(mapMessages(() => undefined, { layer: 'L', clear: true }, input, true)).eql([{ payload: { command: { clearlayer: 'L', map: { delete: 'L' } } } }]);
  });

  it('sends to the one browser session the input came from (_sessionid), and clears the layer only there', function () {
    const messages = mapMessages(() => ({ name: 'a', layer: 'L', lat: 1, lon: 2 }), { layer: 'L', clear: true }, { _msgid: 'm2', _sessionid: 'abc123' }, true);
    should(messages).eql([
      { payload: { command: { clearlayer: 'L' } }, _sessionid: 'abc123' },
      { payload: { name: 'a', layer: 'L', lat: 1, lon: 2, command: { lat: 1, lon: 2, zoom: 16 } }, _sessionid: 'abc123' },
    ]);
    // Only a string is a worldmap session id.
    should(mapMessages(() => ({ name: 'a', layer: 'L', lat: 1, lon: 2 }), onL, { _msgid: 'm3', _sessionid: 7 }, false)?.[0]).not.have.property('_sessionid');
  });
});

type SendCall = { args: unknown[]; thisValue: { id?: string } };

/** Each locating node with its Map output on: one input, what to send, and what the map must show. */
const CASES: Array<{ type: string; input: Fields; extra?: Fields; check: (out: Fields, map: MapShape[]) => void }> = [
  {
    type: 'svc-geocode',
    input: { payload: '12 Main Street, Sandbox City' },
    check: (out, map) => {
      should(map).have.length(1);
      should(map[0]).containEql({ name: '12 Main Street, Sandbox City', ...(out.location as Fields) });
    },
  },
  {
    type: 'svc-words',
    input: { payload: 'index.home.raft' },
    check: (out, map) => should(map[0]).containEql({ name: '///index.home.raft', lat: (out.location as Fields).lat, lon: (out.location as Fields).lon }),
  },
  {
    type: 'svc-bulk-geocode',
    input: { payload: ['12 Main Street, Sandbox City', 'nowhere at all', 'Church Lane'] },
    extra: { pollIntervalSec: 0.01, maxWait: 5 },
    check: (out, map) => {
      const located = (out.payload as Fields[]).filter((row) => row.location);
      should(map).have.length(located.length);
      should(map.map((s) => [s.lat, s.lon])).eql(located.map((row) => [(row.location as Fields).lat, (row.location as Fields).lon]));
    },
  },
  {
    type: 'svc-isoline',
    input: { payload: { origins: [{ lat: 52.52, lon: 13.405 }], range: { type: 'time', value: [300, 600] } } },
    check: (out, map) => {
      should(map.map((s) => s.name)).eql(['isoline 52.52000,13.40500 600 s', 'isoline 52.52000,13.40500 300 s']);
      const features = (out.geojson as { features: Fields[] }).features;
      should(map.map((s) => (s.geojson as Fields).geometry)).eql([features[1].geometry, features[0].geometry]);
    },
  },
  {
    type: 'svc-sequence',
    input: { payload: { waypoints: [13.3, 13.34, 13.31].map((lon) => ({ lat: 52.5, lon })) } },
    check: (out, map) => {
      const stops = map.filter((s) => s.label !== undefined);
      should(stops.map((s) => s.label)).eql(['1', '2', '3']);
      should(stops.map((s) => s.lon)).eql([13.3, 13.31, 13.34]);
      should(out.order).eql([0, 2, 1]);
    },
  },
  {
    type: 'svc-route',
    input: { payload: { waypoints: [{ lat: 52.52, lon: 13.405 }, { venueId: 'mall' }] } },
    check: (out, map) => {
      const line = (out.geojson as { features: Array<{ geometry: { coordinates: number[][] } }> }).features[0].geometry.coordinates.map(([lon, lat]) => [
        lat,
        lon,
      ]);
      should(map[0].line).eql(line);
      should(map.map((s) => String(s.name).replace(/^route \S+ → mall/, ''))).eql(['', ' indoor 1', ' start', ' end']);
      should(map[0].popup).match(/<ol>(<li>[^<]+<\/li>)+<\/ol>/);
    },
  },
];

describe('Map output on the locating nodes', function () {
  const ctx = useSandbox();

  /** Sends one message and resolves with both outputs, checking they came in one send. */
  async function bothOutputs(nodeId: string, input: Fields): Promise<{ out: Fields; map: Fields[] }> {
    const out = helper.getNode('out');
    const map = helper.getNode('map');
    // The helper spies on Node.prototype.send: the calls of every node, ours picked by `this`.
    const sends = () => (helper.getNode(nodeId).send as { getCalls(): SendCall[] }).getCalls().filter((call) => call.thisValue?.id === nodeId);
    const before = sends().length;
    const mapMsgs: Fields[] = [];
    const onMap = (msg: Fields) => mapMsgs.push(msg);
    map.on('input', onMap);
    const received = new Promise<Fields>((resolve) => out.once('input', resolve));
    helper.getNode(nodeId).receive(input);
    const outMsg = await received;
    // Both outputs leave in one send: the map message has been delivered by the time a later tick runs.
    await new Promise((resolve) => setImmediate(resolve));
    map.removeListener('input', onMap);
    const ours = sends().slice(before);
    should(ours).have.length(1);
    should(ours[0].args[0]).be.an.Array().and.have.length(2);
    return { out: outMsg, map: mapMsgs };
  }

  for (const testCase of CASES) {
    it(`${testCase.type}: output 1 as before, and a drawable message on output 2 in the same send`, async function () {
      await loadWithSandbox(ctx.sandbox, {
        types: [testCase.type],
        nodes: [
          { id: 'n1', type: testCase.type, worldmap: true, wires: [['out'], ['map']], ...testCase.extra },
          { id: 'map', type: 'helper' },
        ],
      });
      const { out, map } = await bothOutputs('n1', testCase.input);
      // One message per shape (worldmap keeps single shapes by name, to draw them again on a page opened later), each a payload of one shape.
      should(map.length).be.above(0);
      const shapes = map.map((msg) => msg.payload as MapShape);
      for (const shape of shapes) should(Array.isArray(shape)).be.false();
      for (const shape of shapes) should(shape.layer).equal(mapOutputOf({ type: testCase.type, worldmap: true })?.layer);
      // The first shows the whole result (worldmap's view command), the others carry no command.
      should(shapes[0].command).be.an.Object();
      should(shapes.slice(1).filter((shape) => shape.command !== undefined)).eql([]);
      testCase.check(
        out,
        shapes.map(({ command: _command, ...shape }) => shape),
      );
    });
  }

  it('sends null on output 2 when there is nothing to draw, and uses the configured layer', async function () {
    await loadWithSandbox(ctx.sandbox, {
      types: ['svc-geocode'],
      nodes: [
        { id: 'n1', type: 'svc-geocode', worldmap: true, worldmapLayer: 'depots', wires: [['out'], ['map']] },
        { id: 'map', type: 'helper' },
      ],
    });
    const empty = await bothOutputs('n1', { payload: 'nowhere at all' });
    should(empty.map).eql([]);
    should(empty.out.location).be.undefined();
    const found = await bothOutputs('n1', { payload: 'Church Lane' });
    should(found.map.map((msg) => (msg.payload as Fields).layer)).eql(['depots']);
  });

  it("sets worldmap's ttl, clears the layer first and sends to the input's browser session only (issue 55 point 6)", async function () {
    await loadWithSandbox(ctx.sandbox, {
      types: ['svc-geocode'],
      nodes: [
        { id: 'n1', type: 'svc-geocode', worldmap: true, worldmapLayer: 'depots', worldmapTtl: '120', worldmapClear: true, wires: [['out'], ['map']] },
        { id: 'map', type: 'helper' },
      ],
    });
    const first = await bothOutputs('n1', { payload: 'Church Lane', _sessionid: 'browser-1' });
    should(first.out._sessionid).equal('browser-1');
    should(first.map.map((msg) => msg._sessionid)).eql(['browser-1', 'browser-1']);
    should(first.map[0].payload).eql({ command: { clearlayer: 'depots' } });
    should(first.map[1].payload).containEql({ layer: 'depots', ttl: 120 });
    // Without a session: every page, and worldmap forgets the layer's shapes for pages opened later too.
    const second = await bothOutputs('n1', { payload: 'Church Lane' });
    should(second.map.map((msg) => '_sessionid' in msg)).eql([false, false]);
    should(second.map[0].payload).eql({ command: { clearlayer: 'depots', map: { delete: 'depots' } } });
    // Nothing found: the layer is still cleared, so it shows this input's result (none).
    const empty = await bothOutputs('n1', { payload: 'nowhere at all' });
    should(empty.map.map((msg) => msg.payload)).eql([{ command: { clearlayer: 'depots', map: { delete: 'depots' } } }]);
  });

  it("svc-bulk-geocode, a message per job: the layer is cleared once, before the run's first rows", async function () {
    await loadWithSandbox(ctx.sandbox, {
      types: ['svc-bulk-geocode'],
      nodes: [
        {
          id: 'n1',
          type: 'svc-bulk-geocode',
          worldmap: true,
          worldmapClear: true,
          output: 'parts',
          batchSize: 1,
          pollIntervalSec: 0.01,
          maxWait: 5,
          wires: [['out'], ['map']],
        },
        { id: 'map', type: 'helper' },
      ],
    });
    const mapMsgs: Fields[] = [];
    helper.getNode('map').on('input', (msg: Fields) => mapMsgs.push(msg));
    const parts: Fields[] = [];
    const allParts = new Promise<void>((resolve) =>
      helper.getNode('out').on('input', (msg: Fields) => {
        parts.push(msg);
        if (parts.length === 3) resolve();
      }),
    );
    helper.getNode('n1').receive({ payload: ['12 Main Street, Sandbox City', 'Church Lane', 'Old Main Street'] });
    await allParts;
    await new Promise((resolve) => setImmediate(resolve));
    const commands = mapMsgs.map((msg) => (msg.payload as Fields).command as Fields | undefined);
    should(commands[0]).eql({ clearlayer: 'bulk geocode rows', map: { delete: 'bulk geocode rows' } });
    should(commands.filter((command) => command?.clearlayer !== undefined)).have.length(1);
    should(mapMsgs.filter((msg) => (msg.payload as Fields).name !== undefined)).have.length(3);
  });

  it('the Dashboard 2 recipe of docs/map.md runs: one table row per address, the layer replaced on each click (Dashboard 2 and worldmap stood in for)', async function () {
    const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'map.md'), 'utf8');
    const recipe = JSON.parse(/```json\n([\s\S]*?)\n```/.exec(doc)?.[1] ?? '[]') as Fields[];
    should(recipe.map((n) => n.type)).containDeep(['inject', 'svc-bulk-geocode', 'change', 'ui-table', 'worldmap', 'ui-template', 'svc-config']);
    // Dashboard 2 is not installed here: the table and the map are helper nodes of the same ids; the config node is the test's.
    // Imported, the nodes land on the tab open in the editor (they have a position, so Node-RED starts them only on a tab).
    const flow = recipe
      .filter((n) => !['ui-template', 'ui-group', 'ui-page', 'ui-base', 'ui-theme', 'svc-config'].includes(String(n.type)))
      .map((n) => (n.type === 'ui-table' || n.type === 'worldmap' ? { id: n.id, type: 'helper' } : n.server ? { ...n, server: CONFIG_ID } : n))
      .map((n) => ({ ...n, z: 'recipe' }));
    const core = (file: string): unknown => require(require.resolve(`@node-red/nodes/core/${file}`, { paths: [path.dirname(require.resolve('node-red'))] }));
    await helper.load(
      [nodeModule('svc-config'), nodeModule('svc-bulk-geocode'), core('common/20-inject.js'), core('function/15-change.js')],
      [{ id: 'recipe', type: 'tab' }, configNode(ctx.sandbox), ...flow],
      sandboxCredentials(),
    );
    const inject = recipe.find((n) => n.type === 'inject') as Fields;
    const table = helper.getNode(String(recipe.find((n) => n.type === 'ui-table')?.id));
    const map = helper.getNode(String(recipe.find((n) => n.type === 'worldmap')?.id));
    const mapMsgs: Fields[] = [];
    map.on('input', (msg: Fields) => mapMsgs.push(msg));
    for (let click = 0; click < 2; click++) {
      const rows = new Promise<Fields>((resolve) => table.once('input', resolve));
      helper.getNode(String(inject.id)).receive({});
      const { payload } = await rows;
      should(payload).be.an.Array().and.have.length(3);
      for (const row of payload as Fields[]) {
        should(Object.keys(row).every((key) => ['address', 'lat', 'lon', 'error'].includes(key))).be.true();
        should(row.address).be.a.String();
      }
      should((payload as Fields[]).filter((row) => typeof row.lat === 'number').length).be.above(0);
    }
    await new Promise((resolve) => setImmediate(resolve));
    const clears = mapMsgs.filter((msg) => ((msg.payload as Fields).command as Fields | undefined)?.clearlayer === 'depots');
    should(clears).have.length(2);
    should((mapMsgs[0].payload as Fields).command).eql({ clearlayer: 'depots', map: { delete: 'depots' } });
  });

  it('fails an input with one error and nothing on either output', async function () {
    await loadWithSandbox(ctx.sandbox, {
      types: ['svc-geocode'],
      nodes: [
        { id: 'n1', type: 'svc-geocode', worldmap: true, wires: [['out'], ['map']] },
        { id: 'map', type: 'helper' },
      ],
    });
    let mapped = 0;
    helper.getNode('map').on('input', () => mapped++);
    const { error } = await expectError('n1', { payload: '' });
    should(error.code).equal('INVALID_INPUT');
    should(mapped).equal(0);
  });
});
