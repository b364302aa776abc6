import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { CsvError, csvRecords, parseCsv, recordToObject } from './csv';
import { InputError, SvcError, causeOf, describeCause } from '../util/errors';
import { catalogText } from '../util/catalog-text';
import { describeValue, isRecord } from '../util/values';

/** One input row: its position in the input, the element or record as given, and its address (trimmed). */
export interface InputRow {
  index: number;
  input: unknown;
  address: string;
}

/** The rows of an input, and the stream they come from, if any, so that it can be stopped. */
export interface AddressSource {
  rows: Iterable<InputRow> | AsyncIterable<InputRow>;
  stream?: Readable;
}

/**
 * The rows of an in-memory value or a stream: an array of address strings or of objects with an
 * `address` member; CSV text or a Buffer with an `address` column; a readable stream of such CSV
 * or of JSON lines (bytes), or an object-mode stream of elements as in an array.
 * Whatever is at hand is checked before any request.
 */
export function addressRows(value: unknown): AddressSource {
  if (value instanceof Readable) return { rows: streamRows(value), stream: value };
  if (Array.isArray(value)) {
    if (value.length === 0) throw new InputError(catalogText('error.bulk.emptyList'));
    return { rows: value.map(itemRow) };
  }
  if (typeof value === 'string' || Buffer.isBuffer(value)) {
    if (value.toString().trim() === '') throw new InputError(catalogText('error.bulk.emptyCsv'));
    const reader = new CsvRows();
    try {
      const rows = parseCsv(value)
        .map((record) => reader.row(record))
        .filter((row): row is InputRow => row !== undefined);
      return { rows };
    } catch (err) {
      throw inputError(err);
    }
  }
  throw new InputError(catalogText('error.bulk.input', { value: describeValue(value) }));
}

/**
 * The rows of a file, read as a stream: JSON lines when its name ends in .jsonl or .ndjson,
 * else as a byte stream is read.
 */
export function fileRows(path: string): AddressSource {
  if (path.trim() === '') throw new InputError(catalogText('error.bulk.emptyFilename'));
  const stream = createReadStream(path);
  // An open error (no such file) comes before the rows are read: the reading reports it, not an unhandled event.
  stream.on('error', () => undefined);
  return { rows: streamRows(stream, JSON_LINES_FILE.test(path) ? 'jsonl' : undefined), stream };
}

const JSON_LINES_FILE = /\.(?:jsonl|ndjson)$/i;

/**
 * An object-mode stream delivers elements as an array does. A byte stream is JSON lines when its
 * first character is `{` (or `format` says so), else CSV.
 */
async function* streamRows(stream: Readable, format?: 'jsonl'): AsyncGenerator<InputRow> {
  try {
    if (stream.readableObjectMode) {
      let index = 0;
      for await (const item of stream) yield itemRow(item, index++);
      return;
    }
    const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<unknown>;
    const first = await firstChunk(chunks);
    if (first === undefined) return;
    const all = prepend(first, chunks);
    if (format === 'jsonl' || /^\uFEFF?\s*\{/.test(first.toString())) {
      yield* jsonLineRows(all);
      return;
    }
    const reader = new CsvRows();
    for await (const record of csvRecords(all)) {
      const row = reader.row(record);
      if (row) yield row;
    }
  } catch (err) {
    throw inputError(err);
  }
}

/** The first chunk with more than white space in it (white space before it is dropped), or undefined at the end. */
async function firstChunk(chunks: AsyncIterator<unknown>): Promise<string | Buffer | undefined> {
  for (;;) {
    const next = await chunks.next();
    if (next.done) return undefined;
    const chunk = next.value as string | Buffer;
    if (chunk.toString().trim() !== '') return chunk;
  }
}

async function* prepend(first: string | Buffer, rest: AsyncIterator<unknown>): AsyncGenerator<unknown> {
  yield first;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}

/** JSON lines: each line an address string or an object with an `address` member; empty lines are skipped. */
async function* jsonLineRows(chunks: AsyncIterable<unknown>): AsyncGenerator<InputRow> {
  const decoder = new TextDecoder('utf-8');
  let pending = '';
  let index = 0;
  let line = 0;
  const rowOf = (text: string) => {
    line++;
    let item: unknown;
    try {
      item = JSON.parse(text.replace(/^\uFEFF/, ''));
    } catch (err) {
      throw new InputError(catalogText('error.bulk.jsonLine', { line, cause: describeCause(err) }));
    }
    return itemRow(item, index++);
  };
  for await (const chunk of chunks) {
    pending += typeof chunk === 'string' ? chunk : decoder.decode(chunk as Buffer, { stream: true });
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const text of lines) {
      if (text.trim() === '') line++;
      else yield rowOf(text);
    }
  }
  pending += decoder.decode();
  if (pending.trim() !== '') yield rowOf(pending);
}

function itemRow(item: unknown, index: number): InputRow {
  if (typeof item === 'string') return { index, input: item, address: item.trim() };
  if (isRecord(item) && typeof item.address === 'string') return { index, input: item, address: item.address.trim() };
  throw new InputError(catalogText('error.bulk.row', { index, value: describeValue(item) }));
}

/** Turns CSV records into rows: the first record names the columns, one of them `address`. */
class CsvRows {
  private header: string[] | undefined;
  private addressColumn = -1;
  private index = 0;

  /** The row of a record, or undefined for the header. */
  row(record: string[]): InputRow | undefined {
    if (!this.header) {
      this.header = record.map((name) => name.trim());
      this.addressColumn = this.header.findIndex((name) => name.toLowerCase() === 'address');
      if (this.addressColumn < 0) throw new InputError(catalogText('error.bulk.noAddressColumn', { columns: this.header.join(', ') }));
      return undefined;
    }
    return { index: this.index++, input: recordToObject(this.header, record), address: (record[this.addressColumn] ?? '').trim() };
  }
}

function inputError(err: unknown): SvcError {
  // A CsvError is an SvcError too: it is told first, so that the text says it is the CSV input that cannot be read.
  if (err instanceof CsvError) return new InputError(catalogText('error.bulk.csv', { cause: err.text }));
  if (err instanceof SvcError) return err;
  return new InputError(catalogText('error.bulk.read', { cause: causeOf(err) }));
}
