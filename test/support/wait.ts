/** Waiting for what a test expects to happen, and for pending promise callbacks. */

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
