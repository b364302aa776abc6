import ngeohash from 'ngeohash';
import should from 'should';
import { expectError, expectOutput, helper, loadWithSandbox, useSandbox, Fields } from '../support/harness';
import { expireAllTokens } from '../../sandbox/endpoints/auth';
import { lookup } from '../../sandbox/endpoints/words';

describe('svc-words', function () {
  const ctx = useSandbox();
  const wordsNode = (extra: Fields = {}) => ({ id: 'n1', type: 'svc-words', ...extra });
  const load = (extra: Fields = {}, config: Fields = {}, credentials: Fields = {}) =>
    loadWithSandbox(ctx.sandbox, { types: ['svc-words'], nodes: [wordsNode(extra)], config, credentials });
  const wordsPath = (words: string[]) => `/v1/location/words/${words.map(encodeURIComponent).join('.')}`;

  it('looks up three words from msg.payload with a bearer token and outputs location and geohash', async function () {
    await load();
    const msg = await expectOutput('n1', { payload: 'index.home.raft' });
    const expected = lookup('index.home.raft') as { geohash: string; coordinates: { lat: number; lon: number; elevation: number; elevationType: string } };
    should(msg.payload).eql(expected);
    // The elevation's type stays beside it (issue 28): without it an elevation cannot be read.
    should(msg.location).eql({
      lat: expected.coordinates.lat,
      lon: expected.coordinates.lon,
      elevation: expected.coordinates.elevation,
      elevationType: expected.coordinates.elevationType,
    });
    should(msg.geohash).equal(expected.geohash);
    should(msg.statusCode).equal(200);
    const [request] = ctx.sandbox.requests('words');
    should(request.method).equal('GET');
    should(request.path).equal('/v1/location/words/index.home.raft');
    should(request.headers.authorization).match(/^Bearer .+/);
    should(request.headers['x-svc-api-key']).be.undefined();
    should(ctx.sandbox.requests('token')).have.length(1);
  });

  it('accepts a leading ///, surrounding spaces and any letter case, and asks for the same cell', async function () {
    await load();
    const plain = await expectOutput('n1', { payload: 'index.home.raft' });
    for (const variant of ['///index.home.raft', '  Index.HOME.raft \n', ' ///INDEX.Home.Raft', { words: 'index.home.raft' }]) {
      const msg = await expectOutput('n1', { payload: variant });
      should(msg.geohash).equal(plain.geohash);
    }
    should(ctx.sandbox.requests('words').map((r) => r.path)).matchEach('/v1/location/words/index.home.raft');
  });

  it('accepts words in other scripts and URL-encodes each word', async function () {
    await load();
    const cases: Array<[string, string[]]> = [
      ['Straße.Über.naïve', ['straße', 'über', 'naïve']],
      ['///こくさい。ていか。かざす', ['こくさい', 'ていか', 'かざす']],
      ['дом.слово.река', ['дом', 'слово', 'река']],
      ['नमस्ते.दुनिया.घर', ['नमस्ते', 'दुनिया', 'घर']],
    ];
    for (const [input, words] of cases) {
      const msg = await expectOutput('n1', { payload: input });
      should((msg.payload as Fields).words).equal(words.join('.'));
      should(ctx.sandbox.requests('words').pop()?.path).equal(wordsPath(words));
    }
  });

  it('takes the words from a fixed value in the editor, which wins over the message', async function () {
    await load({ words: 'fixed.value.wins', wordsType: 'str' });
    const msg = await expectOutput('n1', { payload: 'index.home.raft' });
    should((msg.payload as Fields).words).equal('fixed.value.wins');
  });

  it('takes the words from another message property', async function () {
    await load({ words: 'cell.words', wordsType: 'msg' });
    const msg = await expectOutput('n1', { payload: 'unrelated', cell: { words: 'index.home.raft' } });
    should((msg.payload as Fields).words).equal('index.home.raft');
    should(msg.payload).not.equal('unrelated');
  });

  it('refuses anything but three words of letters before any request, keeping the message', async function () {
    await load();
    const bad: unknown[] = [
      '',
      '   ',
      'index.home',
      'index.home.raft.extra',
      'index..raft',
      'index.home.raft.',
      '.index.home.raft',
      'index home raft',
      'index.ho me.raft',
      'index.home.r4ft',
      'index-1.home.raft',
      '//index.home.raft',
      '////index.home.raft',
      'index,home,raft',
      42,
      null,
      ['index', 'home', 'raft'],
      { place: 'index.home.raft' },
    ];
    for (const payload of bad) {
      const { error, msg } = await expectError('n1', { payload });
      should(error.code).equal('INVALID_INPUT', `for ${JSON.stringify(payload)}`);
      should(msg.payload).eql(payload);
    }
    should(ctx.sandbox.requests('words')).have.length(0);
    should(ctx.sandbox.requests('token')).have.length(0);
  });

  it('reports a 404 as "no such three-word address"', async function () {
    await load();
    const { error, msg } = await expectError('n1', { payload: 'nowhere.to.be' });
    should(error.code).equal('NOT_FOUND');
    should(error.message).match(/no such three-word address: \/\/\/nowhere\.to\.be/);
    should(msg.statusCode).equal(404);
  });

  it('reports an empty result, or one whose httpStatusCode is 404, as "no such three-word address"', async function () {
    await load();
    for (const body of ['{}', '', '{"words":"index.home.raft","httpStatusCode":404}']) {
      ctx.sandbox.setFault('words', { status: 200, body, times: 1 });
      const { error } = await expectError('n1', { payload: 'index.home.raft' });
      should(error.code).equal('NOT_FOUND', `for body ${JSON.stringify(body)}`);
      should(error.message).match(/no such three-word address/);
    }
  });

  it('reports a result without a usable location as a bad response', async function () {
    await load();
    ctx.sandbox.setFault('words', { status: 200, body: '{"words":"a.b.c","coordinates":{"lat":123,"lon":4}}', times: 1 });
    const { error } = await expectError('n1', { payload: 'index.home.raft' });
    should(error.code).equal('BAD_RESPONSE');
  });

  it('takes the location from the geohash when the result has no coordinates', async function () {
    await load();
    ctx.sandbox.setFault('words', { status: 200, body: '{"words":"index.home.raft","geohash":"u33dc0cpk"}', times: 1 });
    const msg = await expectOutput('n1', { payload: 'index.home.raft' });
    should(msg.geohash).equal('u33dc0cpk');
    const { latitude, longitude } = ngeohash.decode('u33dc0cpk');
    should(msg.location).eql({ lat: latitude, lon: longitude, elevation: undefined });
  });

  it('after a 401 for an expired token drops it, fetches a new one and retries once', async function () {
    await load();
    await expectOutput('n1', { payload: 'index.home.raft' });
    expireAllTokens(ctx.sandbox);
    const msg = await expectOutput('n1', { payload: 'index.home.raft' });
    should(msg.statusCode).equal(200);
    should(ctx.sandbox.requests('token')).have.length(2);
    should(ctx.sandbox.requests('words').map((r) => r.status)).eql([200, 401, 200]);
    const [first, refused, retried] = ctx.sandbox.requests('words').map((r) => r.headers.authorization);
    should(refused).equal(first);
    should(retried).not.equal(first);
  });

  it('gives up with UNAUTHORIZED when the new token is refused too', async function () {
    await load();
    ctx.sandbox.setFault('words', { status: 401, times: 5 });
    const { error, msg } = await expectError('n1', { payload: 'index.home.raft' });
    should(error.code).equal('UNAUTHORIZED');
    should(error.message).equal("svc-config 'sandbox': the access token was refused (401): check the Audience field");
    should(msg.statusCode).equal(401);
    should(ctx.sandbox.requests('words')).have.length(2);
    should(ctx.sandbox.requests('token')).have.length(2);
  });

  it('names the Token URL, or the Words URL, whose connection was refused', async function () {
    await load({}, { authUrl: 'http://127.0.0.1:1', maxRetries: 0 });
    const token = await expectError('n1', { payload: 'index.home.raft' });
    should(token.error.code).equal('NETWORK');
    should(token.error.message).endWith(' — check Token URL in the svc-config node, and the network');
    await helper.unload();
    await load({}, { sandboxUrl: 'http://127.0.0.1:1', maxRetries: 0 });
    const words = await expectError('n1', { payload: 'index.home.raft' });
    should(words.error.code).equal('NETWORK');
    should(words.error.message).endWith(' — check Words URL in the svc-config node, and the network');
  });

  it('reports a refused client secret without calling the lookup', async function () {
    await load({}, {}, { clientSecret: 'wrong' });
    const { error } = await expectError('n1', { payload: 'index.home.raft' });
    should(error.code).equal('UNAUTHORIZED');
    should(error.message).equal("svc-config 'sandbox': token request refused (401): check the Client id, Client secret and Audience fields");
    should(ctx.sandbox.requests('words')).have.length(0);
  });

  it('waits out a 429 for its Retry-After and then succeeds', async function () {
    await load();
    ctx.sandbox.setFault('words', { status: 429, retryAfter: '1', times: 1 });
    const started = Date.now();
    const msg = await expectOutput('n1', { payload: 'index.home.raft' });
    should(msg.statusCode).equal(200);
    should(Date.now() - started).be.aboveOrEqual(900);
    should(ctx.sandbox.requests('words').map((r) => r.status)).eql([429, 200]);
  });

  it('retries a 5xx, and reports SERVER when it persists', async function () {
    await load();
    ctx.sandbox.setFault('words', { status: 503, times: 1 });
    await expectOutput('n1', { payload: 'index.home.raft' });
    ctx.sandbox.log.splice(0);
    ctx.sandbox.setFault('words', { status: 500 });
    const { error, msg } = await expectError('n1', { payload: 'index.home.raft' });
    should(error.code).equal('SERVER');
    should(msg.statusCode).equal(500);
    should(ctx.sandbox.requests('words')).have.length(3);
  });

  it('reports TIMEOUT when the lookup never responds', async function () {
    await load({}, { timeout: 200 });
    ctx.sandbox.setFault('words', { hang: true });
    const { error } = await expectError('n1', { payload: 'index.home.raft' });
    should(error.code).equal('TIMEOUT');
  });

  it('reports a malformed body as BAD_RESPONSE', async function () {
    await load();
    ctx.sandbox.setFault('words', { malformedJson: true });
    const { error } = await expectError('n1', { payload: 'index.home.raft' });
    should(error.code).equal('BAD_RESPONSE');
  });
});
