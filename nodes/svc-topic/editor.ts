import { LOCATION_NODE, type EditorDefinition } from '../lib/node-red/editor-definition';
import { credentials, defaults } from './defaults';

const OPERATIONS = ['create-topic', 'list-topics', 'get-topic', 'delete-topic', 'create-subscription'];
// Which operations use a row; an operation read from the message shows every row.
const CREATE = { operation: ['create-topic'] };
const LIST = { operation: ['list-topics'] };
const SUBSCRIBE = { operation: ['create-subscription'] };
const ONE_TOPIC = { operation: ['get-topic', 'delete-topic', 'create-subscription'] };

/** The editor of svc-topic: build/editor-html.ts writes it into svc-topic.html. */
const editor: EditorDefinition<EditorNode, SvcRow, SvcForm, typeof defaults, typeof credentials> = {
  ...LOCATION_NODE,
  paletteLabel: 'topic',
  label: function (this: EditorNode) {
    if (this.name) return this.name;
    return this.operationType === 'operation' ? String(this.operation) : 'topic';
  },
  defaults,
  credentials,
  rows: [
    'server',
    {
      typed: 'operation',
      icon: 'tasks',
      fixed: {
        value: 'operation',
        label: 'label.fixedOperation',
        options: OPERATIONS,
        optionLabels: OPERATIONS.map((op) => `operation.${op}`),
      },
    },
    { typed: 'topicId', icon: 'hashtag', types: ['num', 'jsonata'], when: ONE_TOPIC },
    { typed: 'topicName', icon: 'font', types: ['str', 'jsonata'], when: CREATE },
    { typed: 'topicDescription', icon: 'align-left', types: ['str', 'jsonata'], when: CREATE },
    { typed: 'webhookAddress', icon: 'link', types: ['str', 'jsonata'], when: SUBSCRIBE },
    // Fixed values of these two belong in the credentials below them, never in the flow.
    { typed: 'webhookHeaderFrom', icon: 'header', when: SUBSCRIBE },
    { password: 'webhookHeader', icon: 'lock', placeholder: 'placeholder.webhookHeader', when: SUBSCRIBE },
    { typed: 'secretTokenFrom', icon: 'key', when: SUBSCRIBE },
    { password: 'secretToken', icon: 'lock', placeholder: 'placeholder.secretToken', when: SUBSCRIBE },
    { typed: 'locationIds', icon: 'map-marker', types: ['str', 'json', 'jsonata'], when: SUBSCRIBE },
    { typed: 'limit', icon: 'list-ol', types: ['num'], when: LIST },
    { typed: 'offset', icon: 'step-forward', types: ['num'], when: LIST },
    { checkbox: 'allPages', when: LIST },
    { spinner: 'maxPages', icon: 'stop-circle-o', min: 1, when: LIST },
    'name',
  ],
};

export default editor;
