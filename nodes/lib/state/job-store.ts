import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { writeAtomically } from '../util/files';
import type { JsonObject } from '../util/values';
import { describeCause } from '../util/errors';
import { TextLog, catalogText } from '../util/catalog-text';

/**
 * A job that outlives its process: which node runs it, what kind it is, the node's own description
 * of it (job ids and what is needed to build the output) and the JSON-safe members of the message
 * that started it. Never a secret: credentials stay in the config node.
 */
export interface StoredJob {
  /** Unique per job; also the delivery claim. */
  key: string;
  nodeId: string;
  kind: string;
  job: JsonObject;
  msg: JsonObject;
  startedAt: string;
  /**
   * True once the job was written to the store other instances share (Redis): from then on it is
   * taken over and delivered only through that store. False or absent: this process's own job.
   */
  registered?: boolean;
  /**
   * Set when this instance delivered the registered job while Redis refused every write (see
   * SharedJobStore.deliver): the owner the delivery is recorded under in Redis once it takes writes
   * again. Such a job is never resumed; it leaves the file once recorded.
   */
  deliveredBy?: string;
}

/**
 * Where resumable jobs live. A stored job runs in one place at a time, under a lease its runner
 * holds; `deliver` removes the job and is true for the one caller that may send its result, so a
 * result is delivered at most once.
 */
export interface JobStore {
  /** The jobs of one node, or of every node. */
  list(nodeId?: string): Promise<StoredJob[]>;
  /** Stores a new job, leased to `owner` for `ttlMs`. */
  put(job: StoredJob, owner: string, ttlMs: number): Promise<void>;
  /** Replaces a stored job's description, keeping its message; a job already delivered stays gone. */
  update(key: string, job: JsonObject): Promise<void>;
  /** Takes a listed job over (to resume it): true when it was free (or its lease ran out) and is now `owner`'s. */
  claim(job: StoredJob, owner: string, ttlMs: number): Promise<boolean>;
  /** Extends the lease of a running job; false once it is another owner's or was delivered elsewhere (stop running it). */
  renew(key: string, owner: string, ttlMs: number): Promise<boolean>;
  release(key: string, owner: string): Promise<void>;
  /** Removes a finished job; true for the one caller that may deliver it. `signal` ends a wait for the store. */
  deliver(key: string, owner: string, signal: AbortSignal): Promise<boolean>;
  /** Removes a job that will not be delivered (its node was removed). */
  cancel(key: string): Promise<void>;
  /** True when other processes share these jobs, so that one whose owner died is taken over by another. */
  readonly shared: boolean;
  /** Resolves once every change so far is written. */
  flush(): Promise<void>;
}

export function newJobKey(): string {
  return randomBytes(9).toString('base64url');
}

/**
 * The jobs of one process in one JSON file, or in memory only when `file` is undefined. The
 * in-memory map is the truth inside the process; each change rewrites the file through a temporary
 * file and a rename, so a crash leaves the old or the new file, never half of one. Writes are
 * serialised, and changes made while one is under way share the next.
 */
export class FileJobStore implements JobStore {
  /** One process uses the file: its nodes never run a job twice (the runner sees to that), so leases always hold. */
  readonly shared = false;
  private jobs: Map<string, StoredJob> | undefined;
  private loading: Promise<Map<string, StoredJob>> | undefined;
  private writing: Promise<void> = Promise.resolve();
  private nextWrite: Promise<void> | undefined;

  constructor(
    readonly file: string | undefined,
    private readonly log: TextLog,
  ) {}

  async list(nodeId?: string): Promise<StoredJob[]> {
    const jobs = await this.load();
    return [...jobs.values()].filter((job) => nodeId === undefined || job.nodeId === nodeId);
  }

  /** One stored job, if there is one under `key`. */
  async get(key: string): Promise<StoredJob | undefined> {
    return (await this.load()).get(key);
  }

  async put(job: StoredJob): Promise<void> {
    (await this.load()).set(job.key, job);
    await this.save();
  }

  async update(key: string, job: JsonObject): Promise<void> {
    const jobs = await this.load();
    const current = jobs.get(key);
    if (!current) return;
    jobs.set(key, { ...current, job });
    await this.save();
  }

  async deliver(key: string): Promise<boolean> {
    const taken = (await this.load()).delete(key);
    if (taken) await this.save();
    return taken;
  }

  async cancel(key: string): Promise<void> {
    await this.deliver(key);
  }

  claim(): Promise<boolean> {
    return Promise.resolve(true);
  }

  renew(): Promise<boolean> {
    return Promise.resolve(true);
  }

  async release(): Promise<void> {}

  async flush(): Promise<void> {
    await this.writing;
  }

  private load(): Promise<Map<string, StoredJob>> {
    if (this.jobs) return Promise.resolve(this.jobs);
    this.loading ??= this.read().then((jobs) => (this.jobs = jobs));
    return this.loading;
  }

  private async read(): Promise<Map<string, StoredJob>> {
    const jobs = new Map<string, StoredJob>();
    if (!this.file) return jobs;
    let text: string;
    try {
      text = await fs.promises.readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.log.warn(catalogText('warn.jobStore.notRead', { file: this.file, cause: describeCause(err) }));
      return jobs;
    }
    try {
      const stored = JSON.parse(text) as { jobs?: unknown };
      for (const job of Array.isArray(stored.jobs) ? stored.jobs : []) {
        if (isStoredJob(job)) jobs.set(job.key, job);
      }
    } catch (err) {
      this.log.warn(catalogText('warn.jobStore.notJson', { file: this.file, cause: describeCause(err) }));
    }
    return jobs;
  }

  /** A write that starts after every change made so far; never rejects. */
  private save(): Promise<void> {
    if (!this.file) return Promise.resolve();
    if (!this.nextWrite) {
      const file = this.file;
      // A failed write is warned about, not thrown: the jobs still run, they only would not survive a restart.
      const next = this.writing
        .then(() => {
          this.nextWrite = undefined;
          return writeAtomically(file, JSON.stringify({ version: 1, jobs: [...(this.jobs?.values() ?? [])] }));
        })
        .catch((err: unknown) => this.log.warn(catalogText('warn.jobStore.notWritten', { file, cause: describeCause(err) })));
      this.nextWrite = next;
      this.writing = next;
    }
    return this.nextWrite;
  }
}

function isStoredJob(value: unknown): value is StoredJob {
  if (value === null || typeof value !== 'object') return false;
  const job = value as Record<string, unknown>;
  return (
    typeof job.key === 'string' &&
    typeof job.nodeId === 'string' &&
    typeof job.kind === 'string' &&
    job.job !== null &&
    typeof job.job === 'object' &&
    job.msg !== null &&
    typeof job.msg === 'object'
  );
}
