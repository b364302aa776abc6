import { LOCATION_NODE, type EditorDefinition } from '../lib/node-red/editor-definition';
import { defaults } from './defaults';

/** The editor of svc-isoline: build/editor-html.ts writes it into svc-isoline.html. */
const editor: EditorDefinition<EditorNode, SvcRow, SvcForm, typeof defaults> = {
  ...LOCATION_NODE,
  paletteLabel: 'isoline',
  defaults,
  validators: {
    rangeValue: function (this: EditorNode, value: unknown) {
      return SvcEditor.validate
        .typedAs('rangeValueType', ['num', 'str'], function (v) {
          return String(v)
            .split(',')
            .every(function (part) {
              return part.trim() !== '' && SvcEditor.validate.positive(part);
            });
        })
        .call(this, value);
    },
    shape: function (this: EditorNode, value: unknown) {
      return SvcEditor.validate
        .typedAs('shapeType', ['num'], function (v) {
          return v === '' || (Number.isInteger(Number(v)) && Number(v) > 30);
        })
        .call(this, value);
    },
  },
  rows: [
    'server',
    { typed: 'origins', icon: 'map-marker', types: ['json', 'str', 'jsonata'] },
    { select: 'originFormat', icon: 'exchange', options: ['coordinates', 'geohash'] },
    { spinner: 'precision', icon: 'th', min: 1, max: 12, unit: 'label.characters', when: { originFormat: ['geohash'] } },
    { checkbox: 'lonLatArrays' },
    { typed: 'rangeType', icon: 'arrows-h', fixed: ['time', 'distance'] },
    { typed: 'rangeValue', icon: 'circle-o', types: ['num', 'str', 'json', 'jsonata'], unit: 'label.rangeUnit' },
    { typed: 'mode', icon: 'tachometer', fixed: ['short', 'fast'] },
    { typed: 'transportMode', icon: 'car', fixed: ['car', 'truck', 'pedestrian'], multiple: true, types: ['json'] },
    { typed: 'avoid', icon: 'ban', fixed: ['tollRoad', 'controlledAccessHighway', 'ferry', 'tunnel', 'dirtRoad'], multiple: true, types: ['json'] },
    { text: 'avoidMember', icon: 'tag' },
    { typed: 'optimizeFor', icon: 'sliders', fixed: ['quality', 'performance', 'balanced'] },
    { typed: 'shape', icon: 'circle-thin', types: ['num'], unit: 'label.points' },
    { typed: 'async', icon: 'hourglass-half', types: ['bool'] },
    { poll: true },
    'mapOutput',
    'name',
  ],
};

export default editor;
