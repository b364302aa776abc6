import { createHash } from 'node:crypto';
import should from 'should';
import { ReplayMemory, compactKey } from '../../../nodes/lib/webhook/replay-memory';
import { SignatureVerifier, computeDigest, constantTimeEqual, parseSignatureHeader, timestampToMs } from '../../../nodes/lib/webhook/signature';

/** Vectors computed outside this code: printf '%s' '<t>.<secret>.<body>' | sha256sum */
const RAW_BODY = '{"temperature": 21.5, "unit":"\\u00b0C"}';
const VECTOR = { t: '1700000000', secret: 's3cret-token', digest: 'fe3d238dc9e2e5eeddc1328b9fed4dc6180f32c5b188f86846d46c323b581989' };
const VECTOR_MS = { t: '1700000000123', secret: 's3cret-token', body: '{}', digest: '3f3440bb506567404acdbe80af30b45d16cfaf46f77da2b6f09dd409d500b8a3' };
const SECRET = 's3cret-token';
const NOW_SEC = 1_700_000_000;
const NOW = NOW_SEC * 1000;

function header(t: string | number, secret: string, body: string): string {
  return `t=${t},digestV1=${computeDigest(String(t), secret, Buffer.from(body))}`;
}

describe('signature (unit)', function () {
  describe('computeDigest', function () {
    it('is the lowercase hex SHA-256 of <t>.<secret>.<body bytes>', function () {
      should(computeDigest(VECTOR.t, VECTOR.secret, Buffer.from(RAW_BODY))).equal(VECTOR.digest);
      should(computeDigest(VECTOR_MS.t, VECTOR_MS.secret, VECTOR_MS.body)).equal(VECTOR_MS.digest);
    });

    it('covers the exact bytes: re-serialised JSON gives another digest', function () {
      const reserialised = JSON.stringify(JSON.parse(RAW_BODY));
      should(reserialised).not.equal(RAW_BODY);
      should(computeDigest(VECTOR.t, VECTOR.secret, Buffer.from(reserialised))).not.equal(VECTOR.digest);
    });
  });

  describe('parseSignatureHeader', function () {
    it('reads t and digestV1 in either order, with spaces, and several digests', function () {
      const digest = 'ab'.repeat(32);
      const other = 'cd'.repeat(32);
      should(parseSignatureHeader(`t=123,digestV1=${digest}`)).eql({ timestamp: '123', digests: [Buffer.from(digest, 'hex')] });
      should(parseSignatureHeader(` digestV1=${digest} , t=123 `)?.timestamp).equal('123');
      should(parseSignatureHeader(`t=123,digestV1=${digest},digestV1=${other}`)?.digests).have.length(2);
      should(parseSignatureHeader(`t=123,digestV1=${digest.toUpperCase()}`)?.digests[0].toString('hex')).equal(digest);
      should(parseSignatureHeader(`t=123,digestV2=zzz,digestV1=${digest}`)?.digests).have.length(1);
    });

    it('refuses anything else', function () {
      const digest = 'ab'.repeat(32);
      for (const value of [
        undefined,
        '',
        'garbage',
        `digestV1=${digest}`,
        't=123',
        `t=,digestV1=${digest}`,
        `t=abc,digestV1=${digest}`,
        `t=-5,digestV1=${digest}`,
        `t=123,digestV1=${digest.slice(2)}`,
        `t=123,digestV1=${'zz'.repeat(32)}`,
        `t=123,t=124,digestV1=${digest}`,
        `t=123;digestV1=${digest}`,
        [`t=123,digestV1=${digest}`],
      ]) {
        should(parseSignatureHeader(value)).be.undefined();
      }
    });
  });

  describe('timestampToMs', function () {
    it('reads seconds and milliseconds by magnitude', function () {
      should(timestampToMs('1700000000')).equal(1_700_000_000_000);
      should(timestampToMs('1700000000123')).equal(1_700_000_000_123);
      should(timestampToMs('1700000000.5')).equal(1_700_000_000_500);
    });
  });

  describe('SignatureVerifier', function () {
    const body = Buffer.from(RAW_BODY);
    const verifier = () => new SignatureVerifier({ secrets: [SECRET, 'old-secret'], toleranceSec: 300 });

    it('accepts a digest made with the current or the previous secret', function () {
      const result = verifier().verify(header(NOW_SEC, SECRET, RAW_BODY), body, NOW);
      should(result).match({ ok: true, timestamp: String(NOW_SEC), timestampMs: NOW });
      should(verifier().verify(header(NOW_SEC, 'old-secret', RAW_BODY), body, NOW).ok).be.true();
    });

    it('accepts t in milliseconds', function () {
      should(verifier().verify(header(NOW + 5, SECRET, RAW_BODY), body, NOW)).match({ ok: true, timestampMs: NOW + 5 });
    });

    it('refuses a wrong secret, a wrong digest and an altered body as a mismatch', function () {
      const v = verifier();
      should(v.verify(header(NOW_SEC, 'wrong-secret', RAW_BODY), body, NOW)).eql({ ok: false, reason: 'signature mismatch' });
      should(v.verify(`t=${NOW_SEC},digestV1=${'0'.repeat(64)}`, body, NOW)).eql({ ok: false, reason: 'signature mismatch' });
      const altered = Buffer.from(RAW_BODY.replace('21.5', '99.5'));
      should(v.verify(header(NOW_SEC, SECRET, RAW_BODY), altered, NOW)).eql({ ok: false, reason: 'signature mismatch' });
      // The digest covers t as well: moving t keeps the digest but breaks the match.
      const moved = header(NOW_SEC, SECRET, RAW_BODY).replace(`t=${NOW_SEC}`, `t=${NOW_SEC + 1}`);
      should(v.verify(moved, body, NOW)).eql({ ok: false, reason: 'signature mismatch' });
    });

    it('refuses a missing or malformed header', function () {
      should(verifier().verify(undefined, body, NOW)).eql({ ok: false, reason: 'missing signature' });
      should(verifier().verify('t=1', body, NOW)).eql({ ok: false, reason: 'malformed signature' });
    });

    it('refuses timestamps outside the tolerance, in either direction, and accepts its edges', function () {
      const v = verifier();
      should(v.verify(header(NOW_SEC - 301, SECRET, RAW_BODY), body, NOW)).eql({ ok: false, reason: 'stale timestamp' });
      should(v.verify(header(NOW_SEC + 301, SECRET, RAW_BODY), body, NOW)).eql({ ok: false, reason: 'future timestamp' });
      should(v.verify(header(NOW_SEC - 300, SECRET, RAW_BODY), body, NOW).ok).be.true();
      should(v.verify(header(NOW_SEC + 300, SECRET, RAW_BODY), body, NOW).ok).be.true();
      const strict = new SignatureVerifier({ secrets: [SECRET], toleranceSec: 10 });
      should(strict.verify(header(NOW_SEC - 11, SECRET, RAW_BODY), body, NOW)).eql({ ok: false, reason: 'stale timestamp' });
    });

    it('names an accepted request by t and its body, whichever secret signed it, remembered until the last millisecond the time check accepts it', function () {
      const v = verifier();
      const signature = header(NOW_SEC, SECRET, RAW_BODY);
      const first = v.verify(signature, body, NOW);
      if (!first.ok) throw new Error('expected the first request to pass');
      const entry = v.replayEntry(first);
      should(entry.expiresAt).equal(NOW_SEC * 1000 + 300_000);
      should(entry.timestampMs).equal(NOW_SEC * 1000);
      should(entry.legacyKey).equal(`${NOW_SEC}:${first.digest}`);
      should(entry.key).not.containEql(first.digest);
      // One window rule: accepted at exactly t + tolerance, refused a millisecond later.
      should(v.verify(signature, body, entry.expiresAt).ok).be.true();
      should(v.verify(signature, body, entry.expiresAt + 1)).eql({ ok: false, reason: 'stale timestamp' });
      // The same request signed with the previous secret (or re-signed with a new one) is the same request.
      const rotated = v.verify(header(NOW_SEC, 'old-secret', RAW_BODY), body, NOW);
      if (!rotated.ok) throw new Error('expected the previous secret to pass');
      should(v.replayEntry(rotated).key).equal(entry.key);
      should(v.replayEntry(rotated).legacyKey).not.equal(entry.legacyKey);
      // A t with a fraction of a millisecond: remembered up to the millisecond that contains its edge.
      const fraction = v.verify(header(`${NOW_SEC}.0005`, SECRET, RAW_BODY), body, NOW);
      if (!fraction.ok) throw new Error('expected a fractional t to pass');
      should(v.replayEntry(fraction).expiresAt).equal(NOW_SEC * 1000 + 300_001);
    });

    it('needs a secret', function () {
      should(() => new SignatureVerifier({ secrets: ['', ''], toleranceSec: 300 })).throw(/at least one secret/);
    });
  });

  describe('ReplayMemory', function () {
    const key = (t: number, name: string) => `${t}:${createHash('sha256').update(name).digest('hex')}`;

    it('holds every entry until its 5 s bucket of t has ended, however many; since moves up to the newest t of each bucket dropped', function () {
      const memory = new ReplayMemory();
      // 12,000 entries in one second: more than the old bound of 10,000, every one held.
      for (let i = 0; i < 12_000; i++) memory.add(key(1000, `n${i}`), 1000, 301_000, 1000);
      memory.add(key(6000, 'later'), 6000, 306_000, 6000);
      should(memory.size).equal(12_001);
      should(memory.has(key(1000, 'n0'), 1000)).be.true();
      should(memory.since).equal(Number.NEGATIVE_INFINITY);
      should(memory.vouchesFor(0)).be.true();
      // The first bucket's window ends at 301,000: it leaves whole, and since moves to its newest t.
      memory.sweep(301_001);
      should(memory.size).equal(1);
      should(memory.has(key(1000, 'n0'), 1000)).be.false();
      should(memory.since).equal(1000);
      should(memory.vouchesFor(1000)).be.false();
      should(memory.vouchesFor(1001)).be.true();
      // Withdrawn (not delivered after all): since stays.
      should(memory.withdraw(key(6000, 'later'), 6000)).be.true();
      should(memory.size).equal(0);
      should(memory.since).equal(1000);
    });

    it('keeps a bucket until the last window in it ends, and writes it as one line: its newest t, its last end, its compact keys', function () {
      const memory = new ReplayMemory();
      memory.add(key(10_000, 'short'), 10_000, 12_000, 10_000);
      memory.add(key(11_000, 'long'), 11_000, 90_000, 11_000);
      memory.sweep(20_000);
      should(memory.has(key(10_000, 'short'), 10_000)).be.true();
      const [bucket] = memory.snapshot();
      should(bucket).containEql({ t: 11_000, expiresAt: 90_000 });
      should(bucket.keys).eql([compactKey(key(10_000, 'short')), compactKey(key(11_000, 'long'))]);
      // 96 bits of the digest, 16 characters; a compact key read back stays as it is.
      should(bucket.keys[0]).have.length(16);
      should(compactKey(bucket.keys[0])).equal(bucket.keys[0]);
      // An entry read back whose window has ended only moves since.
      memory.add(key(40_000, 'ended'), 40_000, 50_000, 60_000);
      should(memory.since).equal(40_000);
      should(memory.size).equal(2);
    });
  });

  describe('constantTimeEqual', function () {
    it('compares texts of any length', function () {
      should(constantTimeEqual('key-123', 'key-123')).be.true();
      should(constantTimeEqual('key-123', 'key-124')).be.false();
      should(constantTimeEqual('key', 'key-123')).be.false();
      should(constantTimeEqual('', '')).be.true();
    });
  });
});
