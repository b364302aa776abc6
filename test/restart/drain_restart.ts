import should from 'should';
import { Fields } from '../support/harness';
import { NodeRedProcess } from '../support/node-red-process';
import { deploy, reportingFlow, startMessage, storedJobs, useRestartRig } from '../support/process-flows';
import { waitUntil } from '../support/wait';

/**
 * Drain (issue 55 point 3): a real Node-RED closing a node with a request under way against a sandbox
 * that is slow to respond. With the config node's drain time the request finishes first, and its
 * result is delivered once (a redeploy that keeps the nodes after it) or its job stored and delivered
 * once by the next start (SIGTERM); with 0 it ends CANCELLED at once, as before drains existed.
 */

/** How long the sandbox holds the request under way. */
const SLOW_MS = 2_500;
const GEOCODE = { type: 'svc-geocode', addressType: 'msg', address: 'payload' };
const GEOCODE_SUMMARY = '(m) => ({ code: m.error ? m.error.code : undefined, statusCode: m.statusCode })';
const ISOLINE = { type: 'svc-isoline', pollIntervalSec: 0.1, maxWait: 60 };
const ISOLINE_SUMMARY = '(m) => ({ code: m.error ? m.error.code : undefined, polygons: m.geojson ? m.geojson.features.length : 0 })';
const ISOLINE_REQUEST = { async: true, origins: [{ lat: 52.52, lon: 13.405 }], range: { type: 'time', value: 600 } };

/** The reporting flow with the config node's drain time, and a per-attempt timeout beyond the sandbox's delay. */
function drainingFlow(rig: ReturnType<typeof useRestartRig>, node: Fields, summary: string, drainSeconds: number): Fields[] {
  return reportingFlow(rig.sandbox, rig.collector.url, node, summary).map((n) => (n.type === 'svc-config' ? { ...n, drainSeconds, timeout: 10_000 } : n));
}

/** A deploy of only the nodes that changed, as the editor's "Modified Nodes" does: the nodes after the one changed keep running. */
async function deployModifiedNodes(nodeRed: NodeRedProcess, flows: Fields[]): Promise<void> {
  const res = await nodeRed.request('/flows', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'nodes', 'node-red-api-version': 'v1' },
    body: JSON.stringify(flows),
  });
  if (res.status >= 300) throw new Error(`deploy responded with ${res.status}: ${await res.text()}`);
}

/** The flows with the node under test renamed: a change that makes Node-RED stop and start it again. */
function renamed(flows: Fields[], name: string): Fields[] {
  return flows.map((n) => (n.id === 'under-test' ? { ...n, name } : n));
}

/**
 * One isoline through the flow and its report, then the reports cleared: the sandbox computes its first
 * isoline slowly (its town's graph), which would count against the drain time.
 */
async function warmUp(rig: ReturnType<typeof useRestartRig>, nodeRed: NodeRedProcess): Promise<void> {
  await startMessage(nodeRed, 'warm-up', ISOLINE_REQUEST);
  await rig.collector.waitFor(1, 30_000);
  rig.collector.reports.length = 0;
}

function cancelledLines(nodeRed: NodeRedProcess): string[] {
  return nodeRed.problems().filter((line) => line.includes('cancelled'));
}

describe('restart: drain on close', function () {
  this.timeout(120_000);

  describe('a redeploy with a geocode under way', function () {
    const rig = useRestartRig(1);

    it('with a drain time, finishes the request and delivers its result once, within the drain time', async function () {
      const nodeRed = await rig.start();
      const flows = drainingFlow(rig, GEOCODE, GEOCODE_SUMMARY, 5);
      await deploy(nodeRed, flows);
      rig.sandbox.setFault('geocode', { delayMs: SLOW_MS, times: 1 });
      await startMessage(nodeRed, 'drained', '12 Main Street, Sandbox City');
      await waitUntil(() => rig.sandbox.requests('geocode').length === 1, 'the geocode to reach the sandbox', 10_000);
      const closedAt = Date.now();
      const deployed = deployModifiedNodes(nodeRed, renamed(flows, 'renamed'));
      const [report] = await rig.collector.waitFor(1, 10_000);
      should(Date.now() - closedAt).be.below(5_000);
      should(report).have.properties({ tag: 'drained', statusCode: 200 });
      should(report.code).be.undefined();
      await deployed;
      // Once: no retry, no second output.
      await new Promise((resolve) => setTimeout(resolve, 500));
      should(rig.collector.reports).have.length(1);
      should(rig.sandbox.requests('geocode')).have.length(1);
      should(cancelledLines(nodeRed)).eql([]);
      await nodeRed.stop(10_000);
    });

    it('with drain time 0, cuts the request at once, as before', async function () {
      rig.collector.reports.length = 0;
      const nodeRed = await rig.start();
      const flows = drainingFlow(rig, GEOCODE, GEOCODE_SUMMARY, 0);
      await deploy(nodeRed, flows);
      rig.sandbox.setFault('geocode', { delayMs: SLOW_MS, times: 1 });
      const before = rig.sandbox.requests('geocode').length;
      await startMessage(nodeRed, 'cut', '12 Main Street, Sandbox City');
      await waitUntil(() => rig.sandbox.requests('geocode').length === before + 1, 'the geocode to reach the sandbox', 10_000);
      await deployModifiedNodes(nodeRed, renamed(flows, 'renamed'));
      const request = rig.sandbox.requests('geocode')[before];
      await waitUntil(() => request.closedAt !== undefined, 'the request to be cut', 10_000);
      should(request.closedAt).be.below(request.time + SLOW_MS);
      should(request.status).be.undefined();
      // No result comes after it.
      await new Promise((resolve) => setTimeout(resolve, SLOW_MS + 500));
      should(rig.collector.reports.filter((report) => report.statusCode === 200)).eql([]);
      await nodeRed.stop(10_000);
    });
  });

  describe('SIGTERM with an isoline job being submitted', function () {
    const rig = useRestartRig(3);

    it('with a drain time, lets the submission finish, keeps the job, and the next start delivers it once', async function () {
      let nodeRed = await rig.start();
      await deploy(nodeRed, drainingFlow(rig, ISOLINE, ISOLINE_SUMMARY, 5));
      await warmUp(rig, nodeRed);
      rig.sandbox.setFault('isoline', { delayMs: SLOW_MS, times: 1 });
      await startMessage(nodeRed, 'job', ISOLINE_REQUEST);
      await waitUntil(() => rig.sandbox.requests('isoline').length === 2, 'the submission to reach the sandbox', 10_000);
      const stoppedAt = Date.now();
      await nodeRed.stop(15_000, 'SIGTERM');
      const took = Date.now() - stoppedAt;
      // Waited for the submission's response, and not for the job once it was stored.
      should(took).be.above(SLOW_MS - 1_000);
      should(took).be.below(5_000 + 2_000);
      should(cancelledLines(nodeRed)).eql([]);
      should(storedJobs(rig.dir.userDir)).have.length(1);
      should(rig.collector.reports).eql([]);

      nodeRed = await rig.start();
      const [report] = await rig.collector.waitFor(1, 30_000);
      should(report).have.properties({ resumed: true, tag: 'job', polygons: 1 });
      should(report.code).be.undefined();
      await waitUntil(() => storedJobs(rig.dir.userDir).length === 0, 'the delivered job to leave the store', 10_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
      should(rig.collector.reports).have.length(1);
      // The warm-up's and this one's: the job was not submitted again.
      should(rig.sandbox.requests('isoline')).have.length(2);
      await nodeRed.stop(10_000);
    });

    it('with drain time 0, cuts the submission at once: nothing stored, as before', async function () {
      const nodeRed = await rig.start();
      await deploy(nodeRed, drainingFlow(rig, ISOLINE, ISOLINE_SUMMARY, 0));
      rig.sandbox.setFault('isoline', { delayMs: SLOW_MS, times: 1 });
      const before = rig.sandbox.requests('isoline').length;
      await startMessage(nodeRed, 'cut', ISOLINE_REQUEST);
      await waitUntil(() => rig.sandbox.requests('isoline').length === before + 1, 'the submission to reach the sandbox', 10_000);
      const stoppedAt = Date.now();
      await nodeRed.stop(15_000, 'SIGTERM');
      should(Date.now() - stoppedAt).be.below(SLOW_MS);
      const request = rig.sandbox.requests('isoline')[before];
      await waitUntil(() => request.closedAt !== undefined, 'the submission to be cut', 10_000);
      should(request.closedAt).be.below(request.time + SLOW_MS);
      should(storedJobs(rig.dir.userDir)).eql([]);
    });
  });

  describe('a user directory that does not outlive a restart', function () {
    const rig = useRestartRig(1);

    it('warns once at start on a FlowFuse instance when a config node has no Redis, and not elsewhere', async function () {
      const flows = drainingFlow(rig, GEOCODE, GEOCODE_SUMMARY, 0);
      const flowFuse = await NodeRedProcess.start(rig.dir.userDir, undefined, 60_000, { FF_INSTANCE_ID: 'instance-1' });
      rig.nodeRed = flowFuse;
      await deploy(flowFuse, flows);
      // A second deploy starts the config node again: still one warning for the process.
      await deploy(flowFuse, renamed(flows, 'again'));
      const warnings = flowFuse.problems().filter((line) => line.includes('FF_INSTANCE_ID'));
      should(warnings).have.length(1);
      should(warnings[0]).match(/\[warn\] \[svc-location\] .*no Redis URL/);
      await flowFuse.stop(10_000);

      // A FlowFuse device keeps its disk; a plain Node-RED cannot tell: no warning.
      for (const env of [{ FF_INSTANCE_ID: 'instance-1', FF_DEVICE_ID: 'device-1' }, {}]) {
        const nodeRed = await NodeRedProcess.start(rig.dir.userDir, undefined, 60_000, env);
        rig.nodeRed = nodeRed;
        await deploy(nodeRed, flows);
        should(nodeRed.problems().filter((line) => line.includes('[svc-location]'))).eql([]);
        await nodeRed.stop(10_000);
      }
    });
  });
});
