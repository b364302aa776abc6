import http from 'node:http';
import type { AddressInfo } from 'node:net';
import should from 'should';
import { SANDBOX_DEFAULTS, SANDBOX_LIMITS, Sandbox, SandboxOptions, startSandbox } from '../../sandbox/index';
import { issueToken } from '../../sandbox/endpoints/auth';
import { BULK_LIMITS } from '../../sandbox/endpoints/bulk';
import {
  DELIVERY_ATTEMPT_HEADER,
  DELIVERY_ID_HEADER,
  PUBSUB_LIMITS,
  addSubscription,
  addTopic,
  pubsubState,
  waitForDeliveries,
} from '../../sandbox/pubsub-state';
import { JOB_DURATIONS, JOB_RESULT_TTL_MS } from '../../sandbox/job-clock';
import { waitUntil } from '../support/wait';

/**
 * The sandbox behaves like a platform (issue 52 point 5): jobs take a time that grows with their size
 * by the sandbox's clock and their results expire, requests and lists beyond its caps are refused,
 * and webhooks are retried with backoff under one delivery id.
 */

interface Response {
  status: number;
  headers: http.IncomingHttpHeaders;
  json: Record<string, unknown>;
}

const PROJECT = { 'x-svc-project-id': SANDBOX_DEFAULTS.projectId, 'x-svc-api-key': SANDBOX_DEFAULTS.apiKey };
const PUBSUB = { apikey: SANDBOX_DEFAULTS.pubsubApiKey };

/** One HTTP exchange; the body as given (JSON-encoded unless a string or Buffer). */
function call(sandbox: Sandbox, method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<Response> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
    const sent = { ...(body !== undefined && !headers['content-type'] ? { 'content-type': 'application/json' } : {}), ...headers };
    const req = http.request(new URL(path, sandbox.url), { method, headers: sent, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: Record<string, unknown>;
        try {
          json = JSON.parse(text) as Record<string, unknown>;
        } catch {
          json = { text };
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, json });
      });
    });
    req.on('error', reject);
    req.end(data);
  });
}

function multipart(csv: string): { headers: Record<string, string>; body: Buffer } {
  const boundary = 'platformlike-boundary';
  const body = Buffer.from(
    `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.csv"\r\ncontent-type: text/csv\r\n\r\n${csv}\r\n--${boundary}--\r\n`,
  );
  return { headers: { ...PROJECT, 'content-type': `multipart/form-data; boundary=${boundary}` }, body };
}

const addressesCsv = (rows: number) => `address\n${Array.from({ length: rows }, (_v, i) => `${i + 1} Main Street`).join('\n')}\n`;

/** A clock the test moves by hand. */
function handClock(): { now(): number; advance(ms: number): void } {
  let time = Date.UTC(2026, 0, 5, 12);
  return { now: () => time, advance: (ms) => void (time += ms) };
}

const isolineBody = (values: number[], origins = 1) => ({
  async: true,
  origins: Array.from({ length: origins }, (_v, i) => ({ type: 'coordinates', latitude: 52.5 + i * 0.01, longitude: 13.4 })),
  range: { type: 'time', value: values },
});
const sequenceBody = (count: number, async = true) => ({
  async,
  waypoints: Array.from({ length: count }, (_v, i) => ({ type: 'coordinates', latitude: 52.5 + (i % 10) * 0.01, longitude: 13.4 + Math.floor(i / 10) * 0.01 })),
});

describe('sandbox platform behaves like a platform (issue 52)', function () {
  const started: Sandbox[] = [];
  const start = async (options: SandboxOptions = {}) => {
    const sandbox = await startSandbox(options);
    started.push(sandbox);
    return sandbox;
  };
  afterEach(async function () {
    await Promise.all(started.splice(0).map((sandbox) => sandbox.close()));
  });

  describe('jobs take time by their size, run unpolled, and expire', function () {
    const upload = async (sandbox: Sandbox, rows: number) => {
      const { headers, body } = multipart(addressesCsv(rows));
      const res = await call(sandbox, 'POST', '/v1/geocode/bulk', headers, body);
      should(res.status).equal(201);
      return String(res.json.jobId);
    };
    const bulkStatus = (sandbox: Sandbox, jobId: string) => call(sandbox, 'GET', `/v1/geocode/bulk/${jobId}`, PROJECT);

    it('a 10-row bulk job completes within a second of real time; it needs no polls to run', async function () {
      const sandbox = await start();
      const jobId = await upload(sandbox, 10);
      const expected = JOB_DURATIONS.bulk.baseMs + 10 * JOB_DURATIONS.bulk.perItemMs;
      should(expected).be.below(1000);
      await new Promise((resolve) => setTimeout(resolve, expected + 50));
      // The first poll, after the job's time: complete.
      const status = await bulkStatus(sandbox, jobId);
      should(status.json).match({ status: 'completed', payload: { processed: 10, total: 10 } });
      should(sandbox.requests('bulk-status')).have.length(1);
    });

    it('a 100,000-row bulk job takes tens of seconds by the sandbox clock, polled or not', async function () {
      this.timeout(60_000);
      const clock = handClock();
      const sandbox = await start({ clock });
      const jobId = await upload(sandbox, BULK_LIMITS.rows);
      const duration = JOB_DURATIONS.bulk.baseMs + BULK_LIMITS.rows * JOB_DURATIONS.bulk.perItemMs;
      should(duration).be.within(20_000, 60_000);
      should((await bulkStatus(sandbox, jobId)).json).match({ status: 'queued', payload: { processed: 0, total: BULK_LIMITS.rows } });
      clock.advance(duration / 2);
      const half = await bulkStatus(sandbox, jobId);
      should(half.json).match({ status: 'running' });
      should((half.json.payload as { processed: number }).processed).be.within(BULK_LIMITS.rows * 0.4, BULK_LIMITS.rows * 0.6);
      clock.advance(duration / 2);
      const done = await bulkStatus(sandbox, jobId);
      should(done.json).match({ status: 'completed', payload: { processed: BULK_LIMITS.rows } });
    });

    it('bulk results expire 24 hours after the job completed: status and download get 410 in the error shape', async function () {
      const clock = handClock();
      const sandbox = await start({ clock });
      const jobId = await upload(sandbox, 10);
      clock.advance(1000);
      const link = String(((await bulkStatus(sandbox, jobId)).json.payload as { link: string }).link);
      should((await call(sandbox, 'GET', new URL(link).pathname + new URL(link).search)).status).equal(200);
      clock.advance(JOB_RESULT_TTL_MS - 2000);
      const late = await bulkStatus(sandbox, jobId);
      should(late.status).equal(200);
      const lateLink = new URL(String((late.json.payload as { link: string }).link));
      clock.advance(1500);
      const expired = await bulkStatus(sandbox, jobId);
      should(expired.status).equal(410);
      should(expired.json).eql({ error: 'job_expired', message: `the results of job ${jobId} have expired (they are kept 24 hours after the job completes)` });
      // A download token still valid (10 minutes) does not outlive the results.
      const download = await call(sandbox, 'GET', lateLink.pathname + lateLink.search);
      should(download.status).equal(410);
      should(download.json).match({ error: 'job_expired' });
    });

    it('isoline and sequence jobs take longer with more ranges or waypoints, complete by the clock, and expire', async function () {
      const clock = handClock();
      const sandbox = await start({ clock });
      const isoline = async (values: number[]) => String((await call(sandbox, 'POST', '/v1/routing/isoline', PROJECT, isolineBody(values))).json.jobId);
      const isolineJob = (jobId: string) => call(sandbox, 'GET', `/v1/routing/isoline/jobs/${jobId}`, PROJECT);
      const one = await isoline([600]);
      const five = await isoline([300, 600, 900, 1200, 1500]);
      clock.advance(JOB_DURATIONS.isoline.baseMs + JOB_DURATIONS.isoline.perItemMs);
      should((await isolineJob(one)).json).have.property('isoline');
      should((await isolineJob(five)).json).match({ status: 'running' });
      clock.advance(4 * JOB_DURATIONS.isoline.perItemMs);
      should((await isolineJob(five)).json).have.property('isoline');

      const sequencePath = `/v1/routing/sequence/${SANDBOX_DEFAULTS.projectId}`;
      const jobPath = (jobId: unknown) => `/v1/routing/sequence/async/${SANDBOX_DEFAULTS.projectId}/jobs/${String(jobId)}`;
      const small = (await call(sandbox, 'POST', sequencePath, PROJECT, sequenceBody(3))).json.jobId;
      const large = (await call(sandbox, 'POST', sequencePath, PROJECT, sequenceBody(30))).json.jobId;
      clock.advance(JOB_DURATIONS.sequence.baseMs + 3 * JOB_DURATIONS.sequence.perItemMs);
      should((await call(sandbox, 'GET', jobPath(small), PROJECT)).json).have.property('waypoints');
      should((await call(sandbox, 'GET', jobPath(large), PROJECT)).json).match({ status: 'running' });
      clock.advance(JOB_RESULT_TTL_MS + 30 * JOB_DURATIONS.sequence.perItemMs);
      const expired = await call(sandbox, 'GET', jobPath(large), PROJECT);
      should(expired.status).equal(410);
      should(expired.json).match({ error: 'job_expired' });
      should((await isolineJob(one)).status).equal(410);
    });

    it('jobTimeScale scales the durations (0: complete at once); jobPolls, a test knob, counts polls instead of the clock', async function () {
      const instant = await start({ jobTimeScale: 0 });
      should((await call(instant, 'GET', `/v1/geocode/bulk/${await upload(instant, 10)}`, PROJECT)).json).match({ status: 'completed' });
      const counted = await start({ jobPolls: 2, clock: handClock() });
      const jobId = await upload(counted, 10);
      should((await bulkStatus(counted, jobId)).json).match({ status: 'queued' });
      should((await bulkStatus(counted, jobId)).json).match({ status: 'completed' });
    });

    it('keeps at most 100 bulk jobs: the oldest completed ones are forgotten first, and 429 while all are running', async function () {
      this.timeout(60_000);
      const clock = handClock();
      const sandbox = await start({ clock });
      const first = await upload(sandbox, 1);
      clock.advance(1000);
      for (let i = 1; i < BULK_LIMITS.jobs; i++) await upload(sandbox, 1);
      // The first one (complete) makes room for one more; then all kept jobs are running.
      await upload(sandbox, 1);
      should((await bulkStatus(sandbox, first)).status).equal(404);
      const { headers, body } = multipart(addressesCsv(1));
      const refused = await call(sandbox, 'POST', '/v1/geocode/bulk', headers, body);
      should(refused.status).equal(429);
      should(refused.json).match({ error: 'too_many_jobs' });
    });
  });

  describe('caps: requests, files and lists beyond a stated size are refused', function () {
    it('a JSON body over 1 MB gets 413, declared or sent chunked, and the sandbox keeps none of it', async function () {
      const sandbox = await start();
      const big = JSON.stringify({ Name: 'x'.repeat(SANDBOX_LIMITS.bodyBytes), Description: '' });
      const declared = await call(sandbox, 'POST', '/v1/pubsub/topics', { ...PUBSUB, 'content-length': String(Buffer.byteLength(big)) }, big);
      should(declared.status).equal(413);
      should(declared.json).eql({ error: 'payload_too_large', message: `the request body is larger than ${SANDBOX_LIMITS.bodyBytes} bytes` });
      // Chunked, without a length: refused once the cap is passed, the connection closed after the refusal.
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request(new URL('/v1/pubsub/topics', sandbox.url), {
          method: 'POST',
          headers: { ...PUBSUB, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
          agent: false,
        });
        let responded = false;
        req.on('response', (res) => {
          responded = true;
          res.resume();
          res.on('end', () => req.destroy());
          resolve(res.statusCode ?? 0);
        });
        req.on('error', (err) => (responded ? undefined : reject(err)));
        const chunk = Buffer.alloc(64 * 1024, 'x');
        const pump = () => {
          while (!responded && !req.destroyed && req.write(chunk));
          if (!responded && !req.destroyed) req.once('drain', pump);
        };
        pump();
      });
      should(status).equal(413);
      should(sandbox.requests('topic-create').map((r) => r.body)).eql(['', '']);
      should(pubsubState(sandbox).topics.size).equal(0);
      // A body under the cap is read as before.
      should((await call(sandbox, 'POST', '/v1/pubsub/topics', PUBSUB, { Name: 'small', Description: '' })).status).equal(200);
    });

    it('a bulk file over 16 MB gets 413; over 100,000 rows 400', async function () {
      this.timeout(30_000);
      const sandbox = await start();
      const huge = multipart(`address\n${'x'.repeat(BULK_LIMITS.fileBytes)}\n`);
      should((await call(sandbox, 'POST', '/v1/geocode/bulk', huge.headers, huge.body)).status).equal(413);
      const many = multipart(addressesCsv(BULK_LIMITS.rows + 1));
      const refused = await call(sandbox, 'POST', '/v1/geocode/bulk', many.headers, many.body);
      should(refused.status).equal(400);
      should(refused.json).eql({
        error: 'bad_request',
        message: `the CSV holds ${BULK_LIMITS.rows + 1} addresses; the sandbox takes at most ${BULK_LIMITS.rows} a file`,
      });
    });

    it('isoline origins and ranges, sequence and route waypoints beyond the caps get 400', async function () {
      const sandbox = await start();
      const refused = async (path: string, body: unknown, headers: Record<string, string> = PROJECT) => {
        const res = await call(sandbox, 'POST', path, headers, body);
        should(res.status).equal(400);
        return String(res.json.message);
      };
      should(await refused('/v1/routing/isoline', isolineBody([600], 11))).equal('origins holds 11 points; the sandbox takes at most 10');
      should(await refused('/v1/routing/isoline', isolineBody(Array.from({ length: 11 }, (_v, i) => (i + 1) * 60)))).equal(
        'range.value holds 11 ranges; the sandbox takes at most 10',
      );
      should(await refused('/v1/routing/isoline', { ...isolineBody([60, 120, 180, 240, 300], 10), shape: 5000 })).match(/at most 200000$/);
      should(await refused(`/v1/routing/sequence/${SANDBOX_DEFAULTS.projectId}`, sequenceBody(101, false))).equal(
        'waypoints holds 101 points; the sandbox takes at most 100',
      );
      const waypoints = Array.from({ length: 101 }, () => ({ type: 'geohash', geohash: 'u33dc0' }));
      should(await refused('/v1/routing', { waypoints }, { 'x-svc-vpm-id': SANDBOX_DEFAULTS.projectId, 'x-svc-api-key': SANDBOX_DEFAULTS.apiKey })).equal(
        'waypoints holds 101 points; the sandbox takes at most 100',
      );
    });

    it('topics and subscriptions kept, location ids per subscription and published data are capped', async function () {
      const sandbox = await start();
      for (let i = 0; i < PUBSUB_LIMITS.topics; i++) addTopic(sandbox, `t${i}`);
      const topic = await call(sandbox, 'POST', '/v1/pubsub/topics', PUBSUB, { Name: 'one more', Description: '' });
      should(topic.status).equal(409);
      should(topic.json).match({ isSuccess: false, data: null, error: 'limit_exceeded' });
      const ids = Array.from({ length: PUBSUB_LIMITS.locationIds + 1 }, (_v, i) => `cell-${i}`);
      const subscription = await call(sandbox, 'POST', '/v1/pubsub/subscriptions', PUBSUB, {
        WebhookAddress: 'http://127.0.0.1:9/hook',
        LocationIds: ids,
        TopicId: 1,
      });
      should(subscription.status).equal(400);
      for (let i = 0; i < PUBSUB_LIMITS.subscriptions; i++)
        addSubscription(sandbox, { topicId: 1, webhookAddress: 'http://127.0.0.1:9/hook', locationIds: ['a'] });
      const over = await call(sandbox, 'POST', '/v1/pubsub/subscriptions', PUBSUB, {
        WebhookAddress: 'http://127.0.0.1:9/hook',
        LocationIds: ['a'],
        TopicId: 1,
      });
      should(over.status).equal(409);
      const data = { blob: 'x'.repeat(PUBSUB_LIMITS.dataBytes) };
      const publish = await call(sandbox, 'POST', '/v1/pubsub/topics/2/publish', PUBSUB, { LocationId: 'b', Data: data });
      should(publish.status).equal(413);
      should(publish.json).match({ isSuccess: false, error: 'limit_exceeded' });
    });

    it('keeps at most 10,000 bearer tokens: the expired ones are forgotten first, then the oldest', async function () {
      const clock = handClock();
      const sandbox = await start({ clock });
      const tokens = () => sandbox.stateOf('tokens', () => new Map<string, number>());
      const shortLived = issueToken(sandbox, 1, false);
      const oldest = issueToken(sandbox, 3600, false);
      clock.advance(2000);
      for (let i = 2; i < SANDBOX_LIMITS.tokens; i++) issueToken(sandbox, 3600, false);
      should(tokens().size).equal(SANDBOX_LIMITS.tokens);
      issueToken(sandbox, 3600, false);
      should(tokens().has(shortLived)).be.false();
      should(tokens().has(oldest)).be.true();
      issueToken(sandbox, 3600, false);
      should(tokens().has(oldest)).be.false();
      should(tokens().size).equal(SANDBOX_LIMITS.tokens);
    });

    it('keeps the request log bounded: the oldest requests go once their bodies pass 64 MB', async function () {
      this.timeout(30_000);
      const sandbox = await start();
      // Refused (Data too large) so that nothing but the log keeps them.
      const body = JSON.stringify({ LocationId: 'a', Data: { x: 'x'.repeat(SANDBOX_LIMITS.bodyBytes - 100) } });
      const count = Math.ceil(SANDBOX_LIMITS.logBodyBytes / Buffer.byteLength(body)) + 5;
      for (let i = 0; i < count; i++) await call(sandbox, 'POST', '/v1/pubsub/topics/1/publish', PUBSUB, body);
      should(sandbox.log.length).be.below(count);
      should(sandbox.log.reduce((sum, entry) => sum + entry.body.length, 0)).be.belowOrEqual(SANDBOX_LIMITS.logBodyBytes);
    });
  });

  describe('webhooks are retried with backoff under one delivery id', function () {
    interface Hit {
      headers: http.IncomingHttpHeaders;
      body: string;
    }
    const receivers: http.Server[] = [];
    /** A receiver that responds to its n-th request (from 0) with `respond(n)`: a status, or 'hang'. */
    async function receiver(respond: (n: number) => number | 'hang'): Promise<{ url: string; hits: Hit[] }> {
      const hits: Hit[] = [];
      const server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          const reply = respond(hits.length);
          hits.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
          if (reply !== 'hang') res.writeHead(reply).end();
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      receivers.push(server);
      return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, hits };
    }
    afterEach(async function () {
      for (const server of receivers.splice(0)) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });

    async function publishTo(url: string, options: SandboxOptions = {}, delays = [50, 100, 200, 400]) {
      const lines: string[] = [];
      const delivered: string[] = [];
      const sandbox = await start({ warn: (line) => lines.push(line), info: (line) => delivered.push(line), ...options });
      Object.assign(pubsubState(sandbox), { retryDelaysMs: delays, attemptTimeoutMs: 300 });
      const topic = addTopic(sandbox, 'retries');
      const subscription = addSubscription(sandbox, { topicId: topic.id, webhookAddress: url, secretToken: 'hook-secret', locationIds: ['cell-1'] });
      const res = await call(sandbox, 'POST', `/v1/pubsub/topics/${topic.id}/publish`, PUBSUB, { LocationId: 'cell-1', Data: { n: 1 } });
      should(res.status).equal(200);
      return { sandbox, lines, delivered, subscription };
    }
    const listed = async (sandbox: Sandbox) => ((await call(sandbox, 'GET', '/v1/pubsub/subscriptions', PUBSUB)).json.data as { items: Fields[] }).items;
    type Fields = Record<string, unknown>;

    it('5xx and no response are tried again, each attempt the same request with the same delivery id; each failure is one warning, the delivery one line (issue 54)', async function () {
      const target = await receiver((n) => (n === 0 ? 503 : n === 1 ? 'hang' : 200));
      const { sandbox, lines, delivered } = await publishTo(target.url);
      const [delivery] = await waitForDeliveries(sandbox, 1, 5000);
      should(delivery).match({ status: 200, attempts: 3, finished: true });
      should(target.hits).have.length(3);
      const ids = target.hits.map((hit) => hit.headers[DELIVERY_ID_HEADER]);
      should(ids[0]).match(/^[0-9a-f-]{36}$/);
      should(new Set(ids).size).equal(1);
      should(ids[0]).equal(delivery.id);
      should(target.hits.map((hit) => hit.headers[DELIVERY_ATTEMPT_HEADER])).eql(['1', '2', '3']);
      should(new Set(target.hits.map((hit) => `${String(hit.headers['svc-signature'])}|${hit.body}`)).size).equal(1);
      should(lines).have.length(2);
      should(lines[0]).equal(`webhook delivery ${delivery.id} to ${target.url} (subscription 1), attempt 1 of 5 failed: responded 503; trying again in 0.05 s`);
      should(lines[1]).match(/attempt 2 of 5 failed: no response \(.*\); trying again in 0\.1 s$/);
      should(delivered).eql([`webhook delivery ${delivery.id} to ${target.url} (subscription 1), attempt 3 of 5 delivered: responded 200`]);
      should((await listed(sandbox))[0]).match({ id: 1, status: 'active' });
    });

    it('a delivery out of attempts marks its subscription failing, in the listing; a later success clears it', async function () {
      let healthy = false;
      const target = await receiver(() => (healthy ? 204 : 500));
      const { sandbox, lines } = await publishTo(target.url, {}, [20, 20]);
      const [delivery] = await waitForDeliveries(sandbox, 1, 5000);
      should(delivery).match({ status: 500, attempts: 3, finished: true });
      should(lines).have.length(3);
      should(lines[2]).match(/attempt 3 of 3 failed: responded 500; not tried again, subscription 1 marked failing$/);
      const [failing] = await listed(sandbox);
      should(failing).match({ id: 1, topicId: 1, status: 'failing', active: true });
      should(failing).not.have.properties(['secretToken', 'webhookHeader', 'failing']);
      healthy = true;
      await call(sandbox, 'POST', '/v1/pubsub/topics/1/publish', PUBSUB, { LocationId: 'cell-1', Data: { n: 2 } });
      await waitForDeliveries(sandbox, 2, 5000);
      should((await listed(sandbox))[0]).match({ status: 'active' });
    });

    it('4xx other than 408 and 429 is not tried again', async function () {
      const target = await receiver(() => 401);
      const { sandbox, lines } = await publishTo(target.url);
      const [delivery] = await waitForDeliveries(sandbox, 1, 5000);
      should(delivery).match({ status: 401, attempts: 1 });
      await new Promise((resolve) => setTimeout(resolve, 150));
      should(target.hits).have.length(1);
      should(lines).eql([
        `webhook delivery ${delivery.id} to ${target.url} (subscription 1), attempt 1 of 5 failed: responded 401; not tried again, subscription 1 marked failing`,
      ]);
      const retried = await receiver((n) => (n === 0 ? 429 : n === 1 ? 408 : 200));
      const again = await publishTo(retried.url);
      should((await waitForDeliveries(again.sandbox, 1, 5000))[0]).match({ status: 200, attempts: 3 });
    });

    it('close() stops the retries it has scheduled', async function () {
      const target = await receiver(() => 503);
      const { sandbox } = await publishTo(target.url, {}, [60_000]);
      await waitUntil(() => target.hits.length === 1 && pubsubState(sandbox).deliveries[0].status === 503, 'the first attempt');
      const closing = Date.now();
      started.splice(started.indexOf(sandbox), 1);
      await sandbox.close();
      should(Date.now() - closing).be.below(2000);
      should(target.hits).have.length(1);
    });
  });
});
