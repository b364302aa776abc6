import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import should from 'should';
import { CONFIG_ID, Fields, configNode, helper, loadWithSandbox, nodeModule, sandboxCredentials, sendAndCollect, useSandbox } from '../support/harness';
import { waitUntil } from '../support/wait';
import { bulkControls, bulkJobs, resetBulk } from '../../sandbox/endpoints/bulk';
import { readCsv } from '../../sandbox/csv';
import type { BulkRow } from '../../nodes/lib/geo/result-rows';
import type { BulkSummary } from '../../nodes/lib/node-red/bulk-output';
import type { JobReport } from '../../nodes/lib/platform/bulk-run';
import { defaults as bulkDefaults } from '../../nodes/svc-bulk-geocode/defaults';
import { currentVersion, migrated } from '../support/migrations';

const FAST = { pollIntervalSec: 0.01, maxWait: 5 };
const addressesOf = (count: number) => Array.from({ length: count }, (_v, i) => (i % 5 === 2 ? `nowhere ${i}` : `${i + 1} Main Street`));

describe('svc-bulk-geocode streaming', function () {
  const ctx = useSandbox({ jobPolls: 2 });
  let dir: string;
  beforeEach(() => {
    resetBulk(ctx.sandbox);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bulk-stream-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const load = (extra: Fields = {}, credentials: Fields = {}) =>
    loadWithSandbox(ctx.sandbox, { types: ['svc-bulk-geocode'], nodes: [{ id: 'n1', type: 'svc-bulk-geocode', ...FAST, ...extra }], credentials });
  const partsOf = (outputs: Fields[]) => outputs.filter((m) => m.parts !== undefined);
  const rowsOf = (outputs: Fields[]) => partsOf(outputs).flatMap((m) => m.payload as BulkRow[]);

  describe('a message per job', function () {
    it('sends each job in input order with msg.parts, the count on the last, then a summary, and is done once', async function () {
      await load({ output: 'parts', batchSize: 3, parallel: 2 });
      bulkControls(ctx.sandbox).resultOrder = 'reversed';
      const addresses = addressesOf(8);
      const { outputs, error } = await sendAndCollect('n1', { payload: addresses, topic: 'run-1' });
      should(error).be.undefined();
      should(outputs).have.length(4);
      const parts = partsOf(outputs).map((m) => m.parts as Fields);
      should(parts.map((p) => p.index)).eql([0, 1, 2]);
      should(parts.map((p) => p.count)).eql([undefined, undefined, 3]);
      should(new Set(parts.map((p) => p.id)).size).equal(1);
      should(parts.map((p) => p.type)).matchEach('array');
      should(partsOf(outputs).map((m) => m.topic)).matchEach('run-1');
      should(partsOf(outputs).map((m) => (m.job as JobReport).batch)).eql([0, 1, 2]);
      // Each part and the summary carry the status of the result file they come from (issue 28).
      should(outputs.map((m) => m.statusCode)).eql([200, 200, 200, 200]);
      const rows = rowsOf(outputs);
      should(rows.map((row) => row.index)).eql([0, 1, 2, 3, 4, 5, 6, 7]);
      should(rows.map((row) => row.input)).eql(addresses);
      should(rows.filter((row) => row.error !== undefined).map((row) => row.index)).eql([2, 7]);
      const summary = outputs[3];
      should(summary.parts).be.undefined();
      should(summary.payload).eql({ rows: 8, located: 6, failed: 2, jobs: 3, failedJobs: 0, unmatchedInputs: 0, unmatchedResults: 0 });
      should((summary.jobs as JobReport[]).map((job) => job.batch)).eql([0, 1, 2]);
    });

    it('is rebuilt whole by the core join node in automatic mode', async function () {
      const joinModule = require(
        require.resolve('@node-red/nodes/core/sequence/17-split.js', { paths: [path.dirname(require.resolve('node-red'))] }),
      ) as unknown;
      await helper.load(
        [nodeModule('svc-config'), nodeModule('svc-bulk-geocode'), joinModule],
        [
          configNode(ctx.sandbox),
          { id: 'n1', type: 'svc-bulk-geocode', server: CONFIG_ID, output: 'parts', batchSize: 2, parallel: 2, ...FAST, wires: [['joiner']] },
          { id: 'joiner', type: 'join', mode: 'auto', wires: [['out']] },
          { id: 'out', type: 'helper' },
        ],
        sandboxCredentials(),
      );
      const addresses = addressesOf(5);
      const joined = new Promise<Fields>((resolve) => helper.getNode('out').once('input', resolve));
      helper.getNode('n1').receive({ payload: addresses });
      const msg = await joined;
      should((msg.payload as BulkRow[]).map((row) => row.input)).eql(addresses);
      should(msg.parts).be.undefined();
    });

    it('as dropped, sends no summary: a core join in automatic mode rebuilds the rows and warns of nothing (issue 54)', async function () {
      const joinModule = require(
        require.resolve('@node-red/nodes/core/sequence/17-split.js', { paths: [path.dirname(require.resolve('node-red'))] }),
      ) as unknown;
      const dropped = { ...Object.fromEntries(Object.entries(bulkDefaults).map(([name, d]) => [name, d.value])), version: currentVersion('svc-bulk-geocode') };
      await helper.load(
        [nodeModule('svc-config'), nodeModule('svc-bulk-geocode'), joinModule],
        [
          configNode(ctx.sandbox),
          { ...dropped, id: 'n1', type: 'svc-bulk-geocode', server: CONFIG_ID, output: 'parts', batchSize: 2, parallel: 2, ...FAST, wires: [['joiner']] },
          { id: 'joiner', type: 'join', mode: 'auto', wires: [['out']] },
          { id: 'out', type: 'helper' },
        ],
        sandboxCredentials(),
      );
      const addresses = addressesOf(5);
      const { outputs, error } = await sendAndCollect('n1', { payload: addresses }, 15000);
      should(error).be.undefined();
      should(outputs).have.length(1);
      should((outputs[0].payload as BulkRow[]).map((row) => row.input)).eql(addresses);
      const joinWarnings = (helper.getNode('joiner').warn as { callCount: number }).callCount;
      should(joinWarnings).equal(0);
    });

    it('keeps the summary of a node saved before the option, and of one that ticks it', async function () {
      await load({ output: 'parts', batchSize: 2, version: currentVersion('svc-bulk-geocode'), partsSummary: true });
      const { outputs } = await sendAndCollect('n1', { payload: addressesOf(3) });
      should(outputs.at(-1)?.parts).be.undefined();
      should(outputs.at(-1)?.payload).have.properties({ rows: 3, jobs: 2 });
      should(migrated({ type: 'svc-bulk-geocode', version: 1, output: 'parts' })).match({ partsSummary: true, version: currentVersion('svc-bulk-geocode') });
    });

    it('turns a failed job into error rows and a job error, goes on, and ends with JOB_FAILED after the summary', async function () {
      await load({ output: 'parts', batchSize: 2, parallel: 1 });
      // The second job's result file is unreadable.
      let downloads = 0;
      ctx.sandbox.setFault('bulk-download', { pick: () => (++downloads === 2 ? { malformedJson: true } : undefined) });
      const { outputs, error } = await sendAndCollect('n1', { payload: addressesOf(6) });
      should(error?.error.code).equal('JOB_FAILED');
      should(error?.error.message).match(/1 of 3 jobs failed/);
      should(outputs).have.length(4);
      const rows = rowsOf(outputs);
      should(rows.map((row) => row.index)).eql([0, 1, 2, 3, 4, 5]);
      should(rows[2].error).match(/the job failed: .*result file/);
      should(rows[3].error).match(/the job failed/);
      should(rows[4].location).not.be.undefined();
      const jobs = outputs[3].jobs as JobReport[];
      should(jobs.map((job) => job.error?.code)).eql([undefined, 'BAD_RESPONSE', undefined]);
      should(outputs[3].payload).have.properties({ failedJobs: 1, jobs: 3 });
    });

    it('stops the whole run on refused credentials, with no part sent', async function () {
      await load({ output: 'parts', batchSize: 2 }, { apiKey: 'wrong' });
      const { outputs, error } = await sendAndCollect('n1', { payload: addressesOf(6) });
      should(error?.error.code).equal('UNAUTHORIZED');
      should(outputs).have.length(0);
      should(ctx.sandbox.requests('bulk-upload').length).be.belowOrEqual(2);
    });
  });

  describe('files', function () {
    it('reads msg.filename (CSV) and writes every row to a CSV file in input order', async function () {
      const input = path.join(dir, 'in.csv');
      const output = path.join(dir, 'out.csv');
      const addresses = addressesOf(7);
      fs.writeFileSync(input, `id,address\r\n${addresses.map((a, i) => `${i},"${a}"`).join('\r\n')}\r\n`);
      await load({ output: 'file', outputFile: output, batchSize: 3, parallel: 2 });
      const { outputs, error } = await sendAndCollect('n1', { filename: input, payload: 'ignored' });
      should(error).be.undefined();
      should(outputs).have.length(1);
      const summary = outputs[0].payload as BulkSummary;
      should(summary).eql({ rows: 7, located: 6, failed: 1, jobs: 3, failedJobs: 0, unmatchedInputs: 0, unmatchedResults: 0, file: output });
      const [header, ...records] = readCsv(fs.readFileSync(output, 'utf8'));
      should(header).eql(['index', 'id', 'address', 'latitude', 'longitude', 'error', 'result']);
      should(records.map((r) => r[0])).eql(['0', '1', '2', '3', '4', '5', '6']);
      should(records.map((r) => r[2])).eql(addresses);
      should(records[0][3]).match(/^-?\d+\.\d+$/);
      should(records[2][5]).equal('no match');
      should([...bulkJobs(ctx.sandbox).values()].map((job) => job.addresses)).eql([addresses.slice(0, 3), addresses.slice(3, 6), addresses.slice(6)]);
    });

    it('reads JSON lines from msg.filename and writes JSON lines', async function () {
      const input = path.join(dir, 'in.jsonl');
      const output = path.join(dir, 'out.jsonl');
      fs.writeFileSync(input, '"1 Main Street"\n{"address":"High Street","ref":9}\n\n"nowhere"\n');
      await load({ output: 'file', outputFile: output, batchSize: 2 });
      const { outputs, error } = await sendAndCollect('n1', { filename: input });
      should(error).be.undefined();
      should(outputs[0].payload).have.properties({ rows: 3, located: 2, failed: 1 });
      const lines = fs
        .readFileSync(output, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Fields);
      should(lines.map((line) => [line.index, line.address])).eql([
        [0, '1 Main Street'],
        [1, 'High Street'],
        [2, 'nowhere'],
      ]);
      should(lines[1].ref).equal(9);
      should(lines[1].latitude).be.a.Number();
      should(lines[2].error).equal('no match');
    });

    it('writes through a symbolic link to its target: the link stays a link, the header names every column (issue 51 point 5)', async function () {
      const real = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bulk-stream-real-'));
      try {
        const target = path.join(real, 'geocoded.csv');
        const link = path.join(dir, 'out.csv');
        fs.writeFileSync(target, 'an earlier run\r\n');
        fs.symlinkSync(target, link);
        await load({ output: 'file', outputFile: link, batchSize: 2 });
        const input = [{ address: '1 Main Street' }, { address: '2 Main Street' }, { address: '3 Main Street', floor: '3' }, { address: '4 Main Street' }];
        const { outputs, error } = await sendAndCollect('n1', { payload: input });
        should(error).be.undefined();
        should(outputs[0].payload).have.properties({ rows: 4, located: 4, file: link });
        should(fs.lstatSync(link).isSymbolicLink()).be.true();
        should(fs.readlinkSync(link)).equal(target);
        const [header, ...records] = readCsv(fs.readFileSync(target, 'utf8'));
        should(header).eql(['index', 'address', 'latitude', 'longitude', 'error', 'result', 'floor']);
        should(records.map((record) => [record[1], record[6] ?? ''])).eql([
          ['1 Main Street', ''],
          ['2 Main Street', ''],
          ['3 Main Street', '3'],
          ['4 Main Street', ''],
        ]);
        for (const record of records) should(record.length).be.belowOrEqual(header.length);
        should(fs.readdirSync(dir)).eql(['out.csv']);
        should(fs.readdirSync(real)).eql(['geocoded.csv']);
      } finally {
        fs.rmSync(real, { recursive: true, force: true });
      }
    });

    it('refuses an output path that is a link into a folder that does not exist, before any request (issue 51 point 5)', async function () {
      const link = path.join(dir, 'out.csv');
      fs.symlinkSync(path.join(dir, 'unmounted', 'geocoded.csv'), link);
      await load({ output: 'file', outputFile: link });
      const { outputs, error } = await sendAndCollect('n1', { payload: ['1 Main Street'] });
      should(outputs).be.empty();
      should(error?.error.code).equal('INVALID_INPUT');
      should(error?.error.message).match(/out\.csv cannot be written: .*ENOENT/);
      should(ctx.sandbox.log).have.length(0);
    });

    it('refuses a missing input file or an unwritable output path before any request', async function () {
      await load({ output: 'file', outputFile: path.join(dir, 'out.jsonl') });
      const missing = await sendAndCollect('n1', { filename: path.join(dir, 'missing.csv') });
      should(missing.error?.error.code).equal('INVALID_INPUT');
      should(missing.error?.error.message).match(/ENOENT/);
      await helper.unload();
      await load({ output: 'file', outputFile: path.join(dir, 'no', 'such', 'dir.csv') });
      fs.writeFileSync(path.join(dir, 'in.csv'), 'address\nMain Street\n');
      const unwritable = await sendAndCollect('n1', { filename: path.join(dir, 'in.csv') });
      should(unwritable.error?.error.code).equal('INVALID_INPUT');
      should(unwritable.error?.error.message).match(/cannot be written/);
      should(ctx.sandbox.log).have.length(0);
    });
  });

  describe('back-pressure', function () {
    it('reads a stream no further than the batches of the running jobs, and warns that a stopped stream run does not resume', async function () {
      await load({ output: 'parts', batchSize: 10, parallel: 2, maxWait: 60 });
      bulkControls(ctx.sandbox).outcome = 'never';
      let pulled = 0;
      function* addresses(): Generator<string> {
        for (let i = 0; i < 10_000; i++) {
          pulled++;
          yield `${i} Main Street`;
        }
      }
      const stream = Readable.from(addresses(), { highWaterMark: 1 });
      const outcome = sendAndCollect('n1', { payload: stream }, 10_000);
      await waitUntil(() => ctx.sandbox.requests('bulk-status').length >= 4, 'both jobs to be polled');
      // Two batches of 10, and what the stream itself buffers (its high-water mark, and one row read ahead).
      should(pulled).be.within(20, 23);
      should(ctx.sandbox.requests('bulk-upload')).have.length(2);
      await (helper.getNode('n1') as unknown as { close(removed: boolean): Promise<void> }).close(false);
      const { error, outputs } = await outcome;
      should(error?.error.code).equal('CANCELLED');
      should(outputs).have.length(0);
      should(stream.destroyed).be.true();
      // A stream cannot be read again after a restart: the node says the run is lost.
      const warn = helper.getNode('n1').warn as { getCalls(): Array<{ args: unknown[] }> };
      const warnings = warn.getCalls().map((call) => String(call.args[0]));
      should(warnings.filter((text) => text.includes('does not resume after a restart'))).have.length(1);
    });
  });
});
