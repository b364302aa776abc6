import { Readable } from 'node:stream';
import { FormData } from 'undici';
import type { NodeAPI, NodeDef, Node, OutputMessage } from './lib/node-red/inputs';
import { nodeInputs } from './lib/node-red/inputs';
import { clientFor } from './lib/node-red/config';
import { CsvError, csvRecords, parseCsv, recordToObject, writeCsv } from './lib/format/csv';
import { PlatformError, cancelled, describeCause, invalidInput } from './lib/util/errors';
import { LatLon, checkLatLon } from './lib/geo/geohash';
import { bestFeature, featurePoint } from './lib/geo/geojson';
import { isRecord, toNumber } from './lib/util/values';
import type { PlatformClient, PlatformResponse } from './lib/platform/client';
import { jobFailed, pollJob, statusReadsAsFailed } from './lib/platform/jobs';
import { memberAt } from './lib/util/values';
import { InputContext, handleInputs } from './lib/node-red/runner';
import { countSetting, pollingOf, textSetting } from './lib/node-red/settings';
import { bulkShapes } from './lib/geo/worldmap';
import { message } from './lib/util/messages';

interface BulkGeocodeDef extends NodeDef {
  server: string;
  addresses: string;
  addressesType: string;
  batchSize?: number | string;
  parallel?: number | string;
  pollIntervalSec?: number | string;
  /** Before 1.1: the first poll in milliseconds (see pollingOf). */
  pollInterval?: number | string;
  maxWait?: number | string;
  jobIdPath?: string;
  downloadPath?: string;
  statusPath?: string;
  rawFiles?: boolean;
}

interface BulkSettings {
  batchSize: number;
  parallel: number;
  intervalMs: number;
  maxWaitMs: number;
  /** Dotted paths that replace the guesses below when set. */
  jobIdPath: string;
  downloadPath: string;
  statusPath: string;
  rawFiles: boolean;
}

/** The input's rows, and the stream they come from, if any, so that it can be stopped. */
interface InputSource {
  rows: Iterable<InputRow> | AsyncIterable<InputRow>;
  stream?: Readable;
}

/** One input row: its position in the input, the input element or CSV record as given, and its address. */
interface InputRow {
  index: number;
  input: unknown;
  address: string;
}

/** One output row, tied to its input row by `index`. */
interface BulkRow {
  index: number;
  input: unknown;
  result: unknown;
  location: LatLon | undefined;
  error: string | undefined;
}

interface JobReport {
  batch: number;
  jobId: string;
  rows: number;
  firstIndex: number;
  lastIndex: number;
  polls: number;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
}

/** Where a job's results are: a link to follow, a file download token, or a link plus a token. */
interface Download {
  link?: string;
  token?: string;
}

const DEFAULTS = { batchSize: 1000, parallel: 2, polling: { pollIntervalSec: 2, maxWaitSec: 1800, legacyPollUnitMs: 1 } };
/** Polling slows down to at most this interval (or the configured one, when that is longer). */
const MAX_POLL_INTERVAL_MS = 30_000;
const UPLOAD_PATH = '/v1/geocode/bulk';
const DOWNLOAD_PATH = '/v1/download';

/*
 * The spec leaves the upload answer, the status values, the payload member with the download
 * link or token, and the result file format "not shown". The guesses below are tried in order;
 * the node's override paths replace them.
 */
const JOB_ID_PATHS = ['jobId', 'id', 'job_id', 'jobID', 'job.id', 'job.jobId', 'data.jobId', 'data.id', 'payload.jobId', 'payload.id', 'result.jobId'];
const STATUS_PATHS = ['status', 'state', 'jobStatus', 'job_status', 'job.status', 'payload.status', 'payload.state', 'data.status'];
const MESSAGE_PATHS = ['message', 'error', 'detail', 'reason', 'payload.message', 'payload.error', 'job.message'];
const LINK_MEMBER = /^(?:(?:download|file|result|results)_?)?(?:link|url|uri|href)$|^download$/i;
const TOKEN_MEMBER = /^(?:(?:download|file)_?)?token$/i;
const ECHOED_ADDRESS_MEMBER = /^(?:address|input|query|search_?text|input_?address|original_?address)$/i;
const ERROR_MEMBER = /^(?:error|errors|error_?message|error_?description|failure_?reason)$/i;
const LAT_MEMBER = /^(?:lat|latitude)$/i;
const LON_MEMBER = /^(?:lon|lng|long|longitude)$/i;
const RESULT_LIST_MEMBERS = ['results', 'items', 'rows', 'records', 'data', 'features', 'payload'];
/** Answers to a download that may mean its token expired: the job is asked once for a fresh one. */
const STALE_DOWNLOAD_STATUS = new Set([401, 403, 404, 410]);

export = function register(RED: NodeAPI): void {
  function SvcBulkGeocode(this: Node, def: BulkGeocodeDef): void {
    RED.nodes.createNode(this, def);
    const client = clientFor(RED, this, def.server, 'project');
    const inputs = nodeInputs(RED, this, def, { addresses: 'payload' });
    const settings: BulkSettings = {
      batchSize: countSetting(def.batchSize, DEFAULTS.batchSize),
      parallel: countSetting(def.parallel, DEFAULTS.parallel),
      ...pollingOf(def, DEFAULTS.polling),
      jobIdPath: textSetting(def.jobIdPath),
      downloadPath: textSetting(def.downloadPath),
      statusPath: textSetting(def.statusPath),
      rawFiles: def.rawFiles === true,
    };

    handleInputs(this, async (msg, context) => {
      const platform = client();
      const source = inputRows((await inputs.read(msg)).addresses);
      const result = await new BulkRun(platform, settings, context).run(source);
      const out = msg as OutputMessage;
      out.payload = result.rows;
      out.jobs = result.jobs;
      if (settings.rawFiles) out.files = result.files;
      const failed = result.rows.filter((row) => row.error !== undefined).length;
      return { msg: out, statusText: failed > 0 ? message('status.rowsFailed', { count: result.rows.length, failed }) : message('status.rows', { count: result.rows.length }), map: (layer) => bulkShapes(result.rows, layer) };
    }, def);
  }

  RED.nodes.registerType('svc-bulk-geocode', SvcBulkGeocode);
};

/**
 * One message's bulk geocoding: reads the input batch by batch, runs up to `parallel` jobs
 * (upload, poll, download) and places every result at its input row's index. Only the batches of
 * running jobs are held besides the merged output; a stream is read no faster than jobs free up.
 */
class BulkRun {
  private readonly rows: BulkRow[] = [];
  private readonly jobs: JobReport[] = [];
  private readonly files: Buffer[] = [];
  private rowsRead = 0;
  private rowsDone = 0;
  private jobsStarted = 0;
  private jobsDone = 0;
  private sourceDone = false;

  constructor(
    private readonly client: PlatformClient,
    private readonly settings: BulkSettings,
    private readonly context: InputContext,
  ) {}

  async run(source: InputSource): Promise<{ rows: BulkRow[]; jobs: JobReport[]; files: Buffer[] }> {
    const { rows } = source;
    const iterator = Symbol.asyncIterator in rows ? rows[Symbol.asyncIterator]() : rows[Symbol.iterator]();
    // Ends every job of this message, and a read waiting on the stream: on close (the runner's signal) or when one job fails.
    const stop = new AbortController();
    const stopAll = () => stop.abort();
    stop.signal.addEventListener('abort', () => source.stream?.destroy(), { once: true });
    const { signal } = this.context;
    if (signal.aborted) stop.abort();
    signal.addEventListener('abort', stopAll, { once: true });
    const running = new Set<Promise<void>>();
    let failure: { error: unknown } | undefined;
    const fail = (error: unknown) => {
      failure ??= { error };
      stop.abort();
    };
    try {
      for (let batchNumber = 0; !this.sourceDone; batchNumber++) {
        while (running.size >= this.settings.parallel) await Promise.race(running);
        if (stop.signal.aborted) break;
        const batch = await this.nextBatch(iterator);
        if (batch.length === 0) break;
        const job: Promise<void> = this.runJob(batch, batchNumber, stop.signal)
          .catch(fail)
          .finally(() => running.delete(job));
        running.add(job);
      }
    } catch (err) {
      fail(err);
    } finally {
      await Promise.all(running);
      signal.removeEventListener('abort', stopAll);
      // Stops reading a stream that is left unfinished.
      await iterator.return?.();
    }
    if (signal.aborted) throw cancelled('message');
    if (failure) throw failure.error;
    if (this.rowsRead === 0) throw invalidInput('the input holds no addresses');
    return { rows: this.rows, jobs: this.jobs, files: this.files };
  }

  /** Up to `batchSize` rows with an address; rows with an empty address go straight to the output. */
  private async nextBatch(iterator: Iterator<InputRow> | AsyncIterator<InputRow>): Promise<InputRow[]> {
    const batch: InputRow[] = [];
    while (batch.length < this.settings.batchSize) {
      const next = await iterator.next();
      if (next.done) {
        this.sourceDone = true;
        break;
      }
      const row = next.value;
      if (row.address === '') {
        this.rows[row.index] = { index: row.index, input: row.input, result: undefined, location: undefined, error: 'the address is empty; not sent' };
      } else {
        batch.push(row);
      }
    }
    this.rowsRead += batch.length;
    return batch;
  }

  private async runJob(batch: InputRow[], batchNumber: number, signal: AbortSignal): Promise<void> {
    const started = Date.now();
    this.jobsStarted++;
    this.report();
    const jobId = await this.upload(batch, batchNumber, signal);
    const { download, polls } = await this.awaitResults(jobId, signal);
    const file = await this.download(jobId, download, signal);
    const records = pairRecords(batch, resultRecords(file, jobId), jobId);
    batch.forEach((row, i) => {
      this.rows[row.index] = bulkRow(row, records[i]);
    });
    if (this.settings.rawFiles) this.files[batchNumber] = file.body;
    const finished = Date.now();
    this.jobs[batchNumber] = {
      batch: batchNumber,
      jobId,
      rows: batch.length,
      firstIndex: batch[0].index,
      lastIndex: batch[batch.length - 1].index,
      polls,
      startedAt: new Date(started).toISOString(),
      finishedAt: new Date(finished).toISOString(),
      durationMs: finished - started,
    };
    this.jobsDone++;
    this.rowsDone += batch.length;
    this.report();
  }

  /** Step 1: the batch as a CSV file with the single column `address`, in the multipart field `file`. */
  private async upload(batch: InputRow[], batchNumber: number, signal: AbortSignal): Promise<string> {
    const form = new FormData();
    const csv = writeCsv(['address'], batch.map((row) => [row.address]));
    form.append('file', new Blob([csv], { type: 'text/csv; charset=utf-8' }), `addresses-${batchNumber + 1}.csv`);
    const response = await this.client.request({
      auth: 'project',
      method: 'POST',
      path: UPLOAD_PATH,
      form,
      retry: 'create',
      signal,
      onWait: this.context.onWait,
    });
    return readJobId(response, this.settings.jobIdPath);
  }

  /** Step 2: polls the job until its payload yields a download link or token. */
  private async awaitResults(jobId: string, signal: AbortSignal): Promise<{ download: Download; polls: number }> {
    const started = Date.now();
    let lastStatus: unknown;
    try {
      const { answer, polls } = await pollJob<unknown>({
        poll: (pollSignal) => this.jobStatus(jobId, pollSignal),
        result: (answer) => {
          lastStatus = statusOf(answer, this.settings.statusPath);
          return completion(answer, this.settings);
        },
        signal,
        initialIntervalMs: this.settings.intervalMs,
        maxIntervalMs: Math.max(this.settings.intervalMs, MAX_POLL_INTERVAL_MS),
        maxWaitMs: this.settings.maxWaitMs,
        onPoll: () => this.report(),
      });
      return { download: completion(answer, this.settings) as Download, polls };
    } catch (err) {
      if (err instanceof PlatformError && err.code === 'TIMEOUT' && Date.now() - started >= this.settings.maxWaitMs) {
        const seen = lastStatus === undefined ? 'no status seen' : `last status "${String(lastStatus)}"`;
        throw new PlatformError('TIMEOUT', `bulk job ${jobId} gave no download link or token within ${this.settings.maxWaitMs / 1000} s (${seen})`, {
          cause: err,
        });
      }
      throw err;
    }
  }

  private async jobStatus(jobId: string, signal: AbortSignal): Promise<unknown> {
    const response = await this.client.request({
      auth: 'project',
      method: 'GET',
      path: `${UPLOAD_PATH}/${encodeURIComponent(jobId)}`,
      retry: 'read',
      signal,
      onWait: this.context.onWait,
    });
    return response.body;
  }

  /** Step 3, asking the job once more for a fresh link when the first one is refused (an expired token). */
  private async download(jobId: string, download: Download, signal: AbortSignal): Promise<PlatformResponse<Buffer>> {
    try {
      return await this.fetchFile(download, signal);
    } catch (err) {
      if (!(err instanceof PlatformError && err.statusCode !== undefined && STALE_DOWNLOAD_STATUS.has(err.statusCode))) throw err;
      const fresh = completion(await this.jobStatus(jobId, signal), this.settings);
      if (!fresh) throw err;
      return this.fetchFile(fresh, signal);
    }
  }

  /**
   * A token alone goes to `/v1/download?token=…` (URL-encoded by the client). A link is followed as
   * given, with the project headers only when it points at the platform's own origin.
   */
  private fetchFile(download: Download, signal: AbortSignal): Promise<PlatformResponse<Buffer>> {
    const request = { method: 'GET', retry: 'read', response: 'buffer', signal, onWait: this.context.onWait } as const;
    if (!download.link) {
      return this.client.request<Buffer>({ ...request, auth: 'project', path: DOWNLOAD_PATH, query: { token: download.token } });
    }
    const base = new URL(this.client.baseUrl.replace(/\/*$/, '/'));
    const url = new URL(download.link, base);
    if (download.token && !url.searchParams.has('token')) url.searchParams.set('token', download.token);
    return this.client.request<Buffer>({ ...request, auth: url.origin === base.origin ? 'project' : 'none', url: url.href });
  }

  private report(): void {
    const more = this.sourceDone ? '' : '+';
    this.context.status.progress(
      message('status.bulkProgress', { rowsDone: this.rowsDone, rowsRead: `${this.rowsRead}${more}`, jobsDone: this.jobsDone, jobsStarted: `${this.jobsStarted}${more}` }),
    );
  }
}

/** The rows of the input, checked before any request where the whole input is at hand. */
function inputRows(value: unknown): InputSource {
  if (value instanceof Readable) return { rows: streamRows(value), stream: value };
  if (Array.isArray(value)) {
    if (value.length === 0) throw invalidInput('the address list is empty');
    return { rows: value.map(itemRow) };
  }
  if (typeof value === 'string' || Buffer.isBuffer(value)) {
    if (value.toString().trim() === '') throw invalidInput('the CSV input is empty');
    const reader = new CsvInput();
    try {
      const rows = parseCsv(value)
        .map((record) => reader.row(record))
        .filter((row): row is InputRow => row !== undefined);
      return { rows };
    } catch (err) {
      throw inputError(err);
    }
  }
  throw invalidInput(
    `addresses must be an array of strings or of objects with an "address" member, CSV text or a Buffer, or a readable stream; got ${value === null ? 'null' : typeof value}`,
  );
}

/** An object-mode stream delivers rows like an array's; any other stream delivers CSV bytes or text. */
async function* streamRows(stream: Readable): AsyncGenerator<InputRow> {
  try {
    if (stream.readableObjectMode) {
      let index = 0;
      for await (const item of stream) yield itemRow(item, index++);
      return;
    }
    const reader = new CsvInput();
    for await (const record of csvRecords(stream)) {
      const row = reader.row(record);
      if (row) yield row;
    }
  } catch (err) {
    throw inputError(err);
  }
}

function itemRow(item: unknown, index: number): InputRow {
  if (typeof item === 'string') return { index, input: item, address: item.trim() };
  if (isRecord(item) && typeof item.address === 'string') return { index, input: item, address: item.address.trim() };
  throw invalidInput(`row ${index}: expected an address string or an object with an "address" string, got ${item === null ? 'null' : typeof item}`);
}

/** Turns CSV records into rows: the first record names the columns, one of them `address`. */
class CsvInput {
  private header: string[] | undefined;
  private addressColumn = -1;
  private index = 0;

  /** The row of a record, or undefined for the header. */
  row(record: string[]): InputRow | undefined {
    if (!this.header) {
      this.header = record.map((name) => name.trim());
      this.addressColumn = this.header.findIndex((name) => name.toLowerCase() === 'address');
      if (this.addressColumn < 0) throw invalidInput(`the CSV input has no "address" column (its columns: ${this.header.join(', ')})`);
      return undefined;
    }
    return { index: this.index++, input: recordToObject(this.header, record), address: (record[this.addressColumn] ?? '').trim() };
  }
}

function inputError(err: unknown): PlatformError {
  if (err instanceof PlatformError) return err;
  if (err instanceof CsvError) return invalidInput(`the CSV input cannot be read: ${err.message}`);
  return invalidInput(`reading the input failed: ${describeCause(err)}`);
}

/** The job id from the upload answer: the override path, else the first guess that holds one, else the Location header. */
function readJobId(response: PlatformResponse, overridePath: string): string {
  const paths = overridePath ? [overridePath] : JOB_ID_PATHS;
  const body = response.body;
  if (!overridePath && (typeof body === 'string' || typeof body === 'number') && String(body) !== '') return String(body);
  for (const path of paths) {
    const id = memberAt(body, path);
    if ((typeof id === 'string' && id !== '') || typeof id === 'number') return String(id);
  }
  const location = response.headers.location;
  if (!overridePath && typeof location === 'string' && location !== '') {
    const lastSegment = new URL(location, 'http://location/').pathname.split('/').filter(Boolean).pop();
    if (lastSegment) return decodeURIComponent(lastSegment);
  }
  throw new PlatformError('BAD_RESPONSE', `the bulk upload answer carries no job id (looked at ${paths.join(', ')}); set "Job id path" on the node`, {
    statusCode: response.statusCode,
    body: JSON.stringify(body) ?? '',
  });
}

function statusOf(answer: unknown, overridePath: string): unknown {
  return firstMember(answer, overridePath ? [overridePath] : STATUS_PATHS);
}

/**
 * What a status answer says: undefined while the job runs, where to download once it is complete,
 * JOB_FAILED when its status reads as a failure.
 */
function completion(answer: unknown, settings: BulkSettings): Download | undefined {
  const status = statusOf(answer, settings.statusPath);
  if (statusReadsAsFailed(status)) throw jobFailed(status, firstMember(answer, MESSAGE_PATHS));
  if (settings.downloadPath) {
    const value = memberAt(answer, settings.downloadPath);
    if (typeof value === 'string' && value !== '') return looksLikeLink(value) ? { link: value } : { token: value };
    return isRecord(value) ? findDownload(value, 0) : undefined;
  }
  // The spec puts the link in the status answer's payload object; without one the whole answer is searched.
  const payload = isRecord(answer) && isRecord(answer.payload) ? answer.payload : answer;
  return findDownload(payload, 0);
}

/** The first link-like and token-like members, searched a few levels deep. */
function findDownload(value: unknown, depth: number): Download | undefined {
  if (depth > 3 || value === null || typeof value !== 'object') return undefined;
  const found: Download = {};
  const entries = Array.isArray(value) ? value.map((item, i) => [String(i), item] as const) : Object.entries(value);
  for (const [key, member] of entries) {
    if (typeof member === 'string' && member !== '') {
      if (!found.link && LINK_MEMBER.test(key) && looksLikeLink(member)) found.link = member;
      if (!found.token && TOKEN_MEMBER.test(key)) found.token = member;
    }
  }
  for (const [, member] of entries) {
    if (found.link && found.token) break;
    const nested = findDownload(member, depth + 1);
    found.link ??= nested?.link;
    found.token ??= nested?.token;
  }
  return found.link || found.token ? found : undefined;
}

function looksLikeLink(value: string): boolean {
  return /^https?:\/\//i.test(value) || value.startsWith('/');
}

function firstMember(value: unknown, paths: readonly string[]): unknown {
  for (const path of paths) {
    const member = memberAt(value, path);
    if (member !== undefined && member !== null && member !== '') return member;
  }
  return undefined;
}

/**
 * The records of a result file: JSON (an array, a FeatureCollection, or an object holding a list),
 * JSON lines, or CSV with a header row; chosen by content type, else by the first character.
 */
function resultRecords(file: PlatformResponse<Buffer>, jobId: string): unknown[] {
  const type = file.contentType.toLowerCase();
  const text = file.body.toString('utf8').replace(/^\uFEFF/, '');
  try {
    if (/ndjson|jsonl|jsonlines|json-seq/.test(type)) {
      return text
        .split(/\r?\n/)
        .map((line) => line.replace(/^\x1e/, '').trim())
        .filter((line) => line !== '')
        .map((line): unknown => JSON.parse(line));
    }
    if (/json/.test(type) || (!/csv|text\//.test(type) && /^\s*[[{]/.test(text))) {
      const list = resultList(JSON.parse(text), 0);
      if (!list) throw new Error('the JSON holds no list of results');
      return list;
    }
    const [header = [], ...records] = parseCsv(text);
    const columns = header.map((name) => name.trim());
    return records.map((record) => recordToObject(columns, record));
  } catch (err) {
    throw new PlatformError('BAD_RESPONSE', `the result file of bulk job ${jobId} (${type || 'no content type'}) cannot be read: ${(err as Error).message}`, {
      statusCode: file.statusCode,
      body: text,
      cause: err,
    });
  }
}

function resultList(value: unknown, depth: number): unknown[] | undefined {
  if (Array.isArray(value)) return depth === 0 || value.every(isRecord) ? value : undefined;
  if (!isRecord(value) || depth > 2) return undefined;
  const keys = [...RESULT_LIST_MEMBERS.filter((key) => key in value), ...Object.keys(value)];
  for (const key of keys) {
    const list = resultList(value[key], depth + 1);
    if (list) return list;
  }
  return undefined;
}

/**
 * The result record for each row of a batch. When every record echoes its address, records are matched
 * by address (so a reordered file still lines up); otherwise, or when that leaves rows unmatched,
 * the n-th record belongs to the n-th row, which needs as many records as rows.
 */
function pairRecords(batch: InputRow[], records: unknown[], jobId: string): Array<unknown | undefined> {
  const echoed = records.map(echoedAddress);
  if (records.length > 0 && echoed.every((address) => address !== undefined)) {
    const byAddress = new Map<string, unknown[]>();
    echoed.forEach((address, i) => {
      const key = sameAddress(address as string);
      const sameKey = byAddress.get(key);
      if (sameKey) sameKey.push(records[i]);
      else byAddress.set(key, [records[i]]);
    });
    const paired = batch.map((row) => byAddress.get(sameAddress(row.address))?.shift());
    if (paired.every((record) => record !== undefined) || records.length !== batch.length) return paired;
  }
  if (records.length === batch.length) return records;
  throw new PlatformError(
    'BAD_RESPONSE',
    `the result file of bulk job ${jobId} has ${records.length} rows for ${batch.length} addresses and no address column to match them by`,
  );
}

function echoedAddress(record: unknown): string | undefined {
  if (!isRecord(record)) return undefined;
  const key = Object.keys(record).find((name) => ECHOED_ADDRESS_MEMBER.test(name) && typeof record[name] === 'string');
  return key === undefined ? undefined : (record[key] as string);
}

function sameAddress(address: string): string {
  return address.normalize('NFC').trim().replace(/\s+/g, ' ').toLowerCase();
}

function bulkRow(row: InputRow, record: unknown): BulkRow {
  const base = { index: row.index, input: row.input };
  if (record === undefined) return { ...base, result: undefined, location: undefined, error: 'the result file has no row for this address' };
  const location = featurePoint(bestFeature(record)) ?? latLonIn(record, 0);
  const error = errorIn(record) ?? (location ? undefined : 'not geocoded: the result row holds no location');
  return { ...base, result: record, location, error };
}

/** A location from latitude and longitude members (CSV columns or JSON), a couple of levels deep. */
function latLonIn(value: unknown, depth: number): LatLon | undefined {
  if (!isRecord(value) || depth > 2) return undefined;
  const keys = Object.keys(value);
  const latKey = keys.find((key) => LAT_MEMBER.test(key));
  const lonKey = keys.find((key) => LON_MEMBER.test(key));
  if (latKey && lonKey && toNumber(value[latKey]) !== undefined && toNumber(value[lonKey]) !== undefined) {
    try {
      return checkLatLon(value[latKey], value[lonKey], 'result');
    } catch {
      return undefined;
    }
  }
  for (const member of Object.values(value)) {
    const found = latLonIn(member, depth + 1);
    if (found) return found;
  }
  return undefined;
}

function errorIn(record: unknown): string | undefined {
  if (!isRecord(record)) return undefined;
  for (const [key, value] of Object.entries(record)) {
    if (!ERROR_MEMBER.test(key)) continue;
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
    if (isRecord(value) && typeof value.message === 'string') return value.message;
  }
  return undefined;
}

