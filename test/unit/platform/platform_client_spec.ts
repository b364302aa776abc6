import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import should from 'should';
import type { PlatformClient } from '../../../nodes/lib/platform/client';
import type { PlatformRequest, WaitEvent } from '../../../nodes/lib/platform/types';
import type { SvcConfigNode } from '../../../nodes/lib/node-red/config';
import { SvcError } from '../../../nodes/lib/util/errors';
import { startSandbox, Sandbox, SANDBOX_DEFAULTS, sendJson } from '../../../sandbox';
import { CONFIG_ID, configNode, helper, Fields, nodeModule, sandboxCredentials } from '../../support/harness';
import { ManualClock } from '../../support/clock';
import { clientSuite, geocode, rejectionOf, sandboxClientConfig } from '../../support/platform-client';
import { expectHandlesBackTo, handleBaseline } from '../../support/handles';
import { waitUntil } from '../../support/wait';
import { freePort } from '../../support/node-red-process';
import { expireAllTokens } from '../../../sandbox/endpoints/auth';

const SECRETS = [SANDBOX_DEFAULTS.clientSecret, SANDBOX_DEFAULTS.apiKey, SANDBOX_DEFAULTS.pubsubApiKey];

/** Headers every request carries whatever its family; the rest must be exactly the family's. */
const TRANSPORT_HEADERS = new Set(['host', 'connection']);

/** Routes only these tests use: one per auth family, an echo that leaks secrets, and a slow one. */
function addTestRoutes(sandbox: Sandbox): { slowActive: () => number; slowPeak: () => number } {
  for (const family of ['project', 'vpm', 'pubsub', 'bearer'] as const) {
    sandbox.route('GET', `/v1/test/family/${family}`, { endpoint: 'family', auth: family }, (ctx) => sendJson(ctx.res, 200, { family }));
  }
  // A careless server that repeats the credentials it was sent in its error bodies.
  sandbox.route('GET', '/v1/test/echo/:kind', { endpoint: 'echo', auth: 'none' }, (ctx) => {
    const headers = ctx.req.headers;
    const echoed = `key ${String(headers['x-svc-api-key'])} pubsub ${String(headers.apikey)} auth ${String(headers.authorization)}`;
    if (ctx.params.kind === 'malformed') {
      ctx.res.writeHead(200, { 'content-type': 'application/json' });
      ctx.res.end(`{"broken": ${echoed}`);
      return;
    }
    const token = String(headers.authorization ?? '').replace(/^Bearer /, '');
    sendJson(ctx.res, 400, {
      message: `refused: ${echoed} secret ${SANDBOX_DEFAULTS.clientSecret} bare ${token}`,
      headers,
      padding: 'x'.repeat(1000),
    });
  });
  let active = 0;
  let peak = 0;
  sandbox.route('GET', '/v1/test/slow', { endpoint: 'slow', auth: 'project' }, async (ctx) => {
    active++;
    peak = Math.max(peak, active);
    await new Promise<void>((resolve) => sandbox.later(250, resolve));
    active--;
    sendJson(ctx.res, 200, { n: ctx.url.searchParams.get('n') });
  });
  return { slowActive: () => active, slowPeak: () => peak };
}

/** A minimal forward proxy: CONNECT tunnels and absolute-URI requests, each recorded. */
async function startProxy(): Promise<{ url: string; seen: Array<{ kind: string; target: string; auth?: string }>; close: () => Promise<void> }> {
  const seen: Array<{ kind: string; target: string; auth?: string }> = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    seen.push({ kind: 'absolute', target: req.url ?? '', auth: req.headers['proxy-authorization'] });
    const target = new URL(req.url ?? '');
    const upstream = http.request(
      { host: target.hostname, port: target.port, path: target.pathname + target.search, method: req.method, headers: req.headers },
      (response) => {
        res.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    seen.push({ kind: 'connect', target: req.url ?? '', auth: req.headers['proxy-authorization'] });
    const [host, port] = (req.url ?? '').split(':');
    const upstream = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const socket of [upstream, client]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        sockets.delete(socket);
        upstream.destroy();
        client.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    seen,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('platform client', function () {
  let slow: ReturnType<typeof addTestRoutes>;
  const suite = clientSuite((started) => {
    slow = addTestRoutes(started);
  });
  const { clients } = suite;
  let sandbox: Sandbox;
  beforeEach(() => {
    sandbox = suite.sandbox;
  });

  describe('headers', function () {
    it('sends exactly the headers of each auth family, and accept: application/json', async function () {
      const client = clients.create(sandbox);
      for (const family of ['project', 'vpm', 'pubsub', 'bearer'] as const) {
        const response = await client.request({ rate: 'geocode', auth: family, method: 'GET', path: `/v1/test/family/${family}`, retry: 'read' });
        should(response.body).eql({ family });
      }
      const sent = sandbox.requests('family').map((r) => r.headers);
      const names = (headers: http.IncomingHttpHeaders) =>
        Object.keys(headers)
          .filter((h) => !TRANSPORT_HEADERS.has(h))
          .sort();
      should(names(sent[0])).eql(['accept', 'x-svc-api-key', 'x-svc-project-id']);
      should(names(sent[1])).eql(['accept', 'x-svc-api-key', 'x-svc-vpm-id']);
      should(names(sent[2])).eql(['accept', 'apikey']);
      should(names(sent[3])).eql(['accept', 'authorization']);
      for (const headers of sent) should(headers.accept).equal('application/json');
      should(sent[0]['x-svc-project-id']).equal(SANDBOX_DEFAULTS.projectId);
      should(sent[0]['x-svc-api-key']).equal(SANDBOX_DEFAULTS.apiKey);
      should(sent[1]['x-svc-vpm-id']).equal(SANDBOX_DEFAULTS.projectId);
      should(sent[1]['x-svc-api-key']).equal(SANDBOX_DEFAULTS.apiKey);
      should(sent[2].apikey).equal(SANDBOX_DEFAULTS.pubsubApiKey);
      should(sent[3].authorization).match(/^Bearer \S+$/);
      // Only the bearer request needed a token.
      should(sandbox.requests('token')).have.length(1);
    });

    it('sends a JSON body with content-type application/json and the query percent-encoded', async function () {
      sandbox.route('POST', '/v1/test/json', { endpoint: 'json', auth: 'project' }, (ctx) => sendJson(ctx.res, 200, ctx.json()));
      const client = clients.create(sandbox);
      const response = await client.request({
        auth: 'project',
        rate: 'geocode',
        method: 'POST',
        path: '/v1/test/json',
        query: { q: 'a b&c=d', skipped: undefined },
        json: { async: false, n: 1 },
        retry: 'read',
      });
      should(response.body).eql({ async: false, n: 1 });
      const [logged] = sandbox.requests('json');
      should(logged.headers['content-type']).equal('application/json');
      should(logged.query).eql({ q: 'a b&c=d' });
    });

    it('gives each request its own query, on an address worked out once per path, and refuses a climbing path every time', async function () {
      sandbox.route('GET', '/v1/test/query', { endpoint: 'query', auth: 'project' }, (ctx) => sendJson(ctx.res, 200, {}));
      const client = clients.create(sandbox);
      const queries = [{ q: "a b!'()~*" }, { q: '1', n: 2 }, {}, { q: undefined }, { q: 'lone \ud800' }];
      for (const query of queries) await client.request({ auth: 'project', rate: 'geocode', method: 'GET', path: '/v1/test/query', query, retry: 'read' });
      should(sandbox.requests('query').map((r) => r.query)).eql([{ q: "a b!'()~*" }, { q: '1', n: '2' }, {}, {}, { q: 'lone \ufffd' }]);
      for (let i = 0; i < 2; i++) {
        const refused = await rejectionOf(client.request({ auth: 'project', rate: 'geocode', method: 'GET', path: '/v1/test/%2e%2e/x', retry: 'read' }));
        should(refused.code).equal('INVALID_INPUT');
      }
      should(sandbox.requests()).have.length(queries.length);
    });

    it('refuses a family whose credential is not configured before sending anything', async function () {
      const client = clients.create(sandbox, { credentials: { clientId: 'id', clientSecret: 'secret' } });
      const error = await rejectionOf(client.request(geocode()));
      should(error.code).equal('CONFIG_INVALID');
      should(error.notSent).be.true();
      should(error.message).match(/API key is not set/);
      should(sandbox.requests()).have.length(0);
    });
  });

  describe('401 on a bearer request', function () {
    const whoami = (client: PlatformClient) =>
      client.request({ rate: 'geocode', auth: 'bearer', method: 'GET', path: '/v1/test/family/bearer', retry: 'read' });

    it('drops the token, fetches a new one and retries once', async function () {
      const client = clients.create(sandbox);
      await whoami(client);
      expireAllTokens(sandbox);
      const response = await whoami(client);
      should(response.statusCode).equal(200);
      should(sandbox.requests('token')).have.length(2);
      const calls = sandbox.requests('family');
      should(calls.map((r) => r.status)).eql([200, 401, 200]);
      should(calls[2].headers.authorization).not.equal(calls[1].headers.authorization);
    });

    it('retries only once: a second 401 is the response', async function () {
      const client = clients.create(sandbox, { maxRetries: 5 });
      sandbox.setFault('family', { status: 401 });
      const error = await rejectionOf(whoami(client));
      should(error.code).equal('UNAUTHORIZED');
      should(error.statusCode).equal(401);
      should(sandbox.requests('family')).have.length(2);
      should(sandbox.requests('token')).have.length(2);
    });

    it('a 401 on a key-authenticated request is final and fetches no token', async function () {
      const client = clients.create(sandbox, { maxRetries: 5 });
      sandbox.setFault('geocode', { status: 401 });
      should((await rejectionOf(client.request(geocode()))).code).equal('UNAUTHORIZED');
      should(sandbox.requests('geocode')).have.length(1);
      should(sandbox.requests('token')).have.length(0);
    });

    it('a refused token request is reported once, not retried', async function () {
      const client = clients.create(sandbox, { credentials: { ...sandboxClientConfig(sandbox).credentials, clientSecret: 'wrong-secret-value' } });
      const error = await rejectionOf(whoami(client));
      should(error.code).equal('UNAUTHORIZED');
      should(error.statusCode).equal(401);
      should(error.message).equal('svc-config: token request refused (401): check the Client id, Client secret and Audience fields');
      should(sandbox.requests('token')).have.length(1);
      should(sandbox.requests('family')).have.length(0);
    });

    it('a failing token endpoint is retried by the token fetch only, not again per request', async function () {
      const client = clients.create(sandbox, { maxRetries: 2 });
      sandbox.setFault('token', { status: 503, retryAfter: '0' });
      const error = await rejectionOf(whoami(client));
      should(error.code).equal('SERVER');
      should(sandbox.requests('token')).have.length(3);
    });
  });

  describe('before each attempt', function () {
    it('counts every attempt, retries included; a count made at once or later lets it go, one that fails ends the request unsent', async function () {
      const client = clients.create(sandbox);
      let counted = 0;
      const countNow = () => {
        counted++;
      };
      sandbox.setFault('geocode', { status: 502, times: 1 });
      should((await client.request({ ...geocode(), beforeAttempt: countNow })).statusCode).equal(200);
      should(counted).equal(2);
      should((await client.request({ ...geocode(), beforeAttempt: () => Promise.resolve().then(countNow) })).statusCode).equal(200);
      should(counted).equal(3);
      should(sandbox.requests('geocode')).have.length(3);

      const refusal = new SvcError('QUOTA_EXCEEDED', 'used up', { notSent: true });
      const refusedNow = await rejectionOf(
        client.request({
          ...geocode(),
          beforeAttempt: () => {
            throw refusal;
          },
        }),
      );
      const refusedLater = await rejectionOf(client.request({ ...geocode(), beforeAttempt: () => Promise.reject(refusal) }));
      for (const refused of [refusedNow, refusedLater]) {
        should(refused.code).equal('QUOTA_EXCEEDED');
        should(refused.notSent).be.true();
      }
      should(sandbox.requests('geocode')).have.length(3);
    });
  });

  describe('Retry-After', function () {
    /** Moves `clock` through the client's retry wait: nothing is sent again until its last millisecond has passed. */
    async function waitOut(clock: ManualClock, delayMs: number): Promise<void> {
      await waitUntil(() => clock.pendingTimers === 1, 'the retry wait');
      should(clock.nextTimerIn()).equal(delayMs);
      await clock.advance(delayMs - 1);
      should(sandbox.requests('geocode')).have.length(1);
      await clock.advance(1);
    }

    it('waits the seconds a 429 asks for, then succeeds', async function () {
      const clock = new ManualClock();
      const client = clients.create(sandbox, { clock });
      sandbox.setFault('geocode', { status: 429, retryAfter: '1', times: 1 });
      const waits: WaitEvent[] = [];
      const pending = client.request(geocode({ onWait: (event) => waits.push(event) }));
      await waitOut(clock, 1000);
      should((await pending).statusCode).equal(200);
      should(sandbox.requests('geocode')).have.length(2);
      should(waits).eql([{ kind: 'retry', attempt: 1, delayMs: 1000, reason: 'RATE_LIMITED' }]);
    });

    it('waits until an HTTP date, then succeeds', async function () {
      const clock = new ManualClock();
      const client = clients.create(sandbox, { clock });
      const asked = Date.now();
      const retryAt = new Date(asked + 2000).toUTCString();
      sandbox.setFault('geocode', { status: 503, retryAfter: retryAt, times: 1 });
      const waits: WaitEvent[] = [];
      const pending = client.request(geocode({ onWait: (event) => waits.push(event) }));
      await waitUntil(() => waits.length === 1, 'the retry wait');
      // An HTTP date has whole seconds: the date is 1 to 2 s after `asked`, the wait that less the time
      // the response took to arrive.
      const { delayMs } = waits[0] as { delayMs: number };
      should(delayMs).be.within(1000 - (Date.now() - asked), 2000);
      await waitOut(clock, delayMs);
      should((await pending).statusCode).equal(200);
      should(sandbox.requests('geocode')).have.length(2);
    });

    it('an overly long Retry-After is not waited out: RATE_LIMITED at once', async function () {
      const client = clients.create(sandbox, { maxRetries: 5 });
      for (const retryAfter of ['3600', new Date(Date.now() + 3_600_000).toUTCString()]) {
        sandbox.log.splice(0);
        sandbox.setFault('geocode', { status: 429, retryAfter });
        const error = await rejectionOf(client.request(geocode()));
        should(error.code).equal('RATE_LIMITED');
        should(error.statusCode).equal(429);
        should(error.retryAfterMs).be.above(3_000_000);
        should(sandbox.requests('geocode')).have.length(1);
      }
    });
  });

  describe('retry rules per request kind', function () {
    const outcome = async (client: PlatformClient, req: PlatformRequest) => {
      try {
        return (await client.request(req)).statusCode;
      } catch (err) {
        return (err as SvcError).code;
      }
    };

    it("'read' retries a connection reset, a 5xx and a 429", async function () {
      const client = clients.create(sandbox);
      for (const fault of [{ reset: true }, { status: 502 }, { status: 429, retryAfter: '0' }]) {
        sandbox.log.splice(0);
        sandbox.setFault('geocode', { ...fault, times: 1 });
        should(await outcome(client, geocode())).equal(200);
        should(sandbox.requests('geocode')).have.length(2);
      }
    });

    it("'create' retries a 429 but never a 5xx or a reset after the request was sent", async function () {
      const client = clients.create(sandbox, { maxRetries: 5 });
      const cases: Array<[object, number | string]> = [
        [{ status: 500 }, 'SERVER'],
        [{ status: 503, retryAfter: '0' }, 'SERVER'],
        [{ reset: true }, 'NETWORK'],
        [{ status: 429, retryAfter: '0' }, 200],
      ];
      for (const [fault, expected] of cases) {
        sandbox.log.splice(0);
        sandbox.setFault('geocode', { ...fault, times: 1 });
        should(await outcome(client, geocode({ retry: 'create' }))).equal(expected, JSON.stringify(fault));
        should(sandbox.requests('geocode')).have.length(expected === 200 ? 2 : 1);
      }
    });

    it("'create' does not retry a timeout (the server may have done it) but 'read' does", async function () {
      const client = clients.create(sandbox, { timeoutMs: 300, maxRetries: 3 });
      sandbox.setFault('geocode', { hang: true, times: 1 });
      should(await outcome(client, geocode({ retry: 'create' }))).equal('TIMEOUT');
      should(sandbox.requests('geocode')).have.length(1);
      sandbox.log.splice(0);
      sandbox.setFault('geocode', { hang: true, times: 1 });
      should(await outcome(client, geocode({ retry: 'read' }))).equal(200);
      should(sandbox.requests('geocode')).have.length(2);
    });

    it("'create' retries a refused connection (nothing was sent), and the request then arrives once", async function () {
      const port = await freePort();
      let late: Promise<Sandbox> | undefined;
      const client = clients.create(sandbox, { baseUrl: `http://127.0.0.1:${port}`, maxRetries: 5 });
      try {
        const response = await client.request(
          geocode({
            retry: 'create',
            // The server comes up only after the first refusal.
            onWait: (event) => {
              if (event.kind === 'retry') late ??= startSandbox({ port });
            },
          }),
        );
        should(response.statusCode).equal(200);
        should((await late)?.requests('geocode')).have.length(1);
      } finally {
        await (await late)?.close();
      }
    });

    it('a refused connection is NETWORK with notSent, after maxRetries retries', async function () {
      const client = clients.create(sandbox, { baseUrl: `http://127.0.0.1:${await freePort()}`, maxRetries: 2 });
      const waits: WaitEvent[] = [];
      const error = await rejectionOf(client.request(geocode({ retry: 'create', onWait: (event) => waits.push(event) })));
      should(error.code).equal('NETWORK');
      should(error.notSent).be.true();
      should(error.message).match(/ECONNREFUSED/);
      should(waits.map((w) => w.kind === 'retry' && w.attempt)).eql([1, 2]);
    });
  });

  describe('bounded retries', function () {
    it('stops after maxRetries retries with the last error', async function () {
      for (const maxRetries of [0, 1, 2]) {
        const client = clients.create(sandbox, { maxRetries });
        sandbox.log.splice(0);
        sandbox.setFault('geocode', { status: 503, retryAfter: '0' });
        const error = await rejectionOf(client.request(geocode()));
        should(error.code).equal('SERVER');
        should(error.statusCode).equal(503);
        should(sandbox.requests('geocode')).have.length(maxRetries + 1);
      }
    });

    it('backs off between retries without Retry-After, and a closed caller ends the wait', async function () {
      const client = clients.create(sandbox, { maxRetries: 8 });
      sandbox.setFault('geocode', { status: 500 });
      const controller = new AbortController();
      const waits: WaitEvent[] = [];
      const pending = client.request(geocode({ signal: controller.signal, onWait: (event) => waits.push(event) }));
      await waitUntil(() => waits.length >= 3, 'three retries');
      controller.abort();
      should((await rejectionOf(pending)).code).equal('CANCELLED');
      for (const [i, wait] of waits.entries()) {
        should((wait as { delayMs: number }).delayMs).be.within(0, 250 * 2 ** i);
      }
    });
  });

  describe('failures as typed errors', function () {
    it('a request without a response in time is TIMEOUT', async function () {
      const client = clients.create(sandbox, { timeoutMs: 300, maxRetries: 0 });
      sandbox.setFault('geocode', { hang: true });
      const error = await rejectionOf(client.request(geocode()));
      should(error.code).equal('TIMEOUT');
      should(error.message).equal('no complete response within 300 ms');
      should(error.statusCode).be.undefined();
    });

    it('a body that trickles in past the timeout is TIMEOUT too', async function () {
      const client = clients.create(sandbox, { timeoutMs: 300, maxRetries: 0 });
      sandbox.setFault('geocode', { slowBodyMs: 100 });
      should((await rejectionOf(client.request(geocode()))).code).equal('TIMEOUT');
    });

    it('malformed JSON is BAD_RESPONSE with the status and an excerpt, and is not retried', async function () {
      const client = clients.create(sandbox);
      sandbox.setFault('geocode', { malformedJson: true });
      const error = await rejectionOf(client.request(geocode()));
      should(error.code).equal('BAD_RESPONSE');
      should(error.statusCode).equal(200);
      should(error.bodyExcerpt).startWith('{"type":"FeatureCollection"');
      should(sandbox.requests('geocode')).have.length(1);
    });

    it('maps statuses to codes and carries statusCode, message and a body excerpt', async function () {
      const client = clients.create(sandbox, { maxRetries: 0 });
      const cases: Array<[() => Promise<unknown>, string, number, RegExp]> = [
        [
          () => clients.create(sandbox, { credentials: { apiKey: 'wrong-key' } }).request(geocode()),
          'UNAUTHORIZED',
          401,
          /^svc-config: API key refused \(401\): check the API key and Project id fields$/,
        ],
        [() => client.request(geocode({ query: {} })), 'BAD_REQUEST', 400, /400: query parameter address is required/],
        [() => client.request(geocode({ path: '/v1/nothing-here' })), 'NOT_FOUND', 404, /404/],
        [() => clients.create(sandbox, { audience: 'other', maxRetries: 0 }).fetchToken(), 'FORBIDDEN', 403, /token request refused \(403\)/],
      ];
      sandbox.route('GET', '/v1/test/server-error', { endpoint: 'boom', auth: 'none' }, (ctx) => sendJson(ctx.res, 500, { message: 'database on fire' }));
      cases.push([() => client.request(geocode({ method: 'GET', path: '/v1/test/server-error' })), 'SERVER', 500, /500: database on fire/]);
      for (const [run, code, statusCode, message] of cases) {
        const error = await rejectionOf(run());
        should(error).be.instanceOf(SvcError);
        should(error.code).equal(code);
        should(error.statusCode).equal(statusCode);
        should(error.message).match(message);
        should(error.bodyExcerpt).be.a.String().and.not.be.empty();
        should(error.notSent).be.false();
      }
    });

    it('never lets a secret or token into a message or body excerpt, even when the server echoes them', async function () {
      const client = clients.create(sandbox, { maxRetries: 0 });
      const errors: SvcError[] = [];
      for (const auth of ['project', 'pubsub', 'bearer'] as const) {
        errors.push(await rejectionOf(client.request({ rate: 'geocode', auth, method: 'GET', path: '/v1/test/echo/json', retry: 'read' })));
      }
      errors.push(await rejectionOf(client.request({ rate: 'geocode', auth: 'project', method: 'GET', path: '/v1/test/echo/malformed', retry: 'read' })));
      const token = String(sandbox.requests('echo')[2].headers.authorization).replace(/^Bearer /, '');
      for (const error of errors) {
        const text = `${error.message}\n${error.bodyExcerpt}`;
        for (const secret of [...SECRETS, token]) should(text).not.containEql(secret);
        should(text).containEql('***');
        should(error.bodyExcerpt?.length).be.belowOrEqual(300);
      }
      should(errors[0].code).equal('BAD_REQUEST');
      should(errors[3].code).equal('BAD_RESPONSE');
    });
  });

  describe('rate limit and concurrency cap', function () {
    it('keeps arrival order and spaces requests at 60/rate seconds (600 per minute)', async function () {
      const client = clients.create(sandbox, { ratePerMinute: 600 });
      const queued: number[] = [];
      const started = Date.now();
      await Promise.all(
        Array.from({ length: 5 }, (_v, n) =>
          client.request(geocode({ query: { address: `${n} Main Street` }, onWait: (event) => event.kind === 'queued' && queued.push(event.position) })),
        ),
      );
      const log = sandbox.requests('geocode');
      should(log.map((r) => r.query.address)).eql([0, 1, 2, 3, 4].map((n) => `${n} Main Street`));
      for (const [n, entry] of log.entries()) should(entry.time - started).be.aboveOrEqual(n * 100 - 5);
      should(queued).eql([1, 2, 3, 4]);
    });

    it('never has more than maxConcurrency requests at the server', async function () {
      const client = clients.create(sandbox, { maxConcurrency: 3 });
      const responses = await Promise.all(
        Array.from({ length: 9 }, (_v, n) =>
          client.request({ rate: 'geocode', auth: 'project', method: 'GET', path: '/v1/test/slow', query: { n }, retry: 'read' }),
        ),
      );
      should(responses.map((a) => (a.body as Fields).n)).eql(['0', '1', '2', '3', '4', '5', '6', '7', '8']);
      should(slow.slowPeak()).be.belowOrEqual(3);
      should(slow.slowPeak()).be.above(1);
      should(slow.slowActive()).equal(0);
    });

    it('a queue overflow is a QUEUE_FULL error for the extra messages, never a silent drop', async function () {
      const client = clients.create(sandbox, { maxConcurrency: 1, maxQueue: 2 });
      const outcomes = await Promise.allSettled(
        Array.from({ length: 5 }, (_v, n) =>
          client.request({ rate: 'geocode', auth: 'project', method: 'GET', path: '/v1/test/slow', query: { n }, retry: 'read' }),
        ),
      );
      const fulfilled = outcomes.filter((o) => o.status === 'fulfilled');
      const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      should(fulfilled).have.length(3);
      should(refused).have.length(2);
      for (const { reason } of refused) {
        should((reason as SvcError).code).equal('QUEUE_FULL');
        should((reason as SvcError).notSent).be.true();
      }
      should(sandbox.requests('slow').map((r) => r.query.n)).eql(['0', '1', '2']);
    });
  });

  describe('proxy and TLS options reach undici', function () {
    const proxyModule = require.resolve('@node-red/nodes/core/network/06-httpproxy.js');
    const tlsModule = require.resolve('@node-red/nodes/core/network/05-tls.js');
    const configClient = () => (helper.getNode(CONFIG_ID) as unknown as SvcConfigNode).client;
    const savedEnv: Record<string, string | undefined> = {};
    const proxyEnv = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'NO_PROXY', 'no_proxy'];
    let proxy: Awaited<ReturnType<typeof startProxy>>;

    async function loadConfig(target: Sandbox, config: Fields, extraNodes: Fields[] = [], credentials: Record<string, Fields> = {}): Promise<void> {
      await helper.load(
        [nodeModule('svc-config'), require(proxyModule), require(tlsModule)],
        [configNode(target, { maxRetries: 0, ...config }), ...extraNodes],
        {
          ...sandboxCredentials(),
          ...credentials,
        } as Record<string, Record<string, string>>,
      );
    }

    beforeEach(async function () {
      for (const name of proxyEnv) {
        savedEnv[name] = process.env[name];
        delete process.env[name];
      }
      proxy = await startProxy();
    });
    afterEach(async function () {
      await helper.unload();
      await proxy.close();
      for (const name of proxyEnv) {
        if (savedEnv[name] === undefined) delete process.env[name];
        else process.env[name] = savedEnv[name];
      }
    });

    it("goes through the config node's http proxy node, with its credentials", async function () {
      const proxyNode = { id: 'px', type: 'http proxy', name: '', url: proxy.url, noproxy: [] };
      await loadConfig(sandbox, { proxy: 'px' }, [proxyNode], { px: { username: 'proxy-user', password: 'proxy-pass' } });
      should((await configClient().request(geocode())).statusCode).equal(200);
      const host = new URL(sandbox.url).host;
      should(proxy.seen).eql([{ kind: 'connect', target: host, auth: `Basic ${Buffer.from('proxy-user:proxy-pass').toString('base64')}` }]);
      should(sandbox.requests('geocode')).have.length(1);
    });

    it('bypasses the proxy node for hosts in its no-proxy list', async function () {
      const proxyNode = { id: 'px', type: 'http proxy', name: '', url: proxy.url, noproxy: ['127.0.0.1'] };
      await loadConfig(sandbox, { proxy: 'px' }, [proxyNode]);
      should((await configClient().request(geocode())).statusCode).equal(200);
      should(proxy.seen).have.length(0);
    });

    it('uses HTTP_PROXY when no proxy node is set, and honours NO_PROXY', async function () {
      process.env.HTTP_PROXY = proxy.url;
      await loadConfig(sandbox, {});
      should((await configClient().request(geocode())).statusCode).equal(200);
      should(proxy.seen.map((s) => s.target)).eql([new URL(sandbox.url).host]);
      await helper.unload();

      process.env.NO_PROXY = 'example.com,127.0.0.1';
      proxy.seen.splice(0);
      await loadConfig(sandbox, {});
      should((await configClient().request(geocode())).statusCode).equal(200);
      should(proxy.seen).have.length(0);
    });

    describe('over HTTPS with a self-signed certificate', function () {
      let secure: Sandbox | undefined;
      let certDir = '';
      before(async function () {
        certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-tls-'));
        try {
          execFileSync(
            'openssl',
            [
              'req',
              '-x509',
              '-newkey',
              'ec',
              '-pkeyopt',
              'ec_paramgen_curve:prime256v1',
              '-nodes',
              '-keyout',
              path.join(certDir, 'key.pem'),
              '-out',
              path.join(certDir, 'cert.pem'),
              '-days',
              '1',
              '-subj',
              '/CN=127.0.0.1',
              '-addext',
              'subjectAltName=IP:127.0.0.1',
            ],
            { stdio: 'ignore' },
          );
        } catch (err) {
          console.warn(`    the openssl CLI is missing or failed (${String(err)}): TLS tests skipped`);
          this.skip();
        }
        secure = await startSandbox({
          tls: { key: fs.readFileSync(path.join(certDir, 'key.pem')), cert: fs.readFileSync(path.join(certDir, 'cert.pem')) },
        });
      });
      after(async function () {
        await secure?.close();
        fs.rmSync(certDir, { recursive: true, force: true });
      });
      const tlsNode = (extra: Fields) => ({
        id: 'tls',
        type: 'tls-config',
        name: '',
        cert: '',
        key: '',
        ca: '',
        servername: '',
        verifyservercert: true,
        ...extra,
      });

      it("works with the tls-config node's CA", async function () {
        const target = secure as Sandbox;
        should(target.url).startWith('https://');
        await loadConfig(target, { tls: 'tls' }, [tlsNode({ ca: path.join(certDir, 'cert.pem') })]);
        should((await configClient().request(geocode())).statusCode).equal(200);
        should((await configClient().fetchToken()).token).be.a.String();
      });

      it('fails without it, at once, as a TLS error naming the certificate problem', async function () {
        await loadConfig(secure as Sandbox, {});
        const before = (secure as Sandbox).log.length;
        const error = await rejectionOf(configClient().request(geocode()));
        should(error.code).equal('TLS');
        should((secure as Sandbox).log.length).equal(before, 'nothing reached the server');
        should(error.message).match(/self[- ]signed certificate/);
      });

      it('works through the proxy with the CA', async function () {
        const target = secure as Sandbox;
        const proxyNode = { id: 'px', type: 'http proxy', name: '', url: proxy.url, noproxy: [] };
        await loadConfig(target, { tls: 'tls', proxy: 'px' }, [tlsNode({ ca: path.join(certDir, 'cert.pem') }), proxyNode]);
        should((await configClient().request(geocode())).statusCode).equal(200);
        should(proxy.seen.map((s) => s.kind)).eql(['connect']);
      });

      it("honours the tls-config node's choice not to verify the server", async function () {
        await loadConfig(secure as Sandbox, { tls: 'tls' }, [tlsNode({ verifyservercert: false })]);
        should((await configClient().request(geocode())).statusCode).equal(200);
      });
    });
  });

  describe('close()', function () {
    it('leaves no open sockets after keep-alive requests', async function () {
      const baseline = await handleBaseline();
      const client = clients.create(sandbox, { maxConcurrency: 4 });
      await Promise.all(Array.from({ length: 4 }, () => client.request(geocode())));
      await client.close();
      await expectHandlesBackTo(baseline);
    });

    it('ends a hanging request, a rate-limited wait and a token fetch waiting to retry, and leaves no timers', async function () {
      const baseline = await handleBaseline();
      const client = clients.create(sandbox, { ratePerMinute: 2 });
      sandbox.setFault('geocode', { hang: true, times: 1 });
      sandbox.setFault('token', { status: 503, retryAfter: '30' });
      const hanging = rejectionOf(client.request(geocode()));
      await waitUntil(() => sandbox.requests('geocode').length === 1, 'the hanging request');
      const queued = rejectionOf(client.request(geocode()));
      const waitingForToken = rejectionOf(client.request({ rate: 'geocode', auth: 'bearer', method: 'GET', path: '/v1/test/family/bearer', retry: 'read' }));
      await waitUntil(() => sandbox.requests('token').length === 1, 'the token request');
      should(client.gateFor('geocode').waiting).equal(1);

      await client.close();
      for (const pending of [hanging, queued, waitingForToken]) should((await pending).code).equal('CANCELLED');
      should(sandbox.requests('token')).have.length(1);
      await expectHandlesBackTo(baseline);
    });
  });
});
