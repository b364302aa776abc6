import fs from 'node:fs';
import path from 'node:path';
import should from 'should';
import { Sandbox, startSandbox } from '../../sandbox';
import { NodeRedProcess, runtimeUnderTest } from '../support/node-red-process';
import { Collector, deploy, reportingFlow, startMessage, userDirWithPack } from '../support/process-flows';
import type { Fields } from '../support/harness';

/**
 * Runtime texts in a real Node-RED (4.1 under `npm test`, 5 under `npm run test:nr5`) whose language
 * is Japanese, with the pack installed as a module: Node-RED registers each node set's catalog under
 * its own namespace, and a node's texts come from its own catalog and svc-config's `common` one.
 */

const RUNTIME = runtimeUnderTest();

describe(`runtime texts in a real ${RUNTIME.title} set to Japanese`, function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let dir: ReturnType<typeof userDirWithPack>;
  let nodeRed: NodeRedProcess;
  const collector = new Collector();

  before(async function () {
    sandbox = await startSandbox();
    await collector.start();
    dir = userDirWithPack();
    fs.writeFileSync(path.join(dir.userDir, 'settings.js'), "module.exports = { lang: 'ja', logging: { console: { level: 'info' } } };\n");
    nodeRed = await NodeRedProcess.start(dir.userDir, RUNTIME);
  });
  after(async function () {
    await nodeRed?.stop(10_000);
    await collector.close();
    await sandbox?.close();
    dir?.remove();
  });

  /** The error message the node under test reports for `payload`. */
  async function errorFor(node: Fields, payload: unknown): Promise<unknown> {
    await deploy(nodeRed, reportingFlow(sandbox, collector.url, node, '() => ({})'));
    const before = collector.reports.length;
    await startMessage(nodeRed, 'ja', payload);
    const [report] = (await collector.waitFor(before + 1, 30_000)).slice(before);
    return report.error;
  }

  it("reads a node's own text from its catalog and the advice from the common one", async function () {
    should(await errorFor({ type: 'svc-geocode', address: 'payload', addressType: 'msg' }, '   ')).equal(
      'address が空です。メッセージかノードの設定を直してください',
    );
  });

  it('reads a text of a lower layer from the common catalog, the element named in Japanese', async function () {
    const waypoints = [
      { lat: 52.52, lon: 13.405 },
      { lat: 91, lon: 13 },
    ];
    should(await errorFor({ type: 'svc-route' }, { waypoints })).equal('経由地 2: 緯度 91 が範囲外です。メッセージかノードの設定を直してください');
  });
});
