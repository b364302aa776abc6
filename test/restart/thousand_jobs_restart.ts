import should from 'should';
import { configNode } from '../support/harness';
import { deploy, reportingFlow, startMessage, storedJobs, useRestartRig } from '../support/process-flows';
import { waitUntil } from '../support/wait';

const JOBS = 1000;

/**
 * A thousand asynchronous isoline jobs outlive their Node-RED: all stored (the store's file a log,
 * issue 59), Node-RED killed with SIGKILL while they run, started again, and every job resumed and
 * delivered once. The sandbox's jobs run for minutes (jobTimeScale) until its clock is moved on past
 * them after the restart.
 */
describe('restart: a thousand isoline jobs survive SIGKILL', function () {
  let offsetMs = 0;
  const rig = useRestartRig({ jobTimeScale: 1000, clock: { now: () => Date.now() + offsetMs } });

  it('stores every job, and resumes and delivers each once after a SIGKILL', async function () {
    this.timeout(300_000);
    const { sandbox, collector, dir } = rig;
    let nodeRed = await rig.start();
    const isoline = { type: 'svc-isoline', pollIntervalSec: 1, maxWait: 3600 };
    const flow = reportingFlow(sandbox, collector.url, isoline, '(m) => ({ polygons: m.geojson ? m.geojson.features.length : 0 })');
    const config = flow.findIndex((node) => node.type === 'svc-config');
    flow[config] = { ...flow[config], ...configNode(sandbox, { maxQueue: 5 * JOBS }) };
    await deploy(nodeRed, flow);
    const request = { async: true, origins: [{ lat: 52.52, lon: 13.405 }], range: { type: 'time', value: 60 } };
    const tags = Array.from({ length: JOBS }, (_, i) => `job-${i}`);
    for (let i = 0; i < JOBS; i += 50) await Promise.all(tags.slice(i, i + 50).map((tag) => startMessage(nodeRed, tag, request)));

    await waitUntil(() => storedJobs(dir.userDir).length === JOBS, 'every job stored', 120_000);
    await nodeRed.kill();
    should(collector.reports).eql([]);
    should(new Set(storedJobs(dir.userDir).map((job) => (job.msg as { tag: string }).tag))).have.size(JOBS);

    nodeRed = await rig.start();
    // Every job done by the sandbox's clock (an isoline of one range takes 500 s at this scale; a short range is quick to draw).
    offsetMs = 20 * 60_000;
    const reports = await collector.waitFor(JOBS, 120_000);
    should(reports.filter((report) => report.error !== undefined)).eql([]);
    should(reports.every((report) => report.resumed === true && report.polygons === 1)).be.true();
    should(new Set(reports.map((report) => report.tag))).have.size(JOBS);
    await waitUntil(() => storedJobs(dir.userDir).length === 0, 'the delivered jobs to leave the store', 30_000);
    should(sandbox.requests('isoline').length).equal(JOBS);
  });
});
