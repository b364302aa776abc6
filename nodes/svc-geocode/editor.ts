import { LOCATION_NODE, type EditorDefinition } from '../lib/node-red/editor-definition';
import { defaults } from './defaults';

/** The editor of svc-geocode: build/editor-html.ts writes it into svc-geocode.html. */
const editor: EditorDefinition<EditorNode, SvcRow, SvcForm, typeof defaults> = {
  ...LOCATION_NODE,
  paletteLabel: 'geocode',
  defaults,
  rows: [
    'server',
    { typed: 'address', icon: 'map-signs', types: ['str', 'jsonata'] },
    { spinner: 'precision', icon: 'th', min: 1, max: 12, unit: 'label.characters' },
    { select: 'output', icon: 'sign-out', options: ['response', 'location'] },
    'mapOutput',
    'name',
  ],
};

export default editor;
