import should from 'should';
import { expectError, expectOutput, loadWithSandbox, useSandbox, Json } from './support/harness';

describe('svc-geocode', function () {
  const ctx = useSandbox();
  const geocodeNode = (extra: Json = {}) => ({ id: 'n1', type: 'svc-geocode', ...extra });

  it('geocodes an address from msg.payload with the spec headers and query', async function () {
    await loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [geocodeNode()] });
    const msg = await expectOutput('n1', { payload: '12 Main Street, Sandbox City' });
    should(msg.statusCode).equal(200);
    const location = msg.location as { lat: number; lon: number };
    const feature = msg.feature as { geometry: { coordinates: number[] }; properties: Json };
    should(location.lon).equal(feature.geometry.coordinates[0]);
    should(location.lat).equal(feature.geometry.coordinates[1]);
    should(msg.geohash).be.a.String().and.have.length(9);
    const [request] = ctx.sandbox.requests('geocode');
    should(request.method).equal('POST');
    should(request.query.address).equal('12 Main Street, Sandbox City');
    should(request.headers['x-svc-project-id']).equal('sandbox-project');
    should(request.headers['x-svc-api-key']).equal('sandbox-api-key');
    should(request.headers.accept).equal('application/json');
  });

  it('reports no match as an output with location undefined', async function () {
    await loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [geocodeNode()] });
    const msg = await expectOutput('n1', { payload: 'nowhere at all' });
    should(msg.location).be.undefined();
    should(msg.geohash).be.undefined();
  });

  it('refuses an empty address before any request', async function () {
    await loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [geocodeNode()] });
    const { error, msg } = await expectError('n1', { payload: '   ' });
    should(error.code).equal('INVALID_INPUT');
    should(msg.payload).equal('   ');
    should(ctx.sandbox.requests('geocode')).have.length(0);
  });

  it('surfaces a 401 with statusCode and code', async function () {
    await loadWithSandbox(ctx.sandbox, { types: ['svc-geocode'], nodes: [geocodeNode()], credentials: { apiKey: 'wrong' } });
    const { error, msg } = await expectError('n1', { payload: 'Main Street' });
    should(error.code).equal('UNAUTHORIZED');
    should(msg.statusCode).equal(401);
  });
});
