import { fieldOf } from './rows';

/**
 * A dialog's template written from its rows in Node-RED's own markup (form-row, a label with its icon,
 * texts by data-i18n from the node's catalog), so that Node-RED fills, validates and saves the inputs
 * as for any node.
 */

const CHECKBOX_STYLE = 'display: inline-block; width: auto; vertical-align: top;';
/** Where a tab starts in a dialog's markup while it is written. */
const TAB_MARK = '<!-- svc-tab -->';

/** What writing a template needs of its form: the input ids and the catalog keys (`key` records each one used). */
interface TemplateContext {
  type: string;
  id: (field: string) => string;
  key: (k: string) => string;
}

function escape(text: unknown): string {
  return String(text).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

/** The template of the dialog of `rows`, and the names of its tabs in order (none: one page of rows). */
export function dialogTemplate(context: TemplateContext, rows: SvcRow[]): { template: string; tabs: string[] } {
  const { type, id, key } = context;
  const tabs = rows.flatMap((row) => (row.tab ? [row.tab] : []));

  const i18n = (k: string, attribute?: string) => ` data-i18n="${attribute ? `[${attribute}]` : ''}${escape(key(k))}"`;
  const unit = (row: SvcRow) => (row.unit ? ` <span${i18n(row.unit)}></span>` : '');
  const label = (row: SvcRow, field: string) =>
    `<label for="${id(field)}"><i class="fa fa-${row.icon}"></i> <span${i18n(row.label || `label.${field}`)}></span></label>`;
  const input = (row: SvcRow, field: string, kind: string, width: string) => {
    let extra = row.placeholder ? i18n(row.placeholder, 'placeholder') : row.example ? ` placeholder="${escape(row.example)}"` : '';
    if (kind === 'number') extra += ` min="${row.min}"${row.step ? ` step="${row.step}"` : ''}`;
    return `<input type="${kind}" id="${id(field)}" style="width: ${width};"${extra}>`;
  };

  const content = (row: SvcRow, field: string): string => {
    if (row.typed) {
      const width = row.unit ? '55%' : '70%';
      return `${label(row, field)}${input(row, field, 'text', width)}<input type="hidden" id="${id(`${field}Type`)}">${unit(row)}`;
    }
    if (row.spinner || row.number) {
      return label(row, field) + input(row, field, row.number ? 'number' : 'text', row.number ? '120px' : '80px') + unit(row);
    }
    if (row.select) {
      const choices = (row.options ?? []).map((value) => `<option value="${escape(value)}"${i18n(`${field}.${value}`)}></option>`);
      return `${label(row, field)}<select id="${id(field)}" style="width: 70%;">${choices.join('')}</select>`;
    }
    if (row.checkbox) {
      const box = `<input type="checkbox" id="${id(field)}" style="${CHECKBOX_STYLE}">`;
      const text = `<label for="${id(field)}" style="width: 70%;"${i18n(row.caption || `label.${field}`)}></label>`;
      return `${row.icon ? label(row, field) : '<label>&nbsp;</label>'}${box} ${text}`;
    }
    return label(row, field) + input(row, field, row.password ? 'password' : 'text', '70%');
  };

  const markup = (row: SvcRow, index: number): string => {
    if (row.tab) {
      key(`tabs.${row.tab}`);
      return TAB_MARK;
    }
    const classes = row.when ? ` svc-row-${index}` : '';
    if (row.html) return row.html;
    if (row.hidden) return `<input type="hidden" id="${id(row.hidden)}">`;
    if (row.tip) {
      const style = row.warning ? ' style="color: var(--red-ui-text-color-error, #c00);"' : '';
      return `<div class="form-tips${classes}"${style}><i class="fa fa-${row.icon}"></i> <span${i18n(row.tip)}></span></div>`;
    }
    return `<div class="form-row${classes}">${content(row, fieldOf(row))}</div>`;
  };

  // The tab rows' markers become Node-RED's tab strip and one panel per tab, as the MQTT broker dialog has them.
  const tabbed = (rowsMarkup: string): string => {
    const [above, ...panels] = rowsMarkup.split(TAB_MARK);
    const strip = `<div class="form-row"><ul style="min-width: 400px; margin-bottom: 20px;" id="${type}-tabs"></ul></div>`;
    const contents = panels.map((panel, index) => `<div id="${type}-tab-${tabs[index]}" style="display: none;">${panel}</div>`).join('');
    return `${above}${strip}<div id="${type}-tabs-content" style="min-height: 150px;">${contents}</div>`;
  };

  const template = rows.map(markup).join('\n');
  return { template: tabs.length ? tabbed(template) : template, tabs };
}
