import { LOCATION_NODE, type EditorDefinition } from '../lib/node-red/editor-definition';
import { defaults } from './defaults';

/** The editor of svc-route: build/editor-html.ts writes it into svc-route.html. */
const editor: EditorDefinition<EditorNode, SvcRow, SvcForm, typeof defaults> = {
  ...LOCATION_NODE,
  paletteLabel: 'route',
  defaults,
  rows: [
    'server',
    { typed: 'waypoints', icon: 'map-marker', types: ['json', 'jsonata'] },
    { checkbox: 'lonLatArrays' },
    { typed: 'transportMode', icon: 'car', fixed: ['pedestrian', 'wheelchair', 'bicycle', 'car', 'carHOV', 'truck'], multiple: true, types: ['json'] },
    { typed: 'departAt', icon: 'clock-o', types: ['str', 'date', 'num', 'jsonata'] },
    { typed: 'arriveBy', icon: 'flag-checkered', types: ['str', 'date', 'num', 'jsonata'] },
    { typed: 'avoid', icon: 'ban', types: ['str', 'json'], placeholder: 'placeholder.avoid' },
    { typed: 'preference', icon: 'tachometer', fixed: ['fastest', 'shortest'] },
    'mapOutput',
    'name',
  ],
};

export default editor;
