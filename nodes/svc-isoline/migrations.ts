import { migrations as table, pollIntervalInSeconds, type Settings } from '../lib/node-red/migrations';

/**
 * Version 2: a dropped node's range is fixed (time, 600 s) where it was read from `msg.payload.range`.
 * Older settings without a range source keep reading the message.
 */
function rangeFromMessage(settings: Settings): Settings {
  const moved: Settings = { ...settings };
  if (settings.rangeType === undefined && settings.rangeTypeType === undefined) Object.assign(moved, { rangeType: 'payload.range.type', rangeTypeType: 'msg' });
  if (settings.rangeValue === undefined && settings.rangeValueType === undefined)
    Object.assign(moved, { rangeValue: 'payload.range.value', rangeValueType: 'msg' });
  return moved;
}

/** The settings migrations of svc-isoline (lib/node-red/migrations.ts says how they run). */
export const migrations = table([pollIntervalInSeconds(1000), { version: 2, up: rangeFromMessage }]);
