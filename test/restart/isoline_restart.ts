import should from 'should';
import { SANDBOX_DEFAULTS } from '../../sandbox';
import { FLOW_SECRETS, storeText, storedJobs, useRestartRig } from '../support/process-flows';
import { waitUntil } from '../support/wait';

/**
 * An asynchronous isoline job outlives its Node-RED: killed with SIGKILL while polling, Node-RED is
 * started again on the same user directory and flows, resumes polling the stored job and delivers
 * its result once, as a new message with msg.resumed.
 */
describe('restart: svc-isoline job survives SIGKILL', function () {
  const rig = useRestartRig(6);

  it('resumes the job after a SIGKILL and delivers its result once, with msg.resumed and the original message members', async function () {
    const { sandbox, collector, dir } = rig;
    let nodeRed = await rig.start();
    const isoline = { type: 'svc-isoline', pollIntervalSec: 0.1, maxWait: 60 };
    const summary = '(m) => ({ polygons: m.geojson ? m.geojson.features.length : 0 })';
    const request = { async: true, origins: [{ lat: 52.52, lon: 13.405 }], range: { type: 'time', value: 600 } };
    await rig.deployAndSend(isoline, summary, 'job-1', request);

    await waitUntil(() => sandbox.requests('isoline-job').length >= 2, 'two polls of the job', 20_000);
    await nodeRed.kill();
    should(collector.reports).eql([]);
    const [stored] = storedJobs(dir.userDir);
    should(stored).have.properties({ nodeId: 'under-test', kind: 'isoline' });
    should(stored.msg).eql({ tag: 'job-1' });
    const text = storeText(dir.userDir);
    for (const secret of [SANDBOX_DEFAULTS.clientSecret, SANDBOX_DEFAULTS.apiKey, SANDBOX_DEFAULTS.clientId, 'access_token', ...Object.values(FLOW_SECRETS)]) {
      should(text).not.containEql(secret);
    }

    nodeRed = await rig.start();
    const [report] = await collector.waitFor(1, 30_000);
    should(report).have.properties({ resumed: true, tag: 'job-1', polygons: 1, hasReq: false, hasRes: false });
    should(report.error).be.undefined();
    should((report.jobs as Array<{ jobId: string }>)[0].jobId).equal((stored.job as { state: { jobId: string } }).state.jobId);
    await waitUntil(() => storedJobs(dir.userDir).length === 0, 'the delivered job to leave the store', 10_000);

    // Started once more: nothing is left to resume, so nothing is delivered twice.
    await nodeRed.stop(10_000);
    await rig.start();
    should(storedJobs(dir.userDir)).eql([]);
    should(collector.reports).have.length(1);
  });
});
