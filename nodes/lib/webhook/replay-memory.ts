/** The width of a time bucket: a path's entries are grouped by t, and a bucket leaves whole once every window in it has ended. */
const BUCKET_MS = 5_000;

/**
 * What a path holds of a request: 96 bits of its SHA-256 (`<t>:<hex>` keys), in base64; t picks
 * the bucket. A key without `:` is one already compact (read back from the journal).
 */
export function compactKey(key: string): string {
  const colon = key.indexOf(':');
  return colon < 0 ? key : Buffer.from(key.slice(colon + 1, colon + 25), 'hex').toString('base64');
}

interface Bucket {
  keys: Set<string>;
  /** The newest t among its entries. */
  t: number;
  /** The end of the last window among its entries. */
  expiresAt: number;
}

/**
 * The delivered requests of one path, each until the end of the window it was accepted in, and
 * `since`: the newest t among those whose window has ended. What it holds plus `since` is the
 * contract: every delivered request with a t after `since` is in it, so a request with a t at or
 * before `since` that it does not hold cannot be told from a copy and is refused, whatever tolerance
 * lets it through now (a tolerance raised since). Entries leave only at the end of their window, a
 * bucket of 5 s of t at a time, never for room: `size` is for the caller to refuse new ones.
 */
export class ReplayMemory {
  private readonly buckets = new Map<number, Bucket>();
  private count = 0;
  private sinceMs = Number.NEGATIVE_INFINITY;
  /** The earliest end of a bucket's windows: nothing leaves before it. */
  private nextEnd = Number.POSITIVE_INFINITY;

  get size(): number {
    return this.count;
  }

  get since(): number {
    return this.sinceMs;
  }

  has(key: string, t: number): boolean {
    return this.buckets.get(bucketOf(t))?.keys.has(compactKey(key)) ?? false;
  }

  /** Whether a request with this t that is not held was never delivered. */
  vouchesFor(t: number): boolean {
    return t > this.sinceMs;
  }

  /** Forgets nothing after `since` (a `since` read from the journal, or the one an earlier version implies). */
  forgotUpTo(since: number): void {
    this.sinceMs = Math.max(this.sinceMs, since);
  }

  /** Holds a delivered request until `expiresAt`; one whose window has ended already (read back from the journal) only moves `since`. */
  add(key: string, t: number, expiresAt: number, now: number): void {
    this.sweep(now);
    if (expiresAt < now) {
      this.sinceMs = Math.max(this.sinceMs, t);
      return;
    }
    const id = bucketOf(t);
    let bucket = this.buckets.get(id);
    if (!bucket) {
      bucket = { keys: new Set(), t, expiresAt };
      this.buckets.set(id, bucket);
    }
    const size = bucket.keys.size;
    bucket.keys.add(compactKey(key));
    this.count += bucket.keys.size - size;
    bucket.t = Math.max(bucket.t, t);
    bucket.expiresAt = Math.max(bucket.expiresAt, expiresAt);
    this.nextEnd = Math.min(this.nextEnd, bucket.expiresAt);
  }

  /** Forgets an entry that was not delivered after all: `since` stays. */
  withdraw(key: string, t: number): boolean {
    const bucket = this.buckets.get(bucketOf(t));
    if (!bucket?.keys.delete(compactKey(key))) return false;
    this.count--;
    return true;
  }

  /** Drops the buckets whose windows have all ended before `now`, `since` moving up to their t. */
  sweep(now: number): void {
    if (now <= this.nextEnd) return;
    this.nextEnd = Number.POSITIVE_INFINITY;
    for (const [id, bucket] of this.buckets) {
      if (bucket.expiresAt < now) {
        this.buckets.delete(id);
        this.count -= bucket.keys.size;
        this.sinceMs = Math.max(this.sinceMs, bucket.t);
      } else {
        this.nextEnd = Math.min(this.nextEnd, bucket.expiresAt);
      }
    }
  }

  /** Every bucket: its newest t, the end of its last window, its compact keys. */
  snapshot(): Array<{ t: number; expiresAt: number; keys: string[] }> {
    return [...this.buckets.values()].filter((bucket) => bucket.keys.size > 0).map(({ t, expiresAt, keys }) => ({ t, expiresAt, keys: [...keys] }));
  }
}

function bucketOf(t: number): number {
  return Math.floor(t / BUCKET_MS);
}
