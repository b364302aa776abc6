import { createHash } from 'node:crypto';
import type { SharedState } from './shared-state';
import { MemoryStore } from './store';
import { Clock, SYSTEM_CLOCK } from '../util/async';

export interface CachedResponse {
  statusCode: number;
  body: unknown;
}

/** Bounds of the in-memory cache (Redis bounds its own memory with its maxmemory setting). */
const MEMORY_ENTRIES = 1000;
const MEMORY_CHARS = 32 * 1024 * 1024;

/**
 * Responses to identical queries for `ttlMs`: in Redis while it responds (shared by every instance),
 * in a bounded least-recently-used map of this process otherwise. Keys are hashes of the query.
 */
export class ResponseCache {
  private readonly memory: MemoryStore;
  /** Queries served from the cache (metrics). */
  hits = 0;

  constructor(
    private readonly state: SharedState,
    /** Which platform and credentials the responses belong to (a hash, never a secret). */
    private readonly scope: string,
    private readonly ttlMs: number,
    /** The time responses in memory expire by; the system clock unless a test moves one by hand. */
    clock: Pick<Clock, 'now'> = SYSTEM_CLOCK,
  ) {
    this.memory = new MemoryStore({ maxEntries: MEMORY_ENTRIES, maxChars: MEMORY_CHARS, clock });
  }

  async get(query: string): Promise<CachedResponse | undefined> {
    const key = this.keyOf(query);
    const text = await this.state.withShared(
      (redis) => redis.get(key),
      () => this.memory.get(key),
    );
    if (text === undefined) return undefined;
    this.hits++;
    return JSON.parse(text) as CachedResponse;
  }

  /** Stores a response while the caller goes on: no message waits for a slow Redis to store it. */
  set(query: string, response: CachedResponse): void {
    const key = this.keyOf(query);
    const text = JSON.stringify(response);
    this.state.background(
      (redis) => redis.set(key, text, this.ttlMs),
      () => this.memory.set(key, text, this.ttlMs),
    );
  }

  private keyOf(query: string): string {
    return `cache:${this.scope}:${createHash('sha256').update(query).digest('hex')}`;
  }
}
