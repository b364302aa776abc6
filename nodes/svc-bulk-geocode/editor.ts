import { LOCATION_NODE, type EditorDefinition } from '../lib/node-red/editor-definition';
import { defaults } from './defaults';

/** The editor of svc-bulk-geocode: build/editor-html.ts writes it into svc-bulk-geocode.html. */
const editor: EditorDefinition<EditorNode, SvcRow, SvcForm, typeof defaults> = {
  ...LOCATION_NODE,
  paletteLabel: 'bulk geocode',
  defaults,
  validators: {
    outputFile: function (this: EditorNode, value: unknown) {
      return this.output !== 'file' || (typeof value === 'string' ? value : '').trim() !== '';
    },
  },
  rows: [
    'server',
    { typed: 'addresses', icon: 'list', types: ['json', 'str', 'jsonata'] },
    { spinner: 'batchSize', icon: 'th-large', min: 1, unit: 'unit.addressesPerJob' },
    { spinner: 'parallel', icon: 'random', min: 1, max: 32, unit: 'unit.jobsAtOnce' },
    { poll: true, units: ['unit.pollInterval', 'unit.maxWait'] },
    { select: 'output', icon: 'sign-out', options: ['message', 'parts', 'file'] },
    { text: 'outputFile', icon: 'file-text-o', placeholder: 'placeholder.outputFile', when: { output: ['file'] } },
    { checkbox: 'rawCsv', icon: 'table', caption: 'unit.rawCsv', when: { output: ['file'] } },
    { checkbox: 'partsSummary', icon: 'list-alt', caption: 'unit.partsSummary', when: { output: ['parts'] } },
    { checkbox: 'rawFiles', icon: 'file-o', caption: 'unit.rawFiles' },
    { html: '<div class="form-row"><span data-i18n="svc-bulk-geocode.label.paths"></span></div>' },
    { text: 'jobIdPath', icon: 'hashtag', placeholder: 'placeholder.guess' },
    { text: 'downloadPath', icon: 'download', placeholder: 'placeholder.guess' },
    { text: 'statusPath', icon: 'flag', placeholder: 'placeholder.guess' },
    'mapOutput',
    'name',
  ],
};

export default editor;
