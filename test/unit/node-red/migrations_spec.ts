import fs from 'node:fs';
import path from 'node:path';
import should from 'should';
import { currentVersion, migrated } from '../../support/migrations';
import { runEditorScripts } from '../../support/editor-script';
import { REPO_ROOT } from '../../support/paths';

/**
 * One versioned migration table per node (nodes/<type>/migrations.ts), applied by the runtime when a
 * node starts and by the editor when a dialog opens (shipped into the node's .html, run by the shared editor code).
 * settings_spec runs version-0 job nodes with a legacy pollInterval on a running Node-RED and in their
 * dialogs; test:browser opens one in the real editor.
 */

type FlowSettings = { type: string; [property: string]: unknown };

const PACKAGE = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { 'node-red': { nodes: Record<string, string> } };
const NODE_TYPES = Object.keys(PACKAGE['node-red'].nodes);

describe('settings migrations', function () {
  it('gives every node a settings version, the `version` default of its editor definition', function () {
    const { definitions, migrations } = runEditorScripts(NODE_TYPES);
    for (const type of NODE_TYPES) {
      should(currentVersion(type)).be.above(0, type);
      should(definitions.get(type)?.defaults.version?.value).equal(currentVersion(type), type);
      should(migrations.get(type)?.version).equal(currentVersion(type), type);
    }
  });

  it('moves a version-0 (1.0.0) legacy pollInterval into pollIntervalSec in each job node’s old unit, and empties it', function () {
    should(migrated<FlowSettings>({ type: 'svc-bulk-geocode', pollInterval: '500', pollIntervalSec: 2 })).eql({
      type: 'svc-bulk-geocode',
      pollInterval: '',
      pollIntervalSec: 0.5,
      partsSummary: true,
      version: 2,
    });
    should(migrated<FlowSettings>({ type: 'svc-isoline', pollInterval: 3, pollIntervalSec: '1' })).eql({
      type: 'svc-isoline',
      pollInterval: '',
      pollIntervalSec: 3,
      rangeType: 'payload.range.type',
      rangeTypeType: 'msg',
      rangeValue: 'payload.range.value',
      rangeValueType: 'msg',
      version: 2,
    });
    should(migrated<FlowSettings>({ type: 'svc-sequence', pollInterval: 3, pollIntervalSec: '1' })).eql({
      type: 'svc-sequence',
      pollInterval: '',
      pollIntervalSec: 3,
      departureFormat: 'zoned',
      version: 2,
    });
  });

  it('writes a sequence departure saved before version 2 in UTC with Z, and keeps local time chosen at version 2', function () {
    for (const departureFormat of ['local', 'zoned', undefined]) {
      should(migrated<FlowSettings>({ type: 'svc-sequence', version: 1, departureFormat })).eql(
        { type: 'svc-sequence', version: 2, departureFormat: 'zoned' },
        String(departureFormat),
      );
    }
    should(migrated<FlowSettings>({ type: 'svc-sequence', version: 2, departureFormat: 'local' })).eql({
      type: 'svc-sequence',
      version: 2,
      departureFormat: 'local',
    });
  });

  it('keeps pollIntervalSec where the legacy value is empty or unusable, as 1.0.0 read it', function () {
    for (const pollInterval of ['', 0, -1, 'soon', undefined]) {
      should(migrated<FlowSettings>({ type: 'svc-isoline', pollInterval, pollIntervalSec: '0.2' })).eql(
        {
          type: 'svc-isoline',
          pollInterval: '',
          pollIntervalSec: '0.2',
          rangeType: 'payload.range.type',
          rangeTypeType: 'msg',
          rangeValue: 'payload.range.value',
          rangeValueType: 'msg',
          version: 2,
        },
        String(pollInterval),
      );
    }
  });

  it('keeps a svc-isoline saved before version 2 without range settings reading them from the message; a set range stays (issue 54)', function () {
    should(migrated<FlowSettings>({ type: 'svc-isoline', version: 1 })).eql({
      type: 'svc-isoline',
      rangeType: 'payload.range.type',
      rangeTypeType: 'msg',
      rangeValue: 'payload.range.value',
      rangeValueType: 'msg',
      version: 2,
    });
    const fixed = { type: 'svc-isoline', version: 1, rangeType: 'distance', rangeTypeType: 'fixed', rangeValue: '900', rangeValueType: 'num' };
    should(migrated<FlowSettings>(fixed)).eql({ ...fixed, version: 2 });
    const current = { type: 'svc-isoline', version: 2 };
    should(migrated<FlowSettings>(current)).eql(current);
  });

  it('keeps a svc-topic saved before version 2 without an operation reading msg.operation; a set operation stays (issue 54)', function () {
    should(migrated<FlowSettings>({ type: 'svc-topic', version: 1 })).eql({ type: 'svc-topic', operation: 'operation', operationType: 'msg', version: 2 });
    should(migrated<FlowSettings>({ type: 'svc-topic' })).eql({ type: 'svc-topic', operation: 'operation', operationType: 'msg', version: 2 });
    const fixed = { type: 'svc-topic', version: 1, operation: 'create-topic', operationType: 'operation' };
    should(migrated<FlowSettings>(fixed)).eql({ ...fixed, version: 2 });
    const current = { type: 'svc-topic', version: 2 };
    should(migrated<FlowSettings>(current)).eql(current);
  });

  it('leaves settings already at their version alone, and never changes the flow’s own object', function () {
    const current = { type: 'svc-bulk-geocode', version: '2', pollInterval: '500', pollIntervalSec: '2' };
    should(migrated<FlowSettings>(current)).eql(current);
    const old = { type: 'svc-sequence', pollInterval: 2, name: 'n' };
    const copy = { ...old };
    should(migrated<FlowSettings>(old)).not.equal(old);
    should(old).eql(copy);
    should(migrated<FlowSettings>({ type: 'svc-geocode', name: 'g' })).eql({ type: 'svc-geocode', name: 'g', version: 1 });
  });

  it('keeps a 1.0.0 config node at one rate for every request: version 0 or 1 becomes rateScope all, its rateLimit untouched (issue 28)', function () {
    for (const version of [undefined, 0, 1, '1']) {
      should(migrated<FlowSettings>({ type: 'svc-config', version, rateLimit: '600', name: 'p' })).eql(
        { type: 'svc-config', rateLimit: '600', name: 'p', rateScope: 'all', platform: 'account', version: 3 },
        String(version),
      );
    }
    const current = { type: 'svc-config', version: 3, platform: 'account', rateScope: 'family', rateLimit: 80, rateTopics: 600 };
    should(migrated<FlowSettings>(current)).eql(current);
  });

  it('keeps a config node saved before the built-in sandbox on its account: version 2 becomes platform account; a new node stays on the sandbox (issue 52)', function () {
    should(migrated<FlowSettings>({ type: 'svc-config', version: 2, rateScope: 'family', baseUrl: 'https://api.example.com' })).eql({
      type: 'svc-config',
      rateScope: 'family',
      baseUrl: 'https://api.example.com',
      platform: 'account',
      version: 3,
    });
    // A flow written by hand with a platform before its version keeps it.
    should(migrated<FlowSettings>({ type: 'svc-config', version: 2, platform: 'sandbox' })).match({ platform: 'sandbox', version: 3 });
    const current = { type: 'svc-config', version: 3, platform: 'sandbox' };
    should(migrated<FlowSettings>(current)).eql(current);
  });

  it('runs the same table in the editor as at run time', function () {
    const samples: FlowSettings[] = [
      { type: 'svc-bulk-geocode', pollInterval: 2000 },
      { type: 'svc-isoline', pollInterval: '0.5', pollIntervalSec: 9 },
      { type: 'svc-config', name: 'platform' },
      { type: 'svc-config', version: 1, rateLimit: 80 },
      { type: 'svc-config', version: 2, rateScope: 'family' },
      { type: 'svc-sequence', version: 1, pollInterval: 7 },
    ];
    // Compared as JSON: the editor's objects are made in a context of their own, with its own Object.
    const { migrations } = runEditorScripts([...new Set(samples.map((settings) => settings.type))]);
    for (const settings of samples) should(JSON.stringify(migrations.get(settings.type)?.migrate(settings))).equal(JSON.stringify(migrated(settings)));
  });
});
