import { ReplayEntry, timestampToMs } from './signature';
import { ReplayMemory, compactKey } from './replay-memory';
import { FileLock, LockHolder } from '../state/file-lock';
import { JournalFile, onePerFile, readJsonLines } from '../state/json-file';
import type { SharedState } from '../state/shared-state';

export type { ReplayEntry } from './signature';

/**
 * The lines of the replay journal: `[scope, key, t, expiresAt]` an accepted request of a path, kept until `expiresAt`;
 * `{scope, t, expiresAt, keys}` the requests of one time bucket (a whole rewrite); `[scope, key, 0]` forgets one not
 * delivered after all; `{scope, since}` vouches that every request delivered with a t after `since` is in the journal;
 * `[scope, key, expiresAt]` is a line of an earlier version (its key is `<t>:<digest>`).
 */
type EntryLine = [scope: string, key: string, t: number, expiresAt: number];
type ForgetLine = [scope: string, key: string, zero: 0];
type LegacyLine = [scope: string, key: string, expiresAt: number];
interface SinceLine {
  scope: string;
  since: number;
}
interface BucketLine {
  scope: string;
  t: number;
  expiresAt: number;
  keys: string[];
}
type JournalLine = EntryLine | ForgetLine | SinceLine | BucketLine;

/**
 * Accepted requests a path holds at most unless the setting `svcWebhookReplayCap` says otherwise (see docs/decisions.md);
 * all paths of a process together hold twice the cap. Past either, new requests get a 503: nothing is forgotten early.
 */
export const DEFAULT_REPLAY_CAP = 1_500_000;

/** Why a request cannot be recorded: the journal cannot be written, or another process on the same user directory holds it. */
export type Unrecorded = { problem: 'not written'; cause: string } | { problem: 'in use'; holder: LockHolder };

/**
 * What became of a signed request that passed every check: `delivered`, recorded (on disk, and in Redis unless it is
 * unavailable) before `deliver` ran; `duplicate`, delivered before, here or by another instance: acknowledged, nothing
 * sent; `forgotten`, older than the path's record vouches for (ReplayMemory): refused as stale; `withdrawn`, `deliver`
 * declined, so it is forgotten again and a retry passes; `full`, no room for a new entry; `unrecorded`, it could not be
 * recorded. Nothing is delivered unless `delivered`.
 */
type Admission = { outcome: 'delivered' | 'duplicate' | 'forgotten' | 'withdrawn' | 'full' } | ({ outcome: 'unrecorded' } & Unrecorded);

/**
 * The delivered requests of every webhook path in this process, one ReplayMemory per path, kept in a journal in
 * Node-RED's user directory so that a copy is recognised after a redeploy, a secret rotation (the key holds no secret)
 * and a restart. One per file in a process; one process per file: a lock (`<file>.lock`) keeps a second Node-RED on
 * the same user directory from writing it until the lock is free. The holder confirms the lock and the journal's file
 * after writing each record: a holder whose lock another process took over acknowledges nothing more.
 */
export class ReplayFile {
  private static readonly open = new Map<string, ReplayFile>();
  private readonly memories = new Map<string, ReplayMemory>();
  /** Entries being recorded and delivered, by scope and key: a copy arriving meanwhile gets their outcome. */
  private readonly pending = new Map<string, Promise<Admission>>();
  private readonly journal: JournalFile | undefined;
  private readonly lock: FileLock | undefined;
  private refusedFull = 0;

  /** Without a file (no user directory, as in some embedded runtimes), the records live in memory only. */
  static at(file: string | undefined): ReplayFile {
    return onePerFile(ReplayFile.open, file, () => new ReplayFile(file));
  }

  private constructor(private readonly file: string | undefined) {
    if (!file) return;
    this.load(file);
    this.lock = new FileLock(`${file}.lock`);
    this.journal = new JournalFile(
      file,
      () => this.snapshot(),
      () => this.entries,
      // A holder that lost the lock writes nothing: not even the journal that replaced its own.
      () => this.lock?.confirm() ?? true,
    );
  }

  /** Why nothing can be recorded now, if anything; takes a free lock after reading what its last holder wrote. */
  ready(): Unrecorded | undefined {
    if (!this.file || !this.lock || this.lock.confirm()) return undefined;
    let holder: LockHolder | undefined;
    try {
      holder = this.lock.acquire();
    } catch (err) {
      return { problem: 'not written', cause: err instanceof Error ? err.message : String(err) };
    }
    if (holder) return { problem: 'in use', holder };
    this.load(this.file);
    this.journal?.rewrite();
    return undefined;
  }

  /** Entries held by every path, and new requests refused for room since the process started (`full`). */
  stats(): { entries: number; refusedFull: number } {
    return { entries: this.entries, refusedFull: this.refusedFull };
  }

  /** Whether a new request cannot be taken (the path holds `cap` entries, or all paths twice that); counted as a refusal. */
  full(scope: string, now: number, cap: number): boolean {
    for (const memory of this.memories.values()) memory.sweep(now);
    if (this.memory(scope).size < cap && this.entries < 2 * cap) return false;
    this.refusedFull++;
    return true;
  }

  /** Whether this request was recorded (`recorded`), not (`absent`), cannot be told (`forgotten`), or the outcome of its recording still under way. */
  lookup(scope: string, entry: ReplayEntry): 'recorded' | 'absent' | 'forgotten' | Promise<Admission> {
    const pending = this.pending.get(pendingKey(scope, entry.key));
    if (pending) return pending;
    const memory = this.memories.get(scope);
    if (!memory) return 'absent';
    if (memory.has(entry.key, entry.timestampMs) || memory.has(entry.legacyKey, entry.timestampMs)) return 'recorded';
    return memory.vouchesFor(entry.timestampMs) ? 'absent' : 'forgotten';
  }

  /** Records an entry in the same turn (a copy arriving meanwhile waits for `outcome`); resolves once it is on disk, or with why not. */
  async record(scope: string, entry: ReplayEntry, now: number, outcome: Promise<Admission>): Promise<Unrecorded | undefined> {
    this.memory(scope).add(entry.key, entry.timestampMs, entry.expiresAt, now);
    const id = pendingKey(scope, entry.key);
    this.pending.set(id, outcome);
    outcome.then(
      () => this.pending.delete(id),
      () => undefined,
    );
    if (!this.journal) return undefined;
    // Twice at most: a journal found replaced (or a lock found free again and retaken) is written whole the second time.
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.journal.append([scope, compactKey(entry.key), entry.timestampMs, entry.expiresAt] satisfies EntryLine);
      } catch (err) {
        const lost = this.lock && !this.lock.holds ? this.ready() : undefined;
        return lost ?? { problem: 'not written', cause: err instanceof Error ? err.message : String(err) };
      }
      const held = this.stillHeld();
      if (held !== 'again') return held;
    }
    return { problem: 'not written', cause: `${this.file} was replaced while it was written` };
  }

  /** Forgets an entry; a write that fails is left to the next one, which rewrites the journal whole. Nothing is written without the lock. */
  async forget(scope: string, key: string, t: number): Promise<void> {
    if (!this.memories.get(scope)?.withdraw(key, t)) return;
    if (this.lock && !this.lock.holds) return;
    await this.journal?.append([scope, key, 0] satisfies ForgetLine).catch(() => undefined);
  }

  /**
   * After a record was written, before it is acknowledged: undefined while the lock and the journal's file are still
   * this process's; `again` when the record must be written again, whole; else why it cannot be recorded.
   */
  private stillHeld(): Unrecorded | 'again' | undefined {
    if (!this.lock || !this.journal) return undefined;
    if (!this.lock.confirm()) return this.ready() ?? 'again';
    if (this.journal.current()) return undefined;
    this.journal.rewrite();
    return 'again';
  }

  private load(file: string): void {
    const now = Date.now();
    for (const line of readJsonLines(file)) {
      if (!Array.isArray(line)) {
        const { scope, since, t, expiresAt, keys } = (line ?? {}) as Partial<SinceLine & BucketLine>;
        if (typeof scope !== 'string') continue;
        if (typeof since === 'number') this.memory(scope).forgotUpTo(since);
        if (typeof t === 'number' && typeof expiresAt === 'number' && Array.isArray(keys)) {
          const memory = this.memory(scope);
          for (const key of keys) if (typeof key === 'string') memory.add(key, t, expiresAt, now);
        }
        continue;
      }
      const [scope, key] = line as unknown[];
      if (typeof scope !== 'string' || typeof key !== 'string' || !line.slice(2).every((value) => typeof value === 'number')) continue;
      if (line.length === 4) {
        const [, , t, expiresAt] = line as EntryLine;
        this.memory(scope).add(key, t, expiresAt, now);
      } else if (line.length === 3 && line[2] === 0) {
        this.memories.get(scope)?.withdraw(key, timestampToMs(key.slice(0, key.indexOf(':'))));
      } else if (line.length === 3) {
        this.loadLegacy(line as LegacyLine, now);
      }
    }
  }

  /** A line of an earlier version, which kept no `since`: it vouches for the requests of its window before now. */
  private loadLegacy([scope, key, expiresAt]: LegacyLine, now: number): void {
    const t = timestampToMs(key.slice(0, key.indexOf(':')));
    if (!Number.isFinite(t)) return;
    const memory = this.memory(scope);
    memory.forgotUpTo(now - (expiresAt - t));
    if (expiresAt >= now) memory.add(key, t, expiresAt, now);
  }

  private memory(scope: string): ReplayMemory {
    let memory = this.memories.get(scope);
    if (!memory) {
      memory = new ReplayMemory();
      this.memories.set(scope, memory);
    }
    return memory;
  }

  private get entries(): number {
    let entries = 0;
    for (const memory of this.memories.values()) entries += memory.size;
    return entries;
  }

  private snapshot(): JournalLine[] {
    return [...this.memories].flatMap(([scope, memory]): JournalLine[] => [
      ...(Number.isFinite(memory.since) ? [{ scope, since: memory.since }] : []),
      ...memory.snapshot().map((bucket): BucketLine => ({ scope, ...bucket })),
    ]);
  }
}

function pendingKey(scope: string, key: string): string {
  return `${scope}\n${key}`;
}

/** What a copy that arrived while the original was being recorded gets: the original's outcome, as a copy. */
function asCopy(original: Admission): Admission {
  return original.outcome === 'delivered' ? { outcome: 'duplicate' } : original;
}

/**
 * Admits the signed requests of one webhook path: each (t, body) is delivered once, and only once it is recorded until
 * its window has passed, on disk and, when the path's svc-config has Redis, in Redis for every instance. Both keep the
 * `since` of ReplayMemory, so no tolerance set later lets a forgotten request through. The scope is the path.
 */
export class ReplayGuard {
  constructor(
    private readonly local: ReplayFile,
    private readonly scope: string,
    private readonly shared?: SharedState,
    /** Entries the path holds at most (DEFAULT_REPLAY_CAP), in this process and in Redis. */
    private readonly cap = DEFAULT_REPLAY_CAP,
  ) {}

  /** `deliver` sends the message, or returns false when it cannot (the node is closing); see `Admission`. */
  async admit(entry: ReplayEntry, deliver: () => boolean, now = Date.now()): Promise<Admission> {
    // The journal first: taking it over reads what the process that held it recorded.
    const unready = this.local.ready();
    const seen = this.local.lookup(this.scope, entry);
    if (seen === 'recorded') return { outcome: 'duplicate' };
    if (seen === 'forgotten') return { outcome: 'forgotten' };
    if (seen !== 'absent') return asCopy(await seen);
    if (unready) return { outcome: 'unrecorded', ...unready };
    if (this.local.full(this.scope, now, this.cap)) return { outcome: 'full' };
    let settle: (admission: Admission) => void = () => undefined;
    const outcome = new Promise<Admission>((resolve) => (settle = resolve));
    const written = this.local.record(this.scope, entry, now, outcome);
    let admission: Admission = { outcome: 'withdrawn' };
    try {
      admission = await this.deliverRecorded(entry, written, deliver);
      return admission;
    } finally {
      settle(admission);
    }
  }

  private async deliverRecorded(entry: ReplayEntry, written: Promise<Unrecorded | undefined>, deliver: () => boolean): Promise<Admission> {
    const unrecorded = await written;
    if (unrecorded) {
      await this.local.forget(this.scope, entry.key, entry.timestampMs);
      return { outcome: 'unrecorded', ...unrecorded };
    }
    if (this.shared) {
      const claim = await this.shared.withShared(
        // Held by a replica before the request is delivered: a failover cannot forget it and let a replay through.
        async (redis) => {
          const [claimed, legacy] = await Promise.all([
            redis.claimReplay(this.scope, sharedMember(entry), entry.timestampMs, entry.expiresAt, Date.now(), this.cap, `${entry.timestampMs} ${entry.key}`),
            redis.get(`replay:${this.scope}:${entry.legacyKey}`),
          ]);
          await redis.replicated();
          return legacy === undefined ? claimed : 'duplicate';
        },
        () => 'claimed' as const,
      );
      // Claimed by another instance, which recorded it on its disk first and delivers it.
      if (claim === 'duplicate') return { outcome: 'duplicate' };
      if (claim === 'forgotten' || claim === 'full') {
        await this.local.forget(this.scope, entry.key, entry.timestampMs);
        return { outcome: claim };
      }
    }
    if (deliver()) return { outcome: 'delivered' };
    // Not delivered, so not remembered: the sender's retry must pass.
    await this.local.forget(this.scope, entry.key, entry.timestampMs);
    if (this.shared) {
      await this.shared.withShared(
        (redis) => redis.withdrawReplay(this.scope, sharedMember(entry)),
        () => undefined,
      );
    }
    return { outcome: 'withdrawn' };
  }
}

/** An entry in the path's Redis record: t in milliseconds first (read back when it is forgotten), then its compact key. */
function sharedMember(entry: ReplayEntry): string {
  return `${entry.timestampMs} ${compactKey(entry.key)}`;
}
