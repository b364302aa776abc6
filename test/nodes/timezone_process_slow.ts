import should from 'should';
import { Sandbox, startSandbox } from '../../sandbox';
import { NodeRedProcess, runtimeUnderTest } from '../support/node-red-process';
import { Collector, deploy, reportingFlow, startMessage, userDirWithPack } from '../support/process-flows';
import type { Fields } from '../support/harness';

/**
 * One instant everywhere (issue 28 point 3): the same flows in real Node-RED processes whose hosts are
 * set to three time zones send the same instants and get the same estimated times. A departure given
 * as an instant (an epoch here, as an inject node's timestamp is) is written in UTC with `Z`, by
 * default and for a sequence node saved before settings version 2 with *Write departure: local time*;
 * a zone-less time goes as written, a local time at the places, which the sandbox reads in their zone.
 */

const RUNTIME = runtimeUnderTest();
const ZONES = ['Asia/Tokyo', 'Europe/Berlin', 'America/Los_Angeles'];
/** Monday 4 May 2026, 07:30 in Berlin by the sandbox's zone for it (+01:00): in the morning traffic. */
const DEPARTURE = Date.UTC(2026, 4, 4, 6, 30);
/** Minutes behind UTC at the departure, as `getTimezoneOffset` gives them, on a host in each zone. */
const HOST_OFFSETS: Record<string, number> = { 'Asia/Tokyo': -540, 'Europe/Berlin': -120, 'America/Los_Angeles': 420 };
const WAYPOINTS = [
  { lat: 52.52, lon: 13.405 },
  { lat: 52.5, lon: 13.45 },
  { lat: 52.54, lon: 13.36 },
  { lat: 52.47, lon: 13.39 },
];

/** Each node under test with the messages it gets; every report is compared across the zones. */
const CASES: Array<{ title: string; node: Fields; summary: string; payloads: unknown[] }> = [
  {
    title: 'svc-sequence as the editor saves it now',
    node: { type: 'svc-sequence', version: 2, departureFormat: 'zoned' },
    summary: '(msg) => ({ etas: (msg.payload.waypoints || []).map((w) => [w.location, w.estimatedArrival, w.estimatedDeparture]) })',
    payloads: [
      { waypoints: WAYPOINTS, departure: DEPARTURE },
      { waypoints: WAYPOINTS, departure: '2026-05-04T07:30:00' },
    ],
  },
  {
    title: 'svc-sequence saved by 1.0.0 with local time',
    node: { type: 'svc-sequence', departureFormat: 'local' },
    summary: '(msg) => ({ etas: (msg.payload.waypoints || []).map((w) => [w.location, w.estimatedArrival, w.estimatedDeparture]) })',
    payloads: [{ waypoints: WAYPOINTS, departure: DEPARTURE }],
  },
  {
    title: 'svc-route',
    node: { type: 'svc-route', version: 1 },
    summary: '(msg) => ({ summary: msg.summary, arrival: (msg.instructions || []).slice(-1)[0] })',
    payloads: [
      { waypoints: WAYPOINTS.slice(0, 2), departAt: DEPARTURE },
      { waypoints: WAYPOINTS.slice(0, 2), arriveBy: DEPARTURE },
      { waypoints: WAYPOINTS.slice(0, 2), departAt: '2026-05-04T07:30:00' },
    ],
  },
];

describe(`one instant in every time zone: the same flows in real ${RUNTIME.title} processes under ${ZONES.join(', ')}`, function () {
  this.timeout(180_000);
  let sandbox: Sandbox;
  const hosts: Array<{ zone: string; dir: ReturnType<typeof userDirWithPack>; nodeRed?: NodeRedProcess; collector: Collector }> = [];

  before(async function () {
    sandbox = await startSandbox();
    for (const zone of ZONES) {
      const host = { zone, dir: userDirWithPack(), collector: new Collector() };
      hosts.push(host);
      await host.collector.start();
    }
    await Promise.all(
      hosts.map(async (host) => {
        host.nodeRed = await NodeRedProcess.start(host.dir.userDir, RUNTIME, 90_000, { TZ: host.zone });
      }),
    );
  });
  after(async function () {
    for (const host of hosts) {
      await host.nodeRed?.stop(10_000);
      await host.collector.close();
      host.dir.remove();
    }
    await sandbox?.close();
  });

  /** The reports of one case from one host, in the order of its payloads. */
  async function reportsOf(host: (typeof hosts)[number], node: Fields, summary: string, payloads: unknown[]): Promise<Fields[]> {
    const nodeRed = host.nodeRed as NodeRedProcess;
    // Each report says the host's offset at the departure, to show that the host runs in its zone.
    const withOffset = `(msg) => ({ ...(${summary})(msg), hostOffset: new Date(${DEPARTURE}).getTimezoneOffset() })`;
    await deploy(nodeRed, reportingFlow(sandbox, host.collector.url, node, withOffset));
    const reports: Fields[] = [];
    for (const payload of payloads) {
      const before = host.collector.reports.length;
      await startMessage(nodeRed, host.zone, payload);
      const [report] = (await host.collector.waitFor(before + 1, 30_000)).slice(before);
      const { tag: _tag, hostOffset, ...rest } = report;
      should(hostOffset).equal(HOST_OFFSETS[host.zone], host.zone);
      reports.push(rest);
    }
    return reports;
  }

  for (const { title, node, summary, payloads } of CASES) {
    it(`${title}: the same estimated times under every TZ`, async function () {
      const byZone = await Promise.all(hosts.map((host) => reportsOf(host, node, summary, payloads)));
      for (const reports of byZone) for (const report of reports) should(report.error).be.undefined();
      for (let i = 1; i < byZone.length; i++) should(byZone[i]).eql(byZone[0], `${ZONES[i]} against ${ZONES[0]}`);
      if (node.type === 'svc-sequence') {
        // The tour leaves at the instant given: 06:30 UTC, and 07:30 local in Berlin.
        for (const report of byZone[0]) should((report.etas as string[][])[0][2]).equal('2026-05-04T06:30:00Z');
      } else {
        should(byZone[0][0].arrival).match(/\(departure 2026-05-04T07:30:00\+01:00\)$/);
        should(byZone[0][1].arrival).match(/ at 2026-05-04T07:30:00\+01:00 \(departure/);
      }
    });
  }
});
