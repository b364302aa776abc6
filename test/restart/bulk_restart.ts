import should from 'should';
import { bulkJobs } from '../../sandbox/endpoints/bulk';
import { storedJobs, useRestartRig } from '../support/process-flows';
import { waitUntil } from '../support/wait';

/**
 * A bulk geocoding run outlives its Node-RED: killed with SIGKILL after some batches are done and
 * before others are uploaded, Node-RED is started again on the same user directory and flows. The
 * run resumes from the stored job ids (a stored job is never uploaded again) and delivers every row
 * once, in input order, as one new message with msg.resumed.
 */
describe('restart: svc-bulk-geocode run survives SIGKILL', function () {
  const ROWS = 40;
  const BATCH = 5;
  const rig = useRestartRig(4);

  it('delivers every row once, in order, after a SIGKILL mid-run, without uploading a stored job again', async function () {
    const { sandbox, collector, dir } = rig;
    let nodeRed = await rig.start();
    const bulk = { type: 'svc-bulk-geocode', batchSize: BATCH, parallel: 2, pollIntervalSec: 0.1, maxWait: 120 };
    const summary =
      '(m) => ({ indexes: (m.payload || []).map((r) => r.index), inputs: (m.payload || []).map((r) => r.input), located: (m.payload || []).filter((r) => r.location).length })';
    const addresses = Array.from({ length: ROWS }, (_v, i) => `${i + 1} Main Street, Sandbox City`);
    await rig.deployAndSend(bulk, summary, 'bulk-1', addresses);

    // Killed once some batches are downloaded, while later ones are still to be uploaded.
    await waitUntil(() => sandbox.requests('bulk-download').length >= 2, 'two batches downloaded', 30_000);
    await nodeRed.kill();
    const uploadedBeforeKill = sandbox.requests('bulk-upload').length;
    should(uploadedBeforeKill).be.below(ROWS / BATCH);
    should(collector.reports).eql([]);
    const [stored] = storedJobs(dir.userDir);
    // Jobs stored before the kill; a batch uploaded in the instant before the kill but not yet stored is uploaded again.
    const storedUploads = ((stored.job as { jobs: unknown[] }).jobs ?? []).length;
    should(storedUploads).be.above(0);

    nodeRed = await rig.start();
    const [report] = await collector.waitFor(1, 60_000);
    should(report.error).be.undefined();
    should(report).have.properties({ resumed: true, tag: 'bulk-1', hasReq: false, located: ROWS });
    should(report.indexes).eql(Array.from({ length: ROWS }, (_v, i) => i));
    should(report.inputs).eql(addresses);
    // The stored jobs were polled, not uploaded again: only the batches without a stored job were uploaded after the restart.
    should(sandbox.requests('bulk-upload').length - uploadedBeforeKill).equal(ROWS / BATCH - storedUploads);
    const uploaded = [...bulkJobs(sandbox).values()].map((job) => job.addresses);
    should(new Set(uploaded.flat())).have.size(ROWS);
    await waitUntil(() => storedJobs(dir.userDir).length === 0, 'the delivered run to leave the store', 10_000);

    await nodeRed.stop(10_000);
    await rig.start();
    should(storedJobs(dir.userDir)).eql([]);
    should(collector.reports).have.length(1);
  });
});
