import { ReplyError } from 'ioredis';
import { NotReplicatedError } from './redis-store';

/**
 * Replies that are not an outage: a cluster redirects the command (MOVED, ASK), asks for it again
 * during a slot migration (TRYAGAIN) or refuses keys of several slots (CROSSSLOT), after ioredis's own
 * retries; a script fails (ERR), a key has the wrong type (WRONGTYPE), a transaction is refused
 * (EXECABORT); no replica confirmed a write (NOTREPLICATED, see RedisStore.replicated). The operation
 * they refuse is served by local state, but nothing else is: Redis responds, and every other
 * operation goes on to it.
 */
const NOT_OUTAGES: ReadonlySet<string> = new Set(['MOVED', 'ASK', 'TRYAGAIN', 'CROSSSLOT', 'ERR', 'WRONGTYPE', 'EXECABORT', 'NOTREPLICATED']);
const REDIRECTIONS = /^Too many Cluster redirections\. Last error: (\w+)/;

/** A refusal inside a script, as Redis before 7 reports it: `ERR Error running script … -READONLY You can't write …`. */
const IN_SCRIPT = /^ERR Error running script .*?-([A-Z]+) /;

/**
 * Whether an error of a Redis operation means Redis is unavailable: every error but those in
 * `NOT_OUTAGES`. So a Redis that responds but refuses is an outage like one that is gone: a replica
 * or a demoted master (READONLY), one full with `noeviction` (OOM), one that cannot save (MISCONF),
 * one still loading its data (LOADING), a Sentinel's master down (MASTERDOWN), a cluster without a
 * majority (CLUSTERDOWN), a master without the replicas it requires (NOREPLICAS), a timeout, a lost
 * connection.
 */
export function isRedisOutage(err: unknown): boolean {
  if (!(err instanceof Error)) return true;
  return !NOT_OUTAGES.has(refusalOf(err));
}

/** The reply code of a refusal (`READONLY`, `MOVED` …; the last one of a chain of redirections, the one inside a script's error), '' for other errors. */
export function refusalOf(err: Error): string {
  if (err instanceof NotReplicatedError) return 'NOTREPLICATED';
  const code = REDIRECTIONS.exec(err.message)?.[1] ?? IN_SCRIPT.exec(err.message)?.[1];
  if (code) return code;
  return err instanceof ReplyError ? err.message.split(' ')[0] : '';
}

/**
 * Refusals that say the server takes no write at all for now, from anyone: a replica (READONLY), a
 * full Redis with noeviction (OOM), one that cannot save (MISCONF), a master without the replicas it
 * requires (NOREPLICAS). While the master Redis names refuses so, no instance can take a job's lease.
 */
export const WRITES_REFUSED: ReadonlySet<string> = new Set(['READONLY', 'OOM', 'MISCONF', 'NOREPLICAS']);

/** ioredis's refusal to send a command while it is not connected: nothing reached Redis. */
const NOT_SENT = "Stream isn't writeable";

/** A demoted master's refusal of a write: the connection is made again, to the master Sentinel names now. */
export function isReadOnly(err: Error): boolean {
  return refusalOf(err) === 'READONLY';
}

/** Whether an operation failed before it was sent (ioredis not connected, no offline queue). */
export function unsent(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith(NOT_SENT);
}
