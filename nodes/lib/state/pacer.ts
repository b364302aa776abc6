import type { SharedState } from './shared-state';

/** What the request gate needs of a schedule (platform's `Pacer`, repeated structurally to keep the layers apart). */
export interface SlotSource {
  reserve(intervalMs: number): number | Promise<number>;
}

/**
 * A rate limit's schedule in Redis under `key`, shared by every instance with the same key; `local`
 * (this instance's own schedule) while Redis is away.
 */
export function sharedPacer(state: SharedState, key: string, local: SlotSource): SlotSource {
  return {
    reserve: (intervalMs) =>
      state.withShared(
        (redis) => redis.reserveSlot(key, intervalMs),
        () => local.reserve(intervalMs),
      ),
  };
}
