import { SvcError } from '../util/errors';
import { catalogText } from '../util/catalog-text';
import { CoalescedWriter, onePerFile, readJson } from './json-file';
import type { SharedState } from './shared-state';
import type { RedisStore } from './redis-store';
import { MemoryStore } from './store';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Counters outlive their day a little, so a clock slightly behind another instance's still finds it. */
const COUNTER_TTL_MS = 2 * DAY_MS;

/** The counters of this process, kept in a JSON file so that they survive a restart. */
export class CounterFile {
  private static readonly open = new Map<string, CounterFile>();
  readonly counters = new MemoryStore();
  private readonly writer: CoalescedWriter | undefined;

  /**
   * One per file in a process (every config node counting into the same file shares it, and a
   * redeployed node finds the counts of the one it replaces); without a file, counts live in memory.
   */
  static at(file: string | undefined, onError: (err: Error) => void): CounterFile {
    return onePerFile(CounterFile.open, file, () => new CounterFile(file, onError));
  }

  private constructor(file: string | undefined, onError: (err: Error) => void) {
    if (!file) return;
    const stored = readJson(file);
    if (Array.isArray(stored)) this.counters.restore(stored as Parameters<MemoryStore['restore']>[0]);
    this.writer = new CoalescedWriter(file, () => this.counters.snapshot(), onError);
  }

  take(key: string, limit: number): { taken: boolean; used: number } {
    const result = this.counters.takeNow(key, limit, COUNTER_TTL_MS);
    if (result.taken) this.writer?.changed();
    return result;
  }

  raise(key: string, used: number): void {
    this.counters.raise(key, used, COUNTER_TTL_MS);
    this.writer?.changed();
  }

  flushed(): Promise<void> {
    return this.writer?.flushed() ?? Promise.resolve();
  }
}

/**
 * Units left below the limit, by the last figure this instance knows, under which a request is let go
 * without waiting for Redis's count (see DailyQuota).
 */
function quotaMargin(limit: number): number {
  return Math.max(100, Math.ceil(limit / 100));
}

/**
 * The platform's daily request limit for one API key, per UTC day: counted in Redis across instances
 * while it responds, in this instance's counter file otherwise (which also keeps the last shared figure,
 * so an outage continues from it rather than from this instance's own share, and so does a count
 * Redis lost).
 *
 * While that figure leaves more than `quotaMargin` units, a request does not wait for Redis's count:
 * it is counted in Redis alongside the request, and the reply updates the figure. So a message waits
 * for at most one round trip to Redis (its rate slot), and the limit holds exactly near its end, where
 * each request waits for the shared count.
 */
export class DailyQuota {
  constructor(
    private readonly state: SharedState,
    private readonly local: CounterFile,
    /** Which API key this counts for (a hash, never the key itself). */
    private readonly scope: string,
    readonly limit: number,
  ) {}

  /** The day being counted (UTC): its counter's key, and when it starts and ends. */
  private day = { key: '', startsAt: 0, endsAt: 0 };
  /** The last count this instance knows of, and the day's key it is of. */
  private last = { key: '', used: 0 };

  /** Today's count as this instance last knew it (0 before its first request of the day). */
  usedToday(now = Date.now()): number {
    return this.last.key === this.keyFor(now) ? this.last.used : 0;
  }

  /**
   * Counts one request, or throws QUOTA_EXCEEDED (before any request) when the day's limit is used up.
   * Without Redis the count is this process's own, taken at once: no promise for it.
   */
  take(now = Date.now()): number | Promise<number> {
    const key = this.keyFor(now);
    if (!this.state.configured) return this.used(this.local.take(key, this.limit), key);
    return this.takeShared(key);
  }

  private async takeShared(key: string): Promise<number> {
    const known = Number((await this.local.counters.get(key)) ?? 0);
    const shared = (redis: RedisStore) =>
      redis.take(key, this.limit, COUNTER_TTL_MS, known).then((counted) => {
        this.local.raise(key, counted.used);
        return counted;
      });
    if (this.limit - known > quotaMargin(this.limit)) {
      const counted = this.local.take(key, this.limit);
      this.state.background(shared, () => undefined);
      this.last = { key, used: counted.used };
      return counted.used;
    }
    return this.used(await this.state.withShared(shared, () => this.local.take(key, this.limit)), key);
  }

  /** The day's count with this request, or QUOTA_EXCEEDED when it was not taken. */
  private used(result: { taken: boolean; used: number }, key: string): number {
    this.last = { key, used: result.used };
    if (!result.taken) {
      throw new SvcError('QUOTA_EXCEEDED', catalogText('error.quotaExceeded', { limit: this.limit, used: result.used }), {
        notSent: true,
        statusDetail: `${result.used}/${this.limit}`,
      });
    }
    return result.used;
  }

  /** The counter's key of the UTC day of `now`: made once a day, not per request (a Date and its ISO text per message). */
  private keyFor(now: number): string {
    if (now < this.day.startsAt || now >= this.day.endsAt) {
      const startsAt = now - (now % DAY_MS);
      this.day = { key: `quota:${this.scope}:${new Date(startsAt).toISOString().slice(0, 10)}`, startsAt, endsAt: startsAt + DAY_MS };
    }
    return this.day.key;
  }
}
