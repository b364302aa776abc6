import type { OutputMessage } from './types';
import type { HandlerResult, InputContext } from './runner';
import { RowFile, RowFileState } from '../format/row-file';
import { BulkRow, ROW_MISMATCH, RowOutcome, bulkRow, unmatchedRow, unsentRow } from '../geo/result-rows';
import { bulkShapes } from '../geo/worldmap-places';
import type { FinishedBatch, RunSummary } from '../platform/bulk-run';
import { PlatformError, causeOf } from '../util/errors';
import { isRecord } from '../util/values';
import { CatalogText, catalogText } from '../util/catalog-text';
import { translate } from './i18n';

/**
 * Where bulk rows go. `message`: all rows in one output message (the whole input in memory).
 * `parts`: a message per finished job, in input order, with `msg.parts` for the core join node, then a
 * summary message if `partsSummary` (a core join in automatic mode warns about it). `file`: rows appended to a CSV or JSON lines file, then a summary message.
 * `parts` and `file` hold no more than the batches of the running jobs.
 */
export type BulkOutputMode = 'message' | 'parts' | 'file';

export const BULK_OUTPUT_MODES: readonly BulkOutputMode[] = ['message', 'parts', 'file'];

export interface BulkOutputOptions {
  mode: BulkOutputMode;
  batchSize: number;
  rawFiles: boolean;
  outputFile: string;
  /** A CSV output file's cells as they are, formulas included; by default as spreadsheets show text. */
  rawCsv: boolean;
  /** Parts mode: a summary message after the parts. */
  partsSummary: boolean;
}

/** The summary of a streamed run, as the final message's payload. */
export interface BulkSummary {
  rows: number;
  located: number;
  failed: number;
  jobs: number;
  failedJobs: number;
  /** Rows whose address no row of the result file echoes (`ROW_MISMATCH`, counted in `failed` too). */
  unmatchedInputs: number;
  /** Result rows whose echoed address matches no address sent. */
  unmatchedResults: number;
  file?: string;
}

type BulkCounts = Omit<BulkSummary, 'file'>;

const NO_COUNTS: BulkCounts = { rows: 0, located: 0, failed: 0, jobs: 0, failedJobs: 0, unmatchedInputs: 0, unmatchedResults: 0 };

/** Where a run's output stands after a delivered batch: what a run resumed after a restart goes on from. */
export interface BulkOutputState {
  /** The output file's durable length (file mode). */
  file?: RowFileState;
  /** The `msg.parts` id (parts mode): a resumed run's parts join those sent before the restart. */
  partsId?: string;
  counts: BulkCounts;
}

export class BulkOutput {
  private readonly rows: BulkRow[] = [];
  private readonly files: Buffer[] = [];
  private partsId = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  private counts: BulkCounts = { ...NO_COUNTS };
  private file: RowFile | undefined;
  /** The HTTP status of the last result file delivered, for `msg.statusCode`. */
  private statusCode: number | undefined;

  private constructor(
    private readonly msg: OutputMessage,
    private readonly options: BulkOutputOptions,
    private readonly context: InputContext,
    private readonly warn: (text: CatalogText) => void,
  ) {}

  /**
   * The output for one input message; `file` mode opens its file first, so a bad path fails before
   * any request. `resumeFrom` goes on from a state of an earlier run (see `commit`).
   */
  static async open(
    msg: OutputMessage,
    options: BulkOutputOptions,
    context: InputContext,
    warn: (text: CatalogText) => void,
    resumeFrom?: BulkOutputState,
  ): Promise<BulkOutput> {
    const output = new BulkOutput(msg, options, context, warn);
    // A run stored by an earlier version has no mismatch counts.
    if (resumeFrom) output.counts = { ...NO_COUNTS, ...resumeFrom.counts };
    if (resumeFrom?.partsId) output.partsId = resumeFrom.partsId;
    if (options.mode === 'file') output.file = await RowFile.open(options.outputFile, resumeFrom?.file, options.rawCsv ? 'raw' : 'text');
    return output;
  }

  /** After a delivered batch: makes the file's rows durable and returns the state a resumed run goes on from. */
  async commit(): Promise<BulkOutputState> {
    const file = await this.file?.commit();
    const where = file ? { file } : this.options.mode === 'parts' ? { partsId: this.partsId } : {};
    return { ...where, counts: { ...this.counts } };
  }

  /** Takes a finished batch in input order. */
  async deliver(batch: FinishedBatch): Promise<void> {
    const rows = outputRows(batch);
    this.statusCode = batch.statusCode ?? this.statusCode;
    this.count(batch, rows);
    this.warnMismatch(batch);
    if (this.options.mode === 'message') {
      for (const row of rows) this.rows.push(row);
      if (this.options.rawFiles && batch.file) this.files.push(batch.file);
    } else if (this.options.mode === 'parts') {
      this.context.sendPart(this.part(batch, rows), (layer) => bulkShapes(rows, layer));
    } else {
      await this.file?.write(rows.map(fileRecord));
    }
  }

  /** The final message (none in `parts` mode without `partsSummary`). In `parts` and `file` mode, failed jobs make it go out ahead of a JOB_FAILED error. */
  async finish(summary: RunSummary): Promise<HandlerResult> {
    await this.file?.close();
    const out = this.msg;
    out.jobs = summary.jobs;
    if (this.statusCode !== undefined) out.statusCode = this.statusCode;
    const { rows: count, failed } = this.counts;
    const statusText = failed > 0 ? catalogText('status.rowsFailed', { count, failed }) : catalogText('status.rows', { count });
    if (this.options.mode === 'message') {
      out.payload = this.rows;
      if (this.options.rawFiles) out.files = this.files;
      return { msg: out, statusText, map: (layer) => bulkShapes(this.rows, layer) };
    }
    const payload: BulkSummary = { ...this.counts, ...(this.file ? { file: this.file.path } : {}) };
    out.payload = payload;
    const summarised = this.options.mode === 'file' || this.options.partsSummary;
    if (this.counts.failedJobs === 0) return { msg: summarised ? out : null, statusText };
    if (summarised) this.context.sendPart(out);
    throw new PlatformError('JOB_FAILED', catalogText('error.bulkJobsFailed', { failed: this.counts.failedJobs, jobs: this.counts.jobs }));
  }

  /** Stops writing the file of a run that failed. */
  abort(): void {
    this.file?.abort();
  }

  private count(batch: FinishedBatch, rows: BulkRow[]): void {
    this.counts.rows += rows.length;
    for (const row of rows) {
      if (row.error === undefined) this.counts.located++;
      else this.counts.failed++;
    }
    if (batch.job) this.counts.jobs++;
    if (batch.error) this.counts.failedJobs++;
    this.counts.unmatchedInputs += rows.filter((row) => row.code === ROW_MISMATCH).length;
    this.counts.unmatchedResults += batch.pairing?.strayRecords ?? 0;
  }

  /** Once per job whose result file's echoes disagree with the addresses sent. */
  private warnMismatch(batch: FinishedBatch): void {
    const { job, pairing } = batch;
    if (!job || !pairing || (pairing.unmatched.length === 0 && pairing.strayRecords === 0)) return;
    this.warn(
      catalogText('warn.bulk.rowMismatch', {
        jobId: job.jobId,
        unmatched: pairing.unmatched.length,
        addresses: job.rows,
        stray: pairing.strayRecords,
        echoes: pairing.strayEchoes.map((echo) => JSON.stringify(echo.slice(0, 100))).join(', ') || '-',
      }),
    );
  }

  /** One job's message: the input message's other members, its rows, its job, and its place among the parts. */
  private part(batch: FinishedBatch, rows: BulkRow[]): OutputMessage {
    const { _msgid: _ignored, ...members } = this.msg;
    const parts: Record<string, unknown> = { id: this.partsId, type: 'array', index: batch.number, len: this.options.batchSize };
    if (batch.last) parts.count = batch.number + 1;
    if (this.msg.parts !== undefined) parts.parts = this.msg.parts;
    // Without _msgid: Node-RED gives each part an id of its own when it is sent.
    return {
      ...members,
      payload: rows,
      job: batch.job,
      ...(batch.statusCode === undefined ? {} : { statusCode: batch.statusCode }),
      parts,
    } as unknown as OutputMessage;
  }
}

/** A batch's output rows: the located rows, and those not sent or not geocoded with the reason, in the runtime's language. */
function outputRows(batch: FinishedBatch): BulkRow[] {
  return batch.rows
    .map((row, i): RowOutcome => {
      if (row.address === '') return unsentRow(row, catalogText('error.bulk.rowNotSent'));
      if (batch.error) return unsentRow(row, catalogText('error.bulk.rowJobFailed', { cause: causeOf(batch.error) }));
      const unmatched = batch.unmatched[i];
      if (unmatched) return unmatchedRow(row, unmatched.echoInPlace);
      return bulkRow(row, batch.records[i]);
    })
    .map(translated);
}

function translated(row: RowOutcome): BulkRow {
  return { ...row, error: row.error === undefined ? undefined : translate(row.error) };
}

/** A row as a file line: flat for CSV (the input's columns, then the location and error), whole in JSON lines. */
function fileRecord(row: BulkRow): Record<string, unknown> {
  const input = isRecord(row.input) ? row.input : { address: row.input };
  return { index: row.index, ...input, latitude: row.location?.lat, longitude: row.location?.lon, error: row.error, result: row.result };
}
