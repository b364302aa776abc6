import { type RedisClient, type RedisDeployment } from './redis-deployment';
import { isReadOnly } from './redis-errors';

// Generous: a busy machine can hold up even a local Redis's reply for a second, and each timeout is an outage.
export const DEFAULT_COMMAND_TIMEOUT_MS = 2000;
export const RECONNECT_STEP_MS = 200;
export const RECONNECT_MAX_MS = 2000;
/** How long before reconnection attempt `attempt` (1, 2 …): 0.2 s more each time, at most 2 s. */
export const reconnectDelayMs = (attempt: number): number => Math.min(attempt * RECONNECT_STEP_MS, RECONNECT_MAX_MS);
/** The one connection of a configuration: it fails at once while disconnected instead of queueing, so the caller uses local state. */
export function connectRedis(deployment: RedisDeployment, commandTimeoutMs: number): RedisClient {
  return deployment.connect({
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: commandTimeoutMs,
    connectTimeout: 5000,
    connectionName: 'node-red-location',
    retryStrategy: reconnectDelayMs,
    reconnectOnError: isReadOnly,
  });
}

/**
 * Settles once the first connection attempt has succeeded or failed (the mode changes, or the
 * connection closes); one that does neither (packets dropped) is not waited for longer than a command.
 */
export function firstAttemptSettled(redis: RedisClient, commandTimeoutMs: number, onModeChange: (listener: () => void) => () => void): Promise<void> {
  return new Promise((resolve) => {
    const settle = () => {
      clearTimeout(longest);
      stopListening();
      redis.off('close', settle);
      resolve();
    };
    const longest = setTimeout(settle, commandTimeoutMs);
    longest.unref();
    const stopListening = onModeChange(settle);
    redis.on('close', settle);
  });
}
