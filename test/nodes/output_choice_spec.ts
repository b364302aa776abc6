import should from 'should';
import ngeohash from 'ngeohash';
import { geocode } from '../../sandbox/endpoints/geocode';
import { lookup } from '../../sandbox/endpoints/words';
import { CONFIG_ID, expectOutput, loadWithSandbox, useSandbox, Fields } from '../support/harness';

/**
 * Issue 21 point 4: the *Output* choice of geocode and words. "response" (the default, and what a flow
 * saved without the setting gets) keeps the whole response in msg.payload; "location" puts the place
 * there as a flat { name, lat, lon, … }, the shape a worldmap marker, a dashboard or a debug node
 * reads without a change node. (The browser suite feeds it to worldmap and to a core debug node.)
 */
describe('Output choice: the whole response or the location in msg.payload', function () {
  const ctx = useSandbox();
  const ADDRESS = '12 Main Street, Sandbox City';
  const load = (type: string, extra: Fields = {}) => loadWithSandbox(ctx.sandbox, { types: [type], nodes: [{ id: 'n1', type, ...extra }] });

  describe('svc-geocode', function () {
    it('"location": name, lat, lon, geohash, label and match quality in msg.payload, the other members as with "response", the default', async function () {
      await loadWithSandbox(ctx.sandbox, {
        types: ['svc-geocode'],
        nodes: [
          { id: 'n1', type: 'svc-geocode', output: 'location', wires: [['out']] },
          // A flow saved before the setting existed has none: the whole response, as before.
          { id: 'old', type: 'svc-geocode', server: CONFIG_ID, wires: [['out']] },
          { id: 'n-response', type: 'svc-geocode', output: 'response', server: CONFIG_ID, wires: [['out']] },
        ],
      });
      for (const id of ['old', 'n-response']) {
        const whole = await expectOutput(id, { payload: ADDRESS });
        should(whole.payload).have.property('type', 'FeatureCollection');
      }
      const msg = await expectOutput('n1', { payload: ADDRESS });
      const [lon, lat] = (geocode(ADDRESS)?.geometry as { coordinates: [number, number] }).coordinates;
      should(msg.payload).eql({
        name: ADDRESS,
        lat,
        lon,
        geohash: ngeohash.encode(lat, lon, 9),
        label: ADDRESS,
        match_type: 'exact',
        accuracy: 'Point',
      });
      should(msg.location).eql({ lat, lon });
      should(msg.feature).have.property('type', 'Feature');
      should(msg.statusCode).equal(200);
    });

    it('"location" with nothing matched: { name, found: false }, still an output', async function () {
      await load('svc-geocode', { output: 'location' });
      const msg = await expectOutput('n1', { payload: 'nowhere at all' });
      should(msg.payload).eql({ name: 'nowhere at all', found: false });
      should(msg.location).be.undefined();
    });

    it('"location": the name is HTML-escaped, as worldmap writes it into its page', async function () {
      await load('svc-geocode', { output: 'location' });
      const msg = await expectOutput('n1', { payload: '<img src=x onerror=alert(1)> Main Street' });
      should((msg.payload as Fields).name).equal('&lt;img src=x onerror=alert(1)&gt; Main Street');
    });
  });

  describe('svc-words', function () {
    it('"location": ///words as name, lat, lon, elevation, geohash and the words; by default the whole lookup result', async function () {
      await loadWithSandbox(ctx.sandbox, {
        types: ['svc-words'],
        nodes: [
          { id: 'n1', type: 'svc-words', output: 'location', wires: [['out']] },
          { id: 'old', type: 'svc-words', server: CONFIG_ID, wires: [['out']] },
        ],
      });
      should((await expectOutput('old', { payload: 'wheat.ribbon.magnet' })).payload).eql(lookup('wheat.ribbon.magnet'));
      const msg = await expectOutput('n1', { payload: '///Wheat.Ribbon.Magnet' });
      const { coordinates } = lookup('wheat.ribbon.magnet') as { coordinates: { lat: number; lon: number; elevation?: number; elevationType: string } };
      should(msg.payload).match({
        name: '///wheat.ribbon.magnet',
        lat: coordinates.lat,
        lon: coordinates.lon,
        elevation: coordinates.elevation,
        elevationType: coordinates.elevationType,
        words: 'wheat.ribbon.magnet',
      });
      should((msg.payload as Fields).geohash).equal(msg.geohash);
      should(msg.location).match({ lat: coordinates.lat, lon: coordinates.lon });
    });
  });
});
