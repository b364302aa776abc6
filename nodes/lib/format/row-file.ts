import { createReadStream, createWriteStream, fdatasync, promises as fsPromises, WriteStream } from 'node:fs';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import { csvLine, spreadsheetText } from './csv';
import { InputError, describeCause } from '../util/errors';
import { catalogText } from '../util/catalog-text';

/** How far a file was written and made durable: where a resumed run truncates it to and goes on from. */
export interface RowFileState {
  bytes: number;
  /** The CSV columns: every member of the rows written so far (see `RowFile`). */
  columns?: string[];
  /** The columns the file's header line names, when rows brought members after it was written: `close` rewrites it. */
  headerColumns?: string[];
}

/** How CSV cells are written: `text` as a spreadsheet shows them (no formula runs; see `spreadsheetText`), `raw` as they are. */
export type CsvCells = 'text' | 'raw';

/**
 * Rows written to a file as they come: CSV (a name ending in .csv; cells as `CsvCells` says) or JSON
 * lines (any other name). Each write waits until its rows are in the file, so a fast producer is held
 * back instead of filling memory, and the written length is known.
 *
 * A CSV file's columns are the union of the rows' members, none dropped: those of the first rows
 * written, in the order the rows give them; a member that only a later row has becomes a column
 * after them, and `close` rewrites the header line to name it (the rows written before it end one
 * cell short for each such column, which spreadsheets and CSV readers read as empty).
 */
export class RowFile {
  private columns: string[] | undefined;
  /** The columns the header line names, when rows brought members after it was written. */
  private headerColumns: string[] | undefined;
  private failure: Error | undefined;
  private bytes = 0;

  private constructor(
    readonly path: string,
    private readonly stream: WriteStream,
    private readonly fd: number,
    private readonly format: 'csv' | 'jsonl',
    private readonly cells: CsvCells,
  ) {
    stream.on('error', (err) => {
      this.failure = err;
    });
  }

  /**
   * Opens (creates or truncates) the file; an unwritable path is an INVALID_INPUT error before any
   * row. With `resumeFrom` (a run going on after a restart), the file is cut back to the length
   * written then, dropping rows written after it, and appended to.
   */
  static async open(path: string, resumeFrom?: RowFileState, cells: CsvCells = 'text'): Promise<RowFile> {
    if (path.trim() === '') throw new InputError(catalogText('error.outputFile.emptyPath'));
    let resumed: RowFileState | undefined;
    if (resumeFrom) {
      const { size } = await fsPromises.stat(path).catch((err: unknown) => {
        throw new InputError(catalogText('error.outputFile.notResumable', { path, cause: describeCause(err) }));
      });
      resumed = await resumedState(path, resumeFrom, cellWriter(cells));
      if (size < resumed.bytes) throw new InputError(catalogText('error.outputFile.shorter', { path, size, bytes: resumed.bytes }));
      await fsPromises.truncate(path, resumed.bytes);
    }
    const stream = createWriteStream(path, { flags: resumeFrom ? 'a' : 'w' });
    let fd: number;
    try {
      [fd] = (await once(stream, 'open')) as [number];
    } catch (err) {
      throw new InputError(catalogText('error.outputFile.notWritable', { path, cause: describeCause(err) }));
    }
    const file = new RowFile(path, stream, fd, /\.csv$/i.test(path) ? 'csv' : 'jsonl', cells);
    file.bytes = resumed?.bytes ?? 0;
    file.columns = resumed?.columns;
    file.headerColumns = resumed?.headerColumns;
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
        this.addColumns(rows);
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
    return {
      bytes: this.bytes,
      ...(this.columns ? { columns: [...this.columns] } : {}),
      ...(this.headerColumns ? { headerColumns: this.headerColumns } : {}),
    };
  }

  /** Ends the file; a header line that lacks columns added since it was written is rewritten first. */
  async close(): Promise<void> {
    this.check();
    this.stream.end();
    await once(this.stream, 'close');
    this.check();
    if (this.headerColumns && this.columns) {
      const cell = cellWriter(this.cells);
      await replaceHeader(this.path, csvLine(this.headerColumns.map(cell)), csvLine(this.columns.map(cell))).catch((err: Error) => {
        throw new InputError(catalogText('error.outputFile.writeFailed', { path: this.path, cause: err.message }));
      });
    }
  }

  /** Members of `rows` that are not columns yet become columns after the others. */
  private addColumns(rows: ReadonlyArray<Record<string, unknown>>): void {
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
    if (added.length === 0) return;
    this.headerColumns ??= [...columns];
    columns.push(...added);
  }

  /** Stops writing, leaving what was written. */
  abort(): void {
    this.stream.destroy();
  }

  private check(): void {
    if (this.failure) throw new InputError(catalogText('error.outputFile.writeFailed', { path: this.path, cause: this.failure.message }));
  }
}

function cellWriter(cells: CsvCells): (text: string) => string {
  return cells === 'raw' ? (text) => text : spreadsheetText;
}

/**
 * Every member of the rows, in the order the rows give them: a member first seen in a later row goes
 * after the member it follows there (`city` after `note`, ahead of the columns every row has after it).
 */
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

/**
 * Writes the file again with another header line, in a file beside it that then replaces it (so that
 * a failure halfway leaves the old file whole).
 */
async function replaceHeader(path: string, oldHeader: string, newHeader: string): Promise<void> {
  const temporary = `${path}.${process.pid}.header`;
  try {
    const target = createWriteStream(temporary, { flags: 'w' });
    target.write(newHeader);
    await pipeline(createReadStream(path, { start: Buffer.byteLength(oldHeader) }), target);
    const handle = await fsPromises.open(temporary, 'r+');
    await handle.datasync().finally(() => handle.close());
    await fsPromises.rename(temporary, path);
  } catch (err) {
    await fsPromises.rm(temporary, { force: true });
    throw err;
  }
}

/**
 * The state a resumed file goes on from. A run that stopped between rewriting the header (`close`)
 * and forgetting its state finds the new header line in place of the old: its rows are all there,
 * shifted by the difference, and the header needs no rewriting.
 */
async function resumedState(path: string, state: RowFileState, cell: (text: string) => string): Promise<RowFileState> {
  if (!state.headerColumns || !state.columns) return state;
  const oldHeader = Buffer.from(csvLine(state.headerColumns.map(cell)));
  const newHeader = Buffer.from(csvLine(state.columns.map(cell)));
  const handle = await fsPromises.open(path, 'r');
  const start = Buffer.alloc(newHeader.length);
  await handle.read(start, 0, newHeader.length, 0).finally(() => handle.close());
  if (!start.equals(newHeader)) return state;
  return { bytes: state.bytes + newHeader.length - oldHeader.length, columns: state.columns };
}

function csvText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
