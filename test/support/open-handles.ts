/**
 * Mocha root hooks (loaded by .mocharc.js): the suite runs without mocha's `exit`, so a server,
 * socket or timer that a test leaves open keeps Node running after the last test. Instead of hanging
 * there, the run then ends with exit status 1 and names what was left open, counted by kind against
 * what was open before the first test (the standard streams).
 */

/** How long after the last test a process with nothing left open has to end by itself. */
const GRACE_MS = 2000;

/** How many times an empty list is looked at again before the run fails anyway (never hangs). */
const LOOKS = 5;

let before = new Map<string, number>();
let looks = 0;

function countByKind(kinds: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of kinds) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

function reportOpenHandles(): void {
  const left = [...countByKind(process.getActiveResourcesInfo())]
    .map(([kind, count]) => [kind, count - (before.get(kind) ?? 0)] as const)
    .filter(([, count]) => count > 0);
  // Nothing beyond the start's resources: the last one closed just now (a loaded machine can take past
  // the grace time); look again rather than fail a run that is ending by itself.
  if (left.length === 0 && ++looks < LOOKS) {
    setTimeout(reportOpenHandles, GRACE_MS).unref();
    return;
  }
  console.error(
    `\nThe tests left open ${left.map(([kind, count]) => `${count} × ${kind}`).join(', ') || `handles (open now: ${process.getActiveResourcesInfo().join(', ')})`}: they keep Node running; close them in the test that opens them.`,
  );
  // Mocha sets the exit status from the failure count in its own 'exit' listener; this one runs after it.
  process.on('exit', () => {
    process.exitCode = 1;
  });
  process.exit(1);
}

export const mochaHooks = {
  beforeAll(): void {
    before = countByKind(process.getActiveResourcesInfo());
  },
  afterAll(): void {
    // Unreferenced: it fires only if something else keeps the process alive past the grace time.
    setTimeout(reportOpenHandles, GRACE_MS).unref();
  },
};
