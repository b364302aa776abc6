import { migrations as table, VERSIONED, type Settings } from '../lib/node-red/migrations';

/**
 * Version 2: `rateLimit` is the rate of single geocodes, and each other endpoint family has a rate of
 * its own (`rateScope` 'family'). Up to version 1 it spaced every request of the connection: such a
 * node keeps exactly that (`rateScope` 'all'), so no saved flow sends more than its owner set, until the
 * owner chooses the rates per family in the dialog.
 */
function oneRateForAll(settings: Settings): Settings {
  return { ...settings, rateScope: 'all' };
}

/**
 * Version 3: `platform` chooses the built-in sandbox or an account. A node saved before it existed used
 * the addresses and credentials it holds: it stays on 'account' (a new node starts on 'sandbox').
 */
function onAccount(settings: Settings): Settings {
  return { ...settings, platform: settings.platform ?? 'account' };
}

/** The settings migrations of svc-config (lib/node-red/migrations.ts says how they run). */
export const migrations = table([VERSIONED, { version: 2, up: oneRateForAll }, { version: 3, up: onAccount }]);
