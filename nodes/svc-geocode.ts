import type { NodeAPI, NodeDef, Node, OutputMessage } from './lib/node-red/inputs';
import { nodeInputs } from './lib/node-red/inputs';
import { clientFor } from './lib/node-red/config';
import { invalidInput } from './lib/util/errors';
import { bestFeature, featurePoint } from './lib/geo/geojson';
import { encodeGeohash } from './lib/geo/geohash';
import { precisionSetting } from './lib/node-red/settings';
import { handleInputs } from './lib/node-red/runner';
import { describeValue } from './lib/util/values';
import { message } from './lib/util/messages';
import { geocodeShapes } from './lib/geo/worldmap';

interface GeocodeDef extends NodeDef {
  server: string;
  address: string;
  addressType: string;
  precision?: number | string;
}

export = function register(RED: NodeAPI): void {
  function SvcGeocode(this: Node, def: GeocodeDef): void {
    RED.nodes.createNode(this, def);
    const client = clientFor(RED, this, def.server, 'project');
    const inputs = nodeInputs(RED, this, def, { address: 'payload' });
    const precision = precisionSetting(def.precision);

    handleInputs(this, async (msg, { signal, onWait }) => {
      const platform = client();
      const address = readAddress((await inputs.read(msg)).address);
      const response = await platform.request({
        auth: 'project',
        method: 'POST',
        path: '/v1/geocode',
        query: { address },
        retry: 'read',
        signal,
        onWait,
      });
      const feature = bestFeature(response.body);
      const location = featurePoint(feature);
      const out = msg as OutputMessage;
      out.payload = response.body;
      out.feature = feature;
      out.location = location;
      out.geohash = location ? encodeGeohash(location, precision) : undefined;
      out.statusCode = response.statusCode;
      return { msg: out, statusText: message(location ? 'status.found' : 'status.noMatch'), map: (layer) => geocodeShapes(address, feature, location, layer) };
    }, def);
  }

  RED.nodes.registerType('svc-geocode', SvcGeocode);
};

/** A string, or an object with an `address` member; empty or other values are input errors. */
function readAddress(value: unknown): string {
  const candidate =
    value !== null && typeof value === 'object' && 'address' in value ? (value as { address: unknown }).address : value;
  if (typeof candidate !== 'string') {
    throw invalidInput(message('error.geocode.address', { value: describeValue(candidate) }));
  }
  const address = candidate.trim();
  if (address === '') throw invalidInput(message('error.geocode.addressEmpty'));
  return address;
}

