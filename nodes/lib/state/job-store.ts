import { randomBytes } from 'node:crypto';
import { JournalFile, readJsonLines } from './json-file';
import type { JsonObject } from '../util/values';
import { describeCause } from '../util/errors';
import { TextLog, catalogText } from '../util/catalog-text';
import { Clock, SYSTEM_CLOCK } from '../util/async';

/**
 * A job that outlives its process: its node, its kind, the node's own description of it and the JSON-safe members of
 * the message that started it. Never a secret: credentials stay in the config node.
 */
export interface StoredJob {
  /** Unique per job; also the delivery claim. */
  key: string;
  nodeId: string;
  kind: string;
  job: JsonObject;
  msg: JsonObject;
  startedAt: string;
  /** True once the job was written to Redis: from then on it is taken over and delivered only through Redis. */
  registered?: boolean;
  /**
   * The owner a delivery made while Redis refused writes is recorded under once it takes them again (see
   * SharedJobStore.deliver); such a job is never resumed, and leaves the file once recorded.
   */
  deliveredBy?: string;
}

/** Job keys, as a set or a map of them holds them. */
export type KeySet = Pick<ReadonlySet<string>, 'has'>;

/**
 * Where resumable jobs live. A stored job runs in one place at a time, under its runner's lease; `deliver` is true for
 * the one caller that may send its result, so a result is delivered at most once.
 */
export interface JobStore {
  list(nodeId?: string): Promise<StoredJob[]>;
  /** The jobs of one node that may be free to claim: `list` less those known to be leased (at least those free now) and those in `running` (run here). */
  unowned(nodeId: string, running: KeySet): Promise<StoredJob[]>;
  put(job: StoredJob, owner: string, ttlMs: number): Promise<void>;
  /** Replaces a stored job's description, keeping its message; a job already delivered stays gone. */
  update(key: string, job: JsonObject): Promise<void>;
  /** Takes a listed job over (to resume it): true when it was free (or its lease ran out) and is now `owner`'s. */
  claim(job: StoredJob, owner: string, ttlMs: number): Promise<boolean>;
  /** Extends the leases of running jobs at once; resolves the keys of those no longer `owner`'s (stop running them). */
  renew(keys: string[], owner: string, ttlMs: number): Promise<string[]>;
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
 * A job store file's group commit (see GroupCommit, docs/decisions.md): at the routing rate's 200 submissions
 * a second a write holds 32 lines, within one write per 20 submissions with the lines of polls; a lone
 * submission is acknowledged at once.
 */
export const JOB_STORE_GROUP = { waitMs: 5, maxWaitMs: 160, lines: 32 };
/** A change of a job's `state` alone (a poll's news) reaches the file (and Redis) within this time, or with the next line. */
export const STATE_WRITE_MS = 1000;

/** One line of a job store's file; an earlier release's file is one line `{version: 1, jobs: [...]}`, read as a `put` of each. */
type JobEvent = { put: StoredJob } | { update: string; job: JsonObject } | { end: string };

/**
 * The jobs of one process: the in-memory map is the truth, the file (JSON lines, none when `file` is undefined) its log.
 * `put`, `deliver`, `cancel` and `update` resolve once their line is synced, so an acknowledged job survives a crash; a
 * torn last line is skipped with one warning. An `update` of a description's `state` alone (read again at the first poll
 * after a restart) resolves at once and is written within STATE_WRITE_MS; a change of `state.polls` alone waits for the
 * job's next line. A failed write is warned about, not thrown: the jobs still run, but would not survive a restart.
 */
export class FileJobStore implements JobStore {
  /** One process uses the file: its nodes never run a job twice (the runner sees to that), so leases always hold. */
  readonly shared = false;
  private jobs: Map<string, StoredJob> | undefined;
  private readonly journal: JournalFile | undefined;
  /** Lines are written in order, so once the last is written, all are. */
  private lastLine: Promise<void> = Promise.resolve();
  /** Jobs whose state changed since their last line (see STATE_WRITE_MS). */
  private readonly changed = new Set<string>();
  private changeTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly file: string | undefined,
    private readonly log: TextLog,
    clock: Clock = SYSTEM_CLOCK,
  ) {
    if (file)
      this.journal = new JournalFile(
        file,
        () => [...this.load().values()].map((job): JobEvent => ({ put: job })),
        () => this.load().size,
        undefined,
        JOB_STORE_GROUP,
        clock,
      );
  }

  list(nodeId?: string): Promise<StoredJob[]> {
    return Promise.resolve([...this.load().values()].filter((job) => nodeId === undefined || job.nodeId === nodeId));
  }

  /** Every job of the node not running here: this store holds no leases. */
  async unowned(nodeId: string, running: KeySet): Promise<StoredJob[]> {
    return (await this.list(nodeId)).filter((job) => !running.has(job.key));
  }

  get(key: string): Promise<StoredJob | undefined> {
    return Promise.resolve(this.load().get(key));
  }

  put(job: StoredJob): Promise<void> {
    this.load().set(job.key, job);
    this.changed.delete(job.key);
    return this.append({ put: job });
  }

  update(key: string, job: JsonObject): Promise<void> {
    const jobs = this.load();
    const current = jobs.get(key);
    if (!current) return Promise.resolve();
    jobs.set(key, { ...current, job });
    const change = stateChange(current.job, job);
    if (change === 'other') {
      this.changed.delete(key);
      return this.append({ update: key, job });
    }
    if (change === 'state' && this.journal) {
      this.changed.add(key);
      this.changeTimer ??= setTimeout(() => this.appendChanges(), STATE_WRITE_MS).unref();
    }
    return Promise.resolve();
  }

  async deliver(key: string): Promise<boolean> {
    if (!this.load().delete(key)) return false;
    this.changed.delete(key);
    await this.append({ end: key });
    return true;
  }

  async cancel(key: string): Promise<void> {
    await this.deliver(key);
  }

  claim(): Promise<boolean> {
    return Promise.resolve(true);
  }

  renew(): Promise<string[]> {
    return Promise.resolve([]);
  }

  async release(): Promise<void> {}

  async flush(): Promise<void> {
    this.appendChanges();
    await this.lastLine;
  }

  /** Writes what is pending and closes the file (the next change opens it again). */
  async close(): Promise<void> {
    await this.flush();
    await this.journal?.close();
  }

  /** Writes made to the file so far (appends and rewrites), for measurements. */
  get writes(): number {
    return this.journal?.writes ?? 0;
  }

  /** Resolves once `event` is synced (or its write failed, which is warned about); pending state changes go with it. */
  private append(event: JobEvent): Promise<void> {
    this.appendChanges();
    this.appendLine(event);
    return this.lastLine;
  }

  private appendChanges(): void {
    clearTimeout(this.changeTimer);
    this.changeTimer = undefined;
    const jobs = this.load();
    for (const key of this.changed) {
      const job = jobs.get(key);
      if (job) this.appendLine({ update: key, job: job.job });
    }
    this.changed.clear();
  }

  private appendLine(event: JobEvent): void {
    const { journal, file } = this;
    if (!journal || !file) return;
    this.lastLine = journal.append(event).catch((err: unknown) => this.log.warn(catalogText('warn.jobStore.notWritten', { file, cause: describeCause(err) })));
  }

  private load(): Map<string, StoredJob> {
    this.jobs ??= this.file ? readJobs(this.file, this.log) : new Map();
    return this.jobs;
  }
}

/** The jobs a job store's file holds (see JobEvent); warns once when lines cannot be read. */
export function readJobs(file: string, log: TextLog): Map<string, StoredJob> {
  const jobs = new Map<string, StoredJob>();
  const lines = readJsonLines(file, {
    notRead: (err) => log.warn(catalogText('warn.jobStore.notRead', { file, cause: describeCause(err) })),
    skipped: (count) => log.warn(catalogText('warn.jobStore.linesSkipped', { file, count })),
  });
  for (const line of lines) {
    if (line === null || typeof line !== 'object') continue;
    const event = line as Record<string, unknown>;
    if (Array.isArray(event.jobs)) {
      for (const job of event.jobs as unknown[]) if (isStoredJob(job)) jobs.set(job.key, job);
    } else if (isStoredJob(event.put)) {
      jobs.set(event.put.key, event.put);
    } else if (typeof event.update === 'string' && event.job !== null && typeof event.job === 'object') {
      const current = jobs.get(event.update);
      if (current) jobs.set(event.update, { ...current, job: event.job as JsonObject });
    } else if (typeof event.end === 'string') {
      jobs.delete(event.end);
    }
  }
  return jobs;
}

/** What `after` changes in a job's description `before`; 'other' also for one changed in place (the same object). */
export function stateChange(before: JsonObject, after: JsonObject): 'none' | 'polls' | 'state' | 'other' {
  const { state: stateBefore } = before;
  const { state: stateAfter } = after;
  if (before === after || !isObject(stateBefore) || !isObject(stateAfter) || stateBefore === stateAfter) return 'other';
  if (!sameMembers(before, after, 'state')) return 'other';
  if (!sameMembers(stateBefore, stateAfter, 'polls')) return 'state';
  return stateBefore.polls === stateAfter.polls ? 'none' : 'polls';
}

/** Whether `a` and `b` hold the same members, `except` aside: the same value, or objects of the same JSON (a poll copies the rest by reference). */
function sameMembers(a: JsonObject, b: JsonObject, except: string): boolean {
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const x = a[key];
    const y = b[key];
    if (key === except || x === y) continue;
    if (typeof x !== 'object' || typeof y !== 'object' || JSON.stringify(x) !== JSON.stringify(y)) return false;
  }
  return true;
}

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
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
