import should from 'should';
import { PlatformError } from '../../../nodes/lib/util/errors';
import { plainText, trimTrailing } from '../../../nodes/lib/util/text';
import { Sandbox, sendJson } from '../../../sandbox';
import { clientSuite, geocode, rejectionOf } from '../../support/platform-client';
import { measureLateness, waitUntil } from '../../support/wait';

/**
 * Issue 13, point 4: every response is read within a limit. Huge, endless and slowly dripping bodies
 * end the request (its connection closed, nothing more read) with one error naming the limit or the
 * timeout. How many bytes the sandbox could hand over before the client stopped is the proof that
 * the client stopped reading; the fault suite checks the memory of a real Node-RED process.
 */

const KB = 1024;
const MB = 1024 * KB;
/** What loopback socket buffers can hold besides what the client read: generous, far below the bodies sent. */
const SOCKET_BUFFERS = 16 * MB;

describe('bounded responses', function () {
  const suite = clientSuite((sandbox) => {
    sandbox.route('GET', '/v1/test/file/:bytes', { endpoint: 'file', auth: 'none' }, (ctx) => {
      ctx.res.writeHead(200, { 'content-type': 'text/csv' });
      ctx.res.end(Buffer.alloc(Number(ctx.params.bytes), 'a'));
    });
    sandbox.route('GET', '/v1/test/big-error', { endpoint: 'big-error', auth: 'none' }, (ctx) => {
      sendJson(ctx.res, 503, { message: 'overloaded', padding: 'p'.repeat(4 * MB) });
    });
  });
  const { clients } = suite;
  let sandbox: Sandbox;
  beforeEach(() => {
    sandbox = suite.sandbox;
  });

  /** The one logged request of `endpoint`, once its connection has closed. */
  async function closedRequest(endpoint: string) {
    await waitUntil(() => sandbox.requests(endpoint).every((r) => r.closedAt !== undefined), `the ${endpoint} connection to close`);
    const requests = sandbox.requests(endpoint);
    should(requests).have.length(1);
    return requests[0];
  }

  it('a JSON response past the limit is BAD_RESPONSE naming the limit; reading stops there and the connection closes', async function () {
    const client = clients.create(sandbox, { maxResponseBytes: 1 * MB });
    sandbox.setFault('geocode', { hugeBodyBytes: 256 * MB });
    const error = await rejectionOf(client.request(geocode()));
    should(error.code).equal('BAD_RESPONSE');
    should(error.statusCode).equal(200);
    should(error.message).equal('the response is larger than 1 MB (the "Max response size" of the svc-config node): not read');
    const request = await closedRequest('geocode');
    should(request.faultBodyBytes).be.below(1 * MB + SOCKET_BUFFERS);
  });

  it('a Content-Length over the limit fails before the body is read, and is not retried', async function () {
    const client = clients.create(sandbox, { maxResponseBytes: 512 * KB, maxRetries: 3 });
    sandbox.setFault('geocode', { hugeBodyBytes: 300 * MB, declareLength: true });
    const error = await rejectionOf(client.request(geocode()));
    should(error.code).equal('BAD_RESPONSE');
    should(error.message).equal('the response declares 300 MB, more than 512 KB (the "Max response size" of the svc-config node): not read');
    const request = await closedRequest('geocode');
    should(request.faultBodyBytes).be.below(SOCKET_BUFFERS);
  });

  it('an endless response ends at the limit', async function () {
    const client = clients.create(sandbox, { maxResponseBytes: 2 * MB });
    sandbox.setFault('geocode', { endlessBody: true });
    const error = await rejectionOf(client.request(geocode()));
    should(error.code).equal('BAD_RESPONSE');
    should(error.message).startWith('the response is larger than 2 MB');
    should((await closedRequest('geocode')).faultBodyBytes).be.below(2 * MB + SOCKET_BUFFERS);
  });

  it('a response that drips forever ends at the timeout, which covers the whole body and not just the headers', async function () {
    const client = clients.create(sandbox, { timeoutMs: 400, maxRetries: 0 });
    sandbox.setFault('geocode', { dripMs: 20 });
    const started = Date.now();
    const { result: error, latenessMs } = await measureLateness(() => rejectionOf(client.request(geocode())));
    should(error.code).equal('TIMEOUT');
    should(error.message).equal('no complete response within 400 ms');
    // The timeout, then up to 2 s to close the exchange, plus the longest stall of this process meanwhile.
    should(Date.now() - started).be.below(400 + 2000 + latenessMs);
    const request = await closedRequest('geocode');
    should(request.faultBodyBytes).be.above(5, 'the headers and some body arrived before the timeout');
  });

  it('a file response has its own, larger limit', async function () {
    const client = clients.create(sandbox, { maxResponseBytes: 64 * KB, maxFileBytes: 1 * MB });
    const file = (bytes: number) =>
      client.request<Buffer>({ rate: 'geocode', auth: 'none', method: 'GET', path: `/v1/test/file/${bytes}`, retry: 'read', response: 'buffer' });
    should((await file(1 * MB)).body.length).equal(1 * MB);
    const error = await rejectionOf(file(1 * MB + 1));
    should(error.code).equal('BAD_RESPONSE');
    should(error.message).equal('the response is larger than 1 MB (the "Max file size" of the svc-config node): not read');
    sandbox.setFault('file', { hugeBodyBytes: 2 * MB, declareLength: true });
    should((await rejectionOf(file(10))).message).equal('the response declares 2 MB, more than 1 MB (the "Max file size" of the svc-config node): not read');
  });

  it('an error response is read only as far as its message and excerpt need; its status still decides', async function () {
    const client = clients.create(sandbox, { maxRetries: 0 });
    const error = await rejectionOf(client.request({ rate: 'geocode', auth: 'none', method: 'GET', path: '/v1/test/big-error', retry: 'read' }));
    should(error.code).equal('SERVER');
    should(error.statusCode).equal(503);
    should(error.bodyExcerpt).startWith('{"message":"overloaded"');
  });
});

describe('text scans that replaced backtracking patterns give the same results', function () {
  it('plainText removes each tag from a < to the first > after it, and keeps a < without one as text', function () {
    should(plainText('Turn <b>left</b> onto <span class="street">Main</span>')).equal('Turn left onto Main');
    should(plainText('one<br>two<BR/>three<br />four<br\t/>five')).equal('one two three four five');
    should(plainText('a < b and <i>c</i>')).equal('a c');
    should(plainText('x < y, 1 < 2')).equal('x < y, 1 < 2');
    should(plainText('<<<')).equal('<<<');
    should(plainText('a <b> c <')).equal('a c <');
    should(plainText('<brx>joined')).equal('joined');
  });

  it('trimTrailing removes every trailing copy of the character and nothing else', function () {
    should(trimTrailing('https://a.example/v1//', '/')).equal('https://a.example/v1');
    should(trimTrailing('https://a.example', '/')).equal('https://a.example');
    should(trimTrailing('///', '/')).equal('');
    should(trimTrailing('', '/')).equal('');
  });
});

describe('body excerpts of huge responses', function () {
  const excerptOf = (body: string, secrets: string[] = []) => new PlatformError('BAD_RESPONSE', 'test', { body, secrets }).bodyExcerpt ?? '';

  it('are taken from the start of the body only, at most 300 characters, whatever its size', function () {
    const text = excerptOf(`{"message":"broken"${' '.repeat(8 * MB)}`);
    should(text).startWith('{"message":"broken"');
    should(text.length).equal(300);
  });

  it('mask a credential that the cut leaves unterminated, quoted or bare', function () {
    const padding = '"x":"***********",'.repeat(2000);
    for (const body of [
      `{${padding}"token":"abcdefghij${'k'.repeat(40 * KB)}"}`,
      `token=abcdefghij${'k'.repeat(40 * KB)}&rest`,
      `{"access_token":"abcdefghij`,
    ]) {
      should(excerptOf(body)).not.containEql('abcdefghij');
    }
  });

  it('drop the beginning of a configured secret that the cut splits', function () {
    const secret = 'configured-secret-value';
    for (let cut = 1; cut < secret.length; cut++) {
      // The excerpt is taken from the first 16 KB, which end `cut` characters into the secret. The member
      // before it is masked whole, so what follows comes within the excerpt's 300 characters.
      const body = `{"token":"${'v'.repeat(16 * KB - 17 - cut)}","k":"${secret}"}`;
      const text = excerptOf(body, [secret]);
      should(text).startWith('{"token":"***","k":"');
      should(text).not.containEql(secret.slice(0, cut));
    }
  });
});
