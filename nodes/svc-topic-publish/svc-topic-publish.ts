import type { NodeAPI, NodeDef, Node, OutputMessage } from '../lib/node-red/types';
import { msgPaths, nodeInputs } from '../lib/node-red/inputs';
import { clientFor } from '../lib/node-red/config';
import { InputError, describeCause } from '../lib/util/errors';
import { handleInputs } from '../lib/node-red/runner';
import { describeValue } from '../lib/util/values';
import { catalogText } from '../lib/util/catalog-text';
import { pubsubRequest, readRequiredText, readTopicId, topicPath } from '../lib/platform/topics';
import type { SettingsOf } from '../lib/node-red/editor-definition';
import { defaults } from './defaults';
import { migrations } from './migrations';
import { translateWith } from '../lib/node-red/i18n';

type TopicPublishDef = NodeDef & SettingsOf<typeof defaults>;

export = function register(RED: NodeAPI): void {
  function SvcTopicPublish(this: Node, def: TopicPublishDef): void {
    RED.nodes.createNode(this, def);
    def = migrations.migrate(def);
    const client = clientFor(RED, this, def.server, 'pubsub');
    const inputs = nodeInputs(RED, this, def, msgPaths(defaults, ['topicId', 'locationId', 'data']));
    const wrapValue = def.wrapValue === true;

    handleInputs(this, async (msg, { signal, onWait }) => {
      const platform = client();
      const values = await inputs.read(msg);
      const topicId = readTopicId(values.topicId);
      const locationId = readRequiredText(values.locationId, catalogText('label.locationId'));
      const data = readData(values.data, wrapValue);
      // A publish triggers webhooks: retried only when it certainly did not reach the service, or on 429.
      const response = await pubsubRequest(platform, {
        method: 'POST',
        path: `${topicPath(topicId)}/publish`,
        json: { LocationId: locationId, Data: data },
        retry: 'create',
        signal,
        onWait,
      });
      const out = msg as OutputMessage;
      out.payload = response.body;
      out.statusCode = response.statusCode;
      return { msg: out, statusText: catalogText('status.published') };
    });
  }

  translateWith(RED);
  RED.nodes.registerType('svc-topic-publish', SvcTopicPublish);
};

/** `Data` must be a JSON object; with `wrapValue` any other JSON value becomes `{ value }`. */
function readData(value: unknown, wrapValue: boolean): Record<string, unknown> {
  if (value === undefined) throw new InputError(catalogText('error.publish.noData'));
  const isObject = value !== null && typeof value === 'object' && !Array.isArray(value) && !Buffer.isBuffer(value);
  if (!isObject && !wrapValue) {
    throw new InputError(catalogText('error.publish.notObject', { value: describeValue(value) }));
  }
  const data = isObject ? (value as Record<string, unknown>) : { value };
  try {
    JSON.stringify(data);
  } catch (err) {
    throw new InputError(catalogText('error.publish.notJson', { cause: describeCause(err) }));
  }
  return data;
}
