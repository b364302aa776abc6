import fs from 'node:fs';
import path from 'node:path';
import { bulkJobs, BulkJob } from './endpoints/bulk';
import { pubsubState, SandboxSubscription, SandboxTopic } from './pubsub-state';
import { isExpired } from './job-clock';
import { Job, jobsOf } from './routing';
import { Sandbox } from './server';

/**
 * What `npm start` keeps of the sandbox across restarts, in one JSON file in its user directory: the
 * topics and subscriptions (with their secret tokens, as the flows' credentials are kept beside them)
 * and the jobs whose results have not expired (bulk, isoline, sequence: running or complete, with their
 * times by the sandbox's clock, so a job completes during a restart as it would have). Deliveries, tokens, faults and switches are
 * not kept: a restart starts them afresh, as a restarted platform would.
 */

const FAMILIES = ['isoline', 'sequence'] as const;

export interface SandboxSnapshot {
  version: 1;
  topics: SandboxTopic[];
  nextTopicId: number;
  subscriptions: SandboxSubscription[];
  nextSubscriptionId: number;
  bulkJobs: BulkJob[];
  jobs: Record<(typeof FAMILIES)[number], Array<[string, Job]>>;
}

/** What a snapshot holds, counted for the start-up banner. */
interface SnapshotCounts {
  topics: number;
  subscriptions: number;
  /** Jobs kept: running, or complete with results not yet expired. */
  jobs: number;
}

function snapshotOf(sandbox: Sandbox): SandboxSnapshot {
  const pubsub = pubsubState(sandbox);
  const jobPolls = sandbox.options.jobPolls;
  return {
    version: 1,
    topics: [...pubsub.topics.values()],
    nextTopicId: pubsub.nextTopicId,
    subscriptions: pubsub.subscriptions,
    nextSubscriptionId: pubsub.nextSubscriptionId,
    bulkJobs: [...bulkJobs(sandbox).values()].filter((job) => !isExpired(sandbox, job, jobPolls)),
    jobs: { isoline: jobsOf(sandbox, 'isoline').entries(), sequence: jobsOf(sandbox, 'sequence').entries() },
  };
}

export function countsOf(snapshot: SandboxSnapshot): SnapshotCounts {
  return {
    topics: snapshot.topics.length,
    subscriptions: snapshot.subscriptions.length,
    jobs: snapshot.bulkJobs.length + FAMILIES.reduce((sum, family) => sum + snapshot.jobs[family].length, 0),
  };
}

function restoreSnapshot(sandbox: Sandbox, snapshot: SandboxSnapshot): void {
  const pubsub = pubsubState(sandbox);
  for (const topic of snapshot.topics) pubsub.topics.set(topic.id, topic);
  pubsub.nextTopicId = Math.max(pubsub.nextTopicId, snapshot.nextTopicId);
  pubsub.subscriptions.push(...snapshot.subscriptions);
  pubsub.nextSubscriptionId = Math.max(pubsub.nextSubscriptionId, snapshot.nextSubscriptionId);
  // A job saved before jobs had times is timed from now.
  const now = sandbox.clock.now();
  for (const job of snapshot.bulkJobs) bulkJobs(sandbox).set(job.id, Object.assign({ createdAt: now, readyAt: now }, job));
  for (const family of FAMILIES) jobsOf(sandbox, family).restore(snapshot.jobs[family]);
}

/**
 * The sandbox's state in `file`: `load()` puts back what the last run left (and says what), `save()`
 * writes the state now (through a temporary file, so a run stopped mid-write leaves the previous one).
 */
export class SandboxStateFile {
  private lastWritten = '';

  constructor(
    private readonly sandbox: Sandbox,
    readonly file: string,
  ) {}

  /** Restores the saved state; undefined when there is none. A file that cannot be read is set aside, never lost. */
  load(): SnapshotCounts | undefined {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    let snapshot: SandboxSnapshot;
    try {
      snapshot = JSON.parse(text) as SandboxSnapshot;
      if (snapshot.version !== 1) throw new Error(`version ${String(snapshot.version)} is not 1`);
      restoreSnapshot(this.sandbox, snapshot);
    } catch (err) {
      const aside = `${this.file}.unreadable`;
      fs.renameSync(this.file, aside);
      console.warn(`sandbox: ${path.basename(this.file)} cannot be read (${(err as Error).message}); moved to ${path.basename(aside)}, starting empty`);
      return undefined;
    }
    this.lastWritten = text;
    return countsOf(snapshot);
  }

  /** Writes the state when it changed since the last write. */
  save(): void {
    const text = JSON.stringify(snapshotOf(this.sandbox), null, 2);
    if (text === this.lastWritten) return;
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    const temporary = `${this.file}.tmp`;
    fs.writeFileSync(temporary, text);
    fs.renameSync(temporary, this.file);
    this.lastWritten = text;
  }

  /** Forgets the saved state (`npm start -- --fresh`). */
  remove(): void {
    fs.rmSync(this.file, { force: true });
  }
}
