import type { NodeAPI, NodeDef, Node, OutputMessage } from '../lib/node-red/types';
import { msgPaths, nodeInputs } from '../lib/node-red/inputs';
import { configFor } from '../lib/node-red/config';
import { InputError } from '../lib/util/errors';
import { bestFeature, featurePoint } from '../lib/geo/geojson';
import { encodeGeohash } from '../lib/geo/geohash';
import { readSettings } from '../lib/node-red/settings';
import { handleInputs } from '../lib/node-red/runner';
import { describeValue } from '../lib/util/values';
import { catalogText } from '../lib/util/catalog-text';
import { geocodeShapes } from '../lib/geo/worldmap-places';
import { migrations } from './migrations';
import { geocodePlace } from '../lib/geo/place-payload';
import { translateWith } from '../lib/node-red/i18n';
import { countedRequest } from '../lib/state/counted-request';
import type { SettingsOf } from '../lib/node-red/editor-definition';
import { defaults } from './defaults';

type GeocodeDef = NodeDef & SettingsOf<typeof defaults>;

export = function register(RED: NodeAPI): void {
  function SvcGeocode(this: Node, def: GeocodeDef): void {
    RED.nodes.createNode(this, def);
    def = migrations.migrate(def);
    const config = configFor(RED, this, def.server, 'project');
    const inputs = nodeInputs(RED, this, def, msgPaths(defaults, ['address']));
    const settings = readSettings(def, defaults);
    const precision = settings.precision('precision');
    // `location` puts the place in msg.payload; `response` (flows saved before the setting existed too) keeps the whole response there.
    const payloadIs = settings.choice('output', ['response', 'location']);

    handleInputs(
      this,
      async (msg, { signal, onWait }) => {
        const { client, shared } = config();
        const address = readAddress((await inputs.read(msg)).address);
        const response = await countedRequest(client, shared, address, {
          auth: 'project',
          rate: 'geocode',
          method: 'POST',
          path: '/v1/geocode',
          query: { address },
          retry: 'read',
          signal,
          onWait,
        });
        const feature = bestFeature(response.body);
        const location = featurePoint(feature);
        const geohash = location ? encodeGeohash(location, precision) : undefined;
        const out = msg as OutputMessage;
        out.payload = payloadIs === 'location' ? geocodePlace(address, feature, location, geohash) : response.body;
        out.feature = feature;
        out.location = location;
        out.geohash = geohash;
        out.statusCode = response.statusCode;
        if (response.cached) out.cached = true;
        const result = catalogText(location ? 'status.found' : 'status.noMatch');
        const count = response.count ? catalogText('status.requestsToday', response.count) : '';
        return {
          msg: out,
          statusText: catalogText(response.cached ? 'status.resultCached' : 'status.result', { result, quota: count }),
          map: (layer) => geocodeShapes(address, feature, location, layer),
        };
      },
      def,
    );
  }

  translateWith(RED);
  RED.nodes.registerType('svc-geocode', SvcGeocode);
};

/** A string, or an object with an `address` member; empty or other values are input errors. */
function readAddress(value: unknown): string {
  const candidate = value !== null && typeof value === 'object' && 'address' in value ? value.address : value;
  if (typeof candidate !== 'string') {
    throw new InputError(catalogText('error.geocode.address', { value: describeValue(candidate) }));
  }
  const address = candidate.trim();
  if (address === '') throw new InputError(catalogText('error.geocode.addressEmpty'));
  return address;
}
