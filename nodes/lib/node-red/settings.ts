import { Polling } from '../platform/jobs';
import { positiveSetting } from '../util/values';

/** Parsers for node settings as stored in flow JSON. */

const DEFAULT_POLL_INTERVAL_S = 1;
const DEFAULT_MAX_WAIT_S = 300;

/** The poll settings of a node (`pollInterval` and `maxWait`, in seconds). */
export function pollingOf(def: { pollInterval?: unknown; maxWait?: unknown }): Polling {
  return {
    intervalMs: (positiveSetting(def.pollInterval) ?? DEFAULT_POLL_INTERVAL_S) * 1000,
    maxWaitMs: (positiveSetting(def.maxWait) ?? DEFAULT_MAX_WAIT_S) * 1000,
  };
}
