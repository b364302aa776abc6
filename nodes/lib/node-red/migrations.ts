import path from 'node:path';

/**
 * The settings migrations of the pack's nodes, applied when a node starts: one table per node type in
 * resources/migrations.js, the script the editor runs when a dialog opens, so that old settings are
 * moved in one place (see there). Node-RED serves resources/ to the editor only, so the compiled
 * module loads the script from the package root, where resources/ sits beside dist/ in the
 * repository and in the installed package alike.
 */

/** A node's settings as flow JSON holds them. */
interface Settings {
  type: string;
  version?: unknown;
}

/** What resources/migrations.js exports (checked there, with its JSDoc types, by tsconfig.editor.json). */
interface SettingsMigrations {
  migrate<T extends Settings>(settings: T): T;
  currentVersion(type: string): number;
}

const SCRIPT = path.join(__dirname, '..', '..', '..', '..', 'resources', 'migrations.js');
// A script outside the compiled tree, loaded by its path at run time (see above).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const shared = require(SCRIPT) as SettingsMigrations;

/** A node's settings at its type's current version (a copy; the flow's own object is left as it is). */
export function migrated<T extends Settings>(settings: T): T {
  return shared.migrate(settings);
}

/** The settings version a node of `type` saves now. */
export function currentVersion(type: string): number {
  return shared.currentVersion(type);
}
