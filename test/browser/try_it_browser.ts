import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import should from 'should';
import { NODE_RED_5_NODE_22, NodeRed5Install } from '../support/node-red-5';
import { NpmStart, StartPorts, freeStartPorts } from '../support/npm-start';
import { REPO_ROOT } from '../support/paths';
import { Editor, eventually } from './editor';
import { BrowserSession, packProblems } from './environment';
import type { EditorWindow } from './page-types';
import { openMap, waitForShapes } from './worldmap-page';

/**
 * README's "Try it without an account", walked as written, in Chromium: `npm start` (the built
 * start script, on free ports and a user directory of the test's own), the editor opening on the Map
 * tab, /worldmap opened first, then the Map tab's injects clicked in the order the README lists the
 * six result kinds, each drawn on the map and shown in the debug sidebar; a flow made in the editor
 * and a sandbox topic made by an example's button, both still there after two restarts (issue 29).
 * Walked with the Node-RED of this repository (4.1), as `npm start` runs, and with Node-RED 5 on Node 22
 * (the start script with that install's Node and NODE_RED_PATH, as CONTRIBUTING describes).
 */

const README = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
const TRY_IT = README.slice(README.indexOf('## Try it without an account'), README.indexOf('## Configure the platform')).replace(/\s+/g, ' ');

/** The six result kinds in the order the README's Map steps name them, with the inject that draws each and its layer. */
const RESULTS: Array<{ words: string; inject: string; layer: string }> = [
  { words: 'a geocoded address', inject: 'ex-map-inject-geocode', layer: 'geocoded addresses' },
  { words: 'a three-word cell', inject: 'ex-map-inject-words', layer: 'three-word cells' },
  { words: 'a numbered delivery order', inject: 'ex-map-inject-sequence', layer: 'visiting orders' },
  { words: 'isoline polygons', inject: 'ex-map-inject-isoline', layer: '5 and 10 minutes by car' },
  { words: 'a route with an indoor stretch', inject: 'ex-map-inject-route', layer: 'routes' },
  { words: 'the rows of a bulk job', inject: 'ex-map-inject-bulk', layer: 'bulk geocode rows' },
];

const SENSOR_TOPIC = 'greenhouse sensors';

/** The Node-RED npm start runs: its own (4.1), and Node-RED 5 on Node 22. */
const TARGETS: Array<{ title: string; nodeRed5?: NodeRed5Install }> = [
  { title: 'Node-RED 4.1' },
  { title: NODE_RED_5_NODE_22.title, nodeRed5: NODE_RED_5_NODE_22 },
];

for (const target of TARGETS) {
  describe(`README's try-it section walked in a real browser (Chromium, npm start with ${target.title})`, function () {
    this.timeout(300_000);
    let userDir = '';
    let ports: StartPorts;
    let npmStart: NpmStart | undefined;
    let session: BrowserSession | undefined;

    before(async function () {
      userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'try-it-'));
      ports = await freeStartPorts();
      npmStart = await NpmStart.start(userDir, [], ports, target.nodeRed5);
      // The Node-RED and Node the walk is meant to run on.
      const log = npmStart.output.join('\n');
      should(log).match(target.nodeRed5 ? /Node-RED version: v5\./ : /Node-RED version: v4\.1\./);
      should(log).match(new RegExp(`Node\\.js\\s+version: v${target.nodeRed5?.nodeMajor ?? process.versions.node.split('.')[0]}\\.`));
      session = await BrowserSession.launch('en-US');
    });

    after(async function () {
      await session?.close();
      await npmStart?.stop();
      fs.rmSync(userDir, { recursive: true, force: true });
    });

    const running = (): { start: NpmStart; page: Page } => {
      if (!npmStart || !session) throw new Error('npm start or the browser is not running');
      return { start: npmStart, page: session.page };
    };
    const editorOf = (): Editor => new Editor(running().page, `${running().start.editorUrl}/`);
    const restart = async (): Promise<void> => {
      should(await npmStart?.stop()).equal(0);
      npmStart = await NpmStart.start(userDir, [], ports, target.nodeRed5);
    };
    const topics = async (): Promise<string[]> => {
      const response = await fetch(`${running().start.sandboxUrl}/v1/pubsub/topics?limit=100`, {
        headers: { apikey: running().start.sandboxKeys().pubsubApiKey },
      });
      return ((await response.json()) as { data: { items: Array<{ name: string }> } }).data.items.map((topic) => topic.name);
    };

    it('the README names the six result kinds in the order the Map tab draws them, /worldmap opened first', function () {
      const positions = RESULTS.map((result) => TRY_IT.indexOf(result.words));
      should(positions.every((position) => position > 0)).be.true(`every result kind in the try-it section: ${positions.join(', ')}`);
      should([...positions].sort((a, b) => a - b)).eql(positions);
      should(TRY_IT.indexOf('1. Open http://127.0.0.1:1880/worldmap')).be.below(TRY_IT.indexOf('2. Back in the editor, click the injects'));
    });

    it('opens on the Map tab; with /worldmap open, each inject clicked in that order draws its result and the debug sidebar shows it', async function () {
      const editor = editorOf();
      await editor.open();
      const { page } = running();
      should(
        await page.evaluate(() => {
          const { RED } = globalThis as unknown as EditorWindow;
          return RED.nodes.workspace(RED.workspaces.active())?.label;
        }),
      ).equal('Map');
      const map = await (session as BrowserSession).newPage();
      try {
        await openMap(map, `${running().start.editorUrl}/worldmap/`);
        await editor.showDebugOfCurrentFlow();
        for (const [i, result] of RESULTS.entries()) {
          await editor.clickInject(result.inject);
          should((await waitForShapes(map, result.layer, 1)).length).be.above(0, `${result.layer} drawn`);
          should(await eventually(async () => (await editor.debugMessageCount()) >= i + 1)).be.true(`the debug sidebar shows ${result.layer}`);
        }
      } finally {
        await map.close();
      }
    });

    it('a flow made in the editor and the topic an example made survive two restarts', async function () {
      const editor = editorOf();
      const { page } = running();
      // A tab of one's own with an inject node, deployed from the editor.
      await page.evaluate(() => (globalThis as unknown as EditorWindow).RED.actions.invoke('core:add-flow'));
      const tab = await page.evaluate(() => (globalThis as unknown as EditorWindow).RED.workspaces.active());
      const inject = await editor.addNode('inject');
      await editor.deploy();
      // The sensor example's "set up (once)" creates its topic in the sandbox.
      const [setUp] = await page.evaluate(() =>
        (globalThis as unknown as EditorWindow).RED.nodes
          .filterNodes({ type: 'inject' })
          .filter((node) => (node as unknown as { name?: string }).name === 'set up (once)')
          .map((node) => ({ id: node.id, z: (node as unknown as { z: string }).z })),
      );
      await page.click(`#red-ui-tab-${setUp.z} a`);
      await editor.clickInject(setUp.id);
      should(await eventually(async () => (await topics()).includes(SENSOR_TOPIC))).be.true('the sensor example made its topic');

      for (const time of [1, 2]) {
        await restart();
        should(running().start.banner()).match(/kept as they were: 1 tab\(s\), 1 other node\(s\)/);
        await editor.open();
        const kept = await page.evaluate(
          ({ tabId, injectId }) => {
            const { RED } = globalThis as unknown as EditorWindow;
            return { tab: RED.nodes.workspace(tabId) !== null, inject: RED.nodes.node(injectId) !== null };
          },
          { tabId: tab, injectId: inject },
        );
        should(kept).eql({ tab: true, inject: true }, `after restart ${time}`);
        should(await topics()).containEql(SENSOR_TOPIC);
      }
      should(packProblems((session as BrowserSession).console)).eql([]);
    });
  });
}
