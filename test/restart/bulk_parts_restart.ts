import fs from 'node:fs';
import path from 'node:path';
import should from 'should';
import type { Fields } from '../support/harness';
import { deploy, reportingFlow, startMessage, storedJobs, useRestartRig } from '../support/process-flows';
import { waitUntil } from '../support/wait';

/**
 * A bulk run from a file (msg.filename) into a message per job (parts) outlives its Node-RED: killed
 * with SIGKILL after some parts reached the collector, Node-RED is started again on the same user
 * directory and flows. The run goes on after the last part whose progress was stored, with the same
 * parts id and the next indices, then the summary counts the whole run. One job at a time, so a
 * part is never in flight to the collector when the kill comes.
 */
describe('restart: svc-bulk-geocode file → parts run survives SIGKILL', function () {
  const ROWS = 60;
  const BATCH = 5;
  const PARTS = ROWS / BATCH;
  const rig = useRestartRig(4);

  interface PartReport {
    parts?: { id: string; index: number; count?: number };
    indices?: number[];
    summary?: Fields;
    resumed: boolean;
    error?: string;
  }

  it('sends every row once, in order, across a SIGKILL mid-run (the stored progress says which part may come again)', async function () {
    const { sandbox, collector, dir } = rig;
    const input = path.join(dir.userDir, 'addresses.csv');
    const addresses = Array.from({ length: ROWS }, (_v, i) => `${i + 1} Main Street Sandbox City`);
    fs.writeFileSync(input, `address\n${addresses.join('\n')}\n`);

    let nodeRed = await rig.start();
    const bulk = { type: 'svc-bulk-geocode', batchSize: BATCH, parallel: 1, pollIntervalSec: 0.1, maxWait: 120, output: 'parts' };
    const summary = '(m) => (Array.isArray(m.payload) ? { parts: m.parts, indices: m.payload.map((row) => row.index) } : { summary: m.payload })';
    const flows = reportingFlow(sandbox, collector.url, bulk, summary).map((node: Fields) =>
      node.id === 'prepare'
        ? { ...node, func: 'msg.tag = msg.payload.tag;\nmsg.filename = msg.payload.payload.filename;\nmsg.payload = null;\nreturn msg;' }
        : node,
    );
    await deploy(nodeRed, flows);
    await startMessage(nodeRed, 'parts-1', { filename: input });

    await waitUntil(() => collector.reports.length >= 3, 'three parts received', 30_000);
    await nodeRed.kill();
    const before = collector.reports.splice(0) as unknown as PartReport[];
    should(before.every((report) => report.parts !== undefined && !report.resumed)).be.true();
    should(before.map((report) => report.parts?.index)).eql(before.map((_r, i) => i));
    const [stored] = storedJobs(dir.userDir);
    const run = stored.job as { file: { delivered: number; output: { partsId: string } } };
    // Stored right after each send: at most the last part received is not counted yet, and will come again.
    should(run.file.delivered).be.within(before.length - 1, before.length);
    should(run.file.output.partsId).equal(before[0].parts?.id);

    nodeRed = await rig.start();
    const after = (await collector.waitFor(PARTS - run.file.delivered + 1, 60_000)) as unknown as PartReport[];
    should(after.every((report) => report.error === undefined && report.resumed)).be.true();
    const resumedParts = after.slice(0, -1);
    should(resumedParts.map((report) => report.parts?.index)).eql(Array.from({ length: PARTS - run.file.delivered }, (_v, i) => run.file.delivered + i));
    should(resumedParts.every((report) => report.parts?.id === run.file.output.partsId)).be.true();
    should(resumedParts[resumedParts.length - 1].parts?.count).equal(PARTS);
    should(after[after.length - 1].summary).have.properties({ rows: ROWS, located: ROWS, failed: 0, jobs: PARTS });

    // Every row once, in order: the parts counted before the kill, then those sent after.
    const rows = [...before.slice(0, run.file.delivered), ...resumedParts].flatMap((report) => report.indices ?? []);
    should(rows).eql(Array.from({ length: ROWS }, (_v, i) => i));
    await waitUntil(() => storedJobs(dir.userDir).length === 0, 'the finished run to leave the store', 10_000);
    await nodeRed.stop(10_000);
  });
});
