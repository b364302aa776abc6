import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Clock, SYSTEM_CLOCK } from '../util/async';
import { isRunning } from '../util/files';

/** Who holds a lock: a process on a machine. */
export interface LockHolder {
  pid: number;
  host: string;
}

interface LockContent extends LockHolder {
  token: string;
}

/** A holder refreshes its lock file's time this often, and a lock not refreshed for `STALE_MS` is free. */
const HEARTBEAT_MS = 10_000;
const STALE_MS = 30_000;

/** The locks this process holds, released when it exits (a SIGKILL leaves them: they are then free by their process or their age). */
const held = new Set<FileLock>();
let exitHook = false;

/**
 * One process at a time for a file that several processes could write (two Node-REDs started on one
 * user directory): the lock file holds the holder's pid, host and a token of its own, written whole
 * (a temporary file linked into place, so no one reads half a lock). A lock is free when its process
 * is gone (same host, pid not running or this very process's pid) or when its holder has not
 * refreshed it for 30 s (any host: a container recreated with another name, a shared volume); the
 * holder refreshes it every 10 s and finds out there when another process has taken it over.
 */
export class FileLock {
  private readonly token = randomUUID();
  private timer: unknown;
  private holding = false;

  constructor(
    private readonly file: string,
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  get holds(): boolean {
    return this.holding;
  }

  /**
   * Takes the lock unless a live process holds it, and returns that process then. A few small
   * synchronous file operations; throws when the lock file cannot be written at all.
   */
  acquire(): LockHolder | undefined {
    if (this.holding) return undefined;
    const now = this.clock.now();
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    const mine: LockContent = { pid: process.pid, host: os.hostname(), token: this.token };
    const temporary = `${this.file}.${process.pid}.${this.token}.tmp`;
    fs.writeFileSync(temporary, JSON.stringify(mine), { mode: 0o600 });
    try {
      // Two attempts: the second after removing a lock found free.
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          createWhole(temporary, this.file, JSON.stringify(mine));
          this.hold();
          return undefined;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        }
        const holder = liveHolder(this.file, now);
        if (holder) return holder;
        fs.rmSync(this.file, { force: true });
      }
      const holder = liveHolder(this.file, now);
      if (holder) return holder;
      throw new Error(`${this.file} is being taken by another process`);
    } finally {
      fs.rmSync(temporary, { force: true });
    }
  }

  /**
   * Whether this lock is still held, by the file at its path now (one small read): it names this
   * lock's token, so no other process has put its own there after finding this one stale (a holder
   * paused for longer than 30 s learns it here before its heartbeat runs). Stops holding when not.
   */
  confirm(): boolean {
    if (!this.holding) return false;
    if (readLock(this.file)?.token === this.token) return true;
    this.stop();
    return false;
  }

  /** Gives the lock up (its file removed while it is still this lock's). */
  release(): void {
    if (!this.holding) return;
    this.stop();
    if (readLock(this.file)?.token === this.token) fs.rmSync(this.file, { force: true });
  }

  private hold(): void {
    this.holding = true;
    held.add(this);
    if (!exitHook) {
      exitHook = true;
      process.once('exit', () => {
        for (const lock of held) lock.release();
      });
    }
    this.beat();
  }

  private beat(): void {
    this.timer = this.clock.setTimer(() => {
      this.timer = undefined;
      this.refresh().then(
        () => {
          if (this.holding && this.timer === undefined) this.beat();
        },
        () => undefined,
      );
    }, HEARTBEAT_MS);
    // The lock lives as long as the process, and keeps nothing running.
    (this.timer as { unref?: () => void }).unref?.();
  }

  private stop(): void {
    this.holding = false;
    held.delete(this);
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
  }

  /** Still ours: refreshed; taken over meanwhile (or gone): no longer held. */
  private async refresh(): Promise<void> {
    try {
      const text = await fs.promises.readFile(this.file, 'utf8');
      if (parseLock(text)?.token !== this.token) throw new Error('taken over');
      const now = this.clock.now() / 1000;
      await fs.promises.utimes(this.file, now, now);
    } catch {
      this.stop();
    }
  }
}

/** Creates `file` with `text` unless it exists (EEXIST): linked from a written file, or written in place where a file system has no hard links. */
function createWhole(written: string, file: string, text: string): void {
  try {
    fs.linkSync(written, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw err;
    fs.writeFileSync(file, text, { flag: 'wx', mode: 0o600 });
  }
}

function parseLock(text: string): LockContent | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockContent>;
    if (typeof value.pid === 'number' && typeof value.host === 'string' && typeof value.token === 'string') return value as LockContent;
  } catch {
    // Not a lock of ours.
  }
  return undefined;
}

function readLock(file: string): LockContent | undefined {
  try {
    return parseLock(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/** The process holding the lock file, unless it is free. */
function liveHolder(file: string, now: number): LockHolder | undefined {
  let refreshedAt: number;
  try {
    refreshedAt = fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
  if (now - refreshedAt >= STALE_MS) return undefined;
  const lock = readLock(file);
  // Not a lock (no holder named): nothing to wait for.
  if (!lock) return undefined;
  if (lock.host === os.hostname() && (lock.pid === process.pid || !isRunning(lock.pid))) return undefined;
  return { pid: lock.pid, host: lock.host };
}
