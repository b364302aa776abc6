import { LOCATION_NODE, type EditorDefinition } from '../lib/node-red/editor-definition';
import { defaults } from './defaults';

/** The editor of svc-sequence: build/editor-html.ts writes it into svc-sequence.html. */
const editor: EditorDefinition<EditorNode, SvcRow, SvcForm, typeof defaults> = {
  ...LOCATION_NODE,
  paletteLabel: 'sequence',
  defaults,
  rows: [
    'server',
    { typed: 'waypoints', icon: 'map-marker', types: ['json', 'jsonata'] },
    { select: 'waypointFormat', icon: 'exchange', options: ['coordinates', 'geohash'] },
    { spinner: 'precision', icon: 'th', min: 1, max: 12, unit: 'label.characters', when: { waypointFormat: ['geohash'] } },
    { checkbox: 'lonLatArrays' },
    { typed: 'departure', icon: 'clock-o', types: ['str', 'date', 'num', 'jsonata'] },
    { select: 'departureFormat', icon: 'calendar', options: ['zoned', 'local'] },
    { typed: 'transportMode', icon: 'car', fixed: ['car', 'truck', 'carHOV', 'bicycle', 'pedestrian'], multiple: true, types: ['json'] },
    { typed: 'avoid', icon: 'ban', types: ['json', 'str'] },
    { typed: 'routeMode', icon: 'tachometer', fixed: ['fastest', 'shortest'] },
    { typed: 'async', icon: 'hourglass-half', types: ['bool'] },
    { poll: true },
    'mapOutput',
    'name',
  ],
};

export default editor;
