import should from 'should';
import { expectError, expectOutput, loadWithSandbox, useSandbox, Fields } from '../support/harness';
import { resetBulk } from '../../sandbox/endpoints/bulk';
import type { ContentCoding } from '../../sandbox/faults';
import type { BulkRow } from '../../nodes/lib/geo/result-rows';
import { clientSuite, rejectionOf } from '../support/platform-client';

/**
 * Issue 20, point 7: responses sent with a Content-Encoding (gzip, deflate, br) are decoded as they are
 * read, JSON responses and bulk result files alike, and the size limits apply to the decoded bytes: a
 * compression bomb (64 MB of JSON in 64 KB of gzip, or 100 bytes of br) stops at the limit with
 * BAD_RESPONSE naming it. A broken or unknown encoding is BAD_RESPONSE too, not retried. On 1.0.0 the
 * compressed bytes were read as they came: a compressed geocode response was "not valid JSON", a
 * compressed result file a row-count error, and a bomb never met its limit.
 */

const CODINGS: ContentCoding[] = ['gzip', 'deflate', 'br'];
const FAST = { pollInterval: 10, maxWait: 5 };
/** Small limits, so that a bomb is far past them. */
const LIMITS = { maxResponseSize: 1, maxFileSize: 2 };
const ADDRESSES = ['12 Main Street, Sandbox City', 'High Street', 'nowhere at all'];

describe('compressed responses', function () {
  const env = useSandbox({ jobPolls: 2 });
  beforeEach(() => resetBulk(env.sandbox));

  const loadGeocode = () => loadWithSandbox(env.sandbox, { types: ['svc-geocode'], nodes: [{ id: 'n', type: 'svc-geocode' }], config: LIMITS });
  const loadBulk = () => loadWithSandbox(env.sandbox, { types: ['svc-bulk-geocode'], nodes: [{ id: 'n', type: 'svc-bulk-geocode', ...FAST }], config: LIMITS });

  for (const coding of CODINGS) {
    describe(coding, function () {
      it('a geocode response is decoded', async function () {
        await loadGeocode();
        env.sandbox.setFault('geocode', { contentEncoding: coding });
        const msg = await expectOutput('n', { payload: ADDRESSES[0] });
        should(msg.payload).have.properties({ type: 'FeatureCollection' });
        should(env.sandbox.requests('geocode')[0].status).equal(200);
      });

      it('a bulk result file is decoded and its rows are paired with their addresses', async function () {
        await loadBulk();
        env.sandbox.setFault('bulk-download', { contentEncoding: coding });
        const msg = await expectOutput('n', { payload: ADDRESSES });
        const rows = msg.payload as BulkRow[];
        should(rows.map((row) => row.input)).eql(ADDRESSES);
        should(rows.map((row) => (row.result as Fields).address)).eql(ADDRESSES);
        should(rows[0].location).be.an.Object();
      });

      it('a compression bomb as a geocode response stops at "Max response size" with BAD_RESPONSE, not retried', async function () {
        await loadGeocode();
        env.sandbox.setFault('geocode', { compressionBomb: coding });
        const { error } = await expectError('n', { payload: ADDRESSES[0] }, 10_000);
        should(error.code).equal('BAD_RESPONSE');
        should(error.message).match(/the response is larger than 1 MB \(the "Max response size" of the svc-config node\)/);
        should(env.sandbox.requests('geocode')).have.length(1);
      });

      it('a compression bomb as a bulk result file stops at "Max file size" with BAD_RESPONSE', async function () {
        await loadBulk();
        env.sandbox.setFault('bulk-download', { compressionBomb: coding });
        const { error } = await expectError('n', { payload: ADDRESSES }, 10_000);
        should(error.code).equal('BAD_RESPONSE');
        should(error.message).match(/the response is larger than 2 MB \(the "Max file size" of the svc-config node\)/);
      });
    });
  }

  it('a response declaring gzip that is not gzip is BAD_RESPONSE naming the encoding, not retried', async function () {
    await loadGeocode();
    env.sandbox.setFault('geocode', { brokenEncoding: true });
    const { error } = await expectError('n', { payload: ADDRESSES[0] });
    should(error.code).equal('BAD_RESPONSE');
    should(error.message).match(/^the response's gzip encoding cannot be decoded: /);
    should(env.sandbox.requests('geocode')).have.length(1);
  });

  it('an error response in gzip still shows its message', async function () {
    await loadGeocode();
    env.sandbox.setFault('geocode', { status: 400, body: JSON.stringify({ message: 'the address is too vague' }), contentEncoding: 'gzip' });
    const { error } = await expectError('n', { payload: ADDRESSES[0] });
    should(error.code).equal('BAD_REQUEST');
    should(error.message).match(/the address is too vague/);
  });
});

describe('compressed responses at the client', function () {
  const suite = clientSuite((sandbox) => {
    // Responses as a careless server sends them: an encoding declared on an empty body, or one the client does not read.
    sandbox.route('GET', '/v1/test/encoded/:kind', { endpoint: 'encoded', auth: 'none' }, (ctx) => {
      if (ctx.params.kind === 'empty-200') ctx.res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      else if (ctx.params.kind === 'empty-204') ctx.res.writeHead(204, { 'content-encoding': 'br' });
      else ctx.res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': ctx.params.kind });
      ctx.res.end(ctx.params.kind.startsWith('empty') ? undefined : '{"a":1}');
    });
  });
  const get = (kind: string) => ({ rate: 'geocode', auth: 'none', method: 'GET', path: `/v1/test/encoded/${kind}`, retry: 'read' }) as const;

  it('an empty body declared as gzip or br (a 200, a 204) is an empty response, not a broken one', async function () {
    const client = suite.clients.create(suite.sandbox);
    for (const kind of ['empty-200', 'empty-204']) should((await client.request(get(kind))).body).be.undefined();
  });

  it('an encoding the client does not read is BAD_RESPONSE naming it, not retried', async function () {
    const client = suite.clients.create(suite.sandbox, { maxRetries: 2 });
    for (const [kind, named] of [
      ['zstd', 'zstd'],
      ['gzip, br, gzip', 'gzip, br, gzip'],
    ]) {
      const error = await rejectionOf(client.request(get(kind)));
      should(error.code).equal('BAD_RESPONSE');
      should(error.message).equal(`the response is encoded as "${named}", which the client cannot decode`);
    }
    should(suite.sandbox.requests('encoded')).have.length(2);
  });
});
