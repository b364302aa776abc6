import type { NodeAPI, NodeDef, Node, OutputMessage } from '../lib/node-red/types';
import { msgPaths, nodeInputs } from '../lib/node-red/inputs';
import { clientFor } from '../lib/node-red/config';
import { PlatformError, SvcError, causeOf, codeForStatus } from '../lib/util/errors';
import { catalogText } from '../lib/util/catalog-text';
import { LatLon, checkLatLon, decodeGeohash, encodeGeohash, isGeohash } from '../lib/geo/geohash';
import { isRecord, toNumber } from '../lib/util/values';
import { handleInputs } from '../lib/node-red/runner';
import { pathSegment } from '../lib/platform/paths';
import { formatThreeWords, parseThreeWords } from '../lib/geo/words';
import { wordsShapes } from '../lib/geo/worldmap-places';
import type { SettingsOf } from '../lib/node-red/editor-definition';
import { defaults } from './defaults';
import { migrations } from './migrations';
import { wordsPlace } from '../lib/geo/place-payload';
import { readSettings } from '../lib/node-red/settings';
import { translateWith } from '../lib/node-red/i18n';

/** The length of a place's geohash when the response gives none: svc-words has no precision setting. */
const GEOHASH_LENGTH = 9;

type WordsDef = NodeDef & SettingsOf<typeof defaults>;

interface WordsLocation extends LatLon {
  elevation: number | undefined;
  /** What the elevation is measured from, as the result names it (the spec does not list the values); absent when it gives none. */
  elevationType?: string;
}

export = function register(RED: NodeAPI): void {
  function SvcWords(this: Node, def: WordsDef): void {
    RED.nodes.createNode(this, def);
    def = migrations.migrate(def);
    const client = clientFor(RED, this, def.server, 'bearer');
    const inputs = nodeInputs(RED, this, def, msgPaths(defaults, ['words']));
    // `location` puts the place in msg.payload; `response` (flows saved before the setting existed too) keeps the whole response there.
    const payloadIs = readSettings(def, defaults).choice('output', ['response', 'location']);

    handleInputs(
      this,
      async (msg, { signal, onWait }) => {
        const platform = client();
        const words = parseThreeWords((await inputs.read(msg)).words);
        const response = await platform
          .request({
            auth: 'bearer',
            rate: 'words',
            method: 'GET',
            path: `/v1/location/words/${pathSegment(words.join('.'), catalogText('label.threeWords'), 'input')}`,
            retry: 'read',
            signal,
            onWait,
          })
          .catch((err: unknown) => {
            throw err instanceof SvcError && err.code === 'NOT_FOUND' ? noSuchAddress(words, 404) : err;
          });
        const { location, geohash } = readLookup(response.body, words, response.statusCode);
        const out = msg as OutputMessage;
        out.payload = payloadIs === 'location' ? wordsPlace(words, location, geohash) : response.body;
        out.location = location;
        out.geohash = geohash;
        out.statusCode = response.statusCode;
        return {
          msg: out,
          statusText: catalogText('status.found'),
          map: (layer) => wordsShapes(formatThreeWords(words), location, geohash, response.body, layer),
        };
      },
      def,
    );
  }

  translateWith(RED);
  RED.nodes.registerType('svc-words', SvcWords);
};

/**
 * The location in a lookup result. An empty response, or one whose `httpStatusCode` says 404, means
 * the words name no cell; coordinates that cannot be a place are a bad response.
 */
function readLookup(body: unknown, words: string[], statusCode: number): { location: WordsLocation; geohash: string } {
  if (!isRecord(body) || Object.keys(body).length === 0) throw noSuchAddress(words, statusCode);
  if (typeof body.httpStatusCode === 'number' && body.httpStatusCode >= 400) {
    if (body.httpStatusCode === 404) throw noSuchAddress(words, body.httpStatusCode);
    throw new PlatformError(codeForStatus(body.httpStatusCode), catalogText('error.words.httpStatus', { statusCode: body.httpStatusCode }), {
      statusCode: body.httpStatusCode,
      body: JSON.stringify(body),
    });
  }
  const coordinates = isRecord(body.coordinates) ? body.coordinates : undefined;
  const geohash = isGeohash(body.geohash) ? body.geohash.toLowerCase() : undefined;
  if (!coordinates && !geohash) throw noSuchAddress(words, statusCode);
  try {
    const point = coordinates ? checkLatLon(coordinates.lat, coordinates.lon, 'coordinates') : decodeGeohash(geohash as string);
    return {
      location: {
        ...point,
        elevation: toNumber(coordinates?.elevation),
        ...(typeof coordinates?.elevationType === 'string' ? { elevationType: coordinates.elevationType } : {}),
      },
      geohash: geohash ?? encodeGeohash(point, GEOHASH_LENGTH),
    };
  } catch (err) {
    throw new PlatformError('BAD_RESPONSE', catalogText('error.words.noLocation', { cause: causeOf(err) }), {
      statusCode,
      body: JSON.stringify(body),
      cause: err,
    });
  }
}

function noSuchAddress(words: string[], statusCode: number): SvcError {
  return new PlatformError('NOT_FOUND', catalogText('error.words.noSuchAddress', { words: formatThreeWords(words) }), { statusCode });
}
