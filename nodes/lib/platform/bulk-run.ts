import type { AddressSource, InputRow } from '../format/address-rows';
import { catalogText } from '../util/catalog-text';
import { ErrorCode, InputError, SvcError, cancelled } from '../util/errors';
import { whenAborted } from '../util/async';
import type { PlatformClient } from './client';
import { BulkJobState, BulkProtocol, Pairing, UnmatchedAddress, bulkResult, uploadBatch } from './bulk';
import type { JobContext } from './jobs';

/** What one job did, as the node reports it in `msg.jobs`. */
export interface JobReport {
  batch: number;
  jobId: string;
  rows: number;
  firstIndex: number;
  lastIndex: number;
  polls: number;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  /** Why the job failed, when failed jobs do not stop the run. */
  error?: { code: ErrorCode; message: string };
  /** True when an earlier run (stopped by a crash) had sent this batch without getting its job id stored: it may have been uploaded twice. */
  uploadedAgain?: boolean;
  /** When the result file's records echo addresses that disagree with those sent: addresses that no record echoes (their rows are flagged)… */
  unmatchedInputs?: number;
  /** …and records whose echo matches no address sent. */
  unmatchedResults?: number;
}

/** A batch of consecutive input rows, delivered in input order once its job is done. */
export interface FinishedBatch {
  number: number;
  /** Every row of the batch, those with an empty address (not sent) included. */
  rows: InputRow[];
  /** The result record of each row (undefined for a row not sent, or one the file has no record for). */
  records: unknown[];
  /** For each row, whether no record of the result file echoes its address (see `Pairing`). */
  unmatched: Array<UnmatchedAddress | undefined>;
  pairing?: Pairing;
  /** The job; undefined when the batch held no address. */
  job?: JobReport;
  /** The result file as downloaded, when `keepFiles` asks for it. */
  file?: Buffer;
  /** The job's error, when failed jobs do not stop the run. */
  error?: SvcError;
  statusCode?: number;
  last: boolean;
}

interface BulkRunOptions {
  client: PlatformClient;
  protocol: BulkProtocol;
  batchSize: number;
  /** Jobs at once; also the most batches held in memory (running, or done and waiting for an earlier one). */
  parallel: number;
  /** `stop`: a failed job ends the run with its error; `continue`: its batch is delivered with the error. */
  jobFailures: 'stop' | 'continue';
  context: JobContext;
  /** Takes each batch in input order; the run waits for it (so a slow consumer slows the reading). */
  deliver: (batch: FinishedBatch) => void | Promise<void>;
  /** Jobs uploaded by an earlier run of the same input (resumed after a restart): their batches are polled, not uploaded again. */
  uploaded?: readonly BulkJobState[];
  /** Batches an earlier run had started uploading without a job id stored: uploaded again, and reported so. */
  uploadedBefore?: readonly number[];
  /** Called (and awaited) before each batch's upload is sent, to store that it is under way. */
  onUploadStart?: (batch: number) => Promise<void>;
  /** Keep each batch's downloaded result file (for `rawFiles`); otherwise it is let go once its records are read, so held batches hold less. */
  keepFiles?: boolean;
  /** Called when an upload's response is a 2xx other than the spec's 201 (the job is still run). */
  onUploadStatus?: (statusCode: number) => void;
  /** Called with each new job once uploaded, before it is polled (to store it for a restart). */
  onUpload?: (job: BulkJobState) => Promise<void>;
  /** Batches an earlier run of the same input delivered before a restart: their rows are read past, and numbering goes on after them. */
  delivered?: number;
}

export interface RunSummary {
  rows: number;
  jobs: JobReport[];
}

/** Errors that are not one job's: the run stops whatever `jobFailures` says. */
const RUN_ERRORS = new Set<ErrorCode>(['UNAUTHORIZED', 'FORBIDDEN', 'CANCELLED', 'QUEUE_FULL', 'NETWORK', 'TLS', 'INVALID_INPUT']);

/**
 * Bulk geocoding of one input: reads it no further than `parallel` batches ahead of delivery (a stream is read only as
 * fast as jobs finish), runs a job per batch and delivers the batches in input order.
 */
export class BulkRun {
  private readonly jobs: JobReport[] = [];
  private readonly stop = new AbortController();
  private failure: { error: unknown } | undefined;
  private lookahead: InputRow | undefined;
  private sourceDone = false;
  private rowsRead = 0;
  private addressesRead = 0;
  private rowsDone = 0;
  private jobsStarted = 0;
  private jobsDone = 0;

  constructor(private readonly options: BulkRunOptions) {}

  async run(source: AddressSource): Promise<RunSummary> {
    const { rows } = source;
    const iterator = Symbol.asyncIterator in rows ? rows[Symbol.asyncIterator]() : rows[Symbol.iterator]();
    const { signal } = this.options.context;
    if (signal.aborted) this.stop.abort();
    const stopListening = whenAborted(signal, () => this.stop.abort());
    whenAborted(this.stop.signal, () => source.stream?.destroy());
    const pending: Array<Promise<FinishedBatch>> = [];
    const delivered = this.options.delivered ?? 0;
    try {
      await this.skip(iterator, delivered * this.options.batchSize);
      for (let number = delivered; ; number++) {
        while (pending.length >= this.options.parallel) await this.deliverFirst(pending, iterator);
        if (this.stop.signal.aborted) break;
        const batch = await this.nextBatch(iterator);
        if (batch.length === 0) break;
        const finished = this.runBatch(batch, number);
        // A run-wide failure stops the other jobs at once, not when its turn to be delivered comes.
        finished.catch((err: unknown) => this.fail(err));
        pending.push(finished);
      }
      while (pending.length > 0 && !this.stop.signal.aborted) await this.deliverFirst(pending, iterator);
    } catch (err) {
      this.fail(err);
    } finally {
      await Promise.allSettled(pending);
      stopListening();
      // Stops reading a stream that is left unfinished.
      await iterator.return?.();
    }
    if (signal.aborted) throw cancelled('message');
    if (this.failure) throw this.failure.error;
    if (this.addressesRead === 0) throw new InputError(catalogText('error.bulk.noAddresses'));
    return { rows: this.rowsRead, jobs: this.jobs };
  }

  private fail(error: unknown): void {
    this.failure ??= { error };
    this.stop.abort();
  }

  private async deliverFirst(pending: Array<Promise<FinishedBatch>>, iterator: Iterator<InputRow> | AsyncIterator<InputRow>): Promise<void> {
    const first = pending.shift();
    if (!first) return;
    const batch = await first;
    batch.last = pending.length === 0 && !(await this.hasMore(iterator));
    if (batch.job) this.jobs.push(batch.job);
    await this.options.deliver(batch);
    this.rowsDone += batch.rows.length;
    this.report();
  }

  /** Whether the source has another row, reading at most one row ahead. */
  private async hasMore(iterator: Iterator<InputRow> | AsyncIterator<InputRow>): Promise<boolean> {
    if (this.lookahead) return true;
    if (this.sourceDone) return false;
    const next = await iterator.next();
    if (next.done) this.sourceDone = true;
    else this.lookahead = next.value;
    return !this.sourceDone;
  }

  private async skip(iterator: Iterator<InputRow> | AsyncIterator<InputRow>, count: number): Promise<void> {
    for (let skipped = 0; skipped < count && (await this.hasMore(iterator)); skipped++) {
      if ((this.lookahead as InputRow).address !== '') this.addressesRead++;
      this.lookahead = undefined;
      this.rowsRead++;
      this.rowsDone++;
    }
  }

  private async nextBatch(iterator: Iterator<InputRow> | AsyncIterator<InputRow>): Promise<InputRow[]> {
    const batch: InputRow[] = [];
    while (batch.length < this.options.batchSize && (await this.hasMore(iterator))) {
      const row = this.lookahead as InputRow;
      this.lookahead = undefined;
      batch.push(row);
      if (row.address !== '') this.addressesRead++;
    }
    this.rowsRead += batch.length;
    return batch;
  }

  private async runBatch(rows: InputRow[], number: number): Promise<FinishedBatch> {
    const sent = rows.filter((row) => row.address !== '');
    const batch: FinishedBatch = { number, rows, records: rows.map(() => undefined), unmatched: rows.map(() => undefined), last: false };
    if (sent.length === 0) return batch;
    const addresses = sent.map((row) => row.address);
    const started = Date.now();
    this.jobsStarted++;
    this.report();
    const { client, protocol, context } = this.options;
    const pollContext = { signal: this.stop.signal, onWait: context.onWait, onPoll: () => this.report() };
    let job: BulkJobState | undefined;
    try {
      job = this.options.uploaded?.find((earlier) => earlier.batch === number);
      if (!job) {
        await this.options.onUploadStart?.(number);
        job = await uploadBatch(
          client,
          protocol,
          { batch: number, firstIndex: rows[0].index, lastIndex: rows[rows.length - 1].index, addresses },
          pollContext,
          this.options.onUploadStatus,
        );
        await this.options.onUpload?.(job);
      }
      const result = await bulkResult(client, protocol, job, addresses, pollContext);
      const recordOf = new Map(sent.map((row, i) => [row, result.records[i]]));
      const unmatchedOf = new Map(result.pairing.unmatched.map((unmatched) => [sent[unmatched.position], unmatched]));
      batch.records = rows.map((row) => recordOf.get(row));
      batch.unmatched = rows.map((row) => unmatchedOf.get(row));
      batch.pairing = result.pairing;
      batch.statusCode = result.statusCode;
      if (this.options.keepFiles) batch.file = result.file;
    } catch (err) {
      if (this.options.jobFailures === 'stop' || !(err instanceof SvcError) || RUN_ERRORS.has(err.code)) throw err;
      batch.error = err;
    }
    const finished = Date.now();
    batch.job = {
      batch: number,
      jobId: job?.jobId ?? '',
      rows: addresses.length,
      firstIndex: rows[0].index,
      lastIndex: rows[rows.length - 1].index,
      polls: job?.polls ?? 0,
      startedAt: new Date(started).toISOString(),
      finishedAt: new Date(finished).toISOString(),
      durationMs: finished - started,
      ...(batch.error ? { error: { code: batch.error.code, message: batch.error.message } } : {}),
      ...mismatchCounts(batch.pairing),
      ...(this.options.uploadedBefore?.includes(number) && !this.options.uploaded?.some((earlier) => earlier.batch === number) ? { uploadedAgain: true } : {}),
    };
    this.jobsDone++;
    this.report();
    return batch;
  }

  private report(): void {
    const more = this.sourceDone && !this.lookahead ? '' : '+';
    this.options.context.onProgress(
      catalogText('status.bulkProgress', {
        rowsDone: this.rowsDone,
        rowsRead: `${this.rowsRead}${more}`,
        jobsDone: this.jobsDone,
        jobsStarted: `${this.jobsStarted}${more}`,
      }),
    );
  }
}

/** The counts of a pairing that found records and addresses disagreeing, for the job's report; none when they agree. */
function mismatchCounts(pairing: Pairing | undefined): Pick<JobReport, 'unmatchedInputs' | 'unmatchedResults'> {
  if (!pairing || (pairing.unmatched.length === 0 && pairing.strayRecords === 0)) return {};
  return { unmatchedInputs: pairing.unmatched.length, unmatchedResults: pairing.strayRecords };
}
