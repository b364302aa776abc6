import type { LocalPacer, Pacer } from '../platform/request-gate';
import type { SharedState } from './shared-state';

/**
 * A rate limit's schedule in Redis under `key`, shared by every instance with the same key; `local`
 * (this instance's own schedule) while Redis is away.
 */
export function sharedPacer(state: SharedState, key: string, local: LocalPacer): Pacer {
  return {
    reserve: (intervalMs, count) =>
      state.withShared(
        (redis) => redis.reserveSlot(key, intervalMs, count),
        () => local.reserve(intervalMs, count),
      ),
  };
}
