import { randomUUID } from 'node:crypto';
import { ReplayCache } from './signature';
import { FileLock, LockHolder } from './file-lock';
import { JournalFile, onePerFile, readJsonLines } from './json-file';
import type { SharedState } from './shared-state';

/** What a webhook receiver remembers of an accepted request: its (t, digest) key and the end of its window. */
export interface ReplayEntry {
  key: string;
  expiresAt: number;
}

/** One line of the replay journal: an accepted request of a path until `expiresAt`; 0 forgets it. */
type JournalLine = [scope: string, key: string, expiresAt: number];

/** Why a request cannot be recorded: the journal cannot be written, or another process on the same user directory holds it. */
export type Unrecorded = { problem: 'not written'; cause: string } | { problem: 'in use'; holder: LockHolder };

/**
 * What became of a signed request that passed every check:
 * `delivered`: new, recorded (on disk, and in Redis unless Redis is unavailable), then `deliver` ran;
 * `duplicate`: the same (t, digest) was recorded and delivered before, here or by another instance:
 * to be acknowledged, nothing sent; `withdrawn`: `deliver` declined (the node is closing), so it is
 * forgotten again and the sender's retry passes; `unrecorded`: it could not be recorded, nothing
 * was delivered, and the sender should try again.
 */
export type Admission = { outcome: 'delivered' | 'duplicate' | 'withdrawn' } | ({ outcome: 'unrecorded' } & Unrecorded);

/**
 * The accepted requests of every webhook path in this process, one bounded cache per path, kept in a
 * journal (JSON lines) in Node-RED's user directory so that a copy is recognised after a redeploy, a
 * secret rotation (the key holds no secret) and a restart. One per file in a process: a redeployed
 * node finds what the node it replaces accepted. One process per file: a lock beside the journal
 * (`<file>.lock`) keeps a second Node-RED on the same user directory from writing it (each would
 * rewrite it from its own memory); that one records nothing until the lock is free, and then reads
 * what the other wrote first.
 */
export class ReplayFile {
  private static readonly open = new Map<string, ReplayFile>();
  private readonly caches = new Map<string, ReplayCache>();
  /** Entries being recorded and delivered, by scope and key: a copy arriving meanwhile gets their outcome. */
  private readonly pending = new Map<string, Promise<Admission>>();
  private readonly journal: JournalFile | undefined;
  private readonly lock: FileLock | undefined;

  /** Without a file (no user directory, as in some embedded runtimes), the caches live in memory only. */
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
      () => [...this.caches.values()].reduce((sum, cache) => sum + cache.size, 0),
    );
  }

  /**
   * Why nothing can be recorded now, if anything. Takes the journal's lock when it is free, after
   * reading what the process that held it wrote.
   */
  ready(): Unrecorded | undefined {
    if (!this.file || !this.lock || this.lock.holds) return undefined;
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

  /** Whether this entry was recorded (`recorded`), not (`absent`), or the outcome of its recording still under way. */
  lookup(scope: string, key: string, now: number): 'recorded' | 'absent' | Promise<Admission> {
    const pending = this.pending.get(pendingKey(scope, key));
    if (pending) return pending;
    return this.caches.get(scope)?.has(key, now) ? 'recorded' : 'absent';
  }

  /**
   * Records a new entry in the same turn (a copy arriving meanwhile finds it, and waits for `outcome`);
   * resolves once it is on disk, rejects when it could not be written.
   */
  record(scope: string, entry: ReplayEntry, now: number, outcome: Promise<Admission>): Promise<void> {
    this.cache(scope).add(entry.key, entry.expiresAt, now);
    const id = pendingKey(scope, entry.key);
    this.pending.set(id, outcome);
    outcome.then(
      () => this.pending.delete(id),
      () => undefined,
    );
    return this.journal?.append([scope, entry.key, entry.expiresAt] satisfies JournalLine) ?? Promise.resolve();
  }

  /** Forgets an entry; a write that fails is left to the next one, which rewrites the journal whole. */
  async forget(scope: string, key: string): Promise<void> {
    if (!this.caches.get(scope)?.delete(key)) return;
    await this.journal?.append([scope, key, 0] satisfies JournalLine).catch(() => undefined);
  }

  private load(file: string): void {
    const now = Date.now();
    for (const line of readJsonLines(file)) {
      if (!Array.isArray(line) || line.length !== 3) continue;
      const [scope, key, expiresAt] = line as JournalLine;
      if (typeof scope !== 'string' || typeof key !== 'string' || typeof expiresAt !== 'number') continue;
      if (expiresAt >= now) this.cache(scope).add(key, expiresAt, now);
      else this.caches.get(scope)?.delete(key);
    }
  }

  private cache(scope: string): ReplayCache {
    let cache = this.caches.get(scope);
    if (!cache) {
      cache = new ReplayCache();
      this.caches.set(scope, cache);
    }
    return cache;
  }

  private snapshot(): JournalLine[] {
    const now = Date.now();
    return [...this.caches].flatMap(([scope, cache]) => cache.snapshot(now).map(([key, expiresAt]): JournalLine => [scope, key, expiresAt]));
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
 * Admits the signed requests of one webhook path: each (t, digest) is delivered once, and only once
 * it is recorded until its window has passed, in this process's replay journal (on disk) and, when
 * the path's svc-config has Redis, in Redis for every instance (unless Redis is unavailable: then
 * each instance's own journal, as for all shared state during an outage). The scope is the path in
 * both cases: two subscriptions delivering the same event with the same secret to two paths are two
 * deliveries, each delivered once.
 */
export class ReplayGuard {
  constructor(
    private readonly local: ReplayFile,
    private readonly scope: string,
    private readonly shared?: SharedState,
  ) {}

  /** `deliver` sends the message, or returns false when it cannot (the node is closing); see `Admission`. */
  async admit(entry: ReplayEntry, deliver: () => boolean, now = Date.now()): Promise<Admission> {
    // The journal first: taking it over reads what the process that held it recorded.
    const unready = this.local.ready();
    const seen = this.local.lookup(this.scope, entry.key, now);
    if (seen === 'recorded') return { outcome: 'duplicate' };
    if (seen !== 'absent') return asCopy(await seen);
    if (unready) return { outcome: 'unrecorded', ...unready };
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

  private async deliverRecorded(entry: ReplayEntry, written: Promise<void>, deliver: () => boolean): Promise<Admission> {
    try {
      await written;
    } catch (err) {
      await this.local.forget(this.scope, entry.key);
      return { outcome: 'unrecorded', problem: 'not written', cause: err instanceof Error ? err.message : String(err) };
    }
    if (this.shared) {
      const first = await this.shared.withShared(
        // Kept in Redis up to and including the window's last millisecond, and held by a replica
        // before the request is delivered: a failover cannot forget it and let a replay through.
        async (redis) => {
          const claimed = await redis.claim(this.sharedKey(entry), randomUUID(), entry.expiresAt - Date.now() + 1);
          await redis.replicated();
          return claimed;
        },
        () => true,
      );
      // Claimed by another instance, which recorded it on its disk first and delivers it.
      if (!first) return { outcome: 'duplicate' };
    }
    if (deliver()) return { outcome: 'delivered' };
    // Not delivered, so not remembered: the sender's retry must pass.
    await this.local.forget(this.scope, entry.key);
    if (this.shared) {
      await this.shared.withShared(
        (redis) => redis.delete(this.sharedKey(entry)),
        () => undefined,
      );
    }
    return { outcome: 'withdrawn' };
  }

  private sharedKey(entry: ReplayEntry): string {
    return `replay:${this.scope}:${entry.key}`;
  }
}
