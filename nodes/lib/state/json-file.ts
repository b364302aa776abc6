import fs from 'node:fs';
import { writeAtomically } from '../util/files';
import { Clock, SYSTEM_CLOCK } from '../util/async';

/** The JSON in `file`, or undefined when there is none or it cannot be read. */
export function readJson(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** The one instance kept for `file` in this process: every node using the file shares it, so a redeployed node finds its state. */
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
 * Keeps a file in step with a value that changes often, at a cost that does not grow with the rate of change: writes
 * never overlap and start at most once per `intervalMs`, so a crash can lose the last interval's changes. `flushed()`
 * writes what is pending at once and resolves once everything asked for is on disk.
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
  /** The wait of a lone line: one that came more than `maxWaitMs` after the line before it. */
  waitMs: number;
  /** The wait of a line that came within this time of the line before it (lines keep arriving). */
  maxWaitMs: number;
  lines: number;
}

/**
 * A file of JSON lines that grows by appending, for state that changes at request rate: `append()` resolves once its line
 * is on disk (rejects when it could not be written); each write takes every line queued meanwhile with one fdatasync. The
 * file is rewritten atomically from `snapshot()` on the first write, after a failed one, and once it holds more than
 * twice `liveCount()` lines. With `group`, a write waits for more lines (group commit), a lone line hardly at all.
 */
export class JournalFile {
  private queued: Array<{ line: string; written: () => void; failed: (err: Error) => void }> = [];
  private writing: Promise<void> | undefined;
  private waiting: unknown;
  writes = 0;
  private handle: fs.promises.FileHandle | undefined;
  /** The file last written (device and inode), while no write has failed since. */
  private written: { dev: number; ino: number } | undefined;
  private lines = 0;
  private compactFirst = true;
  /** When the last line was queued, and when the first line of the queue was (see GroupCommit). */
  private lastQueuedAt = Number.NEGATIVE_INFINITY;
  private firstQueuedAt = 0;
  /** Whether the first line of the queue came within `maxWaitMs` of the line before it. */
  private following = false;

  constructor(
    private readonly file: string,
    private readonly snapshot: () => unknown[],
    private readonly liveCount: () => number,
    /** Checked before each write: false when the file is no longer this process's to write (a lock lost), which fails the write. */
    private readonly mayWrite: () => boolean = () => true,
    private readonly group?: GroupCommit,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  append(entry: unknown): Promise<void> {
    return new Promise((written, failed) => {
      const now = this.clock.now();
      if (this.queued.length === 0) {
        this.firstQueuedAt = now;
        this.following = this.group !== undefined && now - this.lastQueuedAt < this.group.maxWaitMs;
      }
      this.lastQueuedAt = now;
      this.queued.push({ line: JSON.stringify(entry), written, failed });
      this.schedule();
    });
  }

  /** Starts a write now (no group, or a full one), or once the first queued line has waited its time. */
  private schedule(): void {
    const { group } = this;
    if (this.writing || this.queued.length === 0) return;
    if (!group || this.queued.length >= group.lines) return this.startDrain();
    const waitMs = (this.following ? group.maxWaitMs : group.waitMs) - (this.clock.now() - this.firstQueuedAt);
    this.waiting ??= this.clock.setTimer(() => this.startDrain(), Math.max(0, waitMs));
  }

  private startDrain(): void {
    if (this.waiting !== undefined) this.clock.clearTimer(this.waiting);
    this.waiting = undefined;
    if (this.queued.length > 0) this.writing ??= this.drain();
  }

  /** Whether the file last written is still the one at the path: not when someone replaced or removed it since. */
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
    while (this.queued.length > 0 || this.writing) {
      this.startDrain();
      await this.writing;
    }
    await this.handle?.close();
    this.handle = undefined;
  }

  /** The next write rewrites the file whole from the state (another process wrote it meanwhile). */
  rewrite(): void {
    this.compactFirst = true;
  }

  /** Writes the queued lines, and again those queued meanwhile while they fill a group; the rest wait (`schedule`). */
  private async drain(): Promise<void> {
    for (let first = true; this.queued.length > 0 && (first || !this.group || this.queued.length >= this.group.lines); first = false) {
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
    this.schedule();
  }
}

function identity(stat: fs.Stats): { dev: number; ino: number } {
  return { dev: stat.dev, ino: stat.ino };
}
