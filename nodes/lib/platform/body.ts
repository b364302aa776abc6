import type { Readable } from 'node:stream';
import { Message, message } from '../util/messages';

/** What was read of an answer's body: at most the limit, and whether that was all of it. */
export interface BoundedBody {
  bytes: Buffer;
  /** False when the body went past the limit (or declared it would): reading stopped there. */
  complete: boolean;
  /** The Content-Length that was over the limit, when that is why nothing was read. */
  declaredBytes?: number;
}

/** 1 MB as the settings count it: 1,048,576 bytes. */
export const BYTES_PER_MB = 1024 * 1024;

/**
 * Reads a body, keeping at most `limitBytes`. A Content-Length over the limit stops it before the
 * first byte; otherwise reading stops at the first chunk that goes past it. Either way the stream is
 * destroyed, which aborts the request and closes its connection: nothing more is read, so however
 * large or endless the answer, no more than the limit (plus one chunk) is ever held.
 */
export function readBounded(body: Readable, limitBytes: number, declaredLength: string | undefined): Promise<BoundedBody> {
  const declaredBytes = Number(declaredLength);
  if (declaredLength !== undefined && declaredBytes > limitBytes) {
    // Destroying an unread body fails it with an abort error, which is expected here.
    body.once('error', () => undefined);
    body.destroy();
    return Promise.resolve({ bytes: Buffer.alloc(0), complete: false, declaredBytes });
  }
  // Plain events rather than an async iterator: this runs for every answer, and the iterator's
  // promise per chunk and end-of-stream tracking were a visible share of a small request's CPU.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const settle = (outcome: BoundedBody | Error) => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const onData = (chunk: Buffer) => {
      if (total + chunk.length > limitBytes) {
        chunks.push(chunk.subarray(0, limitBytes - total));
        settle({ bytes: Buffer.concat(chunks), complete: false });
        // Destroying the stream aborts the request: nothing more is read.
        body.destroy();
        return;
      }
      chunks.push(chunk);
      total += chunk.length;
    };
    body.on('data', onData);
    body.once('end', () => settle({ bytes: Buffer.concat(chunks, total), complete: true }));
    // After settling, errors (such as the abort of the destroy above) are expected and dropped.
    body.on('error', (err) => settle(err));
    body.once('close', () => {
      if (!settled) settle(Object.assign(new Error('the answer ended before it was complete'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    });
  });
}

/** A size for people: "5 MB", "512 KB", "300 bytes" (the word translated). */
export function describeSize(bytes: number): string | Message {
  if (bytes >= BYTES_PER_MB) return `${formatAmount(bytes / BYTES_PER_MB)} MB`;
  if (bytes >= 1024) return `${formatAmount(bytes / 1024)} KB`;
  return message('value.bytes', { count: bytes });
}

function formatAmount(value: number): string {
  return String(Math.round(value * 100) / 100);
}
