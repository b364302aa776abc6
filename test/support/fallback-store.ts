import type { KeyValueStore } from '../../nodes/lib/state/store';
import type { SharedState } from '../../nodes/lib/state/shared-state';

/** A store that is Redis while it responds and `local` otherwise: each operation through `SharedState.withShared`. */
export function withFallback(state: SharedState, local: KeyValueStore): KeyValueStore {
  const either =
    <A extends unknown[], T>(operation: (store: KeyValueStore, ...args: A) => Promise<T>) =>
    (...args: A): Promise<T> =>
      state.withShared(
        (shared) => operation(shared, ...args),
        () => operation(local, ...args),
      );
  return {
    get: either((store, key) => store.get(key)),
    set: either((store, key, value, ttlMs) => store.set(key, value, ttlMs)),
    delete: either((store, key) => store.delete(key)),
    claim: either((store, key, owner, ttlMs) => store.claim(key, owner, ttlMs)),
    renew: either((store, key, owner, ttlMs) => store.renew(key, owner, ttlMs)),
    release: either((store, key, owner) => store.release(key, owner)),
    take: either((store, key, limit, ttlMs) => store.take(key, limit, ttlMs)),
  };
}
