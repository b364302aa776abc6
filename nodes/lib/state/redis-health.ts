import { CatalogText, TextLog, catalogText } from '../util/catalog-text';
import type { RedisStore } from './redis-store';
import { WRITES_REFUSED, refusalOf } from './redis-errors';

/**
 * A Redis whose replies all take longer than SLOW_REPLY_MS for SLOW_FOR_MS is reported slow (one
 * warning, a status note) until a reply comes faster: it still serves, but every message waits for it.
 */
export const SLOW_REPLY_MS = 250;
export const SLOW_FOR_MS = 10_000;

/**
 * An outage ends, for the log, once Redis has worked this long: a full Redis that accepts a write now
 * and then (as its keys expire) is one outage, with one warning and one recovery line.
 */
const RECOVERED_AFTER_MS = 5000;

/** How long Redis takes to reply: the last round trip, and whether replies have stayed slower than SLOW_REPLY_MS for SLOW_FOR_MS. */
export class ReplyTimes {
  lastMs: number | undefined;
  slow = false;
  /** Since when every reply has been slow; undefined after a faster one. */
  private slowSince: number | undefined;

  /** Records a reply to an operation started at `startedAt`; tells when Redis turns slow, or fast again. */
  record(startedAt: number, now: number): 'slow' | 'fast' | undefined {
    this.lastMs = now - startedAt;
    if (this.lastMs <= SLOW_REPLY_MS) {
      this.slowSince = undefined;
      if (!this.slow) return undefined;
      this.slow = false;
      return 'fast';
    }
    this.slowSince ??= startedAt;
    if (this.slow || now - this.slowSince < SLOW_FOR_MS) return undefined;
    this.slow = true;
    return 'slow';
  }
}

/** What the log says of a Redis's outages: one warning per outage, one line once it works again, each kind of refusal once. */
export class OutageLog {
  /** Pending while Redis, back after an outage, has not yet worked for RECOVERED_AFTER_MS. */
  private recovering: NodeJS.Timeout | undefined;
  /** The kinds of refusal (NOT_OUTAGES) reported so far. */
  private readonly refusals = new Set<string>();

  constructor(private readonly log: TextLog) {}

  /** Redis is away: `warning`, unless Redis relapses before it was told back (the same outage). */
  down(warning: CatalogText): void {
    if (!this.recovering) return this.log.warn(warning);
    clearTimeout(this.recovering);
    this.recovering = undefined;
  }

  /** Redis is back after an outage: told once it has worked for RECOVERED_AFTER_MS. */
  back(address: string): void {
    this.recovering = setTimeout(() => {
      this.recovering = undefined;
      this.log.info(catalogText('log.sharedAvailableAgain', { address }));
    }, RECOVERED_AFTER_MS);
    this.recovering.unref();
  }

  /** An operation Redis refused without being away: reported once per kind of refusal. */
  refused(kind: string, address: string, reason: string): void {
    if (this.refusals.has(kind)) return;
    this.refusals.add(kind);
    this.log.warn(catalogText('warn.shared.refused', { address, reason }));
  }

  stop(): void {
    clearTimeout(this.recovering);
  }
}

/** The key (below the prefix) the probe writes, with a short expiry, to prove that Redis accepts writes. */
const PROBE_KEY = 'probe';
const PROBE_TTL_MS = 5000;
/**
 * Each connection's marker (`{alive:<random>}`, a hash tag: the probe's key shares its slot), set by every probe and looked for every
 * MARKER_CHECK_MS while Redis is used: gone, it tells that Redis lost its keys (FLUSHALL, an eviction)
 * without an outage, which is then reported as one. It lives MARKER_TTL_MS past its last check.
 */
export const MARKER_CHECK_MS = 2000;
export const MARKER_TTL_MS = 10 * 60_000;

/** What the probe found: a write accepted, a reply refusing it (`refusingWrites`: Redis takes no write from anyone, WRITES_REFUSED), or no reply in time. */
type ProbeResult = { outcome: 'written' } | { outcome: 'refused'; reason: string; refusingWrites: boolean } | { outcome: 'silent' };

/** Proves that Redis accepts writes: a script that sets a short-lived key (PROBE_KEY) and the connection's marker, within `timeoutMs`. */
export async function probeWrites(store: RedisStore, marker: string, timeoutMs: number): Promise<ProbeResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<ProbeResult>((resolve) => {
    timer = setTimeout(() => resolve({ outcome: 'silent' }), timeoutMs);
  });
  const written = store.proveWritable(PROBE_KEY, PROBE_TTL_MS, marker, MARKER_TTL_MS).then(
    (): ProbeResult => ({ outcome: 'written' }),
    (err: unknown): ProbeResult => ({
      outcome: 'refused',
      reason: err instanceof Error ? err.message : String(err),
      refusingWrites: err instanceof Error && WRITES_REFUSED.has(refusalOf(err)),
    }),
  );
  try {
    return await Promise.race([written, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
