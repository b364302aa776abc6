/**
 * Seeded randomness for the town: pure integer hashing (Math.imul and shifts on 32-bit integers), so
 * the same seed and inputs give the same numbers on every Node version and machine. No state, no
 * Math.random: a value is a function of where it is used.
 */

/** A 32-bit unsigned hash of a seed and whole numbers (each taken as a 32-bit integer). */
export function hash32(seed: number, ...values: number[]): number {
  let h = (seed ^ 0x811c9dc5) >>> 0;
  for (const value of values) {
    h = Math.imul(h ^ (value | 0), 0x01000193) >>> 0;
    h ^= h >>> 16;
    h = Math.imul(h, 0x7feb352d) >>> 0;
    h ^= h >>> 15;
    h = Math.imul(h, 0x846ca68b) >>> 0;
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/** A number in [0, 1) from a seed and whole numbers. */
export function unit(seed: number, ...values: number[]): number {
  return hash32(seed, ...values) / 4294967296;
}

/** A 32-bit unsigned hash of a text (its UTF-16 code units), for places named by text. */
export function hashText(seed: number, text: string): number {
  let h = hash32(seed, text.length);
  for (let k = 0; k < text.length; k++) h = hash32(h, text.charCodeAt(k));
  return h;
}
