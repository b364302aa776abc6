import { createHash } from 'node:crypto';
import http from 'node:http';
import should from 'should';
import { startSandbox, Sandbox } from '../../sandbox/index';
import { CELL, MODES, Town, meters, nodeKey } from '../../sandbox/town/network';
import { buildGraph, dijkstra } from '../../sandbox/town/graph';
import { streetsGeoJson } from '../../sandbox/town/geojson';
import { HOUSE_SPACING_M, SANDBOX_CITY, cityIn, house, lastNumber, streetNamed } from '../../sandbox/town/places';
import { lookup } from '../../sandbox/endpoints/words';
import { townOf } from '../../sandbox/town/index';
import { geocode } from '../../sandbox/endpoints/geocode';

/** The sandbox's town (issue 53 points 1 and 2): streets generated per seed and cell, places on them. */

const BOX = { minLon: 13.36, minLat: 52.48, maxLon: 13.44, maxLat: 52.52 };

function get(sandbox: Sandbox, path: string): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    http
      .get(new URL(path, sandbox.url), { agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> }));
      })
      .on('error', reject);
  });
}

type Feature = { geometry: { coordinates: number[][] }; properties: Record<string, unknown> };

describe('sandbox town: streets and places', function () {
  describe('streets', function () {
    it('the same seed gives the same streets; another seed other streets', function () {
      const one = JSON.stringify(streetsGeoJson(new Town(7), BOX));
      should(JSON.stringify(streetsGeoJson(new Town(7), BOX))).equal(one);
      should(JSON.stringify(streetsGeoJson(new Town(8), BOX))).not.equal(one);
      // The same on every Node version: integer hashing, and only arithmetic and fdlibm's sin/cos/asin on top.
      should(createHash('sha256').update(one).digest('hex')).equal('fb05102d0b7d468d017bdd74c0431f8add2a5b5df155808d1966bfc667dfc340');
    });

    it('cells join at their edges: an edge leaving a cell ends on the junction its neighbour generates', function () {
      const town = new Town(3);
      const [cx, cy] = town.cellOf(...town.index(13.4, 52.5));
      const inCell = (key: number, x: number, y: number) => {
        const i = (key % 131072) - 65536;
        const j = Math.floor(key / 131072) - 65536;
        return Math.floor(i / CELL) === x && Math.floor(j / CELL) === y;
      };
      const leaving = town.cell(cx, cy).edges.filter((edge) => !inCell(edge.to, cx, cy));
      should(leaving.length).be.above(CELL);
      const neighbourEnds = new Map<number, number[]>();
      for (const [x, y] of [
        [cx + 1, cy],
        [cx, cy + 1],
      ]) {
        for (const edge of new Town(3).cell(x, y).edges) neighbourEnds.set(edge.from, edge.line[0]);
      }
      for (const edge of leaving) {
        const end = neighbourEnds.get(edge.to);
        if (end) should(end).eql(edge.line[1]);
      }
      should(leaving.some((edge) => neighbourEnds.has(edge.to))).be.true();
    });

    it('the network is connected for every transport mode, and has every class and feature', function () {
      const town = townOf();
      const box = { minLon: 13.3, minLat: 52.42, maxLon: 13.5, maxLat: 52.58 };
      for (const mode of MODES) {
        const graph = buildGraph(town, box, mode);
        const search = dijkstra(graph, [{ node: 0, cost: 0 }], (edge) => edge.length);
        should(search.cost.every((cost) => cost < Infinity)).be.true(`${mode}: every junction reached`);
      }
      const edges = town.edgesIn(box.minLon, box.minLat, box.maxLon, box.maxLat);
      for (const cls of ['motorway', 'arterial', 'residential', 'track', 'footpath', 'ferry']) should(edges.some((e) => e.cls === cls)).be.true(cls);
      for (const flag of ['toll', 'tunnel', 'bridge', 'ferry', 'dirtRoad', 'controlledAccess'] as const) should(edges.some((e) => e[flag])).be.true(flag);
      should(edges.some((e) => e.maxHeight !== null && !e.modes.includes('truck'))).be.true('a height limit closes a street to trucks');
      should(edges.every((e) => e.name !== '' && e.length > 0)).be.true();
    });

    it('a motorway meets other streets only where it crosses an arterial or motorway (controlled access)', function () {
      const town = townOf();
      const edges = town.edgesIn(BOX.minLon - 0.1, BOX.minLat - 0.1, BOX.maxLon + 0.1, BOX.maxLat + 0.1);
      const byNode = new Map<number, Set<string>>();
      for (const edge of edges) for (const key of [edge.from, edge.to]) byNode.set(key, (byNode.get(key) ?? new Set()).add(edge.cls));
      const junctions = [...byNode.values()].filter((classes) => classes.has('motorway') && classes.size > 1);
      should(junctions.length).be.above(0);
      for (const classes of junctions) should([...classes].every((c) => c === 'motorway' || c === 'arterial')).be.true([...classes].join());
    });

    it('GET /sandbox/streets serves the box as GeoJSON LineStrings with the street properties', async function () {
      const sandbox = await startSandbox();
      try {
        const { status, json } = await get(sandbox, `/sandbox/streets?bbox=${BOX.minLon},${BOX.minLat},${BOX.maxLon},${BOX.maxLat}`);
        should(status).equal(200);
        should(json.type).equal('FeatureCollection');
        const features = json.features as Feature[];
        should(features.length).be.above(100);
        for (const feature of features) {
          should(feature.properties).have.keys('name', 'class', 'speedLimit', 'toll', 'tunnel', 'ferry', 'dirtRoad', 'controlledAccess', 'modes');
          should(feature.geometry.coordinates.length).equal(2);
        }
        should(JSON.stringify(json)).equal(JSON.stringify(streetsGeoJson(townOf(), BOX)));
        should((await get(sandbox, '/sandbox/streets?bbox=13,52,14,53')).status).equal(400);
        should((await get(sandbox, '/sandbox/streets')).status).equal(400);
      } finally {
        await sandbox.close();
      }
    });
  });

  describe('places', function () {
    it('numbered addresses on one street are in order along it, 12 between 10 and 14', function () {
      const positions = [2, 4, 6, 8, 10, 12, 14, 40].map((n) => geocode(`${n} Harbour Street`));
      const harbour = streetNamed(townOf(), 'Harbour Street', 13.4, 52.5);
      should(harbour).be.ok();
      const street = harbour as NonNullable<typeof harbour>;
      should(lastNumber(street)).be.above(40);
      const along = (position: number[]) => {
        // The distance along the street of the point on it nearest to the position.
        let best = { d: Infinity, along: 0 };
        street.edges.forEach((edge, k) => {
          const [a, b] = edge.line;
          for (let s = 0; s <= 100; s++) {
            const p: [number, number] = [a[0] + ((b[0] - a[0]) * s) / 100, a[1] + ((b[1] - a[1]) * s) / 100];
            const d = meters(p, position as [number, number]);
            if (d < best.d) best = { d, along: street.starts[k] + (edge.length * s) / 100 };
          }
        });
        should(best.d).be.below(2, 'on the street');
        return best.along;
      };
      const distances = positions.map((feature) => {
        const f = feature as { geometry: { coordinates: number[] }; properties: { address_components: { street: string } } };
        should(f.properties.address_components.street).equal('Harbour Street');
        return along(f.geometry.coordinates);
      });
      for (let k = 1; k < distances.length; k++) should(distances[k]).be.above(distances[k - 1]);
      should(distances[6] - distances[5]).be.approximately(HOUSE_SPACING_M, 3);
      should(house(street, lastNumber(street) + 2)).be.undefined();
    });

    it('a real city is where it is, with a town around it; other text keeps a stable place of lower quality', function () {
      const tokyo = geocode('Tokyo') as { geometry: { coordinates: number[] }; properties: Record<string, Record<string, unknown>> };
      should(tokyo.geometry.coordinates[0]).be.approximately(139.75, 0.05);
      should(tokyo.geometry.coordinates[1]).be.approximately(35.69, 0.05);
      should(tokyo.properties.address_components.admin).have.properties({ city: 'Tokyo', country: 'Japan' });
      should(tokyo.properties.quality_metrics.match_type).equal('fallback');
      const inTokyo = geocode('12 Main Street, Tokyo') as { geometry: { coordinates: [number, number] }; properties: Record<string, Record<string, unknown>> };
      should(meters(inTokyo.geometry.coordinates, [139.75, 35.685])).be.below(8000);
      should(inTokyo.properties.quality_metrics.match_component).equal('house_number');
      should(cityIn('12 Main Street, Paris')).have.properties({ name: 'Paris', country: 'France' });
      const other = geocode('the blue door') as { geometry: { coordinates: [number, number] }; properties: Record<string, Record<string, unknown>> };
      should(geocode('the blue door')).eql(other);
      should(other.properties.quality_metrics.match_type).equal('fallback');
      should(meters(other.geometry.coordinates, [13.4, 52.5])).be.below(5000);
      const misspelt = geocode('Hight Street') as { properties: Record<string, Record<string, unknown>> };
      should(misspelt.properties.quality_metrics.match_type).equal('fuzzy');
      should(misspelt.properties.address_components.street).equal('High Street');
    });

    it('reads a street after other words, and long text in linear time', function () {
      const old = geocode('12 Old Main Street') as { properties: Record<string, Record<string, unknown>> };
      should(old.properties.address_components.street).equal('Main Street');
      for (const text of ['b'.repeat(100_000) + ' Main Street', 'a '.repeat(50_000), 'x'.repeat(100_000) + ' near the mill']) {
        const started = process.hrtime.bigint();
        should(geocode(text)).be.ok();
        // Generous: quadratic reading took seconds to minutes here.
        should(Number(process.hrtime.bigint() - started) / 1e6).be.below(2000);
      }
    });

    it('three-word cells are in the town of Sandbox City, where geocoded places are', function () {
      for (const words of ['index.home.raft', 'wheat.ribbon.magnet', 'a.b.c']) {
        const { coordinates } = lookup(words) as { coordinates: { lat: number; lon: number; elevation: number } };
        should(meters([coordinates.lon, coordinates.lat], [SANDBOX_CITY.lon, SANDBOX_CITY.lat])).be.below(8000, words);
        should(coordinates.elevation).be.within(30, 90);
      }
    });

    it('a junction is a pure function of seed and lattice index', function () {
      should(new Town(5).position(10, 20)).eql(new Town(5).position(10, 20));
      should(nodeKey(10, 20)).not.equal(nodeKey(20, 10));
    });
  });
});
