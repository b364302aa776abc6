import fs from 'node:fs';
import path from 'node:path';
import should from 'should';
import { bulkJobs } from '../../sandbox/endpoints/bulk';
import type { Fields } from '../support/harness';
import { deploy, reportingFlow, startMessage, storedJobs, useRestartRig } from '../support/process-flows';
import { waitUntil } from '../support/wait';
import { readCsv } from '../../sandbox/csv';

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

/**
 * Issue 51 point 5: a CSV output file through a symbolic link, whose rows bring a new member every
 * batch, so that its header is rewritten again and again. Node-RED is killed (SIGKILL) once after a
 * rewrite, during the run, and once during a rewrite (its temporary file in the target's folder, not
 * renamed yet); each time the file the link points to has a header naming every cell of every row,
 * and the rows written so far, in order. Started again, the run ends with every row once, the link
 * still a link.
 */
describe('restart: svc-bulk-geocode CSV output through a link, killed during the run and during a header rewrite', function () {
  const ROWS = 60;
  const BATCH = 5;
  const rig = useRestartRig(4);

  /** The input: a new member (`col<batch>`) from the second batch on, and a large note, so that a rewrite takes a while. */
  const inputRows = Array.from({ length: ROWS }, (_v, i) => {
    const batch = Math.floor(i / BATCH);
    return { address: `${i + 1} Main Street Sandbox City`, note: `${i}:${'n'.repeat(100_000)}`, ...(batch > 0 ? { [`col${batch}`]: `b${batch}` } : {}) };
  });

  /** The target's records, and whether its last line is complete. */
  function recordsOf(file: string): { header: string[]; rows: string[][]; complete: boolean } {
    const text = fs.readFileSync(file, 'utf8');
    const [header = [], ...rows] = readCsv(text.endsWith('\r\n') ? text : text.slice(0, text.lastIndexOf('\r\n') + 2));
    return { header, rows, complete: text.endsWith('\r\n') };
  }

  /** The file's first line ('' before it exists). */
  function headerLineOf(file: string): string {
    if (!fs.existsSync(file)) return '';
    const handle = fs.openSync(file, 'r');
    try {
      const start = Buffer.alloc(4096);
      const text = start.subarray(0, fs.readSync(handle, start, 0, start.length, 0)).toString('utf8');
      return text.split('\r\n')[0];
    } finally {
      fs.closeSync(handle);
    }
  }

  /** What a kill may leave: a header naming every cell of every row, the rows of the first batches in order, each whole. */
  function checkConsistent(link: string, target: string, when: string): number {
    should(fs.lstatSync(link).isSymbolicLink()).be.true(when);
    const { header, rows } = recordsOf(target);
    should(header.slice(0, 3)).eql(['index', 'address', 'note'], when);
    for (const row of rows) should(row.length).be.belowOrEqual(header.length, `${when}: a row has more cells than the header names`);
    should(rows.map((row) => Number(row[0]))).eql(
      rows.map((_row, i) => i),
      when,
    );
    for (const row of rows) should(row[2]).equal(inputRows[Number(row[0])].note, when);
    const columns = new Set(header);
    for (const row of rows) {
      for (const name of Object.keys(inputRows[Number(row[0])])) should(columns.has(name)).be.true(`${when}: ${name} not in the header`);
    }
    return rows.length;
  }

  it('leaves a consistent file after each kill and finishes with every row once', async function () {
    const { sandbox, collector, dir } = rig;
    const input = path.join(dir.userDir, 'addresses.jsonl');
    const real = path.join(dir.userDir, 'elsewhere');
    fs.mkdirSync(real);
    const target = path.join(real, 'geocoded.csv');
    const link = path.join(dir.userDir, 'geocoded.csv');
    fs.symlinkSync(target, link);
    fs.writeFileSync(input, inputRows.map((row) => `${JSON.stringify(row)}\n`).join(''));

    let nodeRed = await rig.start();
    const bulk = { type: 'svc-bulk-geocode', batchSize: BATCH, parallel: 2, pollIntervalSec: 0.1, maxWait: 120, output: 'file', outputFile: link };
    const flows = reportingFlow(sandbox, collector.url, bulk, '(m) => ({ summary: m.payload })').map((node: Fields) =>
      node.id === 'prepare'
        ? { ...node, func: 'msg.tag = msg.payload.tag;\nmsg.filename = msg.payload.payload.filename;\nmsg.payload = null;\nreturn msg;' }
        : node,
    );
    await deploy(nodeRed, flows);
    await startMessage(nodeRed, 'link-1', { filename: input });

    // During the run, once the third batch (whose rows bring col2) is in the file.
    await waitUntil(() => fs.existsSync(target) && fs.statSync(target).size > 3 * BATCH * 100_000, 'three batches written', 30_000);
    await nodeRed.kill();
    should(checkConsistent(link, target, 'killed during the run')).be.aboveOrEqual(3 * BATCH);
    should(headerLineOf(target)).match(/,col2(,|$)/);

    // During a rewrite: killed as soon as a temporary file appears beside the target, before its rename.
    let killedInRewrite = false;
    for (let attempt = 0; attempt < 5 && !killedInRewrite; attempt++) {
      nodeRed = await rig.start();
      const ours = `geocoded.csv.${nodeRed.pid}.`;
      const rewriting = () => fs.readdirSync(real).some((name) => name.startsWith(ours) && name.endsWith('.tmp'));
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline && !rewriting() && collector.reports.length === 0) await new Promise((resolve) => setImmediate(resolve));
      await nodeRed.kill();
      should(collector.reports).eql([], 'the run ended before a kill landed inside a header rewrite');
      killedInRewrite = rewriting();
      checkConsistent(link, target, `killed during a rewrite (attempt ${attempt + 1})`);
    }
    should(killedInRewrite).be.true('no kill landed inside a header rewrite');

    nodeRed = await rig.start();
    const [report] = await collector.waitFor(1, 60_000);
    should(report.error).be.undefined();
    should(report).have.properties({ resumed: true, tag: 'link-1' });
    should(report.summary).have.properties({ rows: ROWS, located: ROWS, failed: 0, file: link });
    should(checkConsistent(link, target, 'at the end')).equal(ROWS);
    const { header, rows, complete } = recordsOf(target);
    should(complete).be.true();
    should(header).eql([
      'index',
      'address',
      'note',
      'latitude',
      'longitude',
      'error',
      'result',
      ...Array.from({ length: ROWS / BATCH - 1 }, (_v, i) => `col${i + 1}`),
    ]);
    should(rows.map((row) => row[1])).eql(inputRows.map((row) => row.address));
    for (const [i, row] of rows.entries()) {
      const batch = Math.floor(i / BATCH);
      if (batch > 0) should(row[header.indexOf(`col${batch}`)]).equal(`b${batch}`);
    }
    // The leftover of the kill inside a rewrite was removed when the run resumed.
    should(fs.readdirSync(real)).eql(['geocoded.csv']);
    await nodeRed.stop(10_000);
  });
});
