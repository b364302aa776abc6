import { createWriteStream, fdatasync, promises as fsPromises, WriteStream } from 'node:fs';
import { once } from 'node:events';
import { csvLine, spreadsheetText } from './csv';
import { InputError, describeCause } from '../util/errors';
import { catalogText } from '../util/catalog-text';

/** How far a file was written and made durable: where a resumed run truncates it to and goes on from. */
export interface RowFileState {
  bytes: number;
  /** The CSV columns, fixed by the first row written. */
  columns?: string[];
}

/** How CSV cells are written: `text` as a spreadsheet shows them (no formula runs; see `spreadsheetText`), `raw` as they are. */
export type CsvCells = 'text' | 'raw';

/**
 * Rows written to a file as they come: CSV (a name ending in .csv; the columns are those of the
 * first row; cells as `CsvCells` says) or JSON lines (any other name). Each write waits until its rows are in the file, so a
 * fast producer is held back instead of filling memory, and the written length is known.
 */
export class RowFile {
  private columns: string[] | undefined;
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
    if (resumeFrom) {
      const { size } = await fsPromises.stat(path).catch((err: unknown) => {
        throw new InputError(catalogText('error.outputFile.notResumable', { path, cause: describeCause(err) }));
      });
      if (size < resumeFrom.bytes) throw new InputError(catalogText('error.outputFile.shorter', { path, size, bytes: resumeFrom.bytes }));
      await fsPromises.truncate(path, resumeFrom.bytes);
    }
    const stream = createWriteStream(path, { flags: resumeFrom ? 'a' : 'w' });
    let fd: number;
    try {
      [fd] = (await once(stream, 'open')) as [number];
    } catch (err) {
      throw new InputError(catalogText('error.outputFile.notWritable', { path, cause: describeCause(err) }));
    }
    const file = new RowFile(path, stream, fd, /\.csv$/i.test(path) ? 'csv' : 'jsonl', cells);
    file.bytes = resumeFrom?.bytes ?? 0;
    file.columns = resumeFrom?.columns;
    return file;
  }

  async write(rows: ReadonlyArray<Record<string, unknown>>): Promise<void> {
    if (rows.length === 0) return;
    let chunk = '';
    if (this.format === 'jsonl') {
      for (const row of rows) chunk += `${JSON.stringify(row)}\n`;
    } else {
      const cell = this.cells === 'raw' ? (text: string) => text : spreadsheetText;
      if (!this.columns) {
        this.columns = Object.keys(rows[0]);
        chunk += csvLine(this.columns.map(cell));
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
    return { bytes: this.bytes, ...(this.columns ? { columns: this.columns } : {}) };
  }

  async close(): Promise<void> {
    this.check();
    this.stream.end();
    await once(this.stream, 'close');
    this.check();
  }

  /** Stops writing, leaving what was written. */
  abort(): void {
    this.stream.destroy();
  }

  private check(): void {
    if (this.failure) throw new InputError(catalogText('error.outputFile.writeFailed', { path: this.path, cause: this.failure.message }));
  }
}

function csvText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
