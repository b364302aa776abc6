import fs from 'node:fs';
import path from 'node:path';
import ngeohash from 'ngeohash';
import type { Page } from 'playwright-core';
import should from 'should';
import { SANDBOX_DEFAULTS } from '../../sandbox';
import { geocode } from '../../sandbox/endpoints/geocode';
import { lookup } from '../../sandbox/endpoints/words';
import { REPO_ROOT } from '../support/paths';
import { ARTIFACTS_DIR, BrowserSession, EditorServer, TARGETS, packProblems, publishReadmeImage, usePackedModule } from './environment';
import { DrawnShape, countriesDrawn, drawnOn, markFirstDrawing, openMap, replaced, waitForShapes } from './worldmap-page';

/**
 * The Map output drawn by worldmap, in Chromium, on Node-RED 4.1 and 5: the Map example
 * (examples/map-every-result.json, the Map tab of `npm start`) is deployed with each locating
 * node's second output wired straight into a worldmap node, its injects are fired, and what
 * Leaflet drew on /worldmap is compared with the sandbox's responses: the count and kind of markers,
 * lines and polygons on each node's layer, and their positions. worldmap is a devDependency that
 * Node-RED finds beside itself in node_modules.
 */

type Fields = Record<string, unknown>;
type FlowNode = Fields & { id: string; type: string };

const EXAMPLE = path.join(REPO_ROOT, 'examples', 'map-every-result.json');
/** Coordinates the sandbox and our GeoJSON share are compared exactly, up to float noise. */
const SAME = 1e-9;
/** The built-in sandbox as the example's streets request names it (Node-RED's default address). */
const BUILTIN_SANDBOX_URL = 'http://127.0.0.1:1880/svc-sandbox';
/** How far a route point may lie from a drawn street, in degrees (about 5 m: the route comes as 9-character geohashes). */
const ON_STREET = 5e-5;

/** The layer of the bulk node added beside the example's, with Output = a message per job. */
const BULK_PARTS_LAYER = 'bulk parts';

/**
 * The example's bulk node and its inject once more, with Output = a message per job (`parts`) and
 * two addresses a job, so that each job's message draws its own rows on a layer of its own.
 */
function bulkPartsNodes(nodes: FlowNode[]): FlowNode[] {
  const bulk = nodes.find((node) => node.id === 'ex-map-bulk') as FlowNode;
  const inject = injectOf(nodes, 'ex-map-bulk');
  return [
    { ...inject, id: 'ex-map-inject-bulk-parts', y: 460, wires: [['ex-map-bulk-parts']] },
    { ...bulk, id: 'ex-map-bulk-parts', output: 'parts', batchSize: 2, worldmapLayer: BULK_PARTS_LAYER, y: 460 },
  ];
}

/** The address geocoded with *Output* = the location, its first output wired straight into worldmap. */
const LOCATION_ADDRESS = '3 Harbour Lane, Sandbox City';

/**
 * A geocode and a words node with *Output* = the location (msg.payload = { name, lat, lon, … }),
 * output 1 wired straight into the example's worldmap node: no Map output, no change node.
 */
function locationOutputNodes(nodes: FlowNode[]): FlowNode[] {
  const geocodeInject = injectOf(nodes, 'ex-map-geocode');
  const wordsInject = injectOf(nodes, 'ex-map-words');
  const plain = { worldmap: false, outputs: 1, output: 'location', wires: [['ex-map-worldmap']] };
  return [
    { ...geocodeInject, id: 'ex-map-inject-geocode-location', payload: LOCATION_ADDRESS, y: 520, wires: [['ex-map-geocode-location']] },
    { ...(nodes.find((node) => node.id === 'ex-map-geocode') as FlowNode), ...plain, id: 'ex-map-geocode-location', y: 520 },
    { ...wordsInject, id: 'ex-map-inject-words-location', payload: 'index.home.raft', y: 580, wires: [['ex-map-words-location']] },
    { ...(nodes.find((node) => node.id === 'ex-map-words') as FlowNode), ...plain, id: 'ex-map-words-location', y: 580 },
  ];
}

/** The layer of the geocode node with *Replace* and *Keep shapes*, and the two addresses its injects send, in turn. */
const REPLACE_LAYER = 'replaced';
const REPLACE_ADDRESSES = ['Station Road, Sandbox City', 'Market Square, Sandbox City'];

/** A geocode node with Map output *Replace* on and *Keep shapes* 600 s, and one inject per address of REPLACE_ADDRESSES. */
function replaceNodes(nodes: FlowNode[]): FlowNode[] {
  const geocode = nodes.find((node) => node.id === 'ex-map-geocode') as FlowNode;
  const inject = injectOf(nodes, 'ex-map-geocode');
  return [
    { ...geocode, id: 'ex-map-geocode-replace', worldmapLayer: REPLACE_LAYER, worldmapClear: true, worldmapTtl: '600', y: 640 },
    ...REPLACE_ADDRESSES.map((address, i) => ({
      ...inject,
      id: `ex-map-inject-replace-${i}`,
      payload: address,
      y: 640 + 40 * i,
      wires: [['ex-map-geocode-replace']],
    })),
  ];
}

function readFlow(sandboxUrl: string): FlowNode[] {
  const example = JSON.parse(fs.readFileSync(EXAMPLE, 'utf8')) as FlowNode[];
  const nodes = [...example, ...bulkPartsNodes(example), ...locationOutputNodes(example), ...replaceNodes(example)];
  return [
    { id: 'map-tab', type: 'tab', label: 'Map' },
    ...nodes.map((node): FlowNode => {
      if (node.type === 'svc-config') {
        const credentials = { clientId: SANDBOX_DEFAULTS.clientId, clientSecret: SANDBOX_DEFAULTS.clientSecret, apiKey: SANDBOX_DEFAULTS.apiKey };
        const account = {
          platform: 'account',
          baseUrl: sandboxUrl,
          authUrl: sandboxUrl,
          sandboxUrl,
          audience: SANDBOX_DEFAULTS.audience,
          projectId: SANDBOX_DEFAULTS.projectId,
        };
        return { ...node, ...account, rateLimit: 0, credentials };
      }
      // The streets request names the built-in sandbox on Node-RED's default address; here the test's sandbox serves them.
      if (typeof node.url === 'string' && node.url.startsWith(BUILTIN_SANDBOX_URL)) {
        return { ...node, z: 'map-tab', url: sandboxUrl + node.url.slice(BUILTIN_SANDBOX_URL.length) };
      }
      // Bulk jobs poll fast here: the example's pacing is for people watching.
      if (node.type === 'svc-bulk-geocode') return { ...node, z: 'map-tab', pollIntervalSec: 0.02 };
      return 'x' in node ? { ...node, z: 'map-tab' } : node;
    }),
  ];
}

function injectOf(flow: FlowNode[], nodeId: string): FlowNode {
  const inject = flow.find((node) => node.type === 'inject' && (node.wires as string[][])[0].includes(nodeId));
  if (!inject) throw new Error(`no inject wired to ${nodeId}`);
  return inject;
}

function near(actual: [number, number], expected: [number, number], tolerance: number, what: string): void {
  should(Math.abs(actual[0] - expected[0])).be.belowOrEqual(tolerance, `${what}: latitude ${actual[0]} vs ${expected[0]}`);
  should(Math.abs(actual[1] - expected[1])).be.belowOrEqual(tolerance, `${what}: longitude ${actual[1]} vs ${expected[1]}`);
}

/** South, west, north and east of every point of `shapes`. */
function boundsOf(shapes: DrawnShape[]): [number, number, number, number] {
  const points = shapes.flatMap((shape) => shape.points);
  const lats = points.map(([lat]) => lat);
  const lons = points.map(([, lon]) => lon);
  return [Math.min(...lats), Math.min(...lons), Math.max(...lats), Math.max(...lons)];
}

/** The distance in degrees from `point` to the nearest stretch of `line` (flat: the stretches are short). */
function distanceToLine([lat, lon]: [number, number], line: Array<[number, number]>): number {
  let nearest = Infinity;
  for (let i = 1; i < line.length; i++) {
    const [aLat, aLon] = line[i - 1];
    const [bLat, bLon] = line[i];
    const length2 = (bLat - aLat) ** 2 + (bLon - aLon) ** 2;
    const t = length2 === 0 ? 0 : Math.max(0, Math.min(1, ((lat - aLat) * (bLat - aLat) + (lon - aLon) * (bLon - aLon)) / length2));
    nearest = Math.min(nearest, Math.hypot(lat - (aLat + t * (bLat - aLat)), lon - (aLon + t * (bLon - aLon))));
  }
  return nearest;
}

const kinds = (shapes: DrawnShape[]) => shapes.map((shape) => shape.kind).sort();
const latLonOf = ([lon, lat]: number[]): [number, number] => [lat, lon];

describe('the Map output drawn by worldmap in a real browser (Chromium)', function () {
  const packed = usePackedModule();

  for (const target of TARGETS) {
    describe(target.runtime.title, function () {
      let server: EditorServer | undefined;
      let session: BrowserSession | undefined;
      let flow: FlowNode[] = [];
      const running = () => {
        if (!server || !session) throw new Error('Node-RED or the browser is not running');
        return { server, page: session.page };
      };

      /** Fires the inject wired to a node (or the inject of that id), as a click on its button does. */
      async function fire(nodeId: string): Promise<void> {
        const inject = flow.some((node) => node.id === nodeId && node.type === 'inject') ? nodeId : injectOf(flow, nodeId).id;
        const response = await fetch(`${running().server.url}inject/${inject}`, { method: 'POST' });
        should(response.status).equal(200);
      }

      /** The sandbox's response to the last request a node made, asked again (the sandbox is deterministic). */
      async function responseTo(endpoint: string): Promise<Fields> {
        const { sandbox } = running().server;
        const request = sandbox.requests(endpoint).at(-1);
        if (!request) throw new Error(`no ${endpoint} request`);
        const headers = Object.fromEntries(
          Object.entries(request.headers).filter(([name]) => name.startsWith('x-svc-') || name === 'authorization' || name === 'content-type'),
        ) as Record<string, string>;
        const response = await fetch(sandbox.url + request.path, { method: request.method, headers, body: request.body || undefined });
        return (await response.json()) as Fields;
      }

      before(async function () {
        this.timeout(300_000);
        server = await EditorServer.start(target, packed());
        const modules = await server.nodeRed.get<Array<{ module: string }>>('/nodes');
        // worldmap is a devDependency (npm ci installs it) that Node-RED finds beside itself in node_modules.
        should(modules.map((set) => set.module)).containEql('node-red-contrib-web-worldmap');
        flow = readFlow(server.sandbox.url);
        const deployed = await fetch(`${server.url}flows`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'Node-RED-Deployment-Type': 'full' },
          body: JSON.stringify(flow),
        });
        should(deployed.status).equal(204);
        session = await BrowserSession.launch('en-US');
        await openMap(session.page, `${server.url}worldmap/`);
      });

      after(async function () {
        this.timeout(30_000);
        await session?.close();
        await server?.stop();
      });

      it('shows the countries outline that worldmap ships as the offline base', async function () {
        should(await countriesDrawn(running().page)).be.above(100);
      });

      it('geocode: one marker at the sandbox match; the same query again replaces it', async function () {
        const expected = latLonOf((geocode('12 Main Street, Sandbox City')?.geometry as { coordinates: number[] }).coordinates);
        await fire('ex-map-geocode');
        const shapes = await waitForShapes(running().page, 'geocoded addresses', 1);
        should(kinds(shapes)).eql(['marker']);
        should(shapes[0].name).equal('12 Main Street, Sandbox City');
        near(shapes[0].points[0], expected, SAME, 'geocode marker');
        await markFirstDrawing(running().page, shapes[0].name);
        await fire('ex-map-geocode');
        await replaced(running().page, shapes[0].name);
        should(kinds(await waitForShapes(running().page, 'geocoded addresses', 1))).eql(['marker']);
      });

      it('words: one marker named ///wheat.ribbon.magnet at the cell the sandbox names', async function () {
        const { coordinates } = lookup('wheat.ribbon.magnet') as { coordinates: { lat: number; lon: number } };
        await fire('ex-map-words');
        const shapes = await waitForShapes(running().page, 'three-word cells', 1);
        should(shapes.map((shape) => [shape.kind, shape.name])).eql([['marker', '///wheat.ribbon.magnet']]);
        near(shapes[0].points[0], [coordinates.lat, coordinates.lon], SAME, 'words marker');
      });

      it('sequence: markers labelled 1 to 5 in the visiting order the sandbox returned, and one line through them', async function () {
        await fire('ex-map-sequence');
        const shapes = await waitForShapes(running().page, 'visiting orders', 6);
        should(kinds(shapes)).eql(['line', 'marker', 'marker', 'marker', 'marker', 'marker']);
        const visited = ((await responseTo('sequence')).waypoints as Array<{ location: string }>).map(({ location }) => {
          const { latitude, longitude, error } = ngeohash.decode(location);
          return { cell: [latitude, longitude] as [number, number], size: Math.max(error.latitude, error.longitude) };
        });
        const stops = shapes.filter((shape) => shape.kind === 'marker').sort((a, b) => Number(a.label) - Number(b.label));
        should(stops.map((stop) => stop.label)).eql(['1', '2', '3', '4', '5']);
        // Markers stand on the input points; the response gives the geohash cells they lie in.
        stops.forEach((stop, k) => near(stop.points[0], visited[k].cell, visited[k].size, `stop ${k + 1}`));
        const line = shapes.find((shape) => shape.kind === 'line') as DrawnShape;
        should(line.points).eql(stops.map((stop) => stop.points[0]));
      });

      it('isoline: one polygon per range with the rings the sandbox returned', async function () {
        await fire('ex-map-isoline');
        const shapes = await waitForShapes(running().page, '5 and 10 minutes by car', 2);
        should(kinds(shapes)).eql(['polygon', 'polygon']);
        const returned = [(await responseTo('isoline')).isoline].flat() as Array<{ geometry: { coordinates: number[][][] } }>;
        const rings = returned.map((feature) => feature.geometry.coordinates[0].slice(0, -1).map(latLonOf));
        for (const shape of shapes) {
          const ring = rings.find(
            (candidate) => candidate.length === shape.points.length && candidate.every((p, i) => Math.abs(p[0] - shape.points[i][0]) < SAME),
          );
          should.exist(ring, `${shape.name} is one of the returned polygons`);
        }
        should(shapes.map((shape) => shape.name).sort()).eql(['isoline van 7 300 s', 'isoline van 7 600 s']);
      });

      it('route: the line the sandbox returned, start and end markers, and the indoor stretch dashed', async function () {
        await fire('ex-map-route');
        const shapes = await waitForShapes(running().page, 'routes', 4);
        should(kinds(shapes)).eql(['line', 'line', 'marker', 'marker']);
        const returned = (((await responseTo('route')).overview as Fields).linestring as string[]).map((geohash): [number, number] => {
          const { latitude, longitude } = ngeohash.decode(geohash);
          return [latitude, longitude];
        });
        const [route, indoor] = shapes.filter((shape) => shape.kind === 'line').sort((a, b) => Number(a.dashed) - Number(b.dashed));
        should(route.points).have.length(returned.length);
        route.points.forEach((point, i) => near(point, returned[i], SAME, `route point ${i}`));
        should(indoor.dashed).be.true();
        should(indoor.points.length).be.above(1);
        const markers = shapes.filter((shape) => shape.kind === 'marker').sort((a, b) => a.name.localeCompare(b.name));
        near(markers[0].points[0], returned[returned.length - 1], SAME, 'end marker');
        near(markers[1].points[0], returned[0], SAME, 'start marker');
      });

      it("streets: the town's streets on a layer of their own, and every route point inside them on one", async function () {
        await fire('ex-map-streets');
        const streets = (await waitForShapes(running().page, 'town streets', 100)).filter((shape) => shape.kind === 'line');
        should(streets.length).be.above(100);
        await fire('ex-map-route');
        const [route] = (await waitForShapes(running().page, 'routes', 4)).filter((shape) => shape.kind === 'line' && !shape.dashed);
        const [south, west, north, east] = boundsOf(streets);
        const inside = route.points.filter(([lat, lon]) => lat > south && lat < north && lon > west && lon < east);
        should(inside.length).be.above(1);
        for (const point of inside) {
          should(Math.min(...streets.map((street) => distanceToLine(point, street.points)))).be.below(ON_STREET, `route point ${point.join(',')}`);
        }
      });

      /** The rows of the bulk example's addresses the sandbox locates: their marker names and positions. */
      function bulkLocated(): Array<{ name: string; point: [number, number] }> {
        const addresses = injectOf(flow, 'ex-map-bulk').payload as string;
        return (JSON.parse(addresses) as string[]).flatMap((address, row) => {
          const match = geocode(address)?.geometry as { coordinates: number[] } | undefined;
          return match ? [{ name: `${address} (row ${row + 1})`, point: latLonOf(match.coordinates) }] : [];
        });
      }

      /** Every located row is one marker on `layer`, at its sandbox match. */
      async function expectBulkMarkers(layer: string): Promise<void> {
        const located = bulkLocated();
        const shapes = await waitForShapes(running().page, layer, located.length);
        should(kinds(shapes)).eql(located.map(() => 'marker'));
        for (const { name, point } of located) {
          const shape = shapes.find((candidate) => candidate.name === name);
          should.exist(shape, name);
          near((shape as DrawnShape).points[0], point, SAME, name);
        }
      }

      it('bulk: one marker per located row, at the sandbox match of its address', async function () {
        await fire('ex-map-bulk');
        await expectBulkMarkers('bulk geocode rows');
      });

      it('bulk with a message per job (parts): each job draws its rows, so every located row is one marker at its match', async function () {
        const uploads = () => running().server.sandbox.requests('bulk-upload').length;
        const before = uploads();
        await fire('ex-map-bulk-parts');
        await expectBulkMarkers(BULK_PARTS_LAYER);
        // Five addresses, two a job: the rows came in three messages, not one.
        should(uploads() - before).equal(3);
      });

      it('Output = the location, wired straight into worldmap: a marker named after the query at the match (geocode and words)', async function () {
        const [lon, lat] = (geocode(LOCATION_ADDRESS)?.geometry as { coordinates: number[] }).coordinates;
        await fire('ex-map-geocode-location');
        await fire('ex-map-words-location');
        // A payload without a layer goes on worldmap's default layer.
        const shapes = await waitForShapes(running().page, 'unknown', 2);
        should(shapes.map((shape) => [shape.kind, shape.name]).sort()).eql([
          ['marker', '///index.home.raft'],
          ['marker', LOCATION_ADDRESS],
        ]);
        near((shapes.find((shape) => shape.name === LOCATION_ADDRESS) as DrawnShape).points[0], [lat, lon], SAME, 'geocode location marker');
        const { coordinates } = lookup('index.home.raft') as { coordinates: { lat: number; lon: number } };
        near(
          (shapes.find((shape) => shape.name === '///index.home.raft') as DrawnShape).points[0],
          [coordinates.lat, coordinates.lon],
          SAME,
          'words location marker',
        );
      });

      it('zooms to what a result draws: the whole route in view, a single marker centred (issue 29 point 4)', async function () {
        const { page } = running();
        const view = () =>
          page.evaluate(() => {
            const { map } = globalThis as unknown as {
              map: {
                getBounds(): { getSouth(): number; getWest(): number; getNorth(): number; getEast(): number };
                getCenter(): { lat: number; lng: number };
                getZoom(): number;
              };
            };
            const bounds = map.getBounds();
            const centre = map.getCenter();
            return {
              south: bounds.getSouth(),
              west: bounds.getWest(),
              north: bounds.getNorth(),
              east: bounds.getEast(),
              lat: centre.lat,
              lon: centre.lng,
              zoom: map.getZoom(),
            };
          });
        /** Fires an inject until the map shows what `ok` asks (at most three times: a page that reconnects replays older views). */
        const firesUntil = async (nodeId: string, ok: (shown: Awaited<ReturnType<typeof view>>) => boolean, what: string) => {
          let shown = await view();
          for (let fired = 0; fired < 3 && (fired === 0 || !ok(shown)); fired++) {
            await fire(nodeId);
            for (let tries = 0; tries < 50 && (tries === 0 || !ok(shown)); tries++) {
              await page.waitForTimeout(100);
              shown = await view();
            }
          }
          should(ok(shown)).be.true(`${what}: the map shows ${JSON.stringify(shown)}`);
        };
        // Leaflet drops a view change asked for while a zoom animation runs, and headless Chromium may leave a transition
        // unfinished: with the animation off, the map goes where each command puts it at once.
        await page.evaluate(() => {
          (globalThis as unknown as { map: { _zoomAnimated: boolean } }).map._zoomAnimated = false;
        });
        const route = (await waitForShapes(page, 'routes', 4)).filter((shape) => shape.kind === 'line').flatMap((shape) => shape.points);
        await firesUntil(
          'ex-map-route',
          (shown) => route.every(([lat, lon]) => lat >= shown.south && lat <= shown.north && lon >= shown.west && lon <= shown.east),
          `the route ${JSON.stringify(route.slice(0, 3))}… in view`,
        );
        const [marker] = await waitForShapes(page, 'geocoded addresses', 1);
        await firesUntil(
          'ex-map-geocode',
          (shown) => shown.zoom === 16 && Math.abs(shown.lat - marker.points[0][0]) < 1e-6 && Math.abs(shown.lon - marker.points[0][1]) < 1e-6,
          `centred on the marker ${JSON.stringify(marker.points[0])} at zoom 16`,
        );
      });

      it('Replace: each input clears its layer first, on the open page and for a page opened later (issue 55 point 6)', async function () {
        const names = async (page: Page) => (await drawnOn(page, REPLACE_LAYER)).filter((shape) => shape.drawn).map((shape) => shape.name);
        const showsOnly = async (page: Page, name: string) => {
          let shown: string[] = [];
          for (let tries = 0; tries < 200; tries++) {
            shown = await names(page);
            if (shown.length === 1 && shown[0] === name) return;
            await page.waitForTimeout(100);
          }
          should(shown).eql([name]);
        };
        await fire('ex-map-inject-replace-0');
        await showsOnly(running().page, REPLACE_ADDRESSES[0]);
        await fire('ex-map-inject-replace-1');
        await showsOnly(running().page, REPLACE_ADDRESSES[1]);
        // Keep shapes 600 s: worldmap's ttl gave the marker its expiry time (its `ts`, in seconds).
        const expiresIn = await running().page.evaluate(
          (name) => Number((globalThis as unknown as { markers: Record<string, { ts?: number }> }).markers[name].ts) - Date.now() / 1000,
          REPLACE_ADDRESSES[1],
        );
        should(expiresIn).be.within(590, 601);
        // worldmap forgot the first address's marker (map.delete), so a page opened now draws the second only.
        const later = await (session as BrowserSession).newPage();
        try {
          await openMap(later, `${running().server.url}worldmap/`);
          await showsOnly(later, REPLACE_ADDRESSES[1]);
        } finally {
          await later.close();
        }
      });

      it('a map page opened after the results were drawn shows every one of them (worldmap re-sends the shapes it keeps; issue 29 point 4)', async function () {
        // The bulk rows are on the parts layer now: the parts test drew the same addresses and rows, and worldmap names a shape once on the whole map.
        const layers = ['geocoded addresses', 'three-word cells', 'visiting orders', '5 and 10 minutes by car', 'routes', BULK_PARTS_LAYER];
        const names = async (page: Page, layer: string) => [...new Set((await drawnOn(page, layer)).map((shape) => shape.name))].sort();
        const before = await Promise.all(layers.map((layer) => names(running().page, layer)));
        for (const [i, layer] of layers.entries()) should(before[i].length).be.above(0, `shapes on layer ${layer} in the page open all along`);
        const later = await (session as BrowserSession).newPage();
        try {
          await openMap(later, `${running().server.url}worldmap/`);
          for (const [i, layer] of layers.entries()) {
            let shown: string[] = [];
            for (let tries = 0; tries < 100 && shown.length < before[i].length; tries++) {
              shown = await names(later, layer);
              if (shown.length < before[i].length) await later.waitForTimeout(100);
            }
            should(shown).eql(before[i], `shapes on layer ${layer} in a page opened later`);
          }
        } finally {
          await later.close();
        }
      });

      it('the page showed no errors from the pack; the map is in the artifacts (docs/images/map.png is a copy)', async function () {
        const { page } = running();
        await page.evaluate(() => {
          const { map } = globalThis as unknown as { map: { setView(center: [number, number], zoom: number): void; closePopup(): void } };
          map.closePopup();
          map.setView([52.505, 13.41], 12);
        });
        fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
        const screenshot = path.join(ARTIFACTS_DIR, `${target.name}-worldmap.png`);
        await page.screenshot({ path: screenshot });
        publishReadmeImage(target, screenshot, 'map');
        should(packProblems(session?.console ?? [])).eql([]);
      });
    });
  }
});
