import { FormData } from 'undici';
import { writeCsv } from '../format/csv';
import { resultRecords } from '../format/result-file';
import { PlatformError, SvcError, causeOf } from '../util/errors';
import { catalogText } from '../util/catalog-text';
import { isRecord, memberAt } from '../util/values';
import type { PlatformClient } from './client';
import type { PlatformResponse } from './types';
import { JobReader, JobState, PollContext, Polling, askAboutJob, fetchJobStatus, jobFailed, pollJob, statusReadsAsFailed } from './jobs';
import { trimTrailing } from '../util/text';
import { pathSegment } from './paths';

/**
 * The platform's bulk geocoding protocol: upload a CSV of addresses (a job), poll it until it names the result file,
 * download the file and pair its records with the addresses. The spec leaves the upload response, the status values, the
 * download member and the file format "not shown": the guesses below are tried in order, unless `BulkProtocol` overrides.
 */

export interface BulkProtocol {
  /** Dotted paths that replace the guesses when set (empty: guess). */
  jobIdPath: string;
  downloadPath: string;
  statusPath: string;
  polling: Polling;
}

export interface BulkJobState extends JobState {
  kind: 'bulk-geocode';
  batch: number;
  /** The input indexes of its first and last row, and how many addresses it was sent. */
  firstIndex: number;
  lastIndex: number;
  addresses: number;
}

interface Download {
  link?: string;
  token?: string;
}

/** A finished job's result file; `records[i]` belongs to the i-th address, undefined when the file has none for it. */
interface BulkResult {
  file: Buffer;
  statusCode: number;
  records: unknown[];
  pairing: Pairing;
}

/** `echo`: each record that names its address was given to that address; `position`: none does, so the n-th went to the n-th. */
export interface Pairing {
  by: 'echo' | 'position';
  /** The addresses (by position) that no record echoes: they have no record, and say so. */
  unmatched: UnmatchedAddress[];
  /** How many records echo an address that was not sent (or a copy more than was sent), and the first few of those echoes. */
  strayRecords: number;
  strayEchoes: string[];
}

export interface UnmatchedAddress {
  position: number;
  /** What the record at this address's position echoes, when that record matched no address (a rewritten address, say). */
  echoInPlace?: string;
}

/** Stray echoes kept for the warning: enough to see what the file holds. */
const STRAY_ECHOES_KEPT = 3;

const UPLOAD_PATH = '/v1/geocode/bulk';
const DOWNLOAD_PATH = '/v1/download';
const JOB_ID_PATHS = ['jobId', 'id', 'job_id', 'jobID', 'job.id', 'job.jobId', 'data.jobId', 'data.id', 'payload.jobId', 'payload.id', 'result.jobId'];
const STATUS_PATHS = ['status', 'state', 'jobStatus', 'job_status', 'job.status', 'payload.status', 'payload.state', 'data.status'];
const MESSAGE_PATHS = ['message', 'error', 'detail', 'reason', 'payload.message', 'payload.error', 'job.message'];
const LINK_MEMBER = /^(?:(?:download|file|result|results)_?)?(?:link|url|uri|href)$|^download$/i;
const TOKEN_MEMBER = /^(?:(?:download|file)_?)?token$/i;
const ECHOED_ADDRESS_MEMBER = /^(?:address|input|query|search_?text|input_?address|original_?address)$/i;
/** Statuses of a download response that may mean its token expired: the job is asked once for a fresh one. */
const STALE_DOWNLOAD_STATUS = new Set([401, 403, 404, 410]);
/** Bulk jobs run for minutes: after failed requests about one, it is asked again at most this far apart (or the interval, when longer). */
const MAX_POLL_INTERVAL_MS = 30_000;

const JOB_CREATED = 201;

/** Uploads the addresses as a CSV file; resolves with the new job. A 2xx other than the spec's 201 is accepted and told to `onOtherStatus`. */
export async function uploadBatch(
  client: PlatformClient,
  protocol: BulkProtocol,
  batch: { batch: number; firstIndex: number; lastIndex: number; addresses: readonly string[] },
  context: PollContext,
  onOtherStatus?: (statusCode: number) => void,
): Promise<BulkJobState> {
  const form = new FormData();
  const csv = writeCsv(
    ['address'],
    batch.addresses.map((address) => [address]),
  );
  form.append('file', new Blob([csv], { type: 'text/csv; charset=utf-8' }), `addresses-${batch.batch + 1}.csv`);
  const response = await client.request({
    auth: 'project',
    rate: 'bulk',
    method: 'POST',
    path: UPLOAD_PATH,
    form,
    retry: 'create',
    signal: context.signal,
    onWait: context.onWait,
  });
  const jobId = readJobId(response, protocol.jobIdPath);
  if (response.statusCode !== JOB_CREATED) onOtherStatus?.(response.statusCode);
  return {
    kind: 'bulk-geocode',
    jobId,
    statusPath: `${UPLOAD_PATH}/${pathSegment(jobId, catalogText('label.jobId'), 'response')}`,
    createdAt: Date.now(),
    polls: 0,
    batch: batch.batch,
    firstIndex: batch.firstIndex,
    lastIndex: batch.lastIndex,
    addresses: batch.addresses.length,
  };
}

/** Polls a job, fresh or stored, to its result file and pairs its records with `addresses` (those the job was sent, in order). */
export async function bulkResult(
  client: PlatformClient,
  protocol: BulkProtocol,
  job: BulkJobState,
  addresses: readonly string[],
  context: PollContext,
): Promise<BulkResult> {
  const reader = bulkReader(protocol);
  const polling = { ...protocol.polling, maxIntervalMs: Math.max(protocol.polling.intervalMs, MAX_POLL_INTERVAL_MS) };
  const { result: download } = await pollJob(client, job, reader, polling, context);
  // The job is accepted and done: an outage while its file is fetched is waited out as while polling.
  const ask = <T>(request: () => Promise<T>) => askAboutJob(job, reader.awaiting, polling, context, request);
  let file: PlatformResponse<Buffer>;
  try {
    file = await ask(() => fetchFile(client, download, context));
  } catch (err) {
    if (!(err instanceof SvcError && err.statusCode !== undefined && STALE_DOWNLOAD_STATUS.has(err.statusCode))) throw err;
    // Perhaps an expired token: the job is asked once more for a fresh link.
    const status = await ask(() => fetchJobStatus(client, job, context));
    const fresh = reader.result(status.body);
    if (!fresh) throw err;
    file = await ask(() => fetchFile(client, fresh, context));
  }
  const { records, pairing } = pairRecords(addresses, readResultFile(file, job.jobId), job.jobId);
  return { file: file.body, statusCode: file.statusCode, records, pairing };
}

/** Reads bulk status responses: the status by the override path or the guesses, the download link or token once complete. */
function bulkReader(protocol: BulkProtocol): JobReader<Download> {
  const statusOf = (body: unknown) => firstMember(body, protocol.statusPath ? [protocol.statusPath] : STATUS_PATHS);
  return {
    awaiting: catalogText('value.downloadLink'),
    status: (body) => {
      const status = statusOf(body);
      return status === undefined || typeof status === 'string' ? status : JSON.stringify(status);
    },
    result: (body) => {
      const status = statusOf(body);
      if (statusReadsAsFailed(status)) throw jobFailed(status, firstMember(body, MESSAGE_PATHS));
      if (protocol.downloadPath) {
        const value = memberAt(body, protocol.downloadPath);
        if (typeof value === 'string' && value !== '') return looksLikeLink(value) ? { link: value } : { token: value };
        return isRecord(value) ? findDownload(value, 0) : undefined;
      }
      // The spec puts the link in the status response's payload object; without one the whole body is searched.
      return findDownload(isRecord(body) && isRecord(body.payload) ? body.payload : body, 0);
    },
  };
}

/** The job id from the upload response: the override path, else the first guess that holds one, else the Location header. */
function readJobId(response: PlatformResponse, overridePath: string): string {
  const paths = overridePath ? [overridePath] : JOB_ID_PATHS;
  const body = response.body;
  if (!overridePath && (typeof body === 'string' || typeof body === 'number') && String(body) !== '') return String(body);
  for (const path of paths) {
    const id = memberAt(body, path);
    if ((typeof id === 'string' && id !== '') || typeof id === 'number') return String(id);
  }
  const location = response.location;
  if (!overridePath && location !== '') {
    // The path as written: a URL parser would resolve `..` and `%2e%2e` and hand out the segment above.
    const path = location.replace(/^[a-z][a-z\d+.-]*:\/\/[^/?#]*/i, '').split(/[?#]/)[0];
    const lastSegment = path.split('/').filter(Boolean).pop();
    if (lastSegment) return decodeSegment(lastSegment, response.statusCode);
  }
  throw new PlatformError('BAD_RESPONSE', catalogText('error.bulk.noJobId', { paths: paths.join(', ') }), {
    statusCode: response.statusCode,
    body: JSON.stringify(body) ?? '',
  });
}

/** A percent-encoded segment of the Location header, decoded; one that does not decode is a bad response. */
function decodeSegment(segment: string, statusCode: number): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new PlatformError('BAD_RESPONSE', catalogText('error.bulk.noJobId', { paths: 'Location' }), { statusCode });
  }
}

/**
 * A token alone goes to `/v1/download?token=…`. A link is followed as given: on the platform's own origin with the
 * project headers and the token, elsewhere with neither credentials nor the token. The token is a secret of the request,
 * as the credentials are: never repeated in an error.
 */
function fetchFile(client: PlatformClient, download: Download, context: PollContext): Promise<PlatformResponse<Buffer>> {
  const request = { method: 'GET', rate: 'bulk', retry: 'read', response: 'buffer', signal: context.signal, onWait: context.onWait } as const;
  if (!download.link) {
    const secrets = download.token ? [download.token] : [];
    return client.request<Buffer>({ ...request, auth: 'project', path: DOWNLOAD_PATH, query: { token: download.token }, secrets });
  }
  const base = new URL(`${trimTrailing(client.baseUrl, '/')}/`);
  const url = new URL(download.link, base);
  const platformOrigin = url.origin === base.origin;
  if (platformOrigin && download.token && !url.searchParams.has('token')) url.searchParams.set('token', download.token);
  const secrets = [download.token, url.searchParams.get('token')].filter((token): token is string => !!token);
  return client.request<Buffer>({ ...request, auth: platformOrigin ? 'project' : 'none', url: url.href, secrets });
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

function readResultFile(file: PlatformResponse<Buffer>, jobId: string): unknown[] {
  try {
    return resultRecords(file.contentType, file.body);
  } catch (err) {
    throw new PlatformError(
      'BAD_RESPONSE',
      catalogText('error.bulk.resultFile', { jobId, contentType: file.contentType || catalogText('value.noContentType'), cause: causeOf(err) }),
      {
        statusCode: file.statusCode,
        body: file.body.toString('utf8', 0, 1000),
        cause: err,
      },
    );
  }
}

/**
 * The result record for each address of a job: by the address a record echoes (so a reordered file still lines up; an
 * address no record echoes gets none, never another's), or by position only when no record echoes one.
 */
function pairRecords(addresses: readonly string[], records: unknown[], jobId: string): { records: unknown[]; pairing: Pairing } {
  const echoed = records.map(echoedAddress);
  if (echoed.some((address) => address !== undefined)) return pairByEcho(addresses, records, echoed);
  if (records.length === addresses.length) return { records, pairing: { by: 'position', unmatched: [], strayRecords: 0, strayEchoes: [] } };
  throw new PlatformError('BAD_RESPONSE', catalogText('error.bulk.rowCount', { jobId, rows: records.length, addresses: addresses.length }));
}

function pairByEcho(addresses: readonly string[], records: unknown[], echoed: Array<string | undefined>): { records: unknown[]; pairing: Pairing } {
  const byAddress = new Map<string, number[]>();
  echoed.forEach((address, i) => {
    if (address === undefined) return;
    const key = sameAddress(address);
    const sameKey = byAddress.get(key);
    if (sameKey) sameKey.push(i);
    else byAddress.set(key, [i]);
  });
  const used = new Set<number>();
  const paired = addresses.map((address) => {
    // An address sent twice takes the next row echoing it; a file with fewer copies (a platform that
    // returns each address once) gives the last one to the rest: the same address, the same result.
    const echoing = byAddress.get(sameAddress(address));
    const at = echoing && echoing.length > 1 ? echoing.shift() : echoing?.[0];
    if (at === undefined) return undefined;
    used.add(at);
    return records[at];
  });
  const stray = records.map((_record, i) => i).filter((i) => !used.has(i));
  const unmatched = paired.flatMap((record, position): UnmatchedAddress[] => {
    if (record !== undefined) return [];
    const echoInPlace = position < records.length && !used.has(position) ? echoed[position] : undefined;
    return [echoInPlace === undefined ? { position } : { position, echoInPlace }];
  });
  const strayEchoes = stray.slice(0, STRAY_ECHOES_KEPT).map((i) => echoed[i] ?? '');
  return { records: paired, pairing: { by: 'echo', unmatched, strayRecords: stray.length, strayEchoes } };
}

function echoedAddress(record: unknown): string | undefined {
  if (!isRecord(record)) return undefined;
  const key = Object.keys(record).find((name) => ECHOED_ADDRESS_MEMBER.test(name) && typeof record[name] === 'string');
  return key === undefined ? undefined : (record[key] as string);
}

/**
 * An address as echoes are compared: NFKC (full-width `５` is `5`), case folded in full (lower, upper, lower: `ß` and
 * `SS` alike, as Unicode's full case folding does), white space collapsed.
 */
export function sameAddress(address: string): string {
  return address.normalize('NFKC').toLowerCase().toUpperCase().toLowerCase().normalize('NFKC').trim().replace(/\s+/g, ' ');
}
