import { Clock, SYSTEM_CLOCK } from '../util/async';

/**
 * The state several Node-RED instances may share, behind one interface with two backends:
 * `MemoryStore` (this process only) and `RedisStore` (every instance pointed at the same Redis).
 * Values are strings; every key expires. Callers choose the key names (the Redis backend adds its prefix).
 */
export interface KeyValueStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * Takes a lease: true when `key` was free (or expired) and now belongs to `owner` for `ttlMs`, or
   * already belonged to `owner` (whose lease is then extended); false when someone else holds it.
   */
  claim(key: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Extends a lease `owner` holds; false when it has expired or another owner took it. */
  renew(key: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Gives a lease up; false when `owner` did not hold it. */
  release(key: string, owner: string): Promise<boolean>;
  /**
   * Adds one to a counter unless it has reached `limit`; the counter is created by its first use and
   * lives `ttlMs` from then. `used` is the count after this call.
   */
  take(key: string, limit: number, ttlMs: number): Promise<{ taken: boolean; used: number }>;
}

interface MemoryStoreOptions {
  /** Entries kept at most; the least recently used go first. */
  maxEntries?: number;
  /** Characters of keys and values kept at most (a bound on memory for cached responses). */
  maxChars?: number;
  /** The time entries expire by; the system clock unless a test moves one by hand. */
  clock?: Pick<Clock, 'now'>;
}

interface Entry {
  value: string;
  expiresAt: number;
}

const DEFAULT_MAX_ENTRIES = 10_000;
const DEFAULT_MAX_CHARS = 16 * 1024 * 1024;

/** A bounded in-process store: a least-recently-used map whose entries expire. */
export class MemoryStore implements KeyValueStore {
  /** The key at the end of `entries` (the most recently used), while it is known. */
  private newest: string | undefined;
  private readonly entries = new Map<string, Entry>();
  private chars = 0;
  private readonly maxEntries: number;
  private readonly maxChars: number;
  private readonly clock: Pick<Clock, 'now'>;

  constructor(options: MemoryStoreOptions = {}) {
    this.maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
    this.clock = options.clock ?? SYSTEM_CLOCK;
  }

  get size(): number {
    return this.entries.size;
  }

  async get(key: string): Promise<string | undefined> {
    return this.read(key)?.value;
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    this.write(key, value, this.clock.now() + ttlMs);
  }

  async delete(key: string): Promise<void> {
    this.remove(key);
  }

  async claim(key: string, owner: string, ttlMs: number): Promise<boolean> {
    const current = this.read(key);
    if (current && current.value !== owner) return false;
    this.write(key, owner, this.clock.now() + ttlMs);
    return true;
  }

  async renew(key: string, owner: string, ttlMs: number): Promise<boolean> {
    if (this.read(key)?.value !== owner) return false;
    this.write(key, owner, this.clock.now() + ttlMs);
    return true;
  }

  async release(key: string, owner: string): Promise<boolean> {
    if (this.read(key)?.value !== owner) return false;
    this.remove(key);
    return true;
  }

  async take(key: string, limit: number, ttlMs: number): Promise<{ taken: boolean; used: number }> {
    return this.takeNow(key, limit, ttlMs);
  }

  /** `take` without the promise, for callers that must decide in the same turn. */
  takeNow(key: string, limit: number, ttlMs: number): { taken: boolean; used: number } {
    const current = this.read(key);
    const used = current ? Number(current.value) : 0;
    if (used >= limit) return { taken: false, used };
    this.write(key, String(used + 1), current?.expiresAt ?? this.clock.now() + ttlMs);
    return { taken: true, used: used + 1 };
  }

  /** Sets a counter to at least `used` (a figure learnt elsewhere), keeping its expiry. */
  raise(key: string, used: number, ttlMs: number): void {
    const current = this.read(key);
    if (current && Number(current.value) >= used) return;
    this.write(key, String(used), current?.expiresAt ?? this.clock.now() + ttlMs);
  }

  /** Every live entry, for persisting the store. */
  snapshot(): Array<[string, Entry]> {
    const now = this.clock.now();
    return [...this.entries].filter(([, entry]) => entry.expiresAt > now);
  }

  /** Puts entries back from a snapshot (expired ones are skipped). */
  restore(entries: Array<[string, Entry]>): void {
    const now = this.clock.now();
    for (const [key, entry] of entries) {
      if (entry.expiresAt > now) this.write(key, entry.value, entry.expiresAt);
    }
  }

  private read(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.clock.now()) {
      this.remove(key);
      return undefined;
    }
    this.touch(key, entry);
    return entry;
  }

  private write(key: string, value: string, expiresAt: number): void {
    // An entry larger than the whole bound is not kept: it would only push everything else out.
    if (key.length + value.length > this.maxChars) {
      this.remove(key);
      return;
    }
    const entry = this.entries.get(key);
    if (entry) {
      // Changed in place: a counter taken per message neither leaves the map nor enters it again.
      this.chars += value.length - entry.value.length;
      entry.value = value;
      entry.expiresAt = expiresAt;
      this.touch(key, entry);
    } else {
      this.entries.set(key, { value, expiresAt });
      this.newest = key;
      this.chars += key.length + value.length;
    }
    while (this.entries.size > this.maxEntries || this.chars > this.maxChars) {
      this.remove(this.entries.keys().next().value as string);
    }
  }

  /**
   * Moves an entry to the end, so that the map's order stays least recently used first; not the one
   * there already. A Map under constant removes and inserts reallocates its table again and again,
   * garbage that lives long enough to be promoted (CONTRIBUTING, What one message costs).
   */
  private touch(key: string, entry: Entry): void {
    if (key === this.newest) return;
    this.entries.delete(key);
    this.entries.set(key, entry);
    this.newest = key;
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    if (key === this.newest) this.newest = undefined;
    this.chars -= key.length + entry.value.length;
  }
}
