import { form } from './form';
import { MAP_TEXT } from './rows';
import { validate } from './validators';

/**
 * The editor side of every node of the pack, written once: the build bundles it into
 * resources/editor.js, which Node-RED serves from the module's resources/ folder and each node's .html
 * loads before its definition (`<script src="resources/@svc/node-red-location/editor.js">`). It
 * defines `window.SvcEditor`: `form` (form.ts) writes each dialog from its table of rows (rows.ts), and
 * the functions and validators the built registerType calls name (build/editor-html.ts).
 */

/** The label of a node: its name, else `fallback`. */
function nameOr(fallback: string): (this: EditorNode) => string {
  return function () {
    return this.name || fallback;
  };
}

/** labelStyle of every node: italic while the user has named it. */
function labelStyle(this: EditorNode): string {
  return this.name ? 'node_label_italic' : '';
}

/**
 * onadd of the nodes that need a platform, and of svc-webhook-in (its optional shared state, and
 * on the built-in sandbox its webhook secret): a node added from the palette (or pasted) without one
 * takes the svc-config there is when there is exactly one it can use; with none or several the
 * user chooses, as in Node-RED's own dialogs.
 */
function pickOnlyConfig(this: EditorNode): void {
  if (this.server) return;
  const usable: string[] = [];
  RED.nodes.eachConfig((config) => {
    // A config node inside a subflow serves only that subflow.
    if (config.type === 'svc-config' && !config.d && (!config.z || config.z === this.z)) usable.push(config.id);
  });
  if (usable.length === 1) this.server = usable[0];
}

/** outputLabels of the locating nodes: the node's result, then the Map output. */
function outputLabels(this: EditorNode, index: number): string {
  return index === 0 ? this._(`${this.type}.outputs.result`) : RED._(`${MAP_TEXT}port`);
}

// A page that loads the script twice (two nodes' .html) keeps the first.
window.SvcEditor ??= { form, nameOr, labelStyle, pickOnlyConfig, outputLabels, validate };
