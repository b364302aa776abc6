import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import should from 'should';
import { RowFile } from '../../../nodes/lib/format/row-file';
import { readCsv } from '../../sandbox/csv';

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

  it('a member first seen in a later write becomes a column after the others, named in the header when the file is closed', async function () {
    const out = await RowFile.open(file);
    await out.write(FIRST);
    await out.write(LATER);
    should(records()[0]).eql(['index', 'address', 'city', 'latitude']);
    await out.close();
    should(records()).eql([
      ['index', 'address', 'city', 'latitude', 'floor'],
      ['0', 'a', '', '1'],
      ['1', 'b', 'X', '2'],
      ['2', 'c', '', '3', '3'],
    ]);
    should(fs.readdirSync(dir)).eql(['out.csv']);
  });

  it('a run resumed after the new column goes on with it and names it at the end', async function () {
    const first = await RowFile.open(file);
    await first.write(FIRST);
    await first.write(LATER);
    const state = await first.commit();
    await first.write([{ index: 9, address: 'lost after the commit', latitude: 0 }]);
    first.abort();
    should(state.headerColumns).eql(['index', 'address', 'city', 'latitude']);
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

  it('a run that stopped after the header was rewritten, before its state was forgotten, resumes without cutting a row', async function () {
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
});
