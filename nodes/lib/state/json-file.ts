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
  /** The wait of a lone line: one that came more than `maxWaitMs` after the line before it. */
  waitMs: number;
  /** The wait of a line that came within this time of the line before it (lines keep arriving). */
  maxWaitMs: number;
  lines: number;
}

/**
 * A file of JSON lines that grows by appending, for state that changes at request rate: `append()`
 * queues a line and resolves once it is on disk (rejects when it could not be written); writes never
 * overlap, and each writes every line queued meanwhile with one write and one fdatasync, so a burst
 * costs one disk sync, not one per line, and no write grows with the state. The file is rewritten
 * from `snapshot()` (atomically) on the first write after opening, after a write that failed, and
 * whenever it holds more than twice `liveCount()` lines: the lines queued then are in the snapshot
 * already. With `group`, a write starts once `lines` are queued or the first queued line has waited
 * its time: `waitMs` when it came alone, `maxWaitMs` when it came within that time of the line before
 * (group commit: one disk sync for many lines even when they come one by one, and a lone line goes at
 * once); lines queued during a write wait out their time from the first of them, as a group of their own.
 */
export class JournalFile {
  private queued: Array<{ line: string; written: () => void; failed: (err: Error) => void }> = [];
  private writing: Promise<void> | undefined;
  private waiting: unknown;
  /** Writes made to the file (appends and rewrites), for measurements. */
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
    /** The time a group's waits go by. */
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
