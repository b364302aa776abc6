/**
 * Settings migrations: how a node moves what an older version wrote into a flow to what it reads now.
 * Each node keeps its own table in its folder (`nodes/<type>/migrations.ts`), applied by the runtime
 * when the node starts (`migrations.migrate(def)`) and by the editor when its dialog opens: the build
 * ships the compiled table and this module into the node's .html (build/editor-html.ts), so a flow
 * keeps working whether or not its dialogs are opened and saved again.
 *
 * A node's settings carry `version`, the last migration applied to them, a number or the text of the
 * dialog's hidden input; a node without one is version 0, written by version 1.0.0. A migration takes the
 * settings at the version before it and returns them at its own, without changing what it was given.
 * A new one goes at the end of its node's table; the editor's `version` default follows by itself.
 *
 * This module and the tables are shipped to the browser as compiled: they import nothing but each
 * other, and use nothing of Node.js or Node-RED.
 */

/** A node's settings as flow JSON or the editor holds them. */
export interface Settings {
  version?: unknown;
  [property: string]: unknown;
}

interface Migration {
  version: number;
  /** None: the version only marks that the settings were written by this release or later. */
  up?: (settings: Settings) => Settings;
}

/** A node's migrations, and the version its settings are saved at. */
export interface Migrations {
  /** The current settings version: the last migration's. */
  version: number;
  /** The settings at the current version: a copy with every later migration applied in turn; current settings as they are. */
  migrate<T extends object>(settings: T): T;
}

/** A number as the runtime's setting parsers read one (a number, or the text of an editor field). */
function numberOf(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  return Number.isFinite(n) ? n : undefined;
}

/** The table of a node: its migrations, oldest first. */
export function migrations(table: Migration[]): Migrations {
  const version = table.length > 0 ? table[table.length - 1].version : 0;
  return {
    version,
    migrate<T extends object>(settings: T): T {
      const from = numberOf((settings as Settings).version) ?? 0;
      let current = settings as Settings;
      for (const migration of table) {
        if (migration.version <= from) continue;
        current = migration.up ? migration.up(current) : { ...current };
        current.version = migration.version;
      }
      // Each migration keeps the settings it does not move: the result has every member of `settings`.
      return current as T;
    },
  };
}

/** Version 1 of a node with nothing to move: its settings carry a version from now on. */
export const VERSIONED: Migration = { version: 1 };

/**
 * Version 1 of the job nodes: 1.0.0 still read the first wait for a job from `pollInterval`, in the
 * node's own unit (`unitMs` milliseconds: 1 on bulk geocoding, 1000 on isoline and sequence), before
 * `pollIntervalSec` wherever it was set. It moves into `pollIntervalSec` and is emptied.
 */
export function pollIntervalInSeconds(unitMs: number): Migration {
  return {
    version: 1,
    up: (settings) => {
      const legacy = numberOf(settings.pollInterval);
      const moved: Settings = { ...settings, pollInterval: '' };
      if (legacy !== undefined && legacy > 0) moved.pollIntervalSec = (legacy * unitMs) / 1000;
      return moved;
    },
  };
}
