/**
 * A node describes its dialog as a table of rows; `SvcEditor.form(type, rows)` (form.ts) writes the
 * dialog from it. A row is an object whose kind names the property it edits (the input is
 * node-input-<property>):
 *   { typed: 'address', types: ['str', 'jsonata'] }   TypedInput: the sources, then these types;
 *       fixed: ['a', 'b'] (multiple: true) or { value, label, options, optionLabels } puts choices first
 *   { text | password | config: 'p' }                  a text or password input; config: a config-node selector
 *   { spinner: 'p', min, max, step }  { number: 'p', min, step }   a spinner, or an HTML number input
 *   { select: 'p', options: ['a', 'b'] }              labels from <type>.<p>.<option>
 *   { checkbox: 'p', caption }                         caption right of the box (default label.<p>)
 *   { tip: 'key', icon, warning }  { hidden: 'p' }  { html: '<div class="form-row">…</div>' }
 *   { tab: 'name' }   the rows after it, up to the next tab, are one tab of the dialog (label tabs.<name>), as in
 *       Node-RED's MQTT broker dialog; rows before the first tab stay above the tabs
 *   'server', 'name', 'mapOutput', { poll: true, units }   rows several dialogs share
 * and may have: icon (Font Awesome, without fa-), label (default label.<p>), placeholder (a key) or
 * example (a literal placeholder), unit (a key, shown after the input), and when: { control: [values] },
 * to show the row only while that select, checkbox or fixed TypedInput choice holds one of the values.
 * Keys are in the node's catalog (`label.origins` is <type>.label.origins) unless they name a namespace.
 * Every dialog has a hidden `version` input: the node's settings version, which its `version` default sets.
 */

/** Where a TypedInput may read its value at run time; msg first, the default. */
export const SOURCES = ['msg', 'flow', 'global', 'env'];

/** The Map output texts are in the svc-config catalog, the one catalog every flow of the pack has. */
export const MAP_TEXT = '@svc/node-red-location/svc-config:svc-config.mapOutput.';

/** Rows that several dialogs have, by name. */
const NAMED_ROWS: Record<string, SvcRow[]> = {
  server: [{ config: 'server', icon: 'globe' }],
  name: [{ text: 'name', icon: 'tag', placeholder: 'label.name' }],
  // An option of the locating nodes, like node-red-node-geofence's "worldmap" checkbox: a second
  // output with ready-to-draw worldmap messages. `outputs` is a default, so Node-RED rewires the ports on save.
  mapOutput: [
    { checkbox: 'worldmap', icon: 'map-o', label: MAP_TEXT + 'label', caption: MAP_TEXT + 'checkbox' },
    { text: 'worldmapLayer', icon: 'clone', label: MAP_TEXT + 'layer', placeholder: MAP_TEXT + 'layerPlaceholder', when: { worldmap: [true] } },
    {
      spinner: 'worldmapTtl',
      icon: 'hourglass-half',
      label: MAP_TEXT + 'ttl',
      placeholder: MAP_TEXT + 'ttlPlaceholder',
      unit: MAP_TEXT + 'seconds',
      min: 1,
      when: { worldmap: [true] },
    },
    { checkbox: 'worldmapClear', icon: 'eraser', label: MAP_TEXT + 'clear', caption: MAP_TEXT + 'clearCaption', when: { worldmap: [true] } },
    { hidden: 'outputs' },
  ],
};

/**
 * The poll settings of the job nodes, both in seconds. A flow written by 1.0.0 may hold the first
 * wait as `pollInterval`, in the node's old unit: the node's migration moves it into the seconds
 * field when the dialog opens, and the hidden input lets saving clear it.
 */
function pollRows(row: SvcRow): SvcRow[] {
  const units = row.units ?? ['label.seconds', 'label.seconds'];
  return [
    { spinner: 'pollIntervalSec', icon: 'clock-o', label: 'label.pollInterval', unit: units[0], min: 0.05, step: 0.5 },
    { hidden: 'pollInterval' },
    { spinner: 'maxWait', icon: 'hourglass-end', unit: units[1], min: 1 },
  ];
}

/** The rows of a table with the shared rows (by name, or `poll`) written out. */
export function expand(rows: Array<SvcRow | string>): SvcRow[] {
  return rows.flatMap((row) => {
    if (typeof row !== 'string') return row.poll ? pollRows(row) : [row];
    const named = NAMED_ROWS[row];
    if (!named) throw new Error(`SvcEditor: no row named ${row}`);
    return named;
  });
}

/** The property a row edits (each kind names it under its own key); '' for a tip or markup. */
export function fieldOf(row: SvcRow): string {
  return row.config || row.text || row.password || row.typed || row.spinner || row.number || row.select || row.checkbox || row.hidden || '';
}
