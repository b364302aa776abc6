import type { EditorDefinition } from '../lib/node-red/editor-definition';
import { credentials, defaults } from './defaults';

const SIGNED = { verify: ['signature'] };

/** The editor of svc-webhook-in: build/editor-html.ts writes it into svc-webhook-in.html. */
const editor: EditorDefinition<EditorNode, SvcRow, SvcForm, typeof defaults, typeof credentials> = {
  category: 'location',
  color: '#a6d4e8',
  inputs: 0,
  outputs: 1,
  paletteLabel: 'webhook in',
  label: function (this: EditorNode) {
    if (this.name) return this.name;
    const url = typeof this.url === 'string' ? this.url : '';
    if (!url) return 'webhook in';
    let root = RED.settings.httpNodeRoot || '/';
    if (root.slice(-1) !== '/') root += '/';
    return '[webhook] ' + root + (url.charAt(0) === '/' ? url.slice(1) : url);
  },
  defaults,
  credentials,
  rows: [
    { text: 'url', icon: 'globe', example: '/location-events' },
    {
      html: '<div id="node-input-tip" class="form-tips"><span data-i18n="svc-webhook-in.tip.root"></span><code><span id="node-input-path"></span></code>.</div>',
    },
    { select: 'verify', icon: 'shield', options: ['signature', 'none'] },
    { tip: 'tip.unsigned', icon: 'exclamation-triangle', warning: true, when: { verify: ['none'] } },
    { password: 'secret', icon: 'lock', when: SIGNED },
    { password: 'previousSecret', icon: 'history', placeholder: 'placeholder.previousSecret', when: SIGNED },
    { spinner: 'tolerance', icon: 'clock-o', min: 1, unit: 'unit.seconds', when: SIGNED },
    { text: 'headerName', icon: 'header', placeholder: 'placeholder.headerName' },
    { password: 'headerValue', icon: 'lock' },
    { spinner: 'maxBodyKb', icon: 'arrows-v', min: 1, unit: 'unit.kilobytes' },
    { config: 'server', icon: 'database' },
    'name',
  ],
  prepare: function () {
    // Where the URL is served: below Node-RED's httpNodeRoot, when that is not /.
    let root = RED.settings.httpNodeRoot || '/';
    if (root.slice(-1) === '/') root = root.slice(0, -1);
    $('#node-input-path').text(root);
    $('#node-input-tip').toggle(root !== '');
  },
};

export default editor;
