import { Readable } from 'node:stream';
import should from 'should';
import { CsvError, CsvParser, csvField, csvLine, csvRecords, parseCsv, recordToObject, writeCsv } from '../../../nodes/lib/format/csv';
import { readCsv, toCsv } from '../../sandbox/csv';

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
