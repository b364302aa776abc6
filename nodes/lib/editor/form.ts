import { dialogTemplate } from './markup';
import { expand, fieldOf, SOURCES } from './rows';
import { fixedType, typedChoice } from './typed-input';
import { inputText } from './values';

/**
 * Shows or hides the rows that depend on a control (row.when: { control: [values] }).
 */
function showDependentRows(form: SvcForm, dialog: EditorQuery, control: string): void {
  const input = $(`#${form.id(control)}`);
  let value: unknown;
  let fromSource = false;
  if (input.is(':checkbox')) {
    value = input.is(':checked');
  } else if (input.data('noderedTypedInput') !== undefined) {
    // A value read from the message at run time may be any choice: every dependent row applies.
    fromSource = SOURCES.includes(input.typedInput('type'));
    value = input.typedInput('value');
  } else {
    value = input.val();
  }
  form.rows.forEach((row, index) => {
    const values = row.when?.[control];
    if (values) dialog.find(`.svc-row-${index}`).toggle(fromSource || values.includes(value));
  });
}

/**
 * Writes into the dialog what the node's migrations (the table the runtime applies too) change, so
 * that saving the dialog stores the node at its current version.
 */
function writeMigrated(form: SvcForm, migrations: SvcMigrations, node: EditorNode): void {
  const migrated = migrations.migrate(node);
  for (const [property, value] of Object.entries(migrated)) {
    const input = $(`#${form.id(property)}`);
    if (value === node[property] || !input.length) continue;
    if (input.is(':checkbox')) input.prop('checked', value === true);
    else input.val(inputText(value));
  }
}

/** Node-RED's tab strip for the dialog's tabs, showing one panel at a time. */
function tabStrip(form: SvcForm, node: EditorNode): void {
  const strip = RED.tabs.create({
    id: `${form.type}-tabs`,
    onchange(tab) {
      $(`#${form.type}-tabs-content`).children().hide();
      $(`#${tab.id}`).show();
    },
  });
  for (const name of form.tabs) strip.addTab({ id: `${form.type}-tab-${name}`, label: node._(`${form.type}.tabs.${name}`) });
}

/**
 * Writes the dialog template of `type` from its rows and returns the form: `prepare(node)` for
 * oneditprepare (TypedInputs whose default source is msg, spinners, rows shown for one choice only,
 * the node's settings migrations), `save()` for oneditsave, and `keys`, every catalog key the dialog uses.
 * `options.config`: the dialog of a config node (inputs named node-config-input-*);
 * `options.migrations`: the node's settings migrations (its folder's migrations.ts, shipped in its .html).
 */
export function form(type: string, tableRows: Array<SvcRow | string>, options: { config?: boolean; migrations: SvcMigrations }): SvcForm {
  const prefix = options.config ? 'node-config-input' : 'node-input';
  const id = (field: string) => `${prefix}-${field}`;
  const keys: string[] = [];
  /** A catalog key of this node (a key with a namespace stands as it is); kept in `keys`. */
  const key = (k: string) => {
    const full = k.includes(':') ? k : `${type}.${k}`;
    if (!keys.includes(full)) keys.push(full);
    return full;
  };
  const rows = expand(tableRows.concat([{ hidden: 'version' }]));
  const { template, tabs } = dialogTemplate({ type, id, key }, rows);
  for (const row of rows) {
    const fixed = row.typed ? fixedType(row) : undefined;
    if (fixed) {
      key(fixed.label);
      (fixed.optionLabels ?? []).forEach(key);
    }
    if (row.checkbox === 'worldmap') key('outputs.result'); // port 1's label beside the Map output (SvcEditor.outputLabels)
  }
  $('<script>').attr({ type: 'text/html', 'data-template-name': type }).text(template).appendTo('body');

  const self: SvcForm = {
    type,
    rows,
    keys,
    tabs,
    id,
    prepare(node) {
      writeMigrated(self, options.migrations, node);
      const dialog = $(`#${id('name')}`).closest('form');
      if (tabs.length) tabStrip(self, node);
      for (const row of rows) {
        const field = fieldOf(row);
        if (row.typed) {
          const fixed = fixedType(row);
          const types: TypedInputType[] = [...(fixed ? [typedChoice(node, fixed)] : []), ...SOURCES, ...(row.types ?? [])];
          $(`#${id(field)}`).typedInput({ default: 'msg', types, typeField: `#${id(`${field}Type`)}` });
        } else if (row.spinner) {
          $(`#${id(field)}`).spinner({ min: row.min, max: row.max, step: row.step });
        }
      }
      const controls = [...new Set(rows.flatMap((row) => Object.keys(row.when ?? {})))];
      for (const control of controls) {
        $(`#${id(control)}`).on('change', () => showDependentRows(self, dialog, control));
        showDependentRows(self, dialog, control);
      }
    },
    /** Output 2 exists while the Map output option is on. */
    save() {
      const worldmap = $(`#${id('worldmap')}`);
      if (worldmap.length) $(`#${id('outputs')}`).val(worldmap.is(':checked') ? 2 : 1);
    },
  };
  return self;
}
