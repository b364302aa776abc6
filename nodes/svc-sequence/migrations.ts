import { migrations as table, pollIntervalInSeconds, type Settings } from '../lib/node-red/migrations';

/**
 * Version 2: *Write departure* `local` was the default, and wrote an instant (a Date, an epoch, a
 * zoned string) as the host's wall-clock time without a zone, which the platform reads in the zone of
 * the places: the same flow sent other instants on hosts in other zones. Such settings now write the
 * same instant in UTC with `Z` (`zoned`); a zone-less string is sent as written either way. Choosing
 * `local` again in the dialog saves it at version 2, where it stays.
 */
function departureInUtc(settings: Settings): Settings {
  return { ...settings, departureFormat: 'zoned' };
}

/** The settings migrations of svc-sequence (lib/node-red/migrations.ts says how they run). */
export const migrations = table([pollIntervalInSeconds(1000), { version: 2, up: departureInUtc }]);
