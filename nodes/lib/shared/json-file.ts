import fs from 'node:fs';
import { writeAtomically } from '../util/files';

/** The JSON in `file`, or undefined when there is none or it cannot be read. */
export function readJson(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Keeps a file in step with a value that changes often: `changed()` asks for a write; writes never
 * overlap and changes made during one are written by the next, so a burst of changes costs two
 * writes, not one per change. `flushed()` resolves once everything asked for is on disk.
 */
export class CoalescedWriter {
  private writing: Promise<void> | undefined;
  private dirty = false;

  constructor(
    private readonly file: string,
    private readonly current: () => unknown,
    private readonly onError: (err: Error) => void,
  ) {}

  changed(): void {
    this.dirty = true;
    if (!this.writing) this.writing = this.drain();
  }

  async flushed(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async drain(): Promise<void> {
    while (this.dirty) {
      this.dirty = false;
      try {
        await writeAtomically(this.file, JSON.stringify(this.current()));
      } catch (err) {
        this.onError(err instanceof Error ? err : new Error(String(err)));
      }
    }
    this.writing = undefined;
  }
}
