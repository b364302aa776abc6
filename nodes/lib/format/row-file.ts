import { createWriteStream, WriteStream } from 'node:fs';
import { once } from 'node:events';
import { csvLine } from './csv';
import { describeCause, invalidInput } from '../util/errors';
import { message } from '../util/messages';

/**
 * Rows written to a file as they come: CSV (a name ending in .csv; the columns are those of the
 * first row) or JSON lines (any other name). Each write waits while the disk is behind, so a fast
 * producer is held back instead of filling memory.
 */
export class RowFile {
  private columns: string[] | undefined;
  private failure: Error | undefined;

  private constructor(
    readonly path: string,
    private readonly stream: WriteStream,
    private readonly format: 'csv' | 'jsonl',
  ) {
    stream.on('error', (err) => {
      this.failure = err;
    });
  }

  /** Opens (creates or truncates) the file; an unwritable path is an INVALID_INPUT error before any row. */
  static async open(path: string): Promise<RowFile> {
    if (path.trim() === '') throw invalidInput(message('error.outputFile.emptyPath'));
    const stream = createWriteStream(path);
    try {
      await once(stream, 'open');
    } catch (err) {
      throw invalidInput(message('error.outputFile.notWritable', { path, cause: describeCause(err) }));
    }
    return new RowFile(path, stream, /\.csv$/i.test(path) ? 'csv' : 'jsonl');
  }

  async write(rows: ReadonlyArray<Record<string, unknown>>): Promise<void> {
    if (rows.length === 0) return;
    let chunk = '';
    if (this.format === 'jsonl') {
      for (const row of rows) chunk += `${JSON.stringify(row)}\n`;
    } else {
      if (!this.columns) {
        this.columns = Object.keys(rows[0]);
        chunk += csvLine(this.columns);
      }
      const columns = this.columns;
      for (const row of rows) chunk += csvLine(columns.map((column) => csvText(row[column])));
    }
    this.check();
    if (!this.stream.write(chunk)) await Promise.race([once(this.stream, 'drain'), once(this.stream, 'error')]);
    this.check();
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
    if (this.failure) throw invalidInput(message('error.outputFile.writeFailed', { path: this.path, cause: this.failure.message }));
  }
}

function csvText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
