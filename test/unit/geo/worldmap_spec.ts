import should from 'should';
import { escapeHtml, placeLabel, MapShape } from '../../../nodes/lib/geo/worldmap';
import { geocodeShapes, isolineShapes, wordsShapes, bulkShapes } from '../../../nodes/lib/geo/worldmap-places';
import { routeLegs, routeShapes, sequenceShapes } from '../../../nodes/lib/geo/worldmap-routes';
import { mapLayerOf, mapMessages } from '../../../nodes/lib/node-red/map-output';
import type { Place } from '../../../nodes/lib/geo/locations';
import { expectError, helper, loadWithSandbox, useSandbox, Fields } from '../../support/harness';

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
  it('draws on the configured layer, else the node name, else its type; none when off', function () {
    should(mapLayerOf({ type: 'svc-geocode', worldmap: true, worldmapLayer: ' depots ', name: 'n' })).equal('depots');
    should(mapLayerOf({ type: 'svc-geocode', worldmap: true, name: 'my geocoder' })).equal('my geocoder');
    // Unnamed: what the node's kind draws, not its type (issue 54 point 5).
    should(mapLayerOf({ type: 'svc-geocode', worldmap: true, worldmapLayer: '', name: '' })).equal('geocoded addresses');
    should(mapLayerOf({ type: 'svc-bulk-geocode', worldmap: true })).equal('bulk geocode rows');
    should(mapLayerOf({ type: 'svc-geocode', worldmapLayer: 'x' })).be.undefined();
  });

  it('sends a fresh message per shape, the first with the command that shows them all, or null when there is nothing to draw (issue 29 point 4)', function () {
    should(mapMessages((layer) => ({ name: 'a', layer, lat: 1, lon: 2 }), 'L')).eql([
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
    should(mapMessages(() => [line, polygon], 'L')).eql([
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
    should(mapMessages(() => [], 'L')).be.null();
    should(mapMessages(() => undefined, 'L')).be.null();
    should(mapMessages(undefined, 'L')).be.null();
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
      for (const shape of shapes) should(shape.layer).equal(mapLayerOf({ type: testCase.type, worldmap: true }));
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
