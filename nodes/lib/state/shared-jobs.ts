import type { FileJobStore, JobStore, StoredJob } from './job-store';
import type { JsonObject } from '../util/values';
import type { RedisJobHashes } from './redis-store';
import type { SharedState } from './shared-state';
import { whenAborted } from '../util/async';

/** How long Redis remembers that a job was delivered or cancelled; an older job that Redis no longer holds is not registered again. */
export const DONE_TTL_MS = 7 * 24 * 3600_000;
/** While Redis is away, a finished job's delivery claim is tried again at least this often (and at once when Redis is back). */
const DELIVERY_RETRY_MS = 1000;

/**
 * Stored jobs that every instance running the same flows sees, in Redis, each also kept in this
 * instance's own file (`local`), so that a Redis that restarts empty loses nothing.
 *
 * - A job started while Redis responds is registered there (`registered` in the file) under a lease
 *   for its runner, renewed while it polls. From then on it is taken over, renewed and delivered
 *   only through Redis: while Redis is away it cannot be claimed anywhere (its runner keeps polling
 *   it), and its result waits in memory until Redis replies to the delivery claim, an atomic script
 *   that removes the job and leaves a done marker unless another instance holds the lease. So it is
 *   delivered once, whoever finishes it; if its runner dies while waiting, the job is still stored
 *   and is resumed (polled again from its job id) by whoever claims it next.
 * - A job Redis no longer holds, with no done marker (Redis restarted without persistence), is
 *   registered again from the file of the instance that has it: by its runner at the next lease
 *   renewal, or by an instance that finds it in its file when resuming.
 * - A job started while Redis is away, or whose registration Redis refused (a replica after a
 *   failover: READONLY; a full Redis: OOM) is this instance's alone (not `registered`): it resumes
 *   and is delivered only here, from the file, as without Redis. So is a registered job Redis lost
 *   when Redis refuses to register it again.
 */
export class SharedJobStore implements JobStore {
  readonly shared = true;
  /** Whether the jobs of an earlier release's key names were moved to today's (RedisJobHashes.adoptEarlierJobs). */
  private adopted = false;

  constructor(
    private readonly state: SharedState,
    private readonly local: FileJobStore,
    /** The name of the jobs in Redis: one per configuration node. */
    private readonly name: string,
  ) {}

  private hashes(store: { jobHashes(name: string, doneTtlMs: number): RedisJobHashes }): RedisJobHashes {
    return store.jobHashes(this.name, DONE_TTL_MS);
  }

  async list(nodeId?: string): Promise<StoredJob[]> {
    const [local, shared] = await Promise.all([
      this.local.list(nodeId),
      this.state.withShared(
        async (store) => {
          const hashes = this.hashes(store);
          // Jobs an earlier release registered under the names before the hash tag: moved here once, before the first look.
          if (!this.adopted) {
            await hashes.adoptEarlierJobs();
            this.adopted = true;
          }
          return (await hashes.all()).flatMap(({ record, job }) => parseJob(record, job));
        },
        () => [],
      ),
    ]);
    const byKey = new Map([...local, ...shared].map((job) => [job.key, job]));
    return [...byKey.values()].filter((job) => nodeId === undefined || job.nodeId === nodeId);
  }

  async put(job: StoredJob, owner: string, ttlMs: number): Promise<void> {
    // Written to the file first: if the Redis write fails half-way, the next renewal registers it again.
    const registered = await this.state.connected();
    await this.local.put({ ...job, registered });
    if (registered && (await this.register({ ...job, registered }, owner, ttlMs)) === undefined) await this.keepHere(job);
  }

  async update(key: string, job: JsonObject): Promise<void> {
    const stored = await this.local.get(key);
    await Promise.all([
      this.local.update(key, job),
      stored?.registered
        ? this.state.withShared(
            (store) => this.hashes(store).update(key, JSON.stringify(job)),
            () => undefined,
          )
        : undefined,
    ]);
  }

  async claim(job: StoredJob, owner: string, ttlMs: number): Promise<boolean> {
    if (!job.registered) return this.local.claim();
    const claimed = await this.lease(job, owner, ttlMs, false);
    if (claimed) await this.local.put({ ...job, registered: true });
    return claimed;
  }

  async renew(key: string, owner: string, ttlMs: number): Promise<boolean> {
    const stored = await this.local.get(key);
    if (!stored?.registered) return true;
    return this.lease(stored, owner, ttlMs, true);
  }

  async release(key: string, owner: string): Promise<void> {
    if (!(await this.local.get(key))?.registered) return;
    await this.state.withShared(
      (store) => this.hashes(store).release(key, owner),
      () => undefined,
    );
  }

  async deliver(key: string, owner: string, signal: AbortSignal): Promise<boolean> {
    if (!(await this.local.get(key))?.registered) return this.local.deliver(key);
    while (!signal.aborted) {
      const delivered = await this.state.withShared(
        (store) => this.hashes(store).deliver(key, owner),
        () => undefined,
      );
      if (delivered !== undefined) {
        await this.local.cancel(key);
        return delivered;
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

  flush(): Promise<void> {
    return this.local.flush();
  }

  /**
   * Takes or keeps the lease of a registered job, through Redis only: while Redis is away the result
   * is `whileAway` (the job's runner keeps polling it; no one takes it over). A job delivered,
   * cancelled or taken over elsewhere leaves this instance's file; one Redis lost is registered again.
   */
  private async lease(job: StoredJob, owner: string, ttlMs: number, whileAway: boolean): Promise<boolean> {
    const lease = await this.state.withShared(
      (store) => this.hashes(store).lease(job.key, owner, ttlMs),
      () => undefined,
    );
    if (lease === undefined) return whileAway;
    if (lease === 'held') return true;
    if (lease === 'missing' && Date.now() - Date.parse(job.startedAt) < DONE_TTL_MS) {
      const registered = await this.register(job, owner, ttlMs);
      if (registered) return true;
      // Redis lost it and refuses it back: no one else can hold it, so it stays here.
      if (registered === undefined) return this.keepHere(job);
    }
    await this.local.cancel(job.key);
    return false;
  }

  /** Stores a job in Redis under `owner`'s lease: false when it was delivered, cancelled or taken there, undefined when Redis is away or refused it. */
  private async register(job: StoredJob, owner: string, ttlMs: number): Promise<boolean | undefined> {
    const { job: description, ...record } = job;
    return this.state.withShared(
      (store) => this.hashes(store).register(job.key, JSON.stringify(record), JSON.stringify(description), owner, ttlMs),
      () => undefined,
    );
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
