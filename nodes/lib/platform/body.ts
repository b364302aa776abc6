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
export async function readBounded(body: Readable, limitBytes: number, declaredLength: string | undefined): Promise<BoundedBody> {
  const declaredBytes = Number(declaredLength);
  if (declaredLength !== undefined && declaredBytes > limitBytes) {
    // Destroying an unread body fails it with an abort error, which is expected here.
    body.once('error', () => undefined);
    body.destroy();
    return { bytes: Buffer.alloc(0), complete: false, declaredBytes };
  }
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (total + chunk.length > limitBytes) {
      chunks.push(chunk.subarray(0, limitBytes - total));
      // Leaving the loop destroys the stream (the iterator's return), which aborts the request.
      return { bytes: Buffer.concat(chunks), complete: false };
    }
    chunks.push(chunk);
    total += chunk.length;
  }
  return { bytes: Buffer.concat(chunks), complete: true };
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
