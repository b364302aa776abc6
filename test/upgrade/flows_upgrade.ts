import fs from 'node:fs';
import path from 'node:path';
import should from 'should';
import { Sandbox, startSandbox } from '../../sandbox';
import type { Fields } from '../support/harness';
import { NodeRedProcess, runtimeUnderTest } from '../support/node-red-process';
import { FIXTURE_CREDENTIALS, fixtureNodes } from '../support/flows-1.0.0';
import { NODES_DIR } from '../support/paths';
import { deploy, userDirWithPack } from '../support/process-flows';

/**
 * A flows file written by 1.0.0 (test/fixtures/flows-1.0.0.json) imported through the editor and
 * deployed without opening a dialog, on a real Node-RED: the editor's import (Import > Clipboard,
 * `RED.view.importNodes` without `applyNodeDefaults`) keeps of each node only the members its type
 * defines now, leaves out the ones the file does not set (no `version`: the dialog's migration never
 * ran), and Deploy posts that to `POST /flows`. Each node then behaves as its owner set it; in
 * particular svc-config's one rate for every request (1.0.0's `rateLimit`, `rateScope` 'all' after
 * its migration), not the rate of single geocodes with every other family unlimited.
 * test/flows/flows_1_0_0_spec.ts runs the same file loaded as written, in the test helper.
 */

/** The members Node-RED's editor keeps of every node besides its type's defaults (RED.nodes.convertNode). */
const FRAME = ['id', 'type', 'z', 'g', 'x', 'y', 'wires', 'd'];
/** The fixture's svc-config: 600 requests a minute, one every 100 ms. */
const INTERVAL_MS = 100;

/** What the editor holds of a pack node after importing it: the members its type defines, those set in the file. */
function asImported(node: Fields): Fields {
  const type = String(node.type);
  const definition = path.join(NODES_DIR, type, 'defaults.js');
  if (!fs.existsSync(definition)) return node;
  const { defaults, credentials = {} } = require(definition) as { defaults: Fields; credentials?: Fields };
  // `version`: the editor's defaults have it too (the build adds it, from the type's migrations).
  const kept = [...FRAME, 'version', ...Object.keys(defaults), ...(Object.keys(credentials).length > 0 ? ['credentials'] : [])];
  return Object.fromEntries(Object.entries(node).filter(([name, value]) => kept.includes(name) && value !== undefined));
}

/**
 * The 1.0.0 file as the editor deploys it after an import, with the credentials (entered once, as the
 * deploy then carries them), and what the test adds to the same tab: `POST /fire` sends
 * `msg.query` of each item of the body to the node it names.
 */
function importedFlows(sandbox: Sandbox): Fields[] {
  const file = fixtureNodes<Fields>(sandbox.url);
  const credentials: Record<string, Fields> = FIXTURE_CREDENTIALS;
  const imported = file.map((node) => asImported(credentials[String(node.id)] ? { ...node, credentials: credentials[String(node.id)] } : node));
  const tab = String(file.find((node) => node.type === 'tab')?.id);
  const targets = ['geocode', 'words', 'route'];
  return [
    ...imported,
    { id: 'fire', type: 'http in', z: tab, url: '/fire', method: 'post', x: 100, y: 400, wires: [['fire-split', 'fire-reply']] },
    { id: 'fire-reply', type: 'http response', z: tab, statusCode: '202', x: 300, y: 440, wires: [] },
    {
      id: 'fire-split',
      type: 'function',
      z: tab,
      x: 300,
      y: 400,
      outputs: targets.length,
      func: `const targets = ${JSON.stringify(targets)};\nfor (const item of msg.payload) {\n  const out = targets.map(() => null);\n  out[targets.indexOf(item.node)] = { query: item.query };\n  node.send(out);\n}\nreturn null;`,
      wires: targets.map((target) => [target]),
    },
  ];
}

describe('a 1.0.0 flows file imported through the editor and deployed without opening a dialog, on a real Node-RED', function () {
  let sandbox: Sandbox;
  let dir: { userDir: string; remove: () => void };
  let nodeRed: NodeRedProcess;

  before(async function () {
    sandbox = await startSandbox();
    dir = userDirWithPack();
    nodeRed = await NodeRedProcess.start(dir.userDir, runtimeUnderTest());
  });

  after(async function () {
    await nodeRed?.stop(10_000);
    await sandbox?.close();
    dir?.remove();
  });

  it('starts every node of the file with nothing logged as a warning or an error', async function () {
    const before = nodeRed.log.length;
    await deploy(nodeRed, importedFlows(sandbox));
    const logged = nodeRed.log.slice(before).filter((line) => /\[(warn|error)\] \[svc-/.test(line));
    should(logged).eql([]);
  });

  it('keeps one rate for every request, as its owner set in 1.0.0: single geocodes, three-word lookups and routes share its 100 ms slots', async function () {
    const fire = async (items: Fields[]) => {
      const response = await nodeRed.request('/fire', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(items) });
      should(response.status).equal(202);
    };
    const paced = (from: number) => sandbox.log.slice(from).filter((request) => ['geocode', 'words', 'route'].includes(request.endpoint));
    const arrived = async (from: number, count: number) => {
      const deadline = Date.now() + 10_000;
      while (paced(from).length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      return paced(from);
    };
    // One request first, so that the token is there and no request of the burst waits for it.
    const first = sandbox.log.length;
    await fire([{ node: 'geocode', query: '1 Warm-up Street, Sandbox City' }]);
    await arrived(first, 1);
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS));
    const sent = sandbox.log.length;
    const items = [0, 1, 2].flatMap((i) => [
      { node: 'geocode', query: `${10 + i} Rate Street, Sandbox City` },
      { node: 'words', query: 'index.home.raft' },
      {
        node: 'route',
        query: [
          [13.405, 52.52],
          [13.38 + i / 100, 52.5],
        ],
      },
    ]);
    await fire(items);
    const requests = await arrived(sent, items.length);
    should(requests).have.length(items.length);
    should(new Set(requests.map((request) => request.endpoint))).have.size(3);
    // One schedule for all three families: the nine over about eight slots, the middle gap about one slot (the
    // sandbox sees when they arrive, not when they were sent: one may come some tens of ms late). With a rate
    // for single geocodes alone, the three-word lookups and routes arrive at once: 0.2 s for all, gaps of a few ms.
    const times = requests.map((request) => request.time);
    const gaps = times.slice(1).map((time, i) => time - times[i]);
    const median = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)];
    should(median).be.aboveOrEqual(INTERVAL_MS * 0.8, `gaps ${JSON.stringify(gaps)}`);
    should(times[times.length - 1] - times[0]).be.aboveOrEqual((items.length - 1) * INTERVAL_MS * 0.8, `gaps ${JSON.stringify(gaps)}`);
  });
});
