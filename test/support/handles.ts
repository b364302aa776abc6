import { waitUntil } from './wait';

/** The process's open timers and sockets, for the "close leaves nothing behind" checks. */

/** Open timers and sockets of this process, by kind (`Timeout`, `TCPSocketWrap`, …). */
export function openHandles(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

/**
 * The open handles to compare against later. Taken after a turn of the event loop, so that
 * the test runner's own timeout timer (armed after a test function starts) is already counted.
 */
export async function handleBaseline(): Promise<Record<string, number>> {
  await new Promise((resolve) => setImmediate(resolve));
  return openHandles();
}

/**
 * Waits until no more timers and sockets are open than in `baseline` (the test's own handles,
 * such as the sandbox's listening socket, are in the baseline). Sockets close asynchronously
 * on both ends, hence the wait; a leak keeps the count up and fails after `timeoutMs`.
 */
export async function expectHandlesBackTo(baseline: Record<string, number>, timeoutMs = 3000): Promise<void> {
  const kinds = ['Timeout', 'TCPSocketWrap'];
  const excess = () => kinds.filter((kind) => (openHandles()[kind] ?? 0) > (baseline[kind] ?? 0));
  try {
    await waitUntil(() => excess().length === 0, 'handles to close', timeoutMs);
  } catch {
    throw new Error(`still open after close: ${JSON.stringify(openHandles())}, before: ${JSON.stringify(baseline)}`);
  }
}
