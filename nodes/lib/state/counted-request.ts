import type { PlatformClient } from '../platform/client';
import type { PlatformRequest } from '../platform/types';
import type { DailyQuota } from './quota';
import type { CachedResponse, ResponseCache } from './response-cache';

/** What a config node shares for counted requests: either may be off. */
interface CountedServices {
  cache: ResponseCache | undefined;
  quota: DailyQuota | undefined;
}

interface CountedResponse extends CachedResponse {
  /** Served from the cache: nothing was sent and nothing counted. */
  cached: boolean;
  /** Today's count with this request's last attempt, when a daily limit is set and a request was sent. */
  count?: { used: number; limit: number };
}

/**
 * Sends `req` unless the cache holds a response for `key`, and keeps the response it gets under `key`.
 * A response from the cache costs neither a request nor a unit of the daily limit; every attempt sent
 * costs one, retries included, as the platform counts requests. QUOTA_EXCEEDED ends the request unsent.
 */
export async function countedRequest(client: PlatformClient, services: CountedServices, key: string, req: PlatformRequest): Promise<CountedResponse> {
  const { cache, quota } = services;
  const hit = cache ? await cache.get(key) : undefined;
  if (hit) return { ...hit, cached: true };
  let used: number | undefined;
  const response = await client.request({
    ...req,
    beforeAttempt: quota
      ? () => {
          // Counted in this process: at once, with no promise to wait for (one per message otherwise).
          const taken = quota.take();
          if (typeof taken === 'number') used = taken;
          else
            return taken.then((shared) => {
              used = shared;
            });
        }
      : undefined,
  });
  const kept = { statusCode: response.statusCode, body: response.body };
  cache?.set(key, kept);
  return { ...kept, cached: false, count: quota && used !== undefined ? { used, limit: quota.limit } : undefined };
}
