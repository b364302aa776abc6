import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import should from 'should';
import { RowFile } from '../../../nodes/lib/format/row-file';
import { readCsv } from '../../../sandbox/csv';

/** Issue 27 point 6: a CSV output file drops no member a row has, also when a run resumes. */
describe('row file', function () {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-row-file-'));
    file = path.join(dir, 'out.csv');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const FIRST = [
    { index: 0, address: 'a', latitude: 1 },
    { index: 1, address: 'b', city: 'X', latitude: 2 },
  ];
  const LATER = [{ index: 2, address: 'c', floor: '3', latitude: 3 }];
  const records = () => readCsv(fs.readFileSync(file, 'utf8'));

  it('the columns of the first rows are their union, in the order the rows give them', async function () {
    const out = await RowFile.open(file);
    await out.write(FIRST);
    await out.close();
    should(records()).eql([
      ['index', 'address', 'city', 'latitude'],
      ['0', 'a', '', '1'],
      ['1', 'b', 'X', '2'],
    ]);
  });

  it('a member first seen in a later write becomes a column after the others, named in the header before a row with it is written (issue 51 point 5)', async function () {
    const out = await RowFile.open(file);
    await out.write(FIRST);
    await out.write(LATER);
    // Before the file is closed (a kill now leaves this file): the header already names the new column.
    const expected = [
      ['index', 'address', 'city', 'latitude', 'floor'],
      ['0', 'a', '', '1'],
      ['1', 'b', 'X', '2'],
      ['2', 'c', '', '3', '3'],
    ];
    should(records()).eql(expected);
    await out.write([{ index: 3, address: 'd', latitude: 4 }]);
    await out.close();
    should(records()).eql([...expected, ['3', 'd', '', '4', '']]);
    should(fs.readdirSync(dir)).eql(['out.csv']);
  });

  it('a run resumed after the new column goes on with it, dropping the rows written after the commit', async function () {
    const first = await RowFile.open(file);
    await first.write(FIRST);
    await first.write(LATER);
    const state = await first.commit();
    await first.write([{ index: 9, address: 'lost after the commit', latitude: 0 }]);
    first.abort();
    should(state).have.properties({ columns: ['index', 'address', 'city', 'latitude', 'floor'], target: file });
    should(state).not.have.property('headerColumns');
    const resumed = await RowFile.open(file, state);
    await resumed.write([{ index: 3, address: 'd', floor: '4', latitude: 4 }]);
    await resumed.close();
    should(records()).eql([
      ['index', 'address', 'city', 'latitude', 'floor'],
      ['0', 'a', '', '1'],
      ['1', 'b', 'X', '2'],
      ['2', 'c', '', '3', '3'],
      ['3', 'd', '', '4', '4'],
    ]);
  });

  it('a run killed after a header rewrite that no commit recorded resumes from the committed rows, under their header', async function () {
    const first = await RowFile.open(file);
    await first.write(FIRST);
    const state = await first.commit();
    await first.write(LATER);
    first.abort();
    should(records()[0]).eql(['index', 'address', 'city', 'latitude', 'floor']);
    const resumed = await RowFile.open(file, state);
    should(records()).eql([
      ['index', 'address', 'city', 'latitude'],
      ['0', 'a', '', '1'],
      ['1', 'b', 'X', '2'],
    ]);
    await resumed.write(LATER);
    await resumed.close();
    should(records()).eql([
      ['index', 'address', 'city', 'latitude', 'floor'],
      ['0', 'a', '', '1'],
      ['1', 'b', 'X', '2'],
      ['2', 'c', '', '3', '3'],
    ]);
    should(fs.readdirSync(dir)).eql(['out.csv']);
  });

  it('a resumed run removes the temporary file a killed rewrite left, not one of a process still running', async function () {
    const first = await RowFile.open(file);
    await first.write(FIRST);
    const state = await first.commit();
    first.abort();
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    fs.writeFileSync(`${file}.${gone}.0123abcd.tmp`, 'half a rewrite');
    fs.writeFileSync(`${file}.${process.pid}.0123abcd.tmp`, 'a rewrite under way');
    const resumed = await RowFile.open(file, state);
    await resumed.close();
    should(fs.readdirSync(dir).sort()).eql(['out.csv', `out.csv.${process.pid}.0123abcd.tmp`]);
  });

  it('a run that stopped after the file was closed, before its state was forgotten, resumes without cutting a row', async function () {
    const first = await RowFile.open(file);
    await first.write(FIRST);
    await first.write(LATER);
    const state = await first.commit();
    await first.close();
    const whole = fs.readFileSync(file, 'utf8');
    const resumed = await RowFile.open(file, state);
    await resumed.close();
    should(fs.readFileSync(file, 'utf8')).equal(whole);
  });

  it('the header rewrite keeps the permissions of the file', async function () {
    fs.writeFileSync(file, '');
    fs.chmodSync(file, 0o640);
    const out = await RowFile.open(file);
    await out.write(FIRST);
    await out.write(LATER);
    await out.close();
    should(fs.statSync(file).mode & 0o777).equal(0o640);
  });

  describe('a state written by an earlier version, which named new columns only when the run ended', function () {
    const OLD_HEADER = 'index,address,city,latitude\r\n';
    const NEW_HEADER = 'index,address,city,latitude,floor\r\n';
    const ROWS = '0,a,,1\r\n1,b,X,2\r\n2,c,,3,3\r\n';
    const state = {
      bytes: OLD_HEADER.length + ROWS.length,
      columns: ['index', 'address', 'city', 'latitude', 'floor'],
      headerColumns: ['index', 'address', 'city', 'latitude'],
    };

    it('the header is rewritten at once, and rows after the commit dropped', async function () {
      fs.writeFileSync(file, `${OLD_HEADER}${ROWS}9,lost,,0,1\r\n`);
      const resumed = await RowFile.open(file, state);
      should(fs.readFileSync(file, 'utf8')).equal(`${NEW_HEADER}${ROWS}`);
      await resumed.write([{ index: 3, address: 'd', latitude: 4 }]);
      await resumed.close();
      should(fs.readFileSync(file, 'utf8')).equal(`${NEW_HEADER}${ROWS}3,d,,4,\r\n`);
    });

    it('a file whose header that version had already rewritten is kept as it is', async function () {
      fs.writeFileSync(file, `${NEW_HEADER}${ROWS}`);
      const resumed = await RowFile.open(file, state);
      await resumed.close();
      should(fs.readFileSync(file, 'utf8')).equal(`${NEW_HEADER}${ROWS}`);
    });

    it('a file that does not start with a header line this pack writes is not resumed', async function () {
      fs.writeFileSync(file, `"unterminated${ROWS}`);
      await should(RowFile.open(file, state)).be.rejectedWith({ code: 'INVALID_INPUT', message: /does not start with the header line/ });
    });
  });

  describe('a path that is a symbolic link (issue 51 point 5)', function () {
    let real: string;
    let target: string;
    beforeEach(() => {
      real = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-row-file-real-'));
      target = path.join(real, 'target.csv');
    });
    afterEach(() => fs.rmSync(real, { recursive: true, force: true }));
    const targetRecords = () => readCsv(fs.readFileSync(target, 'utf8'));

    it('writes the target and rewrites the header on it: the link stays a link, the header names every cell', async function () {
      fs.writeFileSync(target, 'what was there before\n');
      fs.symlinkSync(target, file);
      const out = await RowFile.open(file);
      await out.write(FIRST);
      await out.write(LATER);
      await out.close();
      should(fs.lstatSync(file).isSymbolicLink()).be.true();
      should(fs.readlinkSync(file)).equal(target);
      should(targetRecords()).eql([
        ['index', 'address', 'city', 'latitude', 'floor'],
        ['0', 'a', '', '1'],
        ['1', 'b', 'X', '2'],
        ['2', 'c', '', '3', '3'],
      ]);
      should(fs.readdirSync(dir)).eql(['out.csv']);
      should(fs.readdirSync(real)).eql(['target.csv']);
      should(out).have.properties({ path: file, target: fs.realpathSync(target) });
    });

    it('follows a chain of relative links, and a link to a file not there yet creates it (as a shell does)', async function () {
      fs.symlinkSync('second.csv', file);
      fs.symlinkSync(path.relative(dir, target), path.join(dir, 'second.csv'));
      const out = await RowFile.open(file);
      await out.write(FIRST);
      await out.write(LATER);
      await out.close();
      should(fs.lstatSync(file).isSymbolicLink()).be.true();
      should(targetRecords()[0]).eql(['index', 'address', 'city', 'latitude', 'floor']);
    });

    it('a link into a folder that does not exist, or a loop of links, is INVALID_INPUT before any row', async function () {
      fs.symlinkSync(path.join(real, 'missing', 'out.csv'), file);
      await should(RowFile.open(file)).be.rejectedWith({ code: 'INVALID_INPUT', message: /out\.csv cannot be written: .*ENOENT/ });
      const loop = path.join(dir, 'loop.csv');
      fs.symlinkSync('loop.csv', loop);
      await should(RowFile.open(loop)).be.rejectedWith({ code: 'INVALID_INPUT', message: /loop\.csv cannot be written: .*ELOOP/ });
    });

    it('a resumed run goes on in the file it began, though the link now points elsewhere', async function () {
      fs.symlinkSync(target, file);
      const first = await RowFile.open(file);
      await first.write(FIRST);
      const state = await first.commit();
      first.abort();
      fs.unlinkSync(file);
      fs.symlinkSync(path.join(real, 'other.csv'), file);
      const resumed = await RowFile.open(file, state);
      await resumed.write(LATER);
      await resumed.close();
      should(targetRecords()).have.length(4);
      should(fs.existsSync(path.join(real, 'other.csv'))).be.false();
    });
  });
});
