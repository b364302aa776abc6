import { randomUUID } from 'node:crypto';
import { ReplayCache } from '../platform/signature';
import { CoalescedWriter, readJson } from './json-file';
import type { SharedState } from './shared-state';

/** What a webhook receiver remembers of an accepted request: its (t, digest) key and the end of its window. */
export interface ReplayEntry {
  key: string;
  expiresAt: number;
}

type Snapshot = Record<string, Array<[string, number]>>;

/**
 * The accepted requests of every webhook path in this process, one bounded cache per path, kept in a
 * JSON file in Node-RED's user directory so that a replay is refused after a redeploy, a secret
 * rotation (the key holds no secret) and a restart. One per file in a process: a redeployed node finds
 * what the node it replaces accepted.
 */
export class ReplayFile {
  private static readonly open = new Map<string, ReplayFile>();
  private readonly caches = new Map<string, ReplayCache>();
  private readonly writer: CoalescedWriter | undefined;

  /** Without a file (no user directory, as in some embedded runtimes), the caches live in memory only. */
  static at(file: string | undefined, onError: (err: Error) => void): ReplayFile {
    const key = file ?? '';
    let replayFile = ReplayFile.open.get(key);
    if (!replayFile) {
      replayFile = new ReplayFile(file, onError);
      ReplayFile.open.set(key, replayFile);
    }
    return replayFile;
  }

  private constructor(file: string | undefined, onError: (err: Error) => void) {
    if (!file) return;
    const stored = readJson(file);
    if (stored && typeof stored === 'object' && !Array.isArray(stored)) {
      const now = Date.now();
      for (const [scope, entries] of Object.entries(stored as Snapshot)) {
        if (Array.isArray(entries)) this.cache(scope).restore(entries, now);
      }
    }
    this.writer = new CoalescedWriter(file, () => this.snapshot(), onError);
  }

  /**
   * Records the entry unless it is there already, in the same turn (two identical requests arriving
   * together cannot both pass); true when it was new.
   */
  remember(scope: string, entry: ReplayEntry, now: number): boolean {
    const cache = this.cache(scope);
    if (cache.has(entry.key, now)) return false;
    cache.add(entry.key, entry.expiresAt, now);
    this.writer?.changed();
    return true;
  }

  forget(scope: string, key: string): void {
    if (this.caches.get(scope)?.delete(key)) this.writer?.changed();
  }

  /** Resolves once every entry remembered so far is on disk (a write that fails is reported, not thrown). */
  flushed(): Promise<void> {
    return this.writer?.flushed() ?? Promise.resolve();
  }

  private cache(scope: string): ReplayCache {
    let cache = this.caches.get(scope);
    if (!cache) {
      cache = new ReplayCache();
      this.caches.set(scope, cache);
    }
    return cache;
  }

  private snapshot(): Snapshot {
    const now = Date.now();
    const snapshot: Snapshot = {};
    for (const [scope, cache] of this.caches) {
      const entries = cache.snapshot(now);
      if (entries.length > 0) snapshot[scope] = entries;
    }
    return snapshot;
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
