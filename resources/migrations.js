// @ts-check
/*
 * The settings migrations of every node of the pack: one table per node type, the one place where what
 * an older version wrote into a flow is moved to what the nodes read now. The runtime applies them when
 * a node starts (nodes/lib/node-red/migrations.ts loads this file), the editor when a dialog opens
 * (resources/editor.js; each node's .html loads this file before it), so a flow keeps working whether
 * or not its dialogs are opened and saved again.
 *
 * A node's settings carry `version`, the last migration applied to them: a default in each editor
 * definition, a number or the text of a hidden input. A node without one is version 0, as 1.0.0 wrote
 * them. A migration takes the settings at the version before it and returns them at its own, without
 * changing what it was given. A new one goes at the end of its node's table, and the `version` default
 * in the node's .html becomes its number.
 */
var SvcMigrations = (function () {
    'use strict';

    /**
     * @typedef {{ type: string, version?: unknown, [property: string]: unknown }} Settings
     * @typedef {{ version: number, up?: (settings: Settings) => Settings }} Migration
     */

    /** A number as the runtime's setting parsers read one (a number, or the text of an editor field). */
    function numberOf(/** @type {unknown} */ value) {
        var n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
        return isFinite(n) ? n : undefined;
    }

    /**
     * Version 1 of the job nodes: 1.0.0 still read the first wait for a job from `pollInterval`, in the
     * node's own unit (`unitMs` milliseconds: 1 on bulk geocoding, 1000 on isoline and sequence), before
     * `pollIntervalSec` wherever it was set. It moves into `pollIntervalSec` and is emptied.
     * @param {number} unitMs
     * @returns {(settings: Settings) => Settings}
     */
    function pollIntervalInSeconds(unitMs) {
        return function (settings) {
            var legacy = numberOf(settings.pollInterval);
            var moved = Object.assign({}, settings, { pollInterval: '' });
            if (legacy !== undefined && legacy > 0) {
                moved.pollIntervalSec = (legacy * unitMs) / 1000;
            }
            return moved;
        };
    }

    /**
     * Version 2 of svc-sequence: *Write departure* `local` was the default, and wrote an instant (a
     * Date, an epoch, a zoned string) as the host's wall-clock time without a zone, which the platform
     * reads in the zone of the places: the same flow sent other instants on hosts in other zones. Such
     * settings now write the same instant in UTC with `Z` (`zoned`); a zone-less string is sent as
     * written either way. Choosing `local` again in the dialog saves it at version 2, where it stays.
     * @param {Settings} settings
     * @returns {Settings}
     */
    function departureInUtc(settings) {
        return Object.assign({}, settings, { departureFormat: 'zoned' });
    }

    /** Version 1 of a node with nothing to move: its settings carry a version from now on. */
    var VERSIONED = { version: 1 };

    /**
     * Version 2 of the config node: `rateLimit` is the rate of single geocodes, and each other endpoint
     * family has a rate of its own (`rateScope` 'family'). Up to version 1 it spaced every request of the
     * connection: such a node keeps exactly that (`rateScope` 'all'), so no saved flow sends more than its
     * owner set, until the owner chooses the rates per family in the dialog.
     * @param {Settings} settings
     * @returns {Settings}
     */
    function oneRateForAll(settings) {
        return Object.assign({}, settings, { rateScope: 'all' });
    }

    /** @type {Record<string, Migration[]>} */
    var TABLES = {
        'svc-config': [VERSIONED, { version: 2, up: oneRateForAll }],
        'svc-geocode': [VERSIONED],
        'svc-words': [VERSIONED],
        'svc-bulk-geocode': [{ version: 1, up: pollIntervalInSeconds(1) }],
        'svc-isoline': [{ version: 1, up: pollIntervalInSeconds(1000) }],
        'svc-sequence': [
            { version: 1, up: pollIntervalInSeconds(1000) },
            { version: 2, up: departureInUtc }
        ],
        'svc-route': [VERSIONED],
        'svc-topic-publish': [VERSIONED],
        'svc-topic': [VERSIONED],
        'svc-webhook-in': [VERSIONED]
    };

    /**
     * The settings of a node at its type's current version: a copy with every migration after its
     * version applied in turn; settings already current (or of a type without a table) as they are.
     * @template {Settings} T
     * @param {T} settings
     * @returns {T}
     */
    function migrate(settings) {
        var from = numberOf(settings.version) || 0;
        var pending = (TABLES[settings.type] || []).filter(function (migration) {
            return migration.version > from;
        });
        /** @type {Settings} */
        var current = settings;
        pending.forEach(function (migration) {
            current = migration.up ? migration.up(current) : Object.assign({}, current);
            current.version = migration.version;
        });
        // Each migration keeps the settings it does not move: the result has every member of `settings`.
        return /** @type {T} */ (current);
    }

    /**
     * The current settings version of a node type (0 for a type without a table).
     * @param {string} type
     */
    function currentVersion(type) {
        var table = TABLES[type] || [];
        return table.length ? table[table.length - 1].version : 0;
    }

    return { migrate: migrate, currentVersion: currentVersion };
})();

if (typeof module === 'object' && module && module.exports) {
    module.exports = SvcMigrations;
}
