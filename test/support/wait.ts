/** Waiting for what a test expects to happen, and for pending promise callbacks. */
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** Resolves once `predicate` holds; polls, so it never depends on how fast the machine is. */
export async function waitUntil(predicate: () => boolean, what: string, timeoutMs = 4000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** `waitUntil` for a condition that asks a server: a look that fails counts as not yet. */
export async function waitUntilAsync(condition: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Lets resolved promises run their callbacks. */
export const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Runs `work` and measures how late this process's timers ran meanwhile: the longest event-loop stall
 * (a stall plus up to one 10 ms tick), from a loaded machine as from this process. A bound on elapsed
 * time adds it to the code's own promise, as `Cluster.measureLateness` does for several processes.
 */
export async function measureLateness<T>(work: () => Promise<T>): Promise<{ result: T; latenessMs: number }> {
  const delays = monitorEventLoopDelay({ resolution: 10 });
  delays.enable();
  try {
    const result = await work();
    return { result, latenessMs: delays.max / 1e6 };
  } finally {
    delays.disable();
  }
}
