import { randomBytes } from 'node:crypto';
import { accepts, badRequest, notAcceptable, sendJson } from '../http';
import { SANDBOX_LIMITS, makeRoomIn } from '../options';
import { RouteContext, Sandbox } from '../server';
import { geocode } from './geocode';
import { readCsv, toCsv } from '../csv';
import { JobTiming, TOO_MANY_JOBS, expiredBody, isExpired, makeRoom, newTiming, phaseOf } from '../job-clock';

/**
 * Bulk geocoding in three steps, as the spec describes them:
 * - `POST /v1/geocode/bulk` (endpoint `bulk-upload`): multipart form field `file`, a UTF-8 CSV with the
 *   single column `address` and one address per row; 201 with the job id.
 * - `GET /v1/geocode/bulk/:jobId` (endpoint `bulk-status`): `{ jobId, status, message, payload }`; the job
 *   runs for 0.25 s plus 0.4 ms a row by the sandbox's clock, polled or not (`job-clock.ts`), then its
 *   payload holds a download link with a fresh token; 24 hours after, status and download get 410.
 * - Caps (docs/sandbox.md): a file of at most `BULK_LIMITS.fileBytes` (413 beyond) and
 *   `BULK_LIMITS.rows` addresses (400 beyond); `BULK_LIMITS.jobs` jobs kept (the oldest completed ones
 *   are forgotten first; 429 when all are running).
 * - `GET /v1/download?token=…` (endpoint `bulk-download`): the result file. Tokens contain `+`, `/` and `=`,
 *   so the query must be URL-encoded; they expire. An `Accept` that does not admit the file's type
 *   (`application/json` for a CSV file, say) gets 406.
 * What the spec leaves "not shown" is switchable through `bulkControls(sandbox)`.
 */
export interface BulkControls {
  /** Dotted path of the job id in the upload response; empty: only the Location header names the job. */
  jobIdMember: string;
  /** Dotted path of the download link (or bare token) in a complete status response. */
  downloadMember: string;
  downloadAs: 'link' | 'token';
  /** Origin put into download links instead of the sandbox's own (a server in front of it, in tests). */
  linkOrigin: string | undefined;
  resultFormat: 'csv' | 'json' | 'ndjson';
  resultOrder: 'input' | 'reversed';
  /** Whether each result row repeats its address. */
  echoAddress: boolean;
  /** A hostile or broken platform: the first this-many result rows (in file order) echo an address that was not sent. */
  rewrittenEchoes: number;
  /** How result rows write the address they echo: as sent, upper-cased, or in Unicode NFKC (full-width digits as ASCII). */
  echoForm: 'sent' | 'upper' | 'nfkc';
  /** The last this-many result rows are left out of the file. */
  droppedRows: number;
  /** `fail`: jobs end with status "failed"; `never`: jobs stay "running". */
  outcome: 'complete' | 'fail' | 'never';
  downloadTokenTtlMs: number;
  /** The next this-many download tokens are issued already expired. */
  expiredTokens: number;
  /** The status of an upload that created its job: the spec's 201, or another 2xx for a platform that strays from it. */
  uploadStatus: number;
}

export interface BulkJob extends JobTiming {
  id: string;
  addresses: string[];
  outcome: BulkControls['outcome'];
}

export const BULK_LIMITS = { fileBytes: 16 * 1024 * 1024, rows: 100_000, jobs: 100 } as const;

const CONTROL_DEFAULTS: BulkControls = {
  jobIdMember: 'jobId',
  downloadMember: 'payload.link',
  downloadAs: 'link',
  linkOrigin: undefined,
  resultFormat: 'csv',
  resultOrder: 'input',
  echoAddress: true,
  rewrittenEchoes: 0,
  echoForm: 'sent',
  droppedRows: 0,
  outcome: 'complete',
  downloadTokenTtlMs: 10 * 60_000,
  expiredTokens: 0,
  uploadStatus: 201,
};

const RESULT_COLUMNS = ['address', 'latitude', 'longitude', 'match_type', 'accuracy', 'match_component', 'label', 'error'];

export function bulkControls(sandbox: Sandbox): BulkControls {
  return sandbox.stateOf('bulk-controls', () => ({ ...CONTROL_DEFAULTS }));
}

/** Puts every control back to its default and forgets all jobs and tokens. */
export function resetBulk(sandbox: Sandbox): void {
  Object.assign(bulkControls(sandbox), CONTROL_DEFAULTS);
  bulkJobs(sandbox).clear();
  downloadTokens(sandbox).clear();
}

export function bulkJobs(sandbox: Sandbox): Map<string, BulkJob> {
  return sandbox.stateOf('bulk-jobs', () => new Map<string, BulkJob>());
}

function downloadTokens(sandbox: Sandbox): Map<string, { jobId: string; expiresAt: number }> {
  return sandbox.stateOf('bulk-download-tokens', () => new Map<string, { jobId: string; expiresAt: number }>());
}

export default function bulkEndpoints(sandbox: Sandbox): void {
  const upload = { endpoint: 'bulk-upload', auth: 'project', permission: 'bulk', maxBodyBytes: BULK_LIMITS.fileBytes } as const;
  sandbox.route('POST', '/v1/geocode/bulk', upload, async (ctx) => {
    const addresses = await readUpload(ctx);
    if (!addresses) return;
    const controls = bulkControls(sandbox);
    if (!makeRoom(sandbox, bulkJobs(sandbox), BULK_LIMITS.jobs, sandbox.options.jobPolls)) return void sendJson(ctx.res, 429, TOO_MANY_JOBS(BULK_LIMITS.jobs));
    const job: BulkJob = {
      id: `bulk-${randomBytes(6).toString('hex')}`,
      addresses,
      outcome: controls.outcome,
      ...newTiming(sandbox, 'bulk', addresses.length),
    };
    bulkJobs(sandbox).set(job.id, job);
    const response: Record<string, unknown> = { status: 'accepted', message: `${addresses.length} addresses queued` };
    if (controls.jobIdMember) setAt(response, controls.jobIdMember, job.id);
    ctx.res.setHeader('location', `/v1/geocode/bulk/${job.id}`);
    sendJson(ctx.res, controls.uploadStatus, response);
  });

  sandbox.route('GET', '/v1/geocode/bulk/:jobId', { endpoint: 'bulk-status', auth: 'project', permission: 'bulk' }, (ctx) => {
    const job = bulkJobs(sandbox).get(ctx.params.jobId);
    if (!job) return void sendJson(ctx.res, 404, { error: 'not_found', message: 'no such job' });
    // Tests that count polls may change `jobPolls` while a job runs: the current count applies.
    const pollsNeeded = sandbox.options.jobPolls;
    const now = phaseOf(sandbox, job, { poll: true, pollsNeeded });
    const total = job.addresses.length;
    if (now.phase === 'running' || job.outcome === 'never') {
      const fraction = now.phase === 'running' ? now.fraction : 1;
      const processed = Math.min(total - 1, Math.floor(total * fraction));
      const queued = pollsNeeded !== undefined ? job.polls === 1 : processed === 0;
      return void sendJson(ctx.res, 200, { jobId: job.id, status: queued ? 'queued' : 'running', message: 'geocoding', payload: { processed, total } });
    }
    if (now.phase === 'expired') return void sendJson(ctx.res, 410, expiredBody(sandbox, job.id));
    if (job.outcome === 'fail') {
      return void sendJson(ctx.res, 200, { jobId: job.id, status: 'failed', message: 'the geocoding engine stopped', payload: {} });
    }
    const controls = bulkControls(sandbox);
    const token = issueDownloadToken(sandbox, job.id);
    const link = `${controls.linkOrigin ?? sandbox.url}/v1/download?token=${encodeURIComponent(token)}`;
    const response: Record<string, unknown> = { jobId: job.id, status: 'completed', message: 'results ready', payload: { processed: total, total } };
    setAt(response, controls.downloadMember, controls.downloadAs === 'link' ? link : token);
    sendJson(ctx.res, 200, response);
  });

  sandbox.route('GET', '/v1/download', { endpoint: 'bulk-download', auth: 'none' }, (ctx) => {
    const rawToken = /(?:^|&)token=([^&]*)/.exec((ctx.req.url ?? '').split('?')[1] ?? '')?.[1];
    if (rawToken === undefined || rawToken === '') return void badRequest(ctx.res, 'query parameter token is required');
    if (/[+/=]/.test(rawToken)) return void badRequest(ctx.res, 'the token must be URL-encoded (it contains "+", "/" or "=")');
    const grant = downloadTokens(sandbox).get(decodeURIComponent(rawToken));
    const job = grant && bulkJobs(sandbox).get(grant.jobId);
    if (!grant || !job) return void sendJson(ctx.res, 404, { error: 'not_found', message: 'unknown download token' });
    if (isExpired(sandbox, job, sandbox.options.jobPolls)) return void sendJson(ctx.res, 410, expiredBody(sandbox, job.id));
    if (sandbox.clock.now() >= grant.expiresAt) return void sendJson(ctx.res, 401, { error: 'unauthorized', message: 'download token expired' });
    sendResultFile(ctx, job, bulkControls(sandbox));
  });
}

/** The addresses of an upload, or undefined after responding with 400. */
async function readUpload(ctx: RouteContext): Promise<string[] | undefined> {
  const contentType = ctx.req.headers['content-type'] ?? '';
  if (!contentType.startsWith('multipart/form-data')) return void badRequest(ctx.res, 'the upload must be multipart/form-data');
  let form: globalThis.FormData;
  try {
    form = await new Response(new Uint8Array(ctx.body), { headers: { 'content-type': contentType } }).formData();
  } catch {
    return void badRequest(ctx.res, 'the multipart body cannot be read');
  }
  const file = form.get('file');
  if (!(file instanceof Blob)) return void badRequest(ctx.res, 'form field "file" must be a file');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(await file.arrayBuffer());
  } catch {
    return void badRequest(ctx.res, 'the file is not UTF-8');
  }
  let records: string[][];
  try {
    records = readCsv(text);
  } catch (err) {
    return void badRequest(ctx.res, `the file is not CSV: ${(err as Error).message}`);
  }
  const [header, ...rows] = records;
  if (!header || header.length !== 1 || header[0] !== 'address') return void badRequest(ctx.res, 'the CSV must have the single column "address"');
  if (rows.length === 0) return void badRequest(ctx.res, 'the CSV holds no addresses');
  if (rows.length > BULK_LIMITS.rows)
    return void badRequest(ctx.res, `the CSV holds ${rows.length} addresses; the sandbox takes at most ${BULK_LIMITS.rows} a file`);
  const bad = rows.findIndex((row) => row.length !== 1 || row[0].trim() === '');
  if (bad >= 0) return void badRequest(ctx.res, `CSV row ${bad + 1} is not one non-empty address`);
  return rows.map((row) => row[0]);
}

function echoed(address: string, controls: BulkControls): string {
  if (controls.echoForm === 'upper') return address.toUpperCase();
  if (controls.echoForm === 'nfkc') return address.normalize('NFKC');
  return address;
}

function sendResultFile(ctx: RouteContext, job: BulkJob, controls: BulkControls): void {
  const order = controls.resultOrder === 'reversed' ? [...job.addresses].reverse() : job.addresses;
  const results = order
    .slice(0, Math.max(0, order.length - controls.droppedRows))
    .map((address, i) => ({ address: i < controls.rewrittenEchoes ? `${address} (rewritten)` : echoed(address, controls), feature: geocode(address) }));
  let body: string;
  let type: string;
  if (controls.resultFormat === 'csv') {
    type = 'text/csv; charset=utf-8';
    const columns = controls.echoAddress ? RESULT_COLUMNS : RESULT_COLUMNS.slice(1);
    body = toCsv([columns, ...results.map(({ address, feature }) => csvResultRow(address, feature).slice(RESULT_COLUMNS.length - columns.length))]);
  } else {
    const elements = results.map(({ address, feature }) => ({
      ...(controls.echoAddress ? { address } : {}),
      ...(feature ? { result: feature } : { result: null, error: 'no match' }),
    }));
    if (controls.resultFormat === 'json') {
      type = 'application/json; charset=utf-8';
      body = JSON.stringify({ jobId: job.id, results: elements });
    } else {
      type = 'application/x-ndjson';
      body = elements.map((element) => `${JSON.stringify(element)}\n`).join('');
    }
  }
  const accept = ctx.req.headers.accept;
  if (!accepts(accept, type)) return notAcceptable(ctx.res, type, accept);
  const extension = controls.resultFormat === 'ndjson' ? 'jsonl' : controls.resultFormat;
  ctx.res.writeHead(200, {
    'content-type': type,
    'content-length': Buffer.byteLength(body),
    'content-disposition': `attachment; filename="${job.id}.${extension}"`,
  });
  ctx.res.end(body);
}

function csvResultRow(address: string, feature: Record<string, unknown> | undefined): string[] {
  if (!feature) return [address, '', '', '', '', '', '', 'no match'];
  const { geometry, properties } = feature as {
    geometry: { coordinates: [number, number] };
    properties: { quality_metrics: Record<string, string>; address_components: { place: { label: string } } };
  };
  const [lon, lat] = geometry.coordinates;
  const quality = properties.quality_metrics;
  return [address, String(lat), String(lon), quality.match_type, quality.accuracy, quality.match_component, properties.address_components.place.label, ''];
}

/** A token with `+`, `/` and `=` in it, as standard base64 tokens have. */
function issueDownloadToken(sandbox: Sandbox, jobId: string): string {
  const token = `${randomBytes(12).toString('base64')}+/${randomBytes(16).toString('base64')}`;
  const controls = bulkControls(sandbox);
  const expired = controls.expiredTokens > 0;
  if (expired) controls.expiredTokens--;
  const tokens = downloadTokens(sandbox);
  makeRoomIn(tokens, SANDBOX_LIMITS.tokens, (grant) => grant.expiresAt <= sandbox.clock.now());
  tokens.set(token, { jobId, expiresAt: expired ? 0 : sandbox.clock.now() + controls.downloadTokenTtlMs });
  return token;
}

function setAt(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let current = target;
  for (const key of keys.slice(0, -1)) {
    if (current[key] === null || typeof current[key] !== 'object') current[key] = {};
    current = current[key] as Record<string, unknown>;
  }
  current[keys[keys.length - 1]] = value;
}
