import fs from 'node:fs';
import path from 'node:path';
import should from 'should';
import { bulkJobs } from '../sandbox/endpoints/bulk';
import type { Fields } from '../support/harness';
import { deploy, reportingFlow, startMessage, storedJobs, useRestartRig } from '../support/process-flows';
import { waitUntil } from '../support/wait';

/**
 * A bulk run from a file (msg.filename) into an output file outlives its Node-RED: killed with
 * SIGKILL after some batches are written and while others run, Node-RED is started again on the same
 * user directory and flows. The run goes on from the stored state: the output file is cut back to the
 * length committed before the kill, the batches written are not uploaded again, and in the end every
 * row is in the file exactly once, in input order.
 */
describe('restart: svc-bulk-geocode file → file run survives SIGKILL', function () {
  const ROWS = 60;
  const BATCH = 5;
  const rig = useRestartRig(4);

  /** The output file's rows (JSON lines). */
  function outputRows(file: string): Array<{ index: number; address: string; latitude?: number }> {
    if (!fs.existsSync(file)) return [];
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as { index: number; address: string; latitude?: number });
  }

  it('writes every row once, in order, after a SIGKILL mid-run, without uploading a written batch again', async function () {
    const { sandbox, collector, dir } = rig;
    const input = path.join(dir.userDir, 'addresses.csv');
    const output = path.join(dir.userDir, 'geocoded.jsonl');
    const addresses = Array.from({ length: ROWS }, (_v, i) => `${i + 1} Main Street Sandbox City`);
    fs.writeFileSync(input, `address\n${addresses.join('\n')}\n`);

    let nodeRed = await rig.start();
    const bulk = { type: 'svc-bulk-geocode', batchSize: BATCH, parallel: 2, pollIntervalSec: 0.1, maxWait: 120, output: 'file', outputFile: output };
    const flows = reportingFlow(sandbox, collector.url, bulk, '(m) => ({ summary: m.payload })').map((node: Fields) =>
      node.id === 'prepare'
        ? { ...node, func: 'msg.tag = msg.payload.tag;\nmsg.filename = msg.payload.payload.filename;\nmsg.payload = null;\nreturn msg;' }
        : node,
    );
    await deploy(nodeRed, flows);
    await startMessage(nodeRed, 'file-1', { filename: input });

    // Killed once a few batches are in the file, while later ones run or are still to be uploaded.
    await waitUntil(() => outputRows(output).length >= 3 * BATCH, 'three batches written', 30_000);
    await nodeRed.kill();
    should(collector.reports).eql([]);
    const jobsBeforeKill = [...bulkJobs(sandbox).values()].map((job) => job.addresses);
    should(jobsBeforeKill.length).be.below(ROWS / BATCH);
    const [stored] = storedJobs(dir.userDir);
    const run = stored.job as { file: { input: string; delivered: number; output: { file: { bytes: number } } } };
    should(run.file.input).equal(input);
    should(run.file.delivered).be.above(0);
    // Rows the node wrote after its last commit are cut off on resume.
    should(fs.statSync(output).size).be.aboveOrEqual(run.file.output.file.bytes);

    nodeRed = await rig.start();
    const [report] = await collector.waitFor(1, 60_000);
    should(report.error).be.undefined();
    should(report).have.properties({ resumed: true, tag: 'file-1' });
    should(report.summary).have.properties({ rows: ROWS, located: ROWS, failed: 0, file: output });

    const rows = outputRows(output);
    should(rows.map((row) => row.index)).eql(Array.from({ length: ROWS }, (_v, i) => i));
    should(rows.map((row) => row.address)).eql(addresses);
    should(rows.every((row) => typeof row.latitude === 'number')).be.true();

    // The batches written before the kill were not uploaded again.
    const written = new Set(addresses.slice(0, run.file.delivered * BATCH));
    const uploadedAfter = [...bulkJobs(sandbox).values()].slice(jobsBeforeKill.length).flatMap((job) => job.addresses);
    should(uploadedAfter.filter((address) => written.has(address))).eql([]);
    await waitUntil(() => storedJobs(dir.userDir).length === 0, 'the finished run to leave the store', 10_000);

    await nodeRed.stop(10_000);
    await rig.start();
    should(storedJobs(dir.userDir)).eql([]);
    should(collector.reports).have.length(1);
    should(outputRows(output)).have.length(ROWS);
  });
});
