import { StringDecoder } from 'node:string_decoder';
import { CatalogText, catalogText } from '../util/catalog-text';
import { InputError } from '../util/errors';

/** A CSV text that cannot be read: an `InputError`, as the message's CSV is at fault; a caller reading CSV from elsewhere wraps it. */
export class CsvError extends InputError {
  declare readonly text: CatalogText;

  constructor(text: CatalogText) {
    super(text);
  }
}

/** What makes a field quoted: a quote, a line break, and every separator a reader may split on (`;` is Excel's in most of Europe). */
const NEEDS_QUOTES = /[",;\t\r\n]/;
const BYTE_ORDER_MARK = '\uFEFF';

/** One field as RFC 4180 writes it: quoted, with quotes doubled, when it holds a quote, a line break or a separator (see `NEEDS_QUOTES`). */
export function csvField(value: string): string {
  return NEEDS_QUOTES.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** First characters that make a spreadsheet evaluate a cell (OWASP, CSV Injection): `=`, `+`, `-`, `@`, tab, CR, LF. */
const FORMULA_START = /^[=+\-@\t\r\n]/;
/**
 * Inside a cell, a `;`, tab or line break that a formula start follows (after any quotes): where a reader that splits on
 * `;` or tabs, and does not see our quotes as quotes, starts a cell or a row of its own.
 */
const FORMULA_INSIDE = /([;\t]|\r\n|\r|\n)(?="*[=+\-@\t])/g;
const MAY_START_INSIDE = /[;\t\r\n]/;
/** A plain number (`-33.8688`, `+1`, `1e-5`) is read as that number, not as a formula. */
const PLAIN_NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * A cell a spreadsheet shows as the text it is, whether it splits on `,` or `;`: a formula start gets a leading `'` (the
 * OWASP rule), at the cell's start and after every `;`, tab or line break inside it (`Major 1;'=HYPERLINK(…)`). Nothing
 * else changes; a plain number, a negative latitude say, stays as it is.
 */
export function spreadsheetText(value: string): string {
  // Most cells hold no separator or line break: the search inside is skipped for them (it is run for every cell of a file).
  const inside = MAY_START_INSIDE.test(value) ? value.replace(FORMULA_INSIDE, "$1'") : value;
  return FORMULA_START.test(inside) && !PLAIN_NUMBER.test(value) ? `'${inside}` : inside;
}

/** One record with its CRLF line ending; a lone empty field is written `""`, so it does not read as an empty line. */
export function csvLine(fields: readonly string[]): string {
  if (fields.length === 1 && fields[0] === '') return '""\r\n';
  return `${fields.map(csvField).join(',')}\r\n`;
}

export function writeCsv(header: readonly string[], rows: Iterable<readonly string[]>): string {
  const lines = [csvLine(header)];
  for (const row of rows) lines.push(csvLine(row));
  return lines.join('');
}

/**
 * Incremental RFC 4180 reader: feed it chunks split anywhere (even inside a UTF-8 character or a CRLF) and it returns the
 * records completed so far. Accepts CRLF, LF and CR and a byte-order mark; skips empty lines; keeps stray quotes as text.
 */
export class CsvParser {
  private readonly decoder = new StringDecoder('utf8');
  private field = '';
  private record: string[] = [];
  private fieldQuoted = false;
  private inQuotes = false;
  /** A quote was seen inside a quoted field: the next character decides between `""` and the closing quote. */
  private quotePending = false;
  /** The last character ended a record with CR: a following LF belongs to it. */
  private afterCr = false;
  private started = false;

  write(chunk: string | Buffer): string[][] {
    let text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.startsWith(BYTE_ORDER_MARK)) text = text.slice(1);
    }
    const records: string[][] = [];
    // Runs of ordinary characters are appended as one slice: a field is one string, not a long chain of concatenations.
    let i = 0;
    while (i < text.length) {
      if (this.inQuotes) {
        i = this.consumeQuoted(text, i);
        continue;
      }
      const c = text[i];
      const wasAfterCr = this.afterCr;
      this.afterCr = false;
      if (c === ',') {
        this.endField();
      } else if (c === '\r') {
        this.endRecord(records);
        this.afterCr = true;
      } else if (c === '\n') {
        if (!wasAfterCr) this.endRecord(records);
      } else if (c === '"' && this.field === '' && !this.fieldQuoted) {
        this.inQuotes = true;
        this.fieldQuoted = true;
      } else {
        const end = nextSeparator(text, i + 1);
        this.field += text.slice(i, end);
        i = end;
        continue;
      }
      i++;
    }
    return records;
  }

  /** The last record, if the text did not end with a line break. */
  end(): string[][] {
    const records = this.write(this.decoder.end());
    if (this.inQuotes && !this.quotePending) throw new CsvError(catalogText('error.csv.unterminated'));
    this.inQuotes = false;
    this.quotePending = false;
    if (this.field !== '' || this.fieldQuoted || this.record.length > 0) this.endRecord(records);
    return records;
  }

  /** Reads inside a quoted field from `i`; returns where to go on (past the field when it closed). */
  private consumeQuoted(text: string, i: number): number {
    if (this.quotePending) {
      this.quotePending = false;
      if (text[i] === '"') {
        this.field += '"';
        return i + 1;
      }
      this.inQuotes = false;
      return i;
    }
    // Doubled quotes are undone in one pass over the slice, not one concatenation per quote.
    let from = i;
    for (;;) {
      const quote = text.indexOf('"', from);
      if (quote < 0) {
        this.field += unescapeQuotes(text.slice(i));
        return text.length;
      }
      if (text[quote + 1] === '"') {
        from = quote + 2;
        continue;
      }
      this.field += unescapeQuotes(text.slice(i, quote));
      // A quote that ends the chunk may be the first of a pair: the next chunk decides.
      if (quote + 1 === text.length) this.quotePending = true;
      else this.inQuotes = false;
      return quote + 1;
    }
  }

  private endField(): void {
    this.record.push(this.field);
    this.field = '';
    this.fieldQuoted = false;
  }

  private endRecord(records: string[][]): void {
    const blankLine = this.record.length === 0 && this.field === '' && !this.fieldQuoted;
    this.endField();
    if (!blankLine) records.push(this.record);
    this.record = [];
  }
}

function unescapeQuotes(text: string): string {
  return text.includes('""') ? text.split('""').join('"') : text;
}

function nextSeparator(text: string, from: number): number {
  let i = from;
  while (i < text.length) {
    const c = text[i];
    if (c === ',' || c === '\r' || c === '\n') break;
    i++;
  }
  return i;
}

export function parseCsv(text: string | Buffer): string[][] {
  const parser = new CsvParser();
  return [...parser.write(text), ...parser.end()];
}

/** The records of a CSV arriving in chunks (a readable stream of bytes or text), one at a time. */
export async function* csvRecords(source: AsyncIterable<unknown>): AsyncGenerator<string[]> {
  const parser = new CsvParser();
  for await (const chunk of source) {
    yield* parser.write(toChunk(chunk));
  }
  yield* parser.end();
}

/** A record as an object keyed by the header's column names; fields beyond the header are dropped. */
export function recordToObject(header: readonly string[], record: readonly string[]): Record<string, string> {
  const object: Record<string, string> = {};
  header.forEach((name, i) => {
    object[name] = record[i] ?? '';
  });
  return object;
}

function toChunk(chunk: unknown): string | Buffer {
  if (typeof chunk === 'string' || Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new CsvError(catalogText('error.csv.chunkType', { type: chunk === null ? 'null' : typeof chunk }));
}
