import should from 'should';
import {
  PollSettings,
  countSetting,
  nonNegativeSetting,
  pollingOf,
  positiveSetting,
  precisionSetting,
  readSettings,
  textSetting,
} from '../../../nodes/lib/node-red/settings';
import type { EditorDefinition, SettingsOf } from '../../../nodes/lib/node-red/editor-definition';
import { defaults as bulkDefaults } from '../../../nodes/svc-bulk-geocode/defaults';
import { defaults as isolineDefaults } from '../../../nodes/svc-isoline/defaults';
import { defaults as webhookDefaults } from '../../../nodes/svc-webhook-in/defaults';
import { expectOutput, helper, loadWithSandbox, useSandbox } from '../../support/harness';
import { resetBulk } from '../../../sandbox/endpoints/bulk';
import { migrated } from '../../support/migrations';
import { runEditorScripts } from '../../support/editor-script';

/** Settings of a node as a 1.0.0 flow holds them (no version), at their current version. */
type FlowSettings = PollSettings & { type: string; [property: string]: unknown };
const bulk = (settings: Record<string, unknown>) => migrated<FlowSettings>({ type: 'svc-bulk-geocode', ...settings });
const computation = (settings: Record<string, unknown>) => migrated<FlowSettings>({ type: 'svc-isoline', ...settings });

describe('node settings', function () {
  describe('one parser per kind of setting', function () {
    it('reads numbers given as numbers or editor text, and falls back on anything else', function () {
      should(positiveSetting('1.5')).equal(1.5);
      should(positiveSetting(0)).be.undefined();
      should(positiveSetting('fast')).be.undefined();
      should(nonNegativeSetting('0', 80)).equal(0);
      should(nonNegativeSetting(-1, 80)).equal(80);
      should(countSetting('250', 1000)).equal(250);
      should(countSetting(2.7, 1000)).equal(2);
      should(countSetting(0.5, 1000)).equal(1);
      should(countSetting('', 1000)).equal(1000);
      should(textSetting('  payload.id ')).equal('payload.id');
      should(textSetting('  ', 'features')).equal('features');
      should(textSetting(undefined)).equal('');
    });

    it('reads a geohash length as a whole number from 1 to 12, else the default', function () {
      should(precisionSetting('7', 9)).equal(7);
      should(precisionSetting(12, 9)).equal(12);
      for (const bad of [0, 13, 5.5, '', 'x', undefined]) should(precisionSetting(bad, 9)).equal(9, String(bad));
    });
  });

  describe('one source for each default: the node’s defaults.ts', function () {
    it('reads a setting by its key in defaults.ts, and gives that default for a missing or unreadable value', function () {
      const settings = readSettings<typeof webhookDefaults>({ tolerance: '60', maxBodyKb: 'x', headerName: ' X-Key ' }, webhookDefaults);
      should(settings.positive('tolerance')).equal(60);
      should(settings.positive('maxBodyKb')).equal(webhookDefaults.maxBodyKb.value);
      should(readSettings({}, webhookDefaults).positive('tolerance')).equal(300);
      should(settings.text('headerName')).equal('X-Key');
      should(readSettings({}, webhookDefaults).text('url')).equal('/svc-webhook');
      should(readSettings({ verify: 'none' }, webhookDefaults).choice('verify', ['signature', 'none'])).equal('none');
      should(readSettings({ verify: 'sometimes' }, webhookDefaults).choice('verify', ['signature', 'none'])).equal('signature');
    });

    it('fails tsc on a key the defaults lack, in the runtime’s settings and in the dialog’s rows', function () {
      const settings = readSettings({}, webhookDefaults);
      // @ts-expect-error a misspelt key
      should(() => settings.positive('tolerence')).throw();
      // @ts-expect-error a number setting read as text
      settings.text('maxBodyKb');
      // @ts-expect-error a misspelt member of a node's settings
      const stored: SettingsOf<typeof webhookDefaults> = { maxBodyKB: 1 };
      should(stored).be.ok();
      const rows: EditorDefinition<unknown, { text?: string; icon?: string }, unknown, typeof webhookDefaults>['rows'] = [
        { text: 'headerName', icon: 'header' },
        // @ts-expect-error a misspelt row property
        { text: 'headerNam' },
        'name',
        // @ts-expect-error a shared row that does not exist
        'names',
      ];
      should(rows).have.length(4);
    });
  });

  describe('poll settings: seconds everywhere, flows saved before 1.1 read in their old unit', function () {
    it('reads pollIntervalSec and maxWait in seconds', function () {
      should(pollingOf({ pollIntervalSec: '0.5', maxWait: 60 }, bulkDefaults)).eql({ intervalMs: 500, maxWaitMs: 60_000 });
      should(pollingOf({ pollIntervalSec: 3 }, isolineDefaults)).eql({ intervalMs: 3000, maxWaitMs: 300_000 });
    });

    it('uses the defaults: 2 s and 30 min on bulk, 1 s and 5 min on isoline and sequence', function () {
      should(pollingOf({}, bulkDefaults)).eql({ intervalMs: 2000, maxWaitMs: 1_800_000 });
      should(pollingOf(computation({ pollIntervalSec: '', pollInterval: '' }), isolineDefaults)).eql({ intervalMs: 1000, maxWaitMs: 300_000 });
    });

    it('reads a legacy pollInterval in the node’s old unit wherever it is set, even beside pollIntervalSec (moved by the node’s migration)', function () {
      should(pollingOf(bulk({ pollInterval: 2000 }), bulkDefaults).intervalMs).equal(2000);
      should(pollingOf(bulk({ pollInterval: '500', pollIntervalSec: 2 }), bulkDefaults).intervalMs).equal(500);
      should(pollingOf(computation({ pollInterval: 2 }), isolineDefaults).intervalMs).equal(2000);
      should(pollingOf(computation({ pollInterval: 0.5, pollIntervalSec: 9 }), isolineDefaults).intervalMs).equal(500);
    });
  });

  describe('on a running Node-RED', function () {
    const ctx = useSandbox({ jobPolls: 2 });
    beforeEach(() => resetBulk(ctx.sandbox));

    it('a bulk node from a flow saved before 1.1 polls after its pollInterval in ms, not in seconds', async function () {
      // Read as seconds, 10 would outlast the test; pollIntervalSec (60 s) is ignored beside it.
      await loadWithSandbox(ctx.sandbox, {
        types: ['svc-bulk-geocode'],
        nodes: [{ id: 'n1', type: 'svc-bulk-geocode', pollInterval: 10, pollIntervalSec: 60, maxWait: 5 }],
      });
      const msg = await expectOutput('n1', { payload: ['12 Main Street'] }, 3000);
      should((msg.jobs as Array<{ polls: number }>)[0].polls).equal(2);
    });

    it('a bulk node saved now polls after pollIntervalSec seconds', async function () {
      await loadWithSandbox(ctx.sandbox, { types: ['svc-bulk-geocode'], nodes: [{ id: 'n1', type: 'svc-bulk-geocode', pollIntervalSec: 0.01, maxWait: 5 }] });
      await expectOutput('n1', { payload: ['12 Main Street'] }, 3000);
    });

    it('a sequence node reads pollIntervalSec, and its legacy pollInterval in seconds', async function () {
      const waypoints = [13.3, 13.4, 13.5].map((lon) => ({ lat: 52.5, lon }));
      for (const poll of [{ pollIntervalSec: 0.02 }, { pollInterval: 0.02 }]) {
        // An id of its own: no job another spec left stored for a node 'n1' is resumed here.
        await loadWithSandbox(ctx.sandbox, { types: ['svc-sequence'], nodes: [{ id: 'settings-sequence', type: 'svc-sequence', ...poll }] });
        await expectOutput('settings-sequence', { payload: { waypoints, async: true } }, 3000);
        await helper.unload();
      }
    });
  });

  describe('in the editor (resources/editor.js)', function () {
    /**
     * Opens the dialog of a `type` node holding `settings` (as Node-RED fills the inputs from them) and
     * returns the dialog's fields after oneditprepare.
     */
    function openDialog(type: string, settings: Record<string, string | number>): Record<string, string> {
      const fields = Object.fromEntries(Object.entries(settings).map(([property, value]) => [property, String(value)]));
      const form = runEditorScripts([type], fields).forms.get(type);
      form?.prepare({ type, ...settings, _: (key) => key });
      return fields;
    }

    it('moves a legacy bulk pollInterval (ms) into the seconds field and clears it', function () {
      // Settings from before version 2 keep the parts summary (issue 54): the dialog's fields hold text.
      should(openDialog('svc-bulk-geocode', { pollInterval: '500', pollIntervalSec: '2' })).eql({
        pollInterval: '',
        pollIntervalSec: '0.5',
        partsSummary: 'true',
        version: '2',
      });
    });

    it('moves a legacy isoline or sequence pollInterval (s) as it is, and leaves a current node alone', function () {
      // A node saved before version 2 keeps reading its range from the message (issue 54).
      should(openDialog('svc-isoline', { pollInterval: '3', pollIntervalSec: '' })).eql({
        pollInterval: '',
        pollIntervalSec: '3',
        rangeType: 'payload.range.type',
        rangeTypeType: 'msg',
        rangeValue: 'payload.range.value',
        rangeValueType: 'msg',
        version: '2',
      });
      should(openDialog('svc-sequence', { pollInterval: '', pollIntervalSec: '1.5', version: 2 })).eql({
        pollInterval: '',
        pollIntervalSec: '1.5',
        version: '2',
      });
    });

    it('accepts a node that has only the legacy value until its dialog is saved', function () {
      const validate = runEditorScripts().SvcEditor.validate.pollInterval;
      should(validate.call({ pollInterval: 2000 }, undefined)).be.true();
      should(validate.call({ pollInterval: '' }, undefined)).be.false();
      should(validate.call({}, '0.5')).be.true();
      should(validate.call({}, '0')).be.false();
    });
  });
});
