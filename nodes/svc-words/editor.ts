import { LOCATION_NODE, type EditorDefinition } from '../lib/node-red/editor-definition';
import { defaults } from './defaults';

/** The editor of svc-words: build/editor-html.ts writes it into svc-words.html. */
const editor: EditorDefinition<EditorNode, SvcRow, SvcForm, typeof defaults> = {
  ...LOCATION_NODE,
  paletteLabel: 'words',
  label: function (this: EditorNode) {
    const words = typeof this.words === 'string' ? this.words : '';
    return this.name || (this.wordsType === 'str' && words ? '///' + words.replace(/^\s*\/\/\//, '') : 'words');
  },
  defaults,
  rows: [
    'server',
    { typed: 'words', icon: 'th', types: ['str', 'jsonata'], placeholder: 'placeholder.words' },
    { select: 'output', icon: 'sign-out', options: ['response', 'location'] },
    'mapOutput',
    'name',
  ],
};

export default editor;
