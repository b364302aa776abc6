import { migrations as table, pollIntervalInSeconds, type Settings } from '../lib/node-red/migrations';

/**
 * Version 2: in parts mode a summary message followed the parts, which a core join in automatic mode
 * warns about (`Message missing msg.parts property`); it is now an option, off for a new node. Older
 * settings keep sending it.
 */
function keepPartsSummary(settings: Settings): Settings {
  return { ...settings, partsSummary: settings.partsSummary ?? true };
}

/** The settings migrations of svc-bulk-geocode (lib/node-red/migrations.ts says how they run). */
export const migrations = table([pollIntervalInSeconds(1), { version: 2, up: keepPartsSummary }]);
