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
 * The one instance kept for `file` in this process, made by `create` the first time: every node using
 * the same file shares it, and a redeployed node finds the state of the one it replaces. Without a
 * file (no user directory) the instance is shared under the empty key and lives in memory only.
 */
export function onePerFile<T>(open: Map<string, T>, file: string | undefined, create: () => T): T {
  const key = file ?? '';
  let instance = open.get(key);
  if (!instance) {
    instance = create();
    open.set(key, instance);
  }
  return instance;
}

/** The least time between the starts of two writes of a CoalescedWriter's file. */
const COALESCED_WRITE_INTERVAL_MS = 1000;

/**
 * Keeps a file in step with a value that changes often, at a cost that does not grow with the rate of
 * change: `changed()` asks for a write (no more than a flag when one is asked for already); writes
 * never overlap, start at most once per `intervalMs`, and each writes the value as it is then, so
 * changes made during a write or the interval share the next one. What a crash can lose is the changes
 * of the last interval plus one write's time. `flushed()` writes what is pending at once (not waiting
 * out the interval) and resolves once everything asked for is on disk.
 */
export class CoalescedWriter {
  private writing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private dirty = false;
  private lastStart = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly file: string,
    private readonly current: () => unknown,
    private readonly onError: (err: Error) => void,
    private readonly intervalMs = COALESCED_WRITE_INTERVAL_MS,
  ) {}

  changed(): void {
    if (this.dirty) return;
    this.dirty = true;
    this.schedule();
  }

  async flushed(): Promise<void> {
    for (;;) {
      if (this.timer) {
        clearTimeout(this.timer);
        this.timer = undefined;
        this.writing = this.write();
      }
      if (!this.writing) return;
      await this.writing;
    }
  }

  /** Starts the next write now, or once the interval since the last one has passed. */
  private schedule(): void {
    if (this.writing || this.timer) return;
    const wait = this.lastStart + this.intervalMs - Date.now();
    if (wait <= 0) {
      this.writing = this.write();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.writing = this.write();
    }, wait);
    // Pending counts do not keep a process alive: closing flushes them (and a crash may lose them).
    this.timer.unref();
  }

  private async write(): Promise<void> {
    this.lastStart = Date.now();
    this.dirty = false;
    try {
      await writeAtomically(this.file, JSON.stringify(this.current()));
    } catch (err) {
      this.onError(err instanceof Error ? err : new Error(String(err)));
    }
    this.writing = undefined;
    if (this.dirty) this.schedule();
  }
}

/** A journal is rewritten from the state once it holds this many lines and more than twice the live entries. */
const JOURNAL_COMPACT_MIN_LINES = 1000;

/** Told what `readJsonLines` could not read: the file (other than its absence), or some of its lines. */
interface UnreadLines {
  notRead?: (err: unknown) => void;
  skipped?: (count: number) => void;
}

/** The JSON values in a file of JSON lines, skipping lines that cannot be read (a write cut short by a crash). */
export function readJsonLines(file: string, unread?: UnreadLines): unknown[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') unread?.notRead?.(err);
    return [];
  }
  const values: unknown[] = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      values.push(JSON.parse(line) as unknown);
    } catch {
      // A torn last line: what it would have said was not acknowledged either.
      skipped++;
    }
  }
  if (skipped > 0) unread?.skipped?.(skipped);
  return values;
}

/** How long a line waits for others to share its write, and how many lines start a write at once (see JournalFile). */
interface GroupCommit {
  waitMs: number;
  lines: number;
}

/**
 * A file of JSON lines that grows by appending, for state that changes at request rate: `append()`
 * queues a line and resolves once it is on disk (rejects when it could not be written); writes never
 * overlap, and each writes every line queued meanwhile with one write and one fdatasync, so a burst
 * costs one disk sync, not one per line, and no write grows with the state. The file is rewritten
 * from `snapshot()` (atomically) on the first write after opening, after a write that failed, and
 * whenever it holds more than twice `liveCount()` lines: the lines queued then are in the snapshot
 * already. With `group`, a write starts only once a line has waited `waitMs` or `lines` are queued,
 * whichever comes first (group commit: one disk sync for many lines even when they come one by one).
 */
export class JournalFile {
  private queued: Array<{ line: string; written: () => void; failed: (err: Error) => void }> = [];
  private writing: Promise<void> | undefined;
  private waiting: NodeJS.Timeout | undefined;
  /** Writes made to the file (appends and rewrites), for measurements. */
  writes = 0;
  private handle: fs.promises.FileHandle | undefined;
  /** The file last written (device and inode), while no write has failed since. */
  private written: { dev: number; ino: number } | undefined;
  private lines = 0;
  private compactFirst = true;

  constructor(
    private readonly file: string,
    private readonly snapshot: () => unknown[],
    private readonly liveCount: () => number,
    /** Checked before each write: false when the file is no longer this process's to write (a lock lost), which fails the write. */
    private readonly mayWrite: () => boolean = () => true,
    private readonly group?: GroupCommit,
  ) {}

  append(entry: unknown): Promise<void> {
    return new Promise((written, failed) => {
      this.queued.push({ line: JSON.stringify(entry), written, failed });
      if (this.writing) return;
      if (!this.group || this.queued.length >= this.group.lines) this.startDrain();
      else this.waiting ??= setTimeout(() => this.startDrain(), this.group.waitMs);
    });
  }

  private startDrain(): void {
    clearTimeout(this.waiting);
    this.waiting = undefined;
    if (this.queued.length > 0) this.writing ??= this.drain();
  }

  /**
   * Whether the file last written is still the one at the path (one stat): not when another process
   * or a person replaced or removed it since (what was written there is not in the file read next).
   */
  current(): boolean {
    if (!this.written) return true;
    try {
      const { dev, ino } = fs.statSync(this.file);
      return dev === this.written.dev && ino === this.written.ino;
    } catch {
      return false;
    }
  }

  /** Writes what is queued, then closes the file (the next line opens it again). */
  async close(): Promise<void> {
    this.startDrain();
    await this.writing;
    await this.handle?.close();
    this.handle = undefined;
  }

  /** The next write rewrites the file whole from the state (another process wrote it meanwhile). */
  rewrite(): void {
    this.compactFirst = true;
  }

  private async drain(): Promise<void> {
    while (this.queued.length > 0) {
      const batch = this.queued;
      this.queued = [];
      try {
        if (!this.mayWrite()) throw new Error(`${this.file} is no longer this process's to write`);
        // Replaced since the last write (by another process or a person): written whole, not added to the file that was there.
        if (!this.current()) this.compactFirst = true;
        if (this.compactFirst || (this.lines >= JOURNAL_COMPACT_MIN_LINES && this.lines > 2 * this.liveCount())) {
          await this.handle?.close();
          this.handle = undefined;
          const entries = this.snapshot();
          await writeAtomically(this.file, entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
          this.written = identity(await fs.promises.stat(this.file));
          this.lines = entries.length;
          this.compactFirst = false;
        } else {
          this.handle ??= await fs.promises.open(this.file, 'a', 0o600);
          await this.handle.appendFile(`${batch.map((queued) => queued.line).join('\n')}\n`, 'utf8');
          await this.handle.datasync();
          this.lines += batch.length;
        }
        this.writes++;
        for (const queued of batch) queued.written();
      } catch (err) {
        for (const queued of batch) queued.failed(err instanceof Error ? err : new Error(String(err)));
        await this.handle?.close().catch(() => undefined);
        this.handle = undefined;
        this.written = undefined;
        // Written whole from the state at the next change, rather than with a line missing.
        this.compactFirst = true;
      }
    }
    this.writing = undefined;
  }
}

function identity(stat: fs.Stats): { dev: number; ino: number } {
  return { dev: stat.dev, ino: stat.ino };
}
