import { LOCATION_NODE, type EditorDefinition } from '../lib/node-red/editor-definition';
import { defaults } from './defaults';

/** The editor of svc-topic-publish: build/editor-html.ts writes it into svc-topic-publish.html. */
const editor: EditorDefinition<EditorNode, SvcRow, SvcForm, typeof defaults> = {
  ...LOCATION_NODE,
  paletteLabel: 'topic publish',
  defaults,
  rows: [
    'server',
    { typed: 'topicId', icon: 'hashtag', types: ['num', 'jsonata'] },
    { typed: 'locationId', icon: 'map-marker', types: ['str', 'jsonata'] },
    { typed: 'data', icon: 'database', types: ['json', 'jsonata'] },
    { checkbox: 'wrapValue' },
    'name',
  ],
};

export default editor;
