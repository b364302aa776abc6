/**
 * SHA-256 length extension, written for the tests: from the digest of an unknown message of known
 * length, the digest of `message || padding || suffix`, without the message. What an attacker can do
 * with the spec's `sha256(<t>.<secret>.<body>)`, whose secret comes before data the attacker chooses.
 */

const K = Uint32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74,
  0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d,
  0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e,
  0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
  0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));

function compress(state: Uint32Array, block: Buffer): void {
  const w = new Uint32Array(64);
  for (let i = 0; i < 16; i++) w[i] = block.readUInt32BE(i * 4);
  for (let i = 16; i < 64; i++) {
    const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
    const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
    w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
  }
  let [a, b, c, d, e, f, g, h] = state;
  for (let i = 0; i < 64; i++) {
    const t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i]) >>> 0;
    const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
    [h, g, f, e, d, c, b, a] = [g, f, e, (d + t1) >>> 0, c, b, a, (t1 + t2) >>> 0];
  }
  const next = [a, b, c, d, e, f, g, h];
  for (let i = 0; i < 8; i++) state[i] = (state[i] + next[i]) >>> 0;
}

/** The padding SHA-256 appends to a message of `length` bytes. */
export function sha256Padding(length: number): Buffer {
  const zeros = (55 - (length % 64) + 64) % 64;
  const padding = Buffer.alloc(1 + zeros + 8);
  padding[0] = 0x80;
  padding.writeBigUInt64BE(BigInt(length) * 8n, 1 + zeros);
  return padding;
}

/** The digest of `message || sha256Padding(length) || suffix`, given only `sha256(message)` and its length. */
export function extendSha256(digestHex: string, length: number, suffix: Buffer): string {
  const state = Uint32Array.from({ length: 8 }, (_, i) => parseInt(digestHex.slice(i * 8, i * 8 + 8), 16));
  const prefixLength = length + sha256Padding(length).length;
  const tail = Buffer.concat([suffix, sha256Padding(prefixLength + suffix.length)]);
  for (let i = 0; i < tail.length; i += 64) compress(state, tail.subarray(i, i + 64));
  return Buffer.concat([...state].map((word) => Buffer.from([word >>> 24, (word >>> 16) & 0xff, (word >>> 8) & 0xff, word & 0xff]))).toString('hex');
}
