import { migrations as table, VERSIONED, type Settings } from '../lib/node-red/migrations';

/**
 * Version 2: a dropped node's operation is fixed (`list-topics`) where it was read from `msg.operation`.
 * Older settings without an operation source keep reading the message.
 */
function operationFromMessage(settings: Settings): Settings {
  if (settings.operation !== undefined || settings.operationType !== undefined) return { ...settings };
  return { ...settings, operation: 'operation', operationType: 'msg' };
}

/** The settings migrations of svc-topic (lib/node-red/migrations.ts says how they run). */
export const migrations = table([VERSIONED, { version: 2, up: operationFromMessage }]);
