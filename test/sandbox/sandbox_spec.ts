import http from 'node:http';
import should from 'should';
import { startSandbox, Sandbox, SANDBOX_DEFAULTS } from '../../sandbox/index';
import { expireAllTokens } from '../../sandbox/endpoints/auth';
import { ManualClock } from '../support/clock';
import { waitUntil } from '../support/wait';

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: unknown;
}

/** One plain HTTP exchange on a fresh connection, with exactly the headers given. */
function call(
  base: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string; signal?: AbortSignal } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, base), { method, headers: options.headers ?? {}, agent: false, signal: options.signal }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const PROJECT_HEADERS = { 'x-svc-project-id': SANDBOX_DEFAULTS.projectId, 'x-svc-api-key': SANDBOX_DEFAULTS.apiKey, accept: 'application/json' };
const TOKEN_BODY = {
  client_id: SANDBOX_DEFAULTS.clientId,
  client_secret: SANDBOX_DEFAULTS.clientSecret,
  audience: SANDBOX_DEFAULTS.audience,
  grant_type: 'client_credentials',
};

describe('sandbox platform', function () {
  let sandbox: Sandbox;
  const extraSandboxes: Sandbox[] = [];
  const another = async (options: Parameters<typeof startSandbox>[0]) => {
    const created = await startSandbox(options);
    extraSandboxes.push(created);
    return created;
  };
  const postToken = (body: unknown, target: Sandbox = sandbox) =>
    call(target.url, 'POST', '/oauth/token', { headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const geocode = (query: string, headers: Record<string, string> = PROJECT_HEADERS, target: Sandbox = sandbox) =>
    call(target.url, 'POST', `/v1/geocode${query}`, { headers });
  /** A bearer route as the cell-words lookup has, for token checks. */
  const addBearerRoute = (target: Sandbox) =>
    target.route('GET', '/v1/test/bearer', { endpoint: 'bearer', auth: 'bearer' }, (ctx) => {
      ctx.res.writeHead(200, { 'content-type': 'application/json' });
      ctx.res.end('{"ok":true}');
    });
  const bearer = (authorization: string | undefined, target: Sandbox = sandbox) =>
    call(target.url, 'GET', '/v1/test/bearer', { headers: authorization === undefined ? {} : { authorization } });

  before(async function () {
    // Jobs complete at once here (their times have their own tests, in platformlike_spec).
    sandbox = await startSandbox({ jobTimeScale: 0 });
    addBearerRoute(sandbox);
  });
  afterEach(async function () {
    sandbox.clearFaults();
    sandbox.log.splice(0);
    await Promise.all(extraSandboxes.splice(0).map((s) => s.close()));
  });
  after(async function () {
    await sandbox.close();
  });

  describe('token endpoint', function () {
    it('issues a JWT with access_token, token_type and expires_in for valid client credentials', async function () {
      const response = await postToken(TOKEN_BODY);
      should(response.status).equal(200);
      should(response.headers['content-type']).match(/^application\/json/);
      const body = response.json as { access_token: string; token_type: string; expires_in: number };
      should(body).have.properties({ token_type: 'Bearer', expires_in: 3600 });
      const claims = JSON.parse(Buffer.from(body.access_token.split('.')[1], 'base64url').toString('utf8')) as { exp: number };
      should(claims.exp - Date.now() / 1000).be.within(3590, 3601);
      should((await bearer(`Bearer ${body.access_token}`)).status).equal(200);
    });

    it('responds with 400 and a JSON error for a body that is not a JSON object', async function () {
      for (const body of ['client_id=a&client_secret=b', '[1,2]', '"text"', '']) {
        const response = await postToken(body);
        should(response.status).equal(400, body);
        should(response.json).have.properties({ error: 'bad_request' });
      }
    });

    it('responds with 415 to a JSON body sent without a JSON content type, and reads application/json with parameters', async function () {
      for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', '']) {
        const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {};
        const response = await call(sandbox.url, 'POST', '/oauth/token', { headers, body: JSON.stringify(TOKEN_BODY) });
        should(response.status).equal(415, contentType);
        should(response.json).have.properties({ error: 'unsupported_media_type' });
      }
      const response = await call(sandbox.url, 'POST', '/oauth/token', {
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify(TOKEN_BODY),
      });
      should(response.status).equal(200);
    });

    it('requires every field of the spec (400 naming the field)', async function () {
      for (const name of Object.keys(TOKEN_BODY)) {
        for (const value of [undefined, '', 42]) {
          const response = await postToken({ ...TOKEN_BODY, [name]: value });
          should(response.status).equal(400);
          should(response.json).eql({ error: 'bad_request', message: `${name} is required` });
        }
      }
    });

    it('accepts only grant_type client_credentials', async function () {
      const response = await postToken({ ...TOKEN_BODY, grant_type: 'password' });
      should(response.status).equal(400);
      should(response.json).have.properties({ error: 'unsupported_grant_type' });
    });

    it('refuses wrong client credentials with 401 and a wrong audience with 403', async function () {
      should((await postToken({ ...TOKEN_BODY, client_secret: 'wrong' })).status).equal(401);
      should((await postToken({ ...TOKEN_BODY, client_id: 'someone-else' })).status).equal(401);
      const wrongAudience = await postToken({ ...TOKEN_BODY, audience: 'https://elsewhere' });
      should(wrongAudience.status).equal(403);
      should(wrongAudience.json).have.properties({ error: 'access_denied' });
    });

    it('only responds to POST', async function () {
      should((await call(sandbox.url, 'GET', '/oauth/token')).status).equal(405);
    });

    it('can leave out expires_in (jwt-only) or both expires_in and the JWT (opaque-no-expiry)', async function () {
      const jwtOnly = (await postToken(TOKEN_BODY, await another({ tokenResponse: 'jwt-only' }))).json as Record<string, unknown>;
      should(jwtOnly).not.have.property('expires_in');
      should(String(jwtOnly.access_token).split('.')).have.length(3);
      const opaque = (await postToken(TOKEN_BODY, await another({ tokenResponse: 'opaque-no-expiry' }))).json as Record<string, unknown>;
      should(opaque).not.have.property('expires_in');
      should(String(opaque.access_token)).not.containEql('.');
    });
  });

  describe('bearer tokens', function () {
    it('refuses a missing, malformed or unknown token with 401', async function () {
      for (const authorization of [undefined, '', 'Basic abc', 'Bearer', 'Bearer not-issued']) {
        const response = await bearer(authorization);
        should(response.status).equal(401, String(authorization));
        should(response.json).eql({ error: 'unauthorized', message: 'missing or unknown bearer token' });
      }
    });

    it('refuses a token once it has expired', async function () {
      const clock = new ManualClock();
      const shortLived = await another({ tokenLifetimeSec: 1, clock });
      addBearerRoute(shortLived);
      const token = ((await postToken(TOKEN_BODY, shortLived)).json as { access_token: string }).access_token;
      should((await bearer(`Bearer ${token}`, shortLived)).status).equal(200);
      await clock.advance(999);
      should((await bearer(`Bearer ${token}`, shortLived)).status).equal(200);
      await clock.advance(1);
      const response = await bearer(`Bearer ${token}`, shortLived);
      should(response.status).equal(401);
      should(response.json).eql({ error: 'unauthorized', message: 'token expired' });
    });

    it('expireAllTokens makes every issued token expire at once', async function () {
      const token = ((await postToken(TOKEN_BODY)).json as { access_token: string }).access_token;
      expireAllTokens(sandbox);
      should((await bearer(`Bearer ${token}`)).json).have.properties({ message: 'token expired' });
    });
  });

  describe('geocode endpoint', function () {
    it('responds to a valid request with a FeatureCollection in the spec result shape', async function () {
      const response = await geocode('?address=12%20Main%20Street');
      should(response.status).equal(200);
      const body = response.json as {
        type: string;
        features: Array<{ type: string; geometry: { type: string; coordinates: number[] }; properties: Record<string, unknown> }>;
      };
      should(body.type).equal('FeatureCollection');
      const [feature] = body.features;
      should(feature.geometry.type).equal('Point');
      should(feature.geometry.coordinates).have.length(2);
      should(feature.properties).have.keys('address_components', 'svc_location', 'quality_metrics');
      should(feature.properties.address_components).have.keys('place', 'admin', 'street', 'house_number', 'landmark');
    });

    it('refuses missing or wrong project and key headers with 401', async function () {
      const cases: Array<Record<string, string>> = [
        {},
        { 'x-svc-api-key': SANDBOX_DEFAULTS.apiKey },
        { 'x-svc-project-id': SANDBOX_DEFAULTS.projectId },
        { ...PROJECT_HEADERS, 'x-svc-project-id': 'other-project' },
        { ...PROJECT_HEADERS, 'x-svc-api-key': 'unknown-key' },
        // The routing family's header is not the geocoding family's.
        { 'x-svc-vpm-id': SANDBOX_DEFAULTS.projectId, 'x-svc-api-key': SANDBOX_DEFAULTS.apiKey },
        { apikey: SANDBOX_DEFAULTS.pubsubApiKey },
      ];
      for (const headers of cases) {
        const response = await geocode('?address=Main%20Street', headers);
        should(response.status).equal(401, JSON.stringify(headers));
        should(response.json).have.properties({ error: 'unauthorized' });
      }
    });

    it('refuses a key that lacks the geocode permission with 401', async function () {
      const keyed = await another({ apiKeys: { 'routing-only-key': ['routing'], 'geocode-key': ['geocode'] } });
      const refused = await geocode('?address=Main%20Street', { ...PROJECT_HEADERS, 'x-svc-api-key': 'routing-only-key' }, keyed);
      should(refused.status).equal(401);
      should(refused.json).eql({ error: 'unauthorized', message: 'this API key may not call the geocode endpoints' });
      should((await geocode('?address=Main%20Street', { ...PROJECT_HEADERS, 'x-svc-api-key': 'geocode-key' }, keyed)).status).equal(200);
    });

    it('responds with 400 and a JSON error for a missing or empty address', async function () {
      for (const query of ['', '?address=', '?address=%20%20', '?q=Main%20Street']) {
        const response = await geocode(query);
        should(response.status).equal(400, query);
        should(response.headers['content-type']).match(/^application\/json/);
        should(response.json).eql({ error: 'bad_request', message: 'query parameter address is required' });
      }
    });

    it('responds with 406 to a request that does not accept JSON, 405 to GET and 404 to unknown paths', async function () {
      should((await geocode('?address=x', { ...PROJECT_HEADERS, accept: 'text/html' })).status).equal(406);
      should((await call(sandbox.url, 'GET', '/v1/geocode?address=x', { headers: PROJECT_HEADERS })).status).equal(405);
      should((await call(sandbox.url, 'POST', '/v2/geocode?address=x', { headers: PROJECT_HEADERS })).status).equal(404);
    });

    it('honours Accept as RFC 9110 reads it: ranges, wildcards and q=0', async function () {
      for (const accept of ['application/json', 'application/*', '*/*', 'text/html, application/json;q=0.5', 'application/json; charset=utf-8']) {
        should((await geocode('?address=x', { ...PROJECT_HEADERS, accept })).status).equal(200, accept);
      }
      for (const accept of ['text/html', 'application/json;q=0', 'text/*, */*;q=0']) {
        const response = await geocode('?address=x', { ...PROJECT_HEADERS, accept });
        should(response.status).equal(406, accept);
        should(response.json).match({ error: 'not_acceptable', message: /^this response is application\/json; the request accepts only / });
      }
    });
  });

  describe('bulk download', function () {
    /** A finished bulk job's download link (the sandbox's own), for one address. */
    async function downloadLink(): Promise<string> {
      const boundary = 'sandbox-spec-boundary';
      const body = `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.csv"\r\ncontent-type: text/csv\r\n\r\naddress\nMain Street\n\r\n--${boundary}--\r\n`;
      const headers = { ...PROJECT_HEADERS, 'content-type': `multipart/form-data; boundary=${boundary}` };
      const upload = await call(sandbox.url, 'POST', '/v1/geocode/bulk', { headers, body });
      should(upload.status).equal(201);
      const { jobId } = upload.json as { jobId: string };
      for (let poll = 0; poll < 20; poll++) {
        const status = (await call(sandbox.url, 'GET', `/v1/geocode/bulk/${jobId}`, { headers: PROJECT_HEADERS })).json as { payload: { link?: string } };
        if (status.payload.link) return status.payload.link;
      }
      throw new Error('the bulk job did not finish in 20 polls');
    }

    it('refuses with 406 an Accept the result file cannot honour, in the error shape, and serves one that admits it (issue 51 point 9)', async function () {
      const refused = await call(sandbox.url, 'GET', await downloadLink(), { headers: { accept: 'application/json' } });
      should(refused.status).equal(406);
      should(refused.headers['content-type']).match(/^application\/json/);
      should(refused.json).eql({ error: 'not_acceptable', message: 'this response is text/csv; the request accepts only application/json' });
      for (const accept of ['*/*', 'text/csv', 'text/*', 'application/json, text/csv;q=0.5']) {
        const served = await call(sandbox.url, 'GET', await downloadLink(), { headers: { accept } });
        should(served.status).equal(200, accept);
        should(served.headers['content-type']).match(/^text\/csv/);
      }
      should((await call(sandbox.url, 'GET', await downloadLink())).status).equal(200);
    });
  });

  describe('faults', function () {
    it('responds with a status, body and Retry-After, for `times` requests only', async function () {
      sandbox.setFault('geocode', { status: 503, retryAfter: '7', body: '{"error":"busy"}', times: 2 });
      for (let i = 0; i < 2; i++) {
        const response = await geocode('?address=x');
        should(response.status).equal(503);
        should(response.headers['retry-after']).equal('7');
        should(response.json).eql({ error: 'busy' });
      }
      should((await geocode('?address=x')).status).equal(200);
    });

    it('faults only the endpoint named, or every endpoint with *', async function () {
      sandbox.setFault('geocode', { status: 500 });
      should((await postToken(TOKEN_BODY)).status).equal(200);
      sandbox.clearFaults();
      sandbox.setFault('*', { status: 502 });
      should((await postToken(TOKEN_BODY)).status).equal(502);
      should((await geocode('?address=x')).status).equal(502);
    });

    it('checks credentials before an injected fault: a wrong key gets 401, not the fault', async function () {
      sandbox.setFault('geocode', { status: 503, times: 1 });
      const refused = await geocode('?address=x', { ...PROJECT_HEADERS, 'x-svc-api-key': 'wrong' });
      should(refused.status).equal(401);
      // The refused request did not use up the fault.
      should((await geocode('?address=x')).status).equal(503);
      should((await geocode('?address=x')).status).equal(200);
    });

    it('delays a response', async function () {
      sandbox.setFault('geocode', { delayMs: 300, times: 1 });
      const started = Date.now();
      should((await geocode('?address=x')).status).equal(200);
      should(Date.now() - started).be.aboveOrEqual(290);
    });

    it('resets the connection without responding', async function () {
      sandbox.setFault('geocode', { reset: true, times: 1 });
      const error = await geocode('?address=x').then(
        () => undefined,
        (err: NodeJS.ErrnoException) => err,
      );
      should(error?.code).match(/ECONNRESET/);
      should(sandbox.requests('geocode')[0].status).be.undefined();
    });

    it('responds with 200 and malformed JSON', async function () {
      sandbox.setFault('geocode', { malformedJson: true });
      const response = await geocode('?address=x');
      should(response.status).equal(200);
      should(response.json).be.undefined();
      should(response.text).startWith('{"type":"FeatureCollection"');
    });

    it('hangs until the caller gives up', async function () {
      sandbox.setFault('geocode', { hang: true });
      const controller = new AbortController();
      const aborted = call(sandbox.url, 'POST', '/v1/geocode?address=y', { headers: PROJECT_HEADERS, signal: controller.signal }).catch((err: Error) => err);
      await waitUntil(() => sandbox.requests('geocode').length === 1, 'the request');
      await new Promise((resolve) => setTimeout(resolve, 200));
      should(sandbox.requests('geocode')[0].status).be.undefined();
      controller.abort();
      should(await aborted).be.instanceOf(Error);
      // Closing the sandbox ends a hanging exchange too.
      const closing = await another({});
      closing.setFault('geocode', { hang: true });
      const hangingOnClosing = geocode('?address=z', PROJECT_HEADERS, closing).catch((err: Error) => err);
      await waitUntil(() => closing.requests('geocode').length === 1, 'the hanging request');
      await closing.close();
      should(await hangingOnClosing).be.instanceOf(Error);
    });

    it('sends a body slowly when asked', async function () {
      sandbox.setFault('geocode', { slowBodyMs: 20 });
      const started = Date.now();
      const response = await geocode('?address=12%20Main%20Street');
      should(response.status).equal(200);
      should(response.json).have.property('type', 'FeatureCollection');
      should(Date.now() - started).be.aboveOrEqual(100);
    });

    it('rate limits beyond N requests a minute with 429 and a Retry-After in seconds', async function () {
      sandbox.setFault('geocode', { rateLimitPerMinute: 2 });
      should((await geocode('?address=a')).status).equal(200);
      should((await geocode('?address=b')).status).equal(200);
      const limited = await geocode('?address=c');
      should(limited.status).equal(429);
      should(limited.json).have.properties({ error: 'rate_limited' });
      should(Number(limited.headers['retry-after'])).be.within(1, 60);
      sandbox.clearFaults();
      should((await geocode('?address=d')).status).equal(200);
    });
  });

  describe('request log', function () {
    it('records endpoint, method, path, query, headers, body, status and time of every request', async function () {
      const before = Date.now();
      await geocode('?address=12%20Main%20Street');
      await postToken(TOKEN_BODY);
      await call(sandbox.url, 'GET', '/nowhere?x=1');
      const log = sandbox.requests();
      should(log.map((r) => r.endpoint)).eql(['geocode', 'token', 'unknown']);
      const [geocodeEntry] = sandbox.requests('geocode');
      should(geocodeEntry).have.properties({ method: 'POST', path: '/v1/geocode', query: { address: '12 Main Street' }, status: 200, body: '' });
      should(geocodeEntry.headers['x-svc-api-key']).equal(SANDBOX_DEFAULTS.apiKey);
      should(geocodeEntry.time).be.aboveOrEqual(before);
      should(JSON.parse(sandbox.requests('token')[0].body)).eql(TOKEN_BODY);
      should(log[2]).have.properties({ status: 404, path: '/nowhere' });
    });
  });
});
