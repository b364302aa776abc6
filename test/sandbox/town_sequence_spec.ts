import should from 'should';
import { startSandbox, Sandbox, SANDBOX_DEFAULTS } from '../../sandbox/index';
import { townOf } from '../../sandbox/town/index';
import { bestOrder, matrix, orderCost } from '../../sandbox/town/sequence';

/** Waypoint sequencing on the town's streets (issue 53 point 5). */

type Stop = { location: string; estimatedArrival: string | null; estimatedDeparture: string | null; distance: number; time: number };
type Sequence = { distance: number; time: number; waypoints: Stop[] };
type Position = [number, number];

const STOP_SECONDS = 180;

async function sequence(sandbox: Sandbox, body: Record<string, unknown>): Promise<Sequence> {
  const res = await fetch(new URL(`/v1/routing/sequence/${SANDBOX_DEFAULTS.projectId}`, sandbox.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-svc-project-id': SANDBOX_DEFAULTS.projectId, 'x-svc-api-key': SANDBOX_DEFAULTS.apiKey },
    body: JSON.stringify({ async: false, ...body }),
  });
  should(res.status).equal(200);
  return (await res.json()) as Sequence;
}

/** `count` stops scattered within about 3 km of a point, the same every run. */
function scattered(count: number, salt: number): Position[] {
  let state = 12345 + salt * 7919;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  return Array.from({ length: count }, () => [13.4 + (next() - 0.5) * 0.08, 52.5 + (next() - 0.5) * 0.05] as Position);
}

/** The least summed cost over every order from stop 0. */
function bruteForce(cost: number[][]): number {
  let best = Infinity;
  const permute = (last: number, rest: number[], total: number) => {
    if (total >= best) return;
    if (rest.length === 0) best = total;
    for (const next of rest)
      permute(
        next,
        rest.filter((r) => r !== next),
        total + cost[last][next],
      );
  };
  permute(0, cost.map((_row, i) => i).slice(1), 0);
  return best;
}

const locations = (stops: Position[]) => stops.map(([longitude, latitude]) => ({ type: 'coordinates', latitude, longitude }));

describe('sandbox town: sequencing', function () {
  let sandbox: Sandbox;
  before(async function () {
    sandbox = await startSandbox();
  });
  after(async function () {
    await sandbox.close();
  });

  for (const count of [3, 5, 8]) {
    for (const routeMode of ['fastest', 'shortest'] as const) {
      it(`${count} stops, ${routeMode}: the total equals a brute-force search on the town's legs`, async function () {
        const stops = scattered(count, count);
        const result = await sequence(sandbox, { waypoints: locations(stops), routeMode, departure: '2026-03-01T12:00:00Z' });
        const legs = matrix(townOf(), { points: stops, mode: 'car', preference: routeMode, avoid: [], traffic: 1 });
        if (routeMode === 'fastest') should(result.time).equal(Math.round(bruteForce(legs.seconds) + STOP_SECONDS * (count - 2)));
        else should(result.distance).equal(Math.round(bruteForce(legs.meters)));
        should(result.waypoints).have.length(count);
      });
    }
  }

  it('a stop takes three minutes: departure after arrival, the start has no arrival and the end no departure', async function () {
    const result = await sequence(sandbox, { waypoints: locations(scattered(4, 1)), departure: '2026-03-01T12:00:00Z' });
    const [start, ...rest] = result.waypoints;
    should(start.estimatedArrival).be.null();
    should(start.estimatedDeparture).equal('2026-03-01T12:00:00Z');
    should(rest[rest.length - 1].estimatedDeparture).be.null();
    for (const stop of rest.slice(0, -1))
      should(Date.parse(stop.estimatedDeparture as string) - Date.parse(stop.estimatedArrival as string)).equal(STOP_SECONDS * 1000);
    rest.forEach((stop, k) => {
      const left = Date.parse(result.waypoints[k].estimatedDeparture as string);
      should(Date.parse(stop.estimatedArrival as string) - left).be.approximately(stop.time * 1000, 1000);
    });
  });

  it('above nine stops the order is a 2-opt optimum: no reversed stretch is cheaper', function () {
    const stops = scattered(14, 3);
    const { seconds } = matrix(townOf(), { points: stops, mode: 'car', preference: 'fastest', avoid: [], traffic: 1 });
    const order = bestOrder(seconds);
    should([...order].sort((a, b) => a - b)).eql(stops.map((_s, i) => i));
    should(order[0]).equal(0);
    const total = orderCost(seconds, order);
    for (let i = 1; i < order.length - 1; i++) {
      for (let j = i + 1; j < order.length; j++) {
        const reversed = [...order.slice(0, i), ...order.slice(i, j + 1).reverse(), ...order.slice(j + 1)];
        should(orderCost(seconds, reversed)).be.aboveOrEqual(total - 1e-6);
      }
    }
  });
});
