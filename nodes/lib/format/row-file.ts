import { createReadStream, createWriteStream, fdatasync, promises as fsPromises, WriteStream } from 'node:fs';
import { once } from 'node:events';
import { CsvParser, csvLine, spreadsheetText } from './csv';
import { InputError, describeCause } from '../util/errors';
import { catalogText } from '../util/catalog-text';
import { realFile, removeLeftovers, replaceFile } from '../util/files';

/** How far a file was written and made durable: where a resumed run truncates it to and goes on from. */
export interface RowFileState {
  bytes: number;
  /** The real file written: the path with its symbolic links followed when the run began. */
  target?: string;
  /** The CSV columns: every member of the rows written so far, which the header line names (see `RowFile`). */
  columns?: string[];
  /** From earlier versions only: the columns the header line names, fewer than `columns`; a resumed run rewrites the header at once. */
  headerColumns?: string[];
}

/** How CSV cells are written: `text` as a spreadsheet shows them (no formula runs; see `spreadsheetText`), `raw` as they are. */
type CsvCells = 'text' | 'raw';

/**
 * Rows written to a file as they come: CSV (a name ending in .csv) or JSON lines. Each write waits until its rows are in
 * the file, so a fast producer is held back instead of filling memory.
 *
 * A CSV file's columns are the union of the rows' members, none dropped: a member that only a later row has becomes a
 * column after the others, and the header line is rewritten to name it before any row with it is written, so the header
 * names every cell of every row at all times, a kill included. A symbolic link's target is written, never the link.
 */
export class RowFile {
  private columns: string[] | undefined;
  private failure: Error | undefined;
  private bytes = 0;
  private aborted = false;

  private constructor(
    readonly path: string,
    readonly target: string,
    private stream: WriteStream,
    private fd: number,
    private readonly format: 'csv' | 'jsonl',
    private readonly cells: CsvCells,
  ) {
    this.watch(stream);
  }

  /**
   * Opens (creates or truncates) the file; an unwritable path is an INVALID_INPUT error before any row. With `resumeFrom`,
   * the file is cut back to the rows committed then and appended to.
   */
  static async open(path: string, resumeFrom?: RowFileState, cells: CsvCells = 'text'): Promise<RowFile> {
    if (path.trim() === '') throw new InputError(catalogText('error.outputFile.emptyPath'));
    const target =
      resumeFrom?.target ??
      (await realFile(path).catch((err: unknown) => {
        throw new InputError(catalogText('error.outputFile.notWritable', { path, cause: describeCause(err) }));
      }));
    const resumed = resumeFrom ? await resumeFile(path, target, resumeFrom, cellWriter(cells)) : undefined;
    const { stream, fd } = await openStream(path, target, resumeFrom ? 'a' : 'w');
    const file = new RowFile(path, target, stream, fd, /\.csv$/i.test(path) ? 'csv' : 'jsonl', cells);
    file.bytes = resumed?.bytes ?? 0;
    file.columns = resumed?.columns;
    return file;
  }

  async write(rows: ReadonlyArray<Record<string, unknown>>): Promise<void> {
    if (rows.length === 0) return;
    let chunk = '';
    if (this.format === 'jsonl') {
      for (const row of rows) chunk += `${JSON.stringify(row)}\n`;
    } else {
      const cell = cellWriter(this.cells);
      if (!this.columns) {
        this.columns = unionOfMembers(rows);
        chunk += csvLine(this.columns.map(cell));
      } else {
        const named = [...this.columns];
        if (this.addColumns(rows)) await this.widenHeader(named);
        // Stopped while the header was rewritten: the run is over, its rows are not written.
        if (this.aborted) return;
      }
      const columns = this.columns;
      for (const row of rows) chunk += csvLine(columns.map((column) => cell(csvText(row[column]))));
    }
    this.check();
    await new Promise<void>((resolve) => this.stream.write(chunk, () => resolve()));
    this.check();
    this.bytes += Buffer.byteLength(chunk);
  }

  /** Makes what was written durable (fdatasync) and returns how far that is. */
  async commit(): Promise<RowFileState> {
    this.check();
    await new Promise<void>((resolve, reject) => fdatasync(this.fd, (err) => (err ? reject(err) : resolve()))).catch((err: Error) => {
      this.failure = err;
    });
    this.check();
    return { bytes: this.bytes, target: this.target, ...(this.columns ? { columns: [...this.columns] } : {}) };
  }

  async close(): Promise<void> {
    this.check();
    this.stream.end();
    await once(this.stream, 'close');
    this.check();
  }

  /** Rewrites the header line, which names `named`, to name every column, replacing the target whole before rows with them are written. */
  private async widenHeader(named: readonly string[]): Promise<void> {
    const cell = cellWriter(this.cells);
    const oldHeader = Buffer.from(csvLine(named.map(cell)));
    const newHeader = Buffer.from(csvLine((this.columns ?? []).map(cell)));
    this.check();
    this.stream.end();
    await once(this.stream, 'close');
    this.check();
    try {
      await replaceFile(this.target, (temporary) => copyWithHeader(this.target, temporary, newHeader, oldHeader.length, this.bytes));
      this.bytes += newHeader.length - oldHeader.length;
      if (this.aborted) return;
      ({ stream: this.stream, fd: this.fd } = await openStream(this.path, this.target, 'a'));
      this.watch(this.stream);
    } catch (err) {
      this.failure ??= err instanceof Error ? err : new Error(describeCause(err));
    }
    this.check();
  }

  private watch(stream: WriteStream): void {
    stream.on('error', (err) => {
      this.failure = err;
    });
  }

  /** Members of `rows` that are not columns yet become columns after the others; whether there were any. */
  private addColumns(rows: ReadonlyArray<Record<string, unknown>>): boolean {
    const columns = this.columns ?? [];
    const known = new Set(columns);
    const added: string[] = [];
    for (const row of rows) {
      for (const name of Object.keys(row)) {
        if (known.has(name)) continue;
        known.add(name);
        added.push(name);
      }
    }
    columns.push(...added);
    return added.length > 0;
  }

  /** Stops writing, leaving what was written. */
  abort(): void {
    this.aborted = true;
    this.stream.destroy();
  }

  private check(): void {
    if (this.failure) throw new InputError(catalogText('error.outputFile.writeFailed', { path: this.path, cause: this.failure.message }));
  }
}

function cellWriter(cells: CsvCells): (text: string) => string {
  return cells === 'raw' ? (text) => text : spreadsheetText;
}

/** Every member of the rows, in the order the rows give them: a member first seen in a later row goes after the one it follows there. */
function unionOfMembers(rows: ReadonlyArray<Record<string, unknown>>): string[] {
  const columns: string[] = [];
  const known = new Set<string>();
  for (const row of rows) {
    let at = 0;
    for (const name of Object.keys(row)) {
      if (known.has(name)) {
        at = columns.indexOf(name) + 1;
        continue;
      }
      known.add(name);
      columns.splice(at++, 0, name);
    }
  }
  return columns;
}

/** A write stream on `target` (the real file of `path`); a failure to open it is INVALID_INPUT, naming `path`. */
async function openStream(path: string, target: string, flags: 'w' | 'a'): Promise<{ stream: WriteStream; fd: number }> {
  const stream = createWriteStream(target, { flags });
  try {
    const [fd] = (await once(stream, 'open')) as [number];
    return { stream, fd };
  } catch (err) {
    throw new InputError(catalogText('error.outputFile.notWritable', { path, cause: describeCause(err) }));
  }
}

async function copyWithHeader(source: string, destination: fsPromises.FileHandle, header: Buffer, from: number, to: number): Promise<void> {
  await writeAll(destination, header);
  const input = await fsPromises.open(source, 'r');
  try {
    const buffer = Buffer.alloc(1 << 20);
    for (let at = from; at < to;) {
      const { bytesRead } = await input.read(buffer, 0, Math.min(buffer.length, to - at), at);
      if (bytesRead === 0) throw new Error(`${source} ended at ${at} bytes of ${to}`);
      await writeAll(destination, buffer.subarray(0, bytesRead));
      at += bytesRead;
    }
  } finally {
    await input.close();
  }
}

/** Writes the whole of `bytes` at the handle's position (a write may take fewer bytes than given). */
async function writeAll(handle: fsPromises.FileHandle, bytes: Buffer): Promise<void> {
  for (let done = 0; done < bytes.length;) done += (await handle.write(bytes, done)).bytesWritten;
}

/**
 * Brings the file a run began back to the rows it had when it last committed `state`, and returns the state to go on
 * from. A CSV file's header line names `state.columns` afterwards, whatever it named: a kill may have followed a header
 * rewrite no commit recorded.
 */
async function resumeFile(path: string, target: string, state: RowFileState, cell: (text: string) => string): Promise<RowFileState> {
  const notResumable = (err: unknown) => new InputError(catalogText('error.outputFile.notResumable', { path, cause: describeCause(err) }));
  const { size } = await fsPromises.stat(target).catch((err: unknown) => {
    throw notResumable(err);
  });
  // Best effort: a temporary file left by a killed rewrite is only clutter.
  await removeLeftovers(target).catch(() => undefined);
  if (!state.columns) {
    if (size < state.bytes) throw new InputError(catalogText('error.outputFile.shorter', { path, size, bytes: state.bytes }));
    await fsPromises.truncate(target, state.bytes);
    return { bytes: state.bytes, target };
  }
  const header = Buffer.from(csvLine(state.columns.map(cell)));
  const rowBytes = state.bytes - Buffer.byteLength(csvLine((state.headerColumns ?? state.columns).map(cell)));
  const found = await headerLine(target).catch((err: unknown) => {
    throw notResumable(err);
  });
  if (found === undefined) throw new InputError(catalogText('error.outputFile.headerChanged', { path }));
  if (size < found.length + rowBytes) throw new InputError(catalogText('error.outputFile.shorter', { path, size, bytes: found.length + rowBytes }));
  if (found.equals(header)) await fsPromises.truncate(target, header.length + rowBytes);
  else await replaceFile(target, (temporary) => copyWithHeader(target, temporary, header, found.length, found.length + rowBytes));
  return { bytes: header.length + rowBytes, target, columns: state.columns };
}

/** The bytes of the file's first CSV record with its line end, as this module writes one; undefined when the file does not start with such a line. */
async function headerLine(file: string): Promise<Buffer | undefined> {
  const parser = new CsvParser();
  const stream = createReadStream(file, { highWaterMark: 64 * 1024 });
  let start = Buffer.alloc(0);
  let line: Buffer | undefined;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      start = Buffer.concat([start, chunk]);
      if (!line) {
        const [record] = parser.write(chunk);
        if (record) line = Buffer.from(csvLine(record));
      }
      // The record ends at its CR: its LF may be in the next chunk.
      if (line && start.length >= line.length) break;
    }
  } finally {
    stream.destroy();
  }
  return line && start.subarray(0, line.length).equals(line) ? line : undefined;
}

function csvText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
