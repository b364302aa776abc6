import path from 'node:path';
import { runtimeLog, translate } from './i18n';
import { TextLog, catalogText } from '../util/catalog-text';
import { describeCause } from '../util/errors';
import { isCredentialName } from '../util/masking';
import type { Node, NodeAPI, NodeMessageInFlow } from './types';
import type { Place } from '../geo/locations';
import type { SvcConfigNode } from './config';
import { SharedJobStore } from '../state/shared-jobs';
import { FileJobStore, JobStore, StoredJob, newJobKey } from '../state/job-store';
import type { JsonObject, JsonValue } from '../util/values';

/** Jobs that outlive the node: stored when the platform accepts them, resumed when the node starts again, dropped when it is removed. */

export interface StoredJobsOptions {
  /** The node type's kind of job, so that a node resumes only its own. */
  kind: string;
  store: JobStore;
}

const STORE_FOLDER = 'svc-location';
/** Members of a message never stored: the HTTP exchange and its headers, its id, and the payload the output replaces. */
const NEVER_STORED = new Set(['req', 'res', '_msgid', 'payload', 'headers', 'responseHeaders']);
const MAX_JSON_DEPTH = 32;

const stores = new Map<string, FileJobStore>();
/** For a store without a file (embedded runtimes, tests), which has nothing to warn about. */
const QUIET: TextLog = { warn: () => undefined, info: () => undefined };

/**
 * The job store of a svc-config node: a file under Node-RED's user directory (memory alone without one), one per file in
 * the process so that the nodes' writes never interleave; with the config node's Redis, also shared (SharedJobStore).
 */
export function jobStoreFor(RED: NodeAPI, serverId: unknown): JobStore {
  const local = localJobStore(RED.settings.userDir, serverId, runtimeLog(RED));
  const config = typeof serverId === 'string' ? (RED.nodes.getNode(serverId) as SvcConfigNode | null) : null;
  const state = config?.shared?.state;
  return state?.configured ? new SharedJobStore(state, local, `jobs:${String(serverId)}`) : local;
}

export function localJobStore(userDir: string | undefined, serverId: unknown, log: TextLog = QUIET): FileJobStore {
  const name = `jobs-${String(serverId).replace(/[^\w.-]/g, '_')}.json`;
  const file = userDir ? path.join(userDir, STORE_FOLDER, name) : undefined;
  const id = file ?? `memory:${name}`;
  let store = stores.get(id);
  if (!store) {
    store = new FileJobStore(file, log);
    stores.set(id, store);
  }
  return store;
}

/** One message's job as the runner sees it: stored on the first `track`, claimed once for delivery. */
export interface TrackedJob {
  readonly stored: boolean;
  track(description: JsonObject): Promise<void>;
  /** True for the one caller that may deliver the job's result or error (always for a job never stored); false when `signal` ends the wait. */
  claimDelivery(signal: AbortSignal): Promise<boolean>;
  /** The run is over (delivered, failed or stopped): its lease is given up. */
  finished(): void;
}

/** How long a lease on a stored job lasts unless renewed: an instance killed mid-job loses its jobs to another within this. */
const LEASE_MS = 10_000;
/** Leases are renewed, and a shared store is looked through for jobs without an owner, this often. */
const LEASE_CHECK_MS = 3_000;
/** Stored jobs are claimed this many at a time, so that their claims share the job store's writes and Redis round trips. */
const CLAIM_BATCH = 64;

/** The stored jobs of one node, each run in one place at a time under a renewed lease; with a shared store, a lapsed lease is taken over. */
export class ResumableJobs {
  private removed = false;
  /** Runs of stored jobs in this node, by key: how to stop each when its lease is lost. */
  private readonly running = new Map<string, () => void>();
  private readonly owner = newJobKey();
  private timer: NodeJS.Timeout | undefined;
  private start: ((job: StoredJob, msg: NodeMessageInFlow) => void) | undefined;

  constructor(
    private readonly node: Node,
    private readonly options: StoredJobsOptions,
  ) {}

  /** The one way a failed store operation done in the background is reported: a warning on the node (the job itself goes on). */
  private readonly failed = (err: unknown): void => {
    this.node.warn(translate(catalogText('warn.storedJobsFailed', { cause: describeCause(err) })));
  };

  /** The job of a new message, or of a resumed one (`key` given: stored, and claimed by `resume`). `stop` ends its run. */
  job(msg: NodeMessageInFlow, stop: () => void, key?: string): TrackedJob {
    if (key !== undefined) this.running.set(key, stop);
    return new StoredRun(this, msg, stop, key);
  }

  async store(key: string, msg: NodeMessageInFlow, stop: () => void, description: JsonObject): Promise<void> {
    this.running.set(key, stop);
    const job = { key, nodeId: this.node.id, kind: this.options.kind, job: description, msg: jsonSafeMembers(msg), startedAt: new Date().toISOString() };
    // Stored under this runner's lease, so no other instance can take it over.
    await this.options.store.put(job, this.owner, LEASE_MS);
  }

  /** Once the node was removed, its runs store nothing more. */
  get isRemoved(): boolean {
    return this.removed;
  }

  update(key: string, description: JsonObject): Promise<void> {
    return this.options.store.update(key, description);
  }

  claimDelivery(key: string, signal: AbortSignal): Promise<boolean> {
    return this.options.store.deliver(key, this.owner, signal);
  }

  finished(key: string): void {
    if (!this.running.delete(key)) return;
    this.options.store.release(key, this.owner).catch(this.failed);
  }

  /** Starts each stored job of this node that no one else runs, now and, with a shared store, periodically; other kinds are dropped. */
  resume(start: (job: StoredJob, msg: NodeMessageInFlow) => void): void {
    this.start = start;
    this.resumeUnowned().catch(this.failed);
    this.keepLeases();
  }

  private async resumeUnowned(): Promise<void> {
    let jobs: StoredJob[];
    try {
      jobs = await this.options.store.unowned(this.node.id, this.running);
    } catch (err) {
      this.node.warn(translate(catalogText('warn.storedJobsUnreadable', { cause: describeCause(err) })));
      return;
    }
    for (let i = 0; i < jobs.length && !this.removed && this.start; i += CLAIM_BATCH) {
      await Promise.all(jobs.slice(i, i + CLAIM_BATCH).map((job) => this.resumeOne(job)));
    }
  }

  /** Starts a stored job here unless it runs here already, is of another kind (dropped) or is not ours to claim. */
  private async resumeOne(job: StoredJob): Promise<void> {
    if (this.running.has(job.key)) return;
    if (job.kind !== this.options.kind) return this.options.store.cancel(job.key);
    if (!(await this.options.store.claim(job, this.owner, LEASE_MS)) || this.running.has(job.key) || this.removed || !this.start) return;
    this.node.log(translate(catalogText('log.resumingJob', { kind: job.kind, key: job.key, startedAt: job.startedAt })));
    // Marked as running until the runner registers how to stop it, so that the next look does not start it twice.
    this.running.set(job.key, () => undefined);
    this.start(job, { ...job.msg, resumed: true } as unknown as NodeMessageInFlow);
  }

  /** Renews the leases of the jobs running here (stopping a run whose lease another instance took), and looks for jobs to take over. */
  private keepLeases(): void {
    if (this.timer || !this.options.store.shared) return;
    this.timer = setInterval(() => {
      // One renewal for all the jobs running here: one script per few hundred jobs, not one per job.
      const keys = [...this.running.keys()];
      if (keys.length > 0) {
        this.options.store
          .renew(keys, this.owner, LEASE_MS)
          .then((lost) => {
            for (const key of lost) {
              const stop = this.running.get(key);
              if (stop && this.running.delete(key)) stop();
            }
          })
          .catch(this.failed);
      }
      if (this.options.store.shared) this.resumeUnowned().catch(this.failed);
    }, LEASE_CHECK_MS);
    this.timer.unref();
  }

  /** The node is closing: no stored job starts here any more (the runs under way go on until it closes). */
  stopResuming(): void {
    this.start = undefined;
  }

  /** Removing the node drops its jobs; a restart or a deploy keeping it keeps them, free for the next owner. Resolves once the store is written. */
  async close(removed: boolean): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.start = undefined;
    this.removed ||= removed;
    const running = [...this.running.keys()];
    this.running.clear();
    if (removed) {
      for (const job of await this.options.store.list(this.node.id)) await this.options.store.cancel(job.key);
    }
    for (const key of running) await this.options.store.release(key, this.owner);
    await this.options.store.flush();
  }
}

/** One message's job in a node's ResumableJobs; fields and methods, not closures: one small object for each job in flight. */
class StoredRun implements TrackedJob {
  constructor(
    private readonly jobs: ResumableJobs,
    private readonly msg: NodeMessageInFlow,
    private readonly stop: () => void,
    private key: string | undefined,
  ) {}

  get stored(): boolean {
    return this.key !== undefined;
  }

  async track(description: JsonObject): Promise<void> {
    if (this.jobs.isRemoved) return;
    if (this.key !== undefined) return this.jobs.update(this.key, description);
    this.key = newJobKey();
    await this.jobs.store(this.key, this.msg, this.stop, description);
  }

  claimDelivery(signal: AbortSignal): Promise<boolean> {
    return this.key === undefined ? Promise.resolve(true) : this.jobs.claimDelivery(this.key, signal);
  }

  finished(): void {
    if (this.key !== undefined) this.jobs.finished(this.key);
  }
}

/**
 * The members of a message a resumed flow needs: those that are JSON through and through, without the HTTP exchange and
 * without any member, at any depth, named like a credential (`isCredentialName`).
 */
export function jsonSafeMembers(msg: object): JsonObject {
  const members: JsonObject = {};
  for (const [name, value] of Object.entries(msg)) {
    if (!NEVER_STORED.has(name) && !isCredentialName(name) && isJsonValue(value)) members[name] = withoutCredentials(value);
  }
  return members;
}

function withoutCredentials(value: JsonValue): JsonValue {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(withoutCredentials);
  const copy: JsonObject = {};
  for (const [name, member] of Object.entries(value)) {
    if (!isCredentialName(name)) copy[name] = withoutCredentials(member);
  }
  return copy;
}

/** True for plain JSON: null, booleans, finite numbers, strings, and arrays and plain objects of those (not too deep). */
export function isJsonValue(value: unknown): value is JsonValue {
  return isJson(value, 0);
}

function isJson(value: unknown, depth: number): value is JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (typeof value !== 'object' || depth >= MAX_JSON_DEPTH) return false;
  if (Array.isArray(value)) return value.every((item) => isJson(item, depth + 1));
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return false;
  return Object.values(value).every((member) => isJson(member, depth + 1));
}

/** Places as a stored job keeps them: what the output and its map need (point, geohash, name, venue and unit), nothing else. */
export function storedPlaces(places: Place[]): JsonObject[] {
  return places.map((place) => {
    const stored: JsonObject = {};
    if (place.point) stored.point = { lat: place.point.lat, lon: place.point.lon };
    for (const member of ['geohash', 'name', 'venueId', 'unitId'] as const) {
      const value = place[member];
      if (typeof value === 'string') stored[member] = value;
    }
    return stored;
  });
}
