import should from 'should';
import ngeohash from 'ngeohash';
import { decimal, payloadAsLocations, readLocation, readLocations, readRouteModes, toLocationObject, toWaypointObject } from '../../../nodes/lib/geo/locations';
import { readBox, readBoxes, toRouteBox, toSequenceBox } from '../../../nodes/lib/geo/boxes';
import { formatDeparture, formatRfc3339, readInstant } from '../../../nodes/lib/geo/dates';
import { plainText } from '../../../nodes/lib/util/text';
import { isSet, readBoolean, readChoice, readChoices, readNumber } from '../../../nodes/lib/util/values';

const strict = { lonLatArrays: false };
const lonLat = { lonLatArrays: true };

/** Runs `fn` and returns the INVALID_INPUT message it throws. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    should((err as { code?: string }).code).equal('INVALID_INPUT');
    return (err as Error).message;
  }
  throw new Error('expected an INVALID_INPUT error');
}

describe('locations (shared location converter)', function () {
  describe('readLocation', function () {
    it('reads {lat, lon}, {lat, lng}, {latitude, longitude} and world-map markers', function () {
      should(readLocation({ lat: 52.5, lon: 13.4 }, 'w', strict)).eql({ point: { lat: 52.5, lon: 13.4 } });
      should(readLocation({ lat: 52.5, lng: 13.4 }, 'w', strict)).eql({ point: { lat: 52.5, lon: 13.4 } });
      should(readLocation({ latitude: '52.5', longitude: '13.4' }, 'w', strict)).eql({ point: { lat: 52.5, lon: 13.4 } });
      should(readLocation({ name: 'van 3', lat: 52.5, lon: 13.4, icon: 'truck', layer: 'fleet' }, 'w', strict)).eql({
        point: { lat: 52.5, lon: 13.4 },
        name: 'van 3',
      });
    });

    it('reads a FeatureCollection, as svc-geocode outputs it, as its first feature, and a joined array of them (issue 54)', function () {
      const collection = (lon: number, lat: number) => ({
        type: 'FeatureCollection',
        features: [
          { type: 'Feature', geometry: { type: 'Point', coordinates: [lon, lat] }, properties: { score: 0.9 } },
          { type: 'Feature', geometry: { type: 'Point', coordinates: [0, 0] }, properties: { score: 0.1 } },
        ],
      });
      should(readLocation(collection(13.4, 52.5), 'origin 1', strict)).eql({ point: { lat: 52.5, lon: 13.4 } });
      should(readLocations([collection(13.4, 52.5), collection(11.6, 48.1)], 'waypoint', strict).map((place) => place.point)).eql([
        { lat: 52.5, lon: 13.4 },
        { lat: 48.1, lon: 11.6 },
      ]);
      should(payloadAsLocations(collection(13.4, 52.5))).eql(collection(13.4, 52.5));
      should(refusal(() => readLocation({ type: 'FeatureCollection', features: [] }, 'origin 1', strict))).equal(
        'origin 1: the GeoJSON FeatureCollection holds no feature (nothing matched)',
      );
      should(
        refusal(() =>
          readLocation({ type: 'FeatureCollection', features: [{ type: 'Feature', geometry: { type: 'LineString', coordinates: [] } }] }, 'origin 1', strict),
        ),
      ).equal('origin 1: a GeoJSON Feature must have a Point geometry');
    });

    it('reads GeoJSON Point geometries and Point Features in [lon, lat] order', function () {
      should(readLocation({ type: 'Point', coordinates: [13.4, 52.5] }, 'w', strict).point).eql({ lat: 52.5, lon: 13.4 });
      should(readLocation({ type: 'Feature', geometry: { type: 'Point', coordinates: [13.4, 52.5] }, properties: { name: 'depot' } }, 'w', strict)).eql({
        point: { lat: 52.5, lon: 13.4 },
        name: 'depot',
      });
    });

    it('reads geohash strings with the standard alphabet, in any case', function () {
      const place = readLocation(' U33DC0 ', 'w', strict);
      const { latitude, longitude } = ngeohash.decode('u33dc0');
      should(place).eql({ geohash: 'u33dc0', point: { lat: latitude, lon: longitude } });
      const notGeohash = (value: string) => `waypoint 4: "${value}" is not a geohash (1 to 12 characters of 0123456789bcdefghjkmnpqrstuvwxyz)`;
      // Standard base 32 leaves out a, i, l and o: the spec's list, which adds l, is not followed (issue 28).
      for (const letter of ['a', 'i', 'l', 'o']) should(refusal(() => readLocation(`u33d${letter}`, 'waypoint 4', strict))).equal(notGeohash(`u33d${letter}`));
    });

    it('takes geohashes of 1 to 12 characters, the length the sandbox takes too, and refuses longer ones (issue 28)', function () {
      should(readLocation('u33dc0pqrstu', 'w', strict).geohash).equal('u33dc0pqrstu');
      should(readLocation('u', 'w', strict).geohash).equal('u');
      should(refusal(() => readLocation('u33dc0pqrstuv', 'waypoint 4', strict))).equal(
        'waypoint 4: "u33dc0pqrstuv" is not a geohash (1 to 12 characters of 0123456789bcdefghjkmnpqrstuvwxyz)',
      );
    });

    it('passes spec Location objects through after validation', function () {
      const coordinates = { type: 'coordinates', latitude: 52.5, longitude: 13.4 };
      should(readLocation(coordinates, 'w', strict).specObject).equal(coordinates);
      should(readLocation({ type: 'geohash', geohash: 'U33D' }, 'w', strict).specObject).eql({ type: 'geohash', geohash: 'u33d' });
      should(refusal(() => readLocation({ type: 'coordinates', latitude: 52.5 }, 'origin 1', strict))).equal('origin 1: longitude must be a number');
      should(refusal(() => readLocation({ type: 'coordinates', latitude: 95, longitude: 1 }, 'origin 1', strict))).equal('origin 1: latitude 95 out of range');
    });

    it('passes routing waypoint objects through after validation', function () {
      const point = { type: 'point', coordinates: '13.4,52.5', transportMode: ['car'] };
      should(readLocation(point, 'w', strict)).containEql({ specObject: point, point: { lat: 52.5, lon: 13.4 } });
      const indoor = { type: 'indoor', unitId: 'u-1' };
      should(readLocation(indoor, 'w', strict)).eql({ specObject: indoor });
      should(refusal(() => readLocation({ type: 'point' }, 'waypoint 2', strict))).match(/^waypoint 2: a point waypoint needs coordinates/);
      should(refusal(() => readLocation({ type: 'point', coordinates: '13.4, 52.5, 3' }, 'waypoint 2', strict))).match(
        /coordinates must be the string "longitude,latitude"/,
      );
      should(refusal(() => readLocation({ type: 'indoor', venueId: '' }, 'waypoint 2', strict))).equal('waypoint 2: venueId must be a non-empty string');
      should(refusal(() => readLocation({ type: 'point', geohash: 'u33d', transportMode: ['rocket'] }, 'waypoint 2', strict))).match(
        /^waypoint 2: transportMode: "rocket" is not one of/,
      );
    });

    it('reads plain arrays only as [lon, lat] when told to', function () {
      should(refusal(() => readLocation([13.4, 52.5], 'origin 1', strict))).match(/^origin 1: a plain array is ambiguous/);
      should(readLocation([13.4, 52.5], 'origin 1', lonLat).point).eql({ lat: 52.5, lon: 13.4 });
      should(refusal(() => readLocation([52.5, 113.4], 'origin 1', lonLat))).equal('origin 1: latitude 113.4 out of range');
    });

    it('names the element in every refusal', function () {
      should(refusal(() => readLocation({ lat: 91, lon: 0 }, 'waypoint 3', strict))).equal('waypoint 3: latitude 91 out of range');
      should(refusal(() => readLocation({ lat: 0, lon: 180.5 }, 'waypoint 3', strict))).equal('waypoint 3: longitude 180.5 out of range');
      should(refusal(() => readLocation({ lat: 'north', lon: 0 }, 'waypoint 3', strict))).equal('waypoint 3: latitude "north" is not a number');
      should(refusal(() => readLocation({ lat: 1 }, 'waypoint 3', strict))).equal('waypoint 3: latitude without a longitude');
      should(refusal(() => readLocation({ lon: 1 }, 'waypoint 3', strict))).equal('waypoint 3: longitude without a latitude');
      should(refusal(() => readLocation({ x: 1 }, 'waypoint 3', strict))).match(/^waypoint 3: not a location; expected \{lat, lon\}/);
      should(refusal(() => readLocation(null, 'waypoint 3', strict))).match(/^waypoint 3: null is not a location/);
      should(refusal(() => readLocation(42, 'waypoint 3', strict))).match(/^waypoint 3: a number \(42\) is not a location/);
      should(refusal(() => readLocation({ type: 'LineString', coordinates: [] }, 'waypoint 3', strict))).equal(
        'waypoint 3: a GeoJSON LineString is not a point',
      );
      should(refusal(() => readLocation({ type: 'Feature', geometry: { type: 'Polygon' } }, 'waypoint 3', strict))).equal(
        'waypoint 3: a GeoJSON Feature must have a Point geometry',
      );
    });

    it('reads venue and unit alone as an indoor place', function () {
      should(readLocation({ venueId: 'mall', unitId: '12' }, 'w', strict)).eql({ venueId: 'mall', unitId: '12' });
    });
  });

  describe('readLocations and payloadAsLocations', function () {
    it('reads one location or a list, numbering the elements from 1', function () {
      should(readLocations({ lat: 1, lon: 2 }, 'origin', strict)).have.length(1);
      should(readLocations([{ lat: 1, lon: 2 }, 'u33d'], 'origin', strict)).have.length(2);
      should(
        refusal(() =>
          readLocations(
            [
              { lat: 1, lon: 2 },
              { lat: 1, lon: 2 },
              { lat: 91, lon: 2 },
            ],
            'waypoint',
            strict,
          ),
        ),
      ).equal('waypoint 3: latitude 91 out of range');
    });

    it('reads a lone [lon, lat] pair as one location when arrays are allowed', function () {
      should(readLocations([13.4, 52.5], 'origin', lonLat)).eql([{ point: { lat: 52.5, lon: 13.4 } }]);
      should(
        readLocations(
          [
            [13.4, 52.5],
            [13.5, 52.6],
          ],
          'origin',
          lonLat,
        ),
      ).have.length(2);
    });

    it('treats msg.payload as locations only when it looks like them', function () {
      should(payloadAsLocations('u33d')).equal('u33d');
      should(payloadAsLocations([1, 2])).eql([1, 2]);
      should(payloadAsLocations({ name: 'van', lat: 1, lon: 2 })).eql({ name: 'van', lat: 1, lon: 2 });
      should(payloadAsLocations({ type: 'Feature' })).eql({ type: 'Feature' });
      should(payloadAsLocations({ range: { type: 'time', value: 60 } })).be.undefined();
      should(payloadAsLocations(undefined)).be.undefined();
      should(payloadAsLocations(7)).be.undefined();
    });
  });

  describe('toLocationObject', function () {
    it('writes the configured variant, keeping given Location objects', function () {
      const place = readLocation({ lat: 52.5, lon: 13.4 }, 'w', strict);
      should(toLocationObject(place, 'coordinates', 9, 'w')).eql({ type: 'coordinates', latitude: 52.5, longitude: 13.4 });
      should(toLocationObject(place, 'geohash', 6, 'w')).eql({ type: 'geohash', geohash: ngeohash.encode(52.5, 13.4, 6) });
      should(toLocationObject(readLocation('u33dc0', 'w', strict), 'geohash', 9, 'w')).eql({ type: 'geohash', geohash: 'u33dc0' });
      const given = { type: 'geohash', geohash: 'u33d' };
      should(toLocationObject(readLocation(given, 'w', strict), 'coordinates', 9, 'w')).eql(given);
      should(toLocationObject(readLocation({ type: 'point', coordinates: '13.4,52.5' }, 'w', strict), 'coordinates', 9, 'w')).eql({
        type: 'coordinates',
        latitude: 52.5,
        longitude: 13.4,
      });
      should(refusal(() => toLocationObject(readLocation({ venueId: 'mall' }, 'w', strict), 'coordinates', 9, 'origin 2'))).match(
        /^origin 2: an indoor waypoint/,
      );
    });
  });

  describe('toWaypointObject', function () {
    const read = (value: unknown) => readLocation(value, 'w', strict);

    it('writes point coordinates as "longitude,latitude"', function () {
      should(toWaypointObject(read({ lat: 52.5, lon: 13.4 }), undefined, 'w')).eql({ type: 'point', coordinates: '13.4,52.5' });
      should(toWaypointObject(read({ type: 'coordinates', latitude: -33.9, longitude: 151.2 }), undefined, 'w')).eql({
        type: 'point',
        coordinates: '151.2,-33.9',
      });
    });

    it('writes geohashes, indoor places and given waypoint objects', function () {
      should(toWaypointObject(read('u33dc0'), undefined, 'w')).eql({ type: 'geohash', geohash: 'u33dc0' });
      should(toWaypointObject(read({ type: 'geohash', geohash: 'u33dc0' }), undefined, 'w')).eql({ type: 'geohash', geohash: 'u33dc0' });
      should(toWaypointObject(read({ venueId: 'mall', unitId: '7' }), undefined, 'w')).eql({ type: 'indoor', venueId: 'mall', unitId: '7' });
      const given = { type: 'point', geohash: 'u33dc0' };
      should(toWaypointObject(read(given), undefined, 'w')).eql(given);
    });

    it('uses the place transport mode, else the default', function () {
      should(toWaypointObject(read({ lat: 1, lon: 2, transportMode: 'pedestrian,wheelchair' }), ['car'], 'w')).eql({
        type: 'point',
        coordinates: '2,1',
        transportMode: ['pedestrian', 'wheelchair'],
      });
      should(toWaypointObject(read({ lat: 1, lon: 2 }), ['truck'], 'w').transportMode).eql(['truck']);
      should(refusal(() => toWaypointObject(read({ lat: 1, lon: 2, transportMode: [] }), undefined, 'waypoint 5'))).equal(
        'waypoint 5: transportMode: expected a list of transport modes',
      );
    });

    it('reads every route transport mode', function () {
      should(readRouteModes('pedestrian,wheelchair,bicycle,car,carHOV,truck', 'm')).eql(['pedestrian', 'wheelchair', 'bicycle', 'car', 'carHOV', 'truck']);
      should(refusal(() => readRouteModes(['CAR'], 'transportMode'))).match(/^transportMode: "CAR" is not one of/);
    });
  });

  describe('decimal', function () {
    it('writes coordinates without exponent notation or negative zero', function () {
      should(decimal(1e-7)).equal('0.0000001');
      should(decimal(-1e-9)).equal('0');
      should(decimal(13.4)).equal('13.4');
      should(decimal(-180)).equal('-180');
    });
  });

  describe('bounding boxes', function () {
    it('reads objects with Lng or Lon names and "minLat,minLon,maxLat,maxLon" strings', function () {
      const box = { minLat: 1, minLon: 2, maxLat: 3, maxLon: 4 };
      should(readBox({ minLat: 1, minLng: 2, maxLat: 3, maxLng: 4 }, 'b')).eql(box);
      should(readBox({ minLat: 1, minLon: 2, maxLat: 3, maxLon: 4 }, 'b')).eql(box);
      should(readBox(' 1, 2 ,3,4', 'b')).eql(box);
      should(toSequenceBox(box)).eql({ minLat: 1, minLng: 2, maxLat: 3, maxLng: 4 });
      should(toRouteBox(box)).equal('1,2,3,4');
      should(readBoxes(box, 'avoidBox')).eql([box]);
    });

    it('refuses boxes whose minimum is not below the maximum, or out of range', function () {
      should(refusal(() => readBoxes([{ minLat: 1, minLng: 2, maxLat: 3, maxLng: 4 }, '3,2,1,4'], 'avoidBox'))).equal(
        'avoid box 2: minLat 3 must be less than maxLat 1',
      );
      should(refusal(() => readBox('1,4,3,4', 'avoid'))).equal('avoid: minimum longitude 4 must be less than maximum longitude 4');
      should(refusal(() => readBox({ minLat: -91, minLng: 0, maxLat: 1, maxLng: 1 }, 'avoid'))).equal('avoid (minimum corner): latitude -91 out of range');
      should(refusal(() => readBox([1, 2, 3, 4], 'avoid'))).match(/^avoid: expected \{minLat, minLng, maxLat, maxLng\}/);
    });
  });

  describe('dates', function () {
    it('reads Dates, epochs in seconds or milliseconds, and ISO date-times', function () {
      const ms = Date.UTC(2025, 5, 1, 6, 30);
      should(readInstant(new Date(ms), 'd').getTime()).equal(ms);
      should(readInstant(ms, 'd').getTime()).equal(ms);
      should(readInstant(ms / 1000, 'd').getTime()).equal(ms);
      should(readInstant('2025-06-01T08:30:00+02:00', 'd').getTime()).equal(ms);
      should(refusal(() => readInstant('2025-06-01', 'departure'))).match(/^departure: expected a Date/);
      should(refusal(() => readInstant(new Date(NaN), 'departure'))).match(/^departure: expected a Date/);
    });

    it("writes departure as yyyy-MM-dd'T'HH:mm:ss, or in UTC with Z", function () {
      should(formatDeparture('2025-06-01T08:30:15.5', 'local', 'departure')).equal('2025-06-01T08:30:15');
      should(formatDeparture('2025-06-01T08:30:00+0200', 'zoned', 'departure')).equal('2025-06-01T06:30:00Z');
      should(formatDeparture(Date.UTC(2025, 11, 31, 23, 59, 59), 'zoned', 'departure')).equal('2025-12-31T23:59:59Z');
      const date = new Date(2025, 0, 2, 3, 4, 5);
      should(formatDeparture(date, 'local', 'departure')).equal('2025-01-02T03:04:05');
      should(refusal(() => formatDeparture('2025-13-01T08:00:00', 'local', 'departure'))).equal('departure: 2025-13-01T08:00:00 is not a valid date and time');
    });

    it('writes arriveBy/departAt as RFC 3339 date-time, full-date or partial-time', function () {
      should(formatRfc3339('2025-06-01t08:30:00z', 'a')).equal('2025-06-01T08:30:00z');
      should(formatRfc3339('2025-06-01T08:30-05:00', 'a')).equal('2025-06-01T08:30:00-05:00');
      should(formatRfc3339('2024-02-29', 'a')).equal('2024-02-29');
      should(formatRfc3339('23:59:60', 'a')).equal('23:59:60');
      should(formatRfc3339(new Date(Date.UTC(2025, 5, 1, 6, 30, 0, 999)), 'a')).equal('2025-06-01T06:30:00Z');
      should(refusal(() => formatRfc3339('2025-02-29', 'arriveBy'))).match(/^arriveBy: 2025-02-29T00:00:00 is not a valid date/);
      should(refusal(() => formatRfc3339('2025-06-01T08:30:00+0200', 'arriveBy'))).match(/is not an RFC 3339/);
      should(refusal(() => formatRfc3339('08:60', 'departAt'))).match(/^departAt: 2000-01-01T08:60:00 is not a valid date/);
    });
  });

  describe('routing field readers', function () {
    it('reads enum values exactly as the spec spells them', function () {
      should(readChoice('fast', ['short', 'fast'], 'mode')).equal('fast');
      should(readChoice(undefined, ['short', 'fast'], 'mode')).be.undefined();
      should(refusal(() => readChoice('Fast', ['short', 'fast'], 'mode'))).equal('mode: "Fast" is not one of short, fast');
      should(readChoices('car, truck', ['car', 'truck'], 't')).eql(['car', 'truck']);
      should(readChoices(['truck'], ['car', 'truck'], 't')).eql(['truck']);
      should(readChoices([], ['car', 'truck'], 't')).be.undefined();
      should([undefined, null, '', []].map(isSet)).eql([false, false, false, false]);
      should([0, false, 'x', [1]].map(isSet)).eql([true, true, true, true]);
      should(refusal(() => readChoices({ car: true }, ['car'], 'transportMode'))).equal('transportMode: expected a list of car');
    });

    it('reads booleans and numbers', function () {
      should(readBoolean('true', 'async')).be.true();
      should(readBoolean(false, 'async')).be.false();
      should(readBoolean('', 'async')).be.undefined();
      should(refusal(() => readBoolean(1, 'async'))).equal('async: expected true or false, got 1');
      should(readNumber(' 120 ', 'shape')).equal(120);
      should(refusal(() => readNumber('lots', 'shape'))).equal('shape: expected a number, got "lots"');
    });
  });

  describe('plainText (route instructions)', function () {
    it('removes HTML spans and decodes entities', function () {
      should(plainText('Turn <span class="direction">left</span> onto <span class="street">Queen&#39;s Walk</span> &amp; go <span>300&nbsp;m</span>')).equal(
        "Turn left onto Queen's Walk & go 300 m",
      );
      should(plainText('A &lt;b&gt; is not markup, &#x2192; &quot;here&quot;<br/>next')).equal('A <b> is not markup, → "here" next');
      // HTML5's rules: an unknown name stays as written, a reference to code point 0 is U+FFFD.
      should(plainText('&unknown; &#0; stay')).equal('&unknown; \uFFFD stay');
    });

    it('decodes every HTML5 named reference, as a browser shows the text (issue 51 point 8)', function () {
      should(plainText('Caf&eacute; &ndash; turn <b>right</b> onto Stra&szlig;e &rarr; 2&nbsp;km &hellip;')).equal('Café – turn right onto Straße → 2 km …');
      should(plainText('&Eacute;glise &mdash; &laquo;Gare&raquo; &euro;5 &#x1F6B2; &NotEqualTilde;')).equal('Église — «Gare» €5 🚲 ≂̸');
      // What a browser also reads without the `;` (legacy names), and what it leaves alone.
      should(plainText('AT&amp T, &copy 2024, &ampx, &notanentity;')).equal('AT& T, © 2024, &x, ¬anentity;');
    });
  });
});
