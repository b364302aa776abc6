import { type FileJobStore, type JobStore, type KeySet, STATE_WRITE_MS, type StoredJob, stateChange } from './job-store';
import type { JsonObject } from '../util/values';
import type { JobLease, RedisJobHashes } from './redis-job-hashes';
import type { SharedState, Unanswered } from './shared-state';
import { whenAborted } from '../util/async';

/** How long Redis remembers that a job was delivered or cancelled; an older job that Redis no longer holds is not registered again. */
const DONE_TTL_MS = 7 * 24 * 3600_000;
/** While Redis is away, a finished job's delivery claim is tried again at least this often (and at once when Redis is back). */
const DELIVERY_RETRY_MS = 1000;
/** After an outage, no job is taken over until Redis has taken writes this long: time for holders to record deliveries made meanwhile. */
const TAKEOVER_GRACE_MS = 10_000;

/**
 * Stored jobs that every instance running the same flows sees, in Redis, each also kept in this instance's own file
 * (`local`), so that a Redis that restarts empty loses nothing. Each job is delivered once and never lost, also through
 * an outage (see "Jobs and Redis" in docs/several-instances.md):
 *
 * - A registered job is taken over, renewed and delivered only through Redis; its delivery claim is an atomic script
 *   that removes the job and leaves a done marker unless another instance holds the lease.
 * - A registration whose reply never came may have landed, so the job stays registered until a lease renewal settles it.
 * - A registered job that finishes while Redis refuses every write, since before its runner's lease ran out, is delivered
 *   by its runner (no one can have taken the lease since) and recorded in Redis once it takes writes (`deliveredBy`).
 * - A job Redis no longer holds, with no done marker, is registered again from the file of the instance that has it.
 * - A job started while Redis is away, or whose registration Redis refused, is this instance's alone (not `registered`).
 */
export class SharedJobStore implements JobStore {
  readonly shared = true;
  /** Until when, by this process's clock, this instance held each job's lease at the latest Redis reply. */
  private readonly heldUntil = new Map<string, number>();
  /** Whether the jobs of an earlier release's key names were moved to today's (RedisJobHashes.adoptEarlierJobs). */
  private adopted = false;
  /** Registered jobs whose `state` alone changed since Redis had their description: sent together (`sendStates`). */
  private readonly statesUnsent = new Set<string>();
  private statesTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly state: SharedState,
    private readonly local: FileJobStore,
    /** One per configuration node. */
    private readonly name: string,
  ) {}

  private hashes(store: { jobHashes(name: string, doneTtlMs: number): RedisJobHashes }): RedisJobHashes {
    return store.jobHashes(this.name, DONE_TTL_MS);
  }

  list(nodeId?: string): Promise<StoredJob[]> {
    return this.listed(nodeId);
  }

  /** From Redis only the jobs no one holds a lease on (RedisJobHashes.unleased); from the file, all; neither those in `running`. */
  unowned(nodeId: string, running: KeySet): Promise<StoredJob[]> {
    return this.listed(nodeId, running);
  }

  /** Every job; with `running`, those of `unowned` (see there). */
  private async listed(nodeId: string | undefined, running?: KeySet): Promise<StoredJob[]> {
    const delivered = (await this.local.list()).filter((job) => job.deliveredBy !== undefined);
    for (const job of delivered) await this.recordDelivery(job);
    const [local, shared] = await Promise.all([
      running && nodeId !== undefined ? this.local.unowned(nodeId, running) : this.local.list(nodeId),
      this.state.withShared(
        async (store) => {
          const hashes = this.hashes(store);
          // Jobs an earlier release registered under the names before the hash tag: moved here once, before the first look.
          if (!this.adopted) {
            await hashes.adoptEarlierJobs();
            this.adopted = true;
          }
          return (await (running ? hashes.unleased(running) : hashes.all())).flatMap(({ record, job }) => parseJob(record, job));
        },
        () => [],
      ),
    ]);
    const byKey = new Map([...local, ...shared].map((job) => [job.key, job]));
    // A job delivered here whose delivery Redis has not recorded yet is never resumed.
    for (const job of local) if (job.deliveredBy !== undefined) byKey.delete(job.key);
    return [...byKey.values()].filter((job) => nodeId === undefined || job.nodeId === nodeId);
  }

  async put(job: StoredJob, owner: string, ttlMs: number): Promise<void> {
    // Written to the file first: if the Redis write fails half-way, the next renewal registers it again.
    const registered = await this.state.connected();
    await this.local.put({ ...job, registered });
    if (!registered) return;
    const outcome = await this.register({ ...job, registered }, owner, ttlMs);
    // Not sent or refused: not in Redis. Unknown: stays registered, settled by the next renewal.
    if (outcome === 'away' || outcome === 'refused') await this.keepHere(job);
  }

  /**
   * As the file does: a poll count alone is not sent, and a poll's news (`state` alone, read again at the next poll by
   * whoever holds the job) goes with the others changed within STATE_WRITE_MS, one script for many jobs.
   */
  async update(key: string, job: JsonObject): Promise<void> {
    const stored = await this.local.get(key);
    const change = stored?.registered ? stateChange(stored.job, job) : 'none';
    if (change === 'state') {
      this.statesUnsent.add(key);
      // sendStates does not reject (withShared serves a failure locally): the catch only makes that plain.
      this.statesTimer ??= setTimeout(() => {
        this.sendStates().catch(() => undefined);
      }, STATE_WRITE_MS).unref();
    }
    if (change === 'other') this.statesUnsent.delete(key);
    await Promise.all([
      this.local.update(key, job),
      change === 'other'
        ? this.state.withShared(
            (store) => this.hashes(store).update([[key, JSON.stringify(job)]]),
            () => undefined,
          )
        : undefined,
    ]);
  }

  /** Sends the descriptions of `statesUnsent`, as the file has them now; with Redis away they wait for the next change. */
  private async sendStates(): Promise<void> {
    clearTimeout(this.statesTimer);
    this.statesTimer = undefined;
    const keys = [...this.statesUnsent];
    this.statesUnsent.clear();
    const jobs = await Promise.all(keys.map((key) => this.local.get(key)));
    const descriptions = jobs.flatMap((job): Array<[string, string]> => (job ? [[job.key, JSON.stringify(job.job)]] : []));
    if (descriptions.length === 0) return;
    await this.state.withShared(
      (store) => this.hashes(store).update(descriptions),
      () => undefined,
    );
  }

  async claim(job: StoredJob, owner: string, ttlMs: number): Promise<boolean> {
    if (!job.registered) return this.local.claim();
    // Right after an outage, the holders record the deliveries they made while Redis refused writes first.
    if (!this.state.settledFor(TAKEOVER_GRACE_MS)) return false;
    const claimed = await this.lease(job, owner, ttlMs, false);
    if (claimed) await this.local.put({ ...job, registered: true });
    return claimed;
  }

  async renew(keys: string[], owner: string, ttlMs: number): Promise<string[]> {
    const stored = await Promise.all(keys.map((key) => this.local.get(key)));
    const registered = stored.filter((job): job is StoredJob => job?.registered === true);
    if (registered.length === 0) return [];
    const askedAt = Date.now();
    const leases = await this.state.attempt((store) =>
      this.hashes(store).leases(
        registered.map((job) => job.key),
        owner,
        ttlMs,
      ),
    );
    // Redis away: the runners keep polling their jobs; no one takes them over meanwhile.
    if (leases.outcome !== 'done') return [];
    const lost: string[] = [];
    for (const [index, job] of registered.entries()) {
      if (!(await this.leased(job, leases.value[index], askedAt, owner, ttlMs, true))) lost.push(job.key);
    }
    return lost;
  }

  async release(key: string, owner: string): Promise<void> {
    this.heldUntil.delete(key);
    const stored = await this.local.get(key);
    if (!stored?.registered || stored.deliveredBy !== undefined) return;
    await this.state.withShared(
      (store) => this.hashes(store).release(key, owner),
      () => undefined,
    );
  }

  async deliver(key: string, owner: string, signal: AbortSignal): Promise<boolean> {
    if (!(await this.local.get(key))?.registered) return this.local.deliver(key);
    while (!signal.aborted) {
      const claim = await this.state.attempt((store) => this.hashes(store).deliver(key, owner));
      if (claim.outcome === 'done') {
        this.heldUntil.delete(key);
        await this.local.cancel(key);
        return claim.value;
      }
      // Redis has refused writes since this instance still held the lease: no one can have taken the job since (see the class).
      const refusingSince = this.state.refusingWritesSince;
      if (refusingSince !== undefined && refusingSince <= (this.heldUntil.get(key) ?? 0)) {
        const stored = await this.local.get(key);
        if (!stored) return false;
        await this.local.put({ ...stored, deliveredBy: owner });
        this.heldUntil.delete(key);
        return true;
      }
      await this.sharedAgain(signal);
    }
    return false;
  }

  async cancel(key: string): Promise<void> {
    const stored = await this.local.get(key);
    await this.local.cancel(key);
    if (stored?.registered === false) return;
    await this.state.withShared(
      (store) => this.hashes(store).cancel(key),
      () => undefined,
    );
  }

  async flush(): Promise<void> {
    await this.sendStates();
    await this.local.flush();
  }

  /**
   * Takes or keeps the lease of a registered job, through Redis only (`whileAway` while Redis is away). A job delivered,
   * cancelled or taken over elsewhere leaves this instance's file; one Redis lost is registered again.
   */
  private async lease(job: StoredJob, owner: string, ttlMs: number, whileAway: boolean): Promise<boolean> {
    const askedAt = Date.now();
    const lease = await this.state.attempt((store) => this.hashes(store).lease(job.key, owner, ttlMs));
    if (lease.outcome !== 'done') return whileAway;
    return this.leased(job, lease.value, askedAt, owner, ttlMs, whileAway);
  }

  /** What a lease Redis replied to (asked at `askedAt`) comes to: see `lease`. */
  private async leased(job: StoredJob, lease: JobLease, askedAt: number, owner: string, ttlMs: number, whileAway: boolean): Promise<boolean> {
    if (lease === 'held') {
      this.heldUntil.set(job.key, askedAt + ttlMs);
      return true;
    }
    if (lease === 'missing' && Date.now() - Date.parse(job.startedAt) < DONE_TTL_MS) {
      const registered = await this.register(job, owner, ttlMs);
      if (registered === true) return true;
      // Redis lost it and refuses it back (or was not asked): no one else can hold it, so it stays here.
      if (registered === 'refused' || registered === 'away') return this.keepHere(job);
      // Whether it landed is settled at the next renewal that Redis replies to.
      if (registered === 'unknown') return whileAway;
    }
    this.heldUntil.delete(job.key);
    await this.local.cancel(job.key);
    return false;
  }

  /** Stores a job in Redis under `owner`'s lease: false when it was delivered, cancelled or taken there; Unanswered without a reply. */
  private async register(job: StoredJob, owner: string, ttlMs: number): Promise<boolean | Unanswered> {
    const { job: description, ...record } = job;
    const askedAt = Date.now();
    const registered = await this.state.attempt((store) =>
      this.hashes(store).register(job.key, JSON.stringify(record), JSON.stringify(description), owner, ttlMs),
    );
    if (registered.outcome !== 'done') return registered.outcome;
    if (registered.value) this.heldUntil.set(job.key, askedAt + ttlMs);
    return registered.value;
  }

  /** Records in Redis a delivery made here while Redis refused writes, then forgets the job; kept while Redis does not reply. */
  private async recordDelivery(job: StoredJob): Promise<void> {
    const owner = job.deliveredBy as string;
    const recorded = await this.state.attempt((store) => this.hashes(store).deliver(job.key, owner));
    // False: another owner held the lease (the job was taken over after all); nothing more to record.
    if (recorded.outcome === 'done') await this.local.cancel(job.key);
  }

  /** Makes a job this instance's alone (see the class): resumed and delivered from its file only. */
  private async keepHere(job: StoredJob): Promise<true> {
    const stored = await this.local.get(job.key);
    await this.local.put({ ...(stored ?? job), registered: false });
    return true;
  }

  /** Resolves when Redis responds again, after DELIVERY_RETRY_MS at most, or when `signal` ends the wait. */
  private sharedAgain(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        stopWatching();
        stopListening();
        resolve();
      };
      const timer = setTimeout(done, DELIVERY_RETRY_MS);
      const stopWatching = this.state.onModeChange((mode) => mode === 'shared' && done());
      const stopListening = whenAborted(signal, done);
    });
  }
}

/** A job as stored in Redis (registered there, by definition), or nothing for an entry that is not one (written by another version, or damaged). */
function parseJob(record: string, job: string | undefined): StoredJob[] {
  try {
    const parsed = { ...(JSON.parse(record) as Omit<StoredJob, 'job'>), job: JSON.parse(job ?? 'null') as JsonObject, registered: true };
    return typeof parsed.key === 'string' && typeof parsed.nodeId === 'string' && parsed.job !== null ? [parsed] : [];
  } catch {
    return [];
  }
}
