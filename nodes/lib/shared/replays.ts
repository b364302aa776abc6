import { randomUUID } from 'node:crypto';
import { ReplayCache } from '../platform/signature';
import { JournalFile, onePerFile, readJsonLines } from './json-file';
import type { SharedState } from './shared-state';

/** What a webhook receiver remembers of an accepted request: its (t, digest) key and the end of its window. */
export interface ReplayEntry {
  key: string;
  expiresAt: number;
}

/** One line of the replay journal: an accepted request of a path until `expiresAt`; 0 forgets it. */
type JournalLine = [scope: string, key: string, expiresAt: number];

/**
 * The accepted requests of every webhook path in this process, one bounded cache per path, kept in a
 * journal (JSON lines) in Node-RED's user directory so that a replay is refused after a redeploy, a
 * secret rotation (the key holds no secret) and a restart. One per file in a process: a redeployed
 * node finds what the node it replaces accepted.
 */
export class ReplayFile {
  private static readonly open = new Map<string, ReplayFile>();
  private readonly caches = new Map<string, ReplayCache>();
  private readonly journal: JournalFile | undefined;

  /** Without a file (no user directory, as in some embedded runtimes), the caches live in memory only. */
  static at(file: string | undefined, onError: (err: Error) => void): ReplayFile {
    return onePerFile(ReplayFile.open, file, () => new ReplayFile(file, onError));
  }

  private constructor(file: string | undefined, onError: (err: Error) => void) {
    if (!file) return;
    const now = Date.now();
    for (const line of readJsonLines(file)) {
      if (!Array.isArray(line) || line.length !== 3) continue;
      const [scope, key, expiresAt] = line as JournalLine;
      if (typeof scope !== 'string' || typeof key !== 'string' || typeof expiresAt !== 'number') continue;
      if (expiresAt >= now) this.cache(scope).add(key, expiresAt, now);
      else this.caches.get(scope)?.delete(key);
    }
    this.journal = new JournalFile(
      file,
      () => this.snapshot(),
      () => [...this.caches.values()].reduce((sum, cache) => sum + cache.size, 0),
      onError,
    );
  }

  /**
   * Records the entry unless it is there already, in the same turn (two identical requests arriving
   * together cannot both pass); true when it was new.
   */
  remember(scope: string, entry: ReplayEntry, now: number): boolean {
    const cache = this.cache(scope);
    if (cache.has(entry.key, now)) return false;
    cache.add(entry.key, entry.expiresAt, now);
    this.journal?.append([scope, entry.key, entry.expiresAt] satisfies JournalLine);
    return true;
  }

  forget(scope: string, key: string): void {
    if (this.caches.get(scope)?.delete(key)) this.journal?.append([scope, key, 0] satisfies JournalLine);
  }

  /** Resolves once every entry remembered so far is on disk (a write that fails is reported, not thrown). */
  flushed(): Promise<void> {
    return this.journal?.flushed() ?? Promise.resolve();
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

/**
 * Refuses replays of one webhook path: an accepted request is remembered until its window has passed,
 * in this process's replay file and, when the path's svc-config has Redis, in Redis for every
 * instance. The scope is the path in both cases: two subscriptions delivering the same event with the
 * same secret to two paths are two deliveries, each accepted once.
 */
export class ReplayGuard {
  constructor(
    private readonly local: ReplayFile,
    private readonly scope: string,
    private readonly shared?: SharedState,
  ) {}

  /** True when no request with this entry was accepted on this path before; it is then remembered (and on disk). */
  async accept(entry: ReplayEntry, now = Date.now()): Promise<boolean> {
    // Locally first and synchronously, so that two copies arriving together are told apart at once.
    if (!this.local.remember(this.scope, entry, now)) return false;
    const first = this.shared
      ? await this.shared.withShared(
          // Kept in Redis up to and including the window's last millisecond.
          (redis) => redis.claim(`replay:${this.scope}:${entry.key}`, randomUUID(), entry.expiresAt - Date.now() + 1),
          () => true,
        )
      : true;
    await this.local.flushed();
    return first;
  }

  /** Forgets an accepted request that was not delivered after all, here and in Redis, so that its retry passes. */
  async withdraw(entry: ReplayEntry): Promise<void> {
    this.local.forget(this.scope, entry.key);
    if (this.shared) {
      await this.shared.withShared(
        (redis) => redis.delete(`replay:${this.scope}:${entry.key}`),
        () => undefined,
      );
    }
    await this.local.flushed();
  }
}
