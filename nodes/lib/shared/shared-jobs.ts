import type { JobStore, JsonObject, StoredJob } from '../platform/job-store';
import type { SharedState } from './shared-state';
import { MemoryStore } from './store';

/**
 * Stored jobs that every instance running the same flows sees, in Redis: a job is claimed by one
 * instance under a lease that it renews while it polls; when that instance dies the lease runs out
 * and another instance claims the job and finishes it. Whoever removes the job from Redis delivers
 * it, so it is delivered once. While Redis is unavailable, jobs started meanwhile are kept in the
 * instance's own store (`local`), and leases are this instance's own: such jobs resume only here.
 */
export class SharedJobStore implements JobStore {
  readonly shared = true;
  private readonly leases: ReturnType<SharedState['withFallback']>;

  constructor(
    private readonly state: SharedState,
    private readonly local: JobStore,
    /** The name of the jobs in Redis: one per configuration node. */
    private readonly name: string,
  ) {
    this.leases = state.withFallback(new MemoryStore());
  }

  async list(nodeId?: string): Promise<StoredJob[]> {
    const [local, shared] = await Promise.all([
      this.local.list(nodeId),
      this.state.withShared(
        async (store) => (await store.jobHashes(this.name).all()).flatMap(({ record, job }) => parseJob(record, job)),
        () => [],
      ),
    ]);
    const byKey = new Map([...local, ...shared].map((job) => [job.key, job]));
    return [...byKey.values()].filter((job) => nodeId === undefined || job.nodeId === nodeId);
  }

  async put(job: StoredJob): Promise<void> {
    const { job: description, ...record } = job;
    await this.state.withShared(
      (store) => store.jobHashes(this.name).put(job.key, JSON.stringify(record), JSON.stringify(description)),
      () => this.local.put(job),
    );
  }

  async update(key: string, job: JsonObject): Promise<void> {
    await Promise.all([
      this.state.withShared(
        (store) => store.jobHashes(this.name).update(key, JSON.stringify(job)),
        () => undefined,
      ),
      this.local.update(key, job),
    ]);
  }

  async take(key: string): Promise<boolean> {
    const [shared, local] = await Promise.all([
      this.state.withShared(
        (store) => store.jobHashes(this.name).take(key),
        () => false,
      ),
      this.local.take(key),
    ]);
    return shared || local;
  }

  claim(key: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.leases.claim(`${this.name}:lease:${key}`, owner, ttlMs);
  }

  renew(key: string, owner: string, ttlMs: number): Promise<boolean> {
    return this.leases.renew(`${this.name}:lease:${key}`, owner, ttlMs);
  }

  async release(key: string, owner: string): Promise<void> {
    await this.leases.release(`${this.name}:lease:${key}`, owner);
  }

  flush(): Promise<void> {
    return this.local.flush();
  }
}

/** A job as stored in Redis, or nothing for an entry that is not one (written by another version, or damaged). */
function parseJob(record: string, job: string | undefined): StoredJob[] {
  try {
    const parsed = { ...(JSON.parse(record) as Omit<StoredJob, 'job'>), job: JSON.parse(job ?? 'null') as JsonObject };
    return typeof parsed.key === 'string' && typeof parsed.nodeId === 'string' && parsed.job !== null ? [parsed] : [];
  } catch {
    return [];
  }
}
