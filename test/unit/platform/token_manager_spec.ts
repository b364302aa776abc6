import should from 'should';
import { TokenManager, TokenResponse, jwtExpiry } from '../../../nodes/lib/platform/token-manager';
import { startSandbox, Sandbox } from '../../../sandbox';
import { expireAllTokens } from '../../../sandbox/endpoints/auth';
import { clientFactory, rejectionOf } from '../../support/platform-client';
import { waitUntil } from '../../support/wait';

/** A token fetch the test settles by hand, counting calls and what signal each got. */
function fakeFetch(): {
  fetch: (signal?: AbortSignal) => Promise<TokenResponse>;
  calls: Array<{ signal?: AbortSignal; resolve: (r: TokenResponse) => void; reject: (e: Error) => void }>;
} {
  const calls: Array<{ signal?: AbortSignal; resolve: (r: TokenResponse) => void; reject: (e: Error) => void }> = [];
  return {
    calls,
    fetch: (signal) => new Promise<TokenResponse>((resolve, reject) => calls.push({ signal, resolve, reject })),
  };
}

/** A manager on a hand-driven clock. */
function managerWithClock(defaultLifetimeSec = 3600) {
  const clock = { now: 1_700_000_000_000 };
  const fake = fakeFetch();
  const manager = new TokenManager({ fetchToken: fake.fetch, defaultLifetimeSec, now: () => clock.now });
  return { clock, fake, manager };
}

function jwtWithExp(expSec: number): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none' })}.${part({ exp: expSec })}.sig`;
}

/** Lets the fake fetch's caller run up to its await. */
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('token manager', function () {
  describe('unit (fake fetch, hand-driven clock)', function () {
    it('1000 concurrent callers at expiry cause exactly one token request', async function () {
      const { clock, fake, manager } = managerWithClock();
      const first = manager.getToken();
      fake.calls[0].resolve({ token: 't1', expiresIn: 60 });
      should(await first).equal('t1');

      clock.now += 60_000;
      const storm = Array.from({ length: 1000 }, () => manager.getToken());
      await tick();
      should(fake.calls).have.length(2);
      fake.calls[1].resolve({ token: 't2', expiresIn: 60 });
      const tokens = await Promise.all(storm);
      should(new Set(tokens)).eql(new Set(['t2']));
      should(fake.calls).have.length(2);
    });

    it('a failed shared fetch fails every waiter once, and the next caller starts a new fetch', async function () {
      const { fake, manager } = managerWithClock();
      const waiters = Array.from({ length: 10 }, () => manager.getToken());
      await tick();
      fake.calls[0].reject(new Error('token endpoint down'));
      const outcomes = await Promise.allSettled(waiters);
      should(outcomes.every((o) => o.status === 'rejected')).be.true();
      const retry = manager.getToken();
      await tick();
      should(fake.calls).have.length(2);
      fake.calls[1].resolve({ token: 't2', expiresIn: 60 });
      should(await retry).equal('t2');
    });

    it('refreshes ahead of expiry: at 90 % of a short life, 60 s before the end of a long one', async function () {
      const { clock, fake, manager } = managerWithClock();
      const issuedAt = clock.now;
      const first = manager.getToken();
      fake.calls[0].resolve({ token: 'short', expiresIn: 100 });
      await first;

      clock.now = issuedAt + 89_000;
      should(await manager.getToken()).equal('short');
      should(fake.calls).have.length(1);

      clock.now = issuedAt + 91_000;
      should(await manager.getToken()).equal('short', 'the still-valid token is used while renewal runs');
      await tick();
      should(fake.calls).have.length(2);
      should(manager.remainingMs).be.above(0);
      fake.calls[1].resolve({ token: 'long', expiresIn: 3600 });
      await tick();
      should(await manager.getToken()).equal('long');

      const longIssuedAt = clock.now;
      clock.now = longIssuedAt + 3_539_000;
      should(await manager.getToken()).equal('long');
      should(fake.calls).have.length(2);
      clock.now = longIssuedAt + 3_541_000;
      const renewed = manager.getToken();
      await tick();
      should(fake.calls).have.length(3);
      should(manager.remainingMs).be.above(0);
      fake.calls[2].resolve({ token: 'next', expiresIn: 3600 });
      // The token still has a minute to live: the caller gets it while the refresh runs behind.
      should(await renewed).equal('long');
    });

    it('takes the lifetime from expires_in, then the JWT exp claim, then the configured default', async function () {
      const { clock, fake, manager } = managerWithClock(45);
      const nowSec = Math.floor(clock.now / 1000);
      const cases: Array<{ response: TokenResponse; lifetimeMs: number }> = [
        { response: { token: jwtWithExp(nowSec + 300), expiresIn: 120 }, lifetimeMs: 120_000 },
        { response: { token: jwtWithExp(nowSec + 300) }, lifetimeMs: 300_000 },
        { response: { token: jwtWithExp(nowSec + 300), expiresIn: Number.NaN }, lifetimeMs: 300_000 },
        { response: { token: 'opaque-token' }, lifetimeMs: 45_000 },
        { response: { token: 'a.not-json.c' }, lifetimeMs: 45_000 },
        { response: { token: jwtWithExp(nowSec - 10) }, lifetimeMs: 45_000 },
      ];
      for (const [i, { response, lifetimeMs }] of cases.entries()) {
        const pending = manager.getToken();
        await tick();
        fake.calls[i].resolve(response);
        should(await pending).equal(response.token);
        should(manager.remainingMs).equal(lifetimeMs, `case ${i}`);
        manager.invalidate(response.token);
      }
      should(jwtExpiry(jwtWithExp(1234))).equal(1234);
      should(jwtExpiry('opaque')).be.undefined();
    });

    it('a failed background renewal keeps the still-valid token in use and is tried again', async function () {
      const { clock, fake, manager } = managerWithClock();
      const issuedAt = clock.now;
      const first = manager.getToken();
      fake.calls[0].resolve({ token: 't1', expiresIn: 100 });
      await first;
      clock.now = issuedAt + 95_000;
      should(await manager.getToken()).equal('t1');
      await tick();
      fake.calls[1].reject(new Error('token endpoint down'));
      await tick();
      should(await manager.getToken()).equal('t1');
      await tick();
      should(fake.calls).have.length(3);
      clock.now = issuedAt + 100_000;
      const afterExpiry = manager.getToken();
      fake.calls[2].resolve({ token: 't2', expiresIn: 100 });
      should(await afterExpiry).equal('t2');
    });

    it('invalidate drops only the token the server refused, never a newer one', async function () {
      const { fake, manager } = managerWithClock();
      const first = manager.getToken();
      fake.calls[0].resolve({ token: 't1', expiresIn: 600 });
      await first;

      manager.invalidate('some-other-token');
      should(await manager.getToken()).equal('t1');
      should(fake.calls).have.length(1);

      manager.invalidate('t1');
      should(manager.remainingMs).equal(0);
      const second = manager.getToken();
      await tick();
      fake.calls[1].resolve({ token: 't2', expiresIn: 600 });
      should(await second).equal('t2');

      // A late 401 for the old token must not throw away its replacement.
      manager.invalidate('t1');
      should(await manager.getToken()).equal('t2');
      should(fake.calls).have.length(2);
    });

    it('a cancelled caller does not fail the shared fetch the others wait on', async function () {
      const { fake, manager } = managerWithClock();
      const controller = new AbortController();
      const cancelledCaller = manager.getToken(controller.signal);
      const patientCaller = manager.getToken();
      const otherWithSignal = manager.getToken(new AbortController().signal);
      await tick();
      should(fake.calls).have.length(1);
      should(fake.calls[0].signal).be.undefined();

      controller.abort();
      const error = await rejectionOf(cancelledCaller);
      should(error.code).equal('CANCELLED');

      fake.calls[0].resolve({ token: 't1', expiresIn: 600 });
      should(await patientCaller).equal('t1');
      should(await otherWithSignal).equal('t1');
      should(fake.calls).have.length(1);
      should(await manager.getToken(new AbortController().signal)).equal('t1');
    });

    it('an already aborted signal is refused at once without starting a fetch', async function () {
      const { fake, manager } = managerWithClock();
      const error = await rejectionOf(manager.getToken(AbortSignal.abort()));
      should(error.code).equal('CANCELLED');
      should(fake.calls).have.length(0);
    });
  });

  describe('end to end (platform client against the sandbox token endpoint)', function () {
    const clients = clientFactory();
    let sandbox: Sandbox;
    const tokenRequests = () => sandbox.requests('token').length;

    /** A bearer-authenticated test route, like the cell-words lookup. */
    function addBearerRoute(target: Sandbox): void {
      target.route('GET', '/v1/test/whoami', { endpoint: 'whoami', auth: 'bearer' }, (ctx) => {
        ctx.res.writeHead(200, { 'content-type': 'application/json' });
        ctx.res.end(JSON.stringify({ ok: true }));
      });
    }

    afterEach(async function () {
      await clients.closeClients();
      await sandbox?.close();
    });

    it('1000 concurrent requests when the token is due cause exactly one token request', async function () {
      // The sandbox keeps its tokens for an hour but does not say so; the client assumes 1 s.
      sandbox = await startSandbox({ tokenResponse: 'opaque-no-expiry' });
      addBearerRoute(sandbox);
      const client = clients.create(sandbox, { tokenLifetimeSec: 1, maxQueue: 5000 });
      const whoami = () => client.request({ rate: 'geocode', auth: 'bearer', method: 'GET', path: '/v1/test/whoami', retry: 'read' });
      await whoami();
      should(tokenRequests()).equal(1);

      await waitUntil(() => client.tokens.remainingMs === 0, 'the token to expire');
      const results = await Promise.all(Array.from({ length: 1000 }, whoami));
      should(results.every((r) => r.statusCode === 200)).be.true();
      should(tokenRequests()).equal(2);
      should(sandbox.requests('whoami')).have.length(1001);
    });

    it('1000 concurrent requests with a token the server revoked cause exactly one new token request', async function () {
      sandbox = await startSandbox();
      addBearerRoute(sandbox);
      const client = clients.create(sandbox, { maxQueue: 5000 });
      const whoami = () => client.request({ rate: 'geocode', auth: 'bearer', method: 'GET', path: '/v1/test/whoami', retry: 'read' });
      await whoami();
      expireAllTokens(sandbox);

      const results = await Promise.all(Array.from({ length: 1000 }, whoami));
      should(results.every((r) => r.statusCode === 200)).be.true();
      should(tokenRequests()).equal(2);
      const refused = sandbox.requests('whoami').filter((r) => r.status === 401);
      should(refused.length).be.above(0);
      should(sandbox.requests('whoami')).have.length(1001 + refused.length);
    });

    it('sends the spec token request and uses expires_in from the response', async function () {
      sandbox = await startSandbox({ tokenLifetimeSec: 120 });
      addBearerRoute(sandbox);
      const client = clients.create(sandbox);
      await client.request({ rate: 'geocode', auth: 'bearer', method: 'GET', path: '/v1/test/whoami', retry: 'read' });
      const [tokenRequest] = sandbox.requests('token');
      should(tokenRequest.method).equal('POST');
      should(tokenRequest.path).equal('/oauth/token');
      should(JSON.parse(tokenRequest.body)).eql({
        client_id: sandbox.options.clientId,
        client_secret: sandbox.options.clientSecret,
        audience: sandbox.options.audience,
        grant_type: 'client_credentials',
      });
      should(client.tokens.remainingMs).be.within(100_000, 120_000);
    });

    it('falls back to the JWT exp claim when the response has no expires_in', async function () {
      sandbox = await startSandbox({ tokenLifetimeSec: 300, tokenResponse: 'jwt-only' });
      addBearerRoute(sandbox);
      const client = clients.create(sandbox, { tokenLifetimeSec: 10 });
      await client.request({ rate: 'geocode', auth: 'bearer', method: 'GET', path: '/v1/test/whoami', retry: 'read' });
      should(client.tokens.remainingMs).be.within(280_000, 300_000);
    });

    it('a caller cancelled while the token is being fetched leaves the fetch to the others', async function () {
      sandbox = await startSandbox();
      addBearerRoute(sandbox);
      sandbox.setFault('token', { delayMs: 300, times: 1 });
      const client = clients.create(sandbox);
      const controller = new AbortController();
      const cancelledRequest = client.request({
        auth: 'bearer',
        rate: 'words',
        method: 'GET',
        path: '/v1/test/whoami',
        retry: 'read',
        signal: controller.signal,
      });
      const patientRequest = client.request({ rate: 'geocode', auth: 'bearer', method: 'GET', path: '/v1/test/whoami', retry: 'read' });
      await waitUntil(() => tokenRequests() === 1, 'the token request');
      controller.abort();
      should((await rejectionOf(cancelledRequest)).code).equal('CANCELLED');
      should((await patientRequest).statusCode).equal(200);
      should(tokenRequests()).equal(1);
      should(sandbox.requests('whoami')).have.length(1);
    });
  });
});
