import fs from 'node:fs';
import path from 'node:path';
import should from 'should';
import { NODE_RED_5_NODE_22, NODE_RED_5_NODE_24 } from './support/node-red-5';
import { NODE_RED_4, NodeRedProcess, NodeRedRuntime } from './support/node-red-process';
import { REPO_ROOT, packageVersion } from './support/paths';
import { DebugMessage, Editor, FlowNode, Sidebar, descendants, importIntoNewFlow, listeningPorts, shownValue, writeSettings } from './support/palette';
import { Release, removeSharedRelease, sharedRelease } from './support/release';
import { waitUntil } from './support/wait';

/**
 * Part of `npm run test:package` (issue 52): the examples as a palette user meets them. The release's
 * tarball goes into a fresh Node-RED through the palette's admin API, on Node-RED 4.1 and 5 with
 * adminAuth (and 4.1 without); every example is imported as Import > Examples does, each on a tab of
 * its own, then deployed; each inject node is clicked as its button does, in the order a user follows,
 * and what the example's debug nodes show in the sidebar is its result, on the first click. No
 * credential or secret is typed, and nothing but Node-RED runs: no sandbox is started beside it.
 */

const MODULE = '@svc/node-red-location';
/** The Map example draws on worldmap, which a user installs from the palette as the example says. */
const WORLDMAP = 'node-red-contrib-web-worldmap';
/** The most a click may take to show its result (a job is polled; its result takes some seconds at most). */
const CLICK_TIMEOUT_MS = 30_000;
/** Node-RED's default address, as an example names it where it requests this Node-RED itself (the Map's streets). */
const DEFAULT_NODE_RED_URL = 'http://127.0.0.1:1880/';
/** Node-RED's log levels of a warning and an error, in the sidebar's messages. */
const LOG_WARN = 30;

const COMBINATIONS: Array<{ runtime: NodeRedRuntime; adminAuth: boolean }> = [
  { runtime: NODE_RED_4, adminAuth: true },
  { runtime: NODE_RED_4, adminAuth: false },
  { runtime: NODE_RED_5_NODE_22, adminAuth: true },
  { runtime: NODE_RED_5_NODE_24, adminAuth: true },
];

type Fields = Record<string, unknown>;
const num = (value: unknown) => should(value).be.a.Number();
const position = (value: unknown) => (num((value as Fields).lat), num((value as Fields).lon));
/** An active subscription whose webhook address is `address`. */
const subscribedAt = (subscription: Fields, address: string) => should(subscription).match({ active: true, webhookAddress: address });
const features = (value: unknown) => (value as { features: Array<{ geometry: Fields; properties: Fields }> }).features;

/** One click and what it shows. */
interface Click {
  /** The inject node whose button is clicked. */
  inject: string;
  /** What each debug node then shows (the member it shows, or the whole message), checked; `nodeRedUrl` ends with a slash. */
  shows: Record<string, (shown: Fields, nodeRedUrl: string) => void>;
  /** Status text a node then shows. */
  status?: Record<string, RegExp>;
}

interface ExampleRun {
  clicks: Click[];
  /** Requests to the pages the example serves, for an example with no inject node. */
  pages?: (nodeRedUrl: string) => Promise<void>;
  /** Nodes that end with a red status, for an example that shows an error on purpose. */
  red?: string[];
}

/** How a user tries each example, in the order its comment gives, and what each click shows. */
const RUNS: Record<string, ExampleRun> = {
  'bulk-geocode-addresses': {
    clicks: [
      {
        inject: 'ex-bulk-inject-list',
        shows: {
          'ex-bulk-debug': (rows) => {
            should(rows).be.an.Array().with.length(5);
            should((rows as unknown as Fields[]).filter((row) => typeof row.error === 'string').map((row) => row.input)).eql(['nowhere at all']);
          },
          'ex-bulk-jobs': (jobs) => should(jobs).be.an.Array().and.not.be.empty(),
        },
      },
      {
        inject: 'ex-bulk-inject-csv',
        shows: {
          'ex-bulk-debug': (rows) => should((rows as unknown as Fields[]).map((row) => (row.input as Fields).customer)).eql(['Ada', 'Grace', 'Linus', 'Ken']),
          'ex-bulk-jobs': (jobs) => should(jobs).be.an.Array().and.not.be.empty(),
        },
      },
    ],
  },
  'geocode-an-address': {
    clicks: [
      { inject: 'ex-geocode-inject', shows: { 'ex-geocode-debug': position }, status: { 'ex-geocode-debug': /^[0-9a-z]{9}$/ } },
      { inject: 'ex-geocode-inject-landmark', shows: { 'ex-geocode-debug': position } },
    ],
  },
  'isoline-from-a-position': {
    clicks: [
      {
        inject: 'ex-isoline-inject',
        shows: {
          'ex-isoline-debug': (geojson) =>
            should(features(geojson).map((f) => f.properties.range)).eql([
              { type: 'time', value: 300 },
              { type: 'time', value: 600 },
            ]),
        },
      },
      { inject: 'ex-isoline-inject-async', shows: { 'ex-isoline-debug': (geojson) => should(features(geojson)).have.length(2) } },
    ],
  },
  'map-every-result': {
    clicks: [
      { inject: 'ex-map-inject-geocode', shows: { 'ex-map-debug': (msg) => position(msg.location) } },
      { inject: 'ex-map-inject-words', shows: { 'ex-map-debug': (msg) => position(msg.location) } },
      { inject: 'ex-map-inject-sequence', shows: { 'ex-map-debug': (msg) => should(msg.order).have.length(5) } },
      { inject: 'ex-map-inject-isoline', shows: { 'ex-map-debug': (msg) => should(features(msg.geojson)).have.length(2) } },
      { inject: 'ex-map-inject-route', shows: { 'ex-map-debug': (msg) => should(features(msg.geojson)).not.be.empty() } },
      { inject: 'ex-map-inject-bulk', shows: { 'ex-map-debug': (msg) => should(msg.payload).be.an.Array().with.length(5) } },
      { inject: 'ex-map-inject-streets', shows: {}, status: { 'ex-map-streets-layer': /^\d+ streets drawn$/ } },
    ],
  },
  'route-with-instructions': {
    clicks: ['ex-route-inject', 'ex-route-inject-indoor'].map((inject) => ({
      inject,
      shows: {
        'ex-route-debug-instructions': (instructions) => should(instructions).be.an.Array().and.not.be.empty(),
        'ex-route-debug-summary': (summary) => num(summary.length),
        'ex-route-debug-geojson': (geojson) => should(features(geojson)).not.be.empty(),
      },
    })),
  },
  'scenario-csv-bulk-geocode': {
    clicks: [{ inject: 'ex-csvbulk-start', shows: { 'ex-csvbulk-done': (file) => should(file).match(/svc-addresses-geocoded\.csv$/) } }],
  },
  'scenario-delivery-route': {
    clicks: [
      {
        inject: 'ex-delivery-inject',
        shows: {
          'ex-delivery-instructions': (instructions) => should(instructions).be.an.Array().and.not.be.empty(),
          // Five stops: four legs, each with at least a departure and an arrival.
          'ex-delivery-summary': (summary) => should(summary.segments).be.aboveOrEqual(8),
        },
      },
    ],
  },
  'scenario-sensor-webhook': {
    clicks: [
      {
        inject: 'ex-sensor-setup',
        shows: { 'ex-sensor-subscribed': (subscription, url) => subscribedAt(subscription, `${url}svc-sensor-readings`) },
      },
      {
        inject: 'ex-sensor-tick',
        shows: {
          'ex-sensor-published': (response) => should(response).match({ isSuccess: true, data: { subscriptions: 1 } }),
          'ex-sensor-received': (reading) => should(JSON.stringify(reading)).containEql('greenhouse-1'),
        },
      },
    ],
  },
  'scenario-three-words-form': {
    clicks: [],
    pages: async (nodeRedUrl) => {
      const form = await fetch(`${nodeRedUrl}three-words`);
      should(form.status).equal(200);
      const found = await fetch(`${nodeRedUrl}three-words`, { method: 'POST', body: new URLSearchParams({ words: 'index.home.raft' }) });
      should(found.status).equal(200);
      should(await found.text()).match(/Latitude -?\d/);
    },
  },
  'scenario-vehicle-isoline': {
    clicks: [
      {
        inject: 'ex-vehicle-tick',
        shows: { 'ex-vehicle-area': (geojson) => should(features(geojson).map((f) => f.properties.range)).eql([{ type: 'time', value: 600 }]) },
      },
    ],
  },
  'sequence-delivery-stops': {
    clicks: [
      {
        inject: 'ex-sequence-inject',
        // The example's comment promises this order.
        shows: {
          'ex-sequence-debug-order': (order) => should(order).eql([0, 2, 4, 1, 3]),
          'ex-sequence-debug-geojson': (geojson) => should(features(geojson)).not.be.empty(),
        },
      },
    ],
  },
  'three-words-to-location': {
    clicks: [
      { inject: 'ex-words-inject', shows: { 'ex-words-debug': position }, status: { 'ex-words-debug': /^[0-9a-z]+$/ } },
      { inject: 'ex-words-inject-unicode', shows: { 'ex-words-debug': position } },
      // The third button shows an unknown address reaching the Catch node.
      { inject: 'ex-words-inject-unknown', shows: { 'ex-words-error': (error) => should(error.code).equal('NOT_FOUND') } },
    ],
    red: ['ex-words-node'],
  },
  'topic-management': {
    clicks: [
      { inject: 'ex-topics-create', shows: { 'ex-topics-response': (topic) => num(topic.id) } },
      { inject: 'ex-topics-list', shows: { 'ex-topics-response': (page) => should(page.items).not.be.empty() } },
      { inject: 'ex-topics-get', shows: { 'ex-topics-response': (topic) => should(topic.name).equal('deliveries') } },
      { inject: 'ex-topics-subscribe', shows: { 'ex-topics-response': (subscription) => num(subscription.topicId) } },
      { inject: 'ex-topics-list-all', shows: { 'ex-topics-response': (page) => should(page.items).have.length(page.totalCount as number) } },
      // A delete's response has no data: the debug node shows msg.payload undefined.
      { inject: 'ex-topics-delete', shows: { 'ex-topics-response': (payload) => should(payload).match({ deleted: true }) } },
      // The deleted topic is unknown: the error reaches the Catch node.
      { inject: 'ex-topics-get', shows: { 'ex-topics-errors': (msg) => should((msg.error as Fields).message).be.a.String() } },
    ],
    red: ['ex-topics-node'],
  },
  'topic-publish': {
    clicks: [
      { inject: 'ex-publish-create', shows: { 'ex-publish-created': (topic) => num(topic.id) } },
      { inject: 'ex-publish-inject', shows: { 'ex-publish-response': (msg) => should(msg).match({ statusCode: 200, payload: { isSuccess: true } }) } },
    ],
  },
  'webhook-round-trip': {
    clicks: [
      { inject: 'ex-roundtrip-start', shows: { 'ex-roundtrip-subscribed': (subscription, url) => subscribedAt(subscription, `${url}svc-round-trip`) } },
      {
        inject: 'ex-roundtrip-publish',
        shows: {
          'ex-roundtrip-published': (response) => should(response).match({ isSuccess: true, data: { subscriptions: 1 } }),
          'ex-roundtrip-received': (msg) => (should(JSON.stringify(msg.payload)).containEql('21.5'), num((msg.webhook as Fields).timestamp)),
        },
      },
    ],
  },
};

after(removeSharedRelease);

describe('every example, from Import > Examples of a fresh Node-RED with the release installed from the palette, gives its result on the first click', function () {
  let release: Release;
  /** The examples the tarball ships, by the name Import > Examples lists. */
  let packedExamples: string[];

  before(async function () {
    release = await sharedRelease();
    packedExamples = release.packed.files
      .map((file) => /^examples\/([\w-]+)\.json$/.exec(file.path)?.[1])
      .filter((name): name is string => name !== undefined)
      .sort();
  });

  it('knows how a user tries every packed example, and clicks every inject node that is not off', function () {
    should(Object.keys(RUNS).sort()).eql(packedExamples);
    const notClicked = packedExamples.flatMap((name) => {
      const flow = JSON.parse(fs.readFileSync(path.join(release.cloneDir, 'examples', `${name}.json`), 'utf8')) as FlowNode[];
      const clicked = new Set(RUNS[name].clicks.map((click) => click.inject));
      return flow.filter((node) => node.type === 'inject' && node.d !== true && !clicked.has(node.id)).map((node) => `${name}: ${node.id}`);
    });
    should(notClicked).be.empty();
  });

  for (const { runtime, adminAuth } of COMBINATIONS) {
    describe(`${runtime.title}, ${adminAuth ? 'with' : 'without'} adminAuth`, function () {
      let nodeRed: NodeRedProcess | undefined;
      let editor: Editor;
      let sidebar: Sidebar | undefined;
      let examples: Map<string, FlowNode[]>;
      let deployed: FlowNode[];
      /** Per example, the id each of its nodes got on import (new ones from the second import on: Import copy). */
      const importedIds = new Map<string, Map<string, string>>();
      /** What this Node-RED logged on its empty user directory: its own first-start notices. */
      let baselineProblems: string[];
      let started = 0;
      const running = (): NodeRedProcess => {
        if (!nodeRed) throw new Error('Node-RED is not running');
        return nodeRed;
      };
      const opened = (): Sidebar => {
        if (!sidebar) throw new Error('the sidebar is not open');
        return sidebar;
      };

      before(async function () {
        runtime.prepare();
        started = Date.now();
        const userDir = path.join(release.workDir, `examples-node${runtime.nodeMajor}${adminAuth ? '-auth' : ''}`);
        fs.mkdirSync(userDir);
        writeSettings(userDir, runtime, adminAuth);
        nodeRed = await NodeRedProcess.start(userDir, runtime, 90_000);
        baselineProblems = nodeRed.problems();
        editor = await Editor.open(nodeRed);
        await editor.upload(release.tarball);
        await editor.install(WORLDMAP, packageVersion(path.join(REPO_ROOT, 'node_modules', WORLDMAP)));
        examples = await editor.examples(MODULE);
        sidebar = await editor.sidebar();
        const { flows, rev } = await editor.flows();
        let workspace = flows;
        for (const [name, example] of examples) {
          const imported = importIntoNewFlow(workspace, example, name);
          workspace = imported.workspace;
          importedIds.set(name, imported.ids);
        }
        // The Map's streets request names Node-RED's default address; its comment tells a user elsewhere to change it, as here.
        const nodeRedUrl = nodeRed.url;
        workspace = workspace.map((node) =>
          typeof node.url === 'string' && node.url.startsWith(DEFAULT_NODE_RED_URL)
            ? { ...node, url: nodeRedUrl + node.url.slice(DEFAULT_NODE_RED_URL.length) }
            : node,
        );
        await editor.deploy(workspace, rev);
        deployed = (await editor.flows()).flows;
      });

      after(async function () {
        sidebar?.close();
        await nodeRed?.stop(10_000);
        console.log(`      ${runtime.title}${adminAuth ? ' with adminAuth' : ''}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
      });

      if (adminAuth) {
        it('refuses the admin API without the login, and the comms websocket took the token', async function () {
          should((await running().request('/flows')).status).equal(401);
          should(editor.token).be.a.String();
        });
      }

      it('lists every packed example under Import > Examples', function () {
        should([...examples.keys()]).eql(packedExamples);
      });

      it('deploys each example on a tab of its own, with one shared config node: Import copy of the others adds none', function () {
        should(deployed.filter((node) => node.type === 'tab')).have.length(packedExamples.length);
        should(deployed.filter((node) => node.type === 'svc-config').map((node) => node.id)).eql(['svc-sandbox']);
        const configs = [...examples.values()].map((flow) => JSON.stringify(flow.find((node) => node.type === 'svc-config')));
        should(new Set(configs).size).equal(1);
      });

      /** The debug nodes Catch nodes send to. */
      const catchFed = () => new Set(deployed.filter((node) => node.type === 'catch').flatMap((node) => node.wires?.flat() ?? []));
      /** An error: a node's logged warning or error, or a message at a Catch node's debug node that no expectation awaits. */
      const isError = (awaited: string[]) => (message: DebugMessage) =>
        (message.level !== undefined && message.level <= LOG_WARN) || (catchFed().has(message.id ?? '') && !awaited.includes(message.id ?? ''));

      for (const [name, run] of Object.entries(RUNS)) {
        it(`${name}: ${run.clicks.length > 0 ? 'each click shows its result' : 'its pages respond'}`, async function () {
          const id = (exampleId: string) => importedIds.get(name)?.get(exampleId) ?? exampleId;
          const problems: string[] = [];
          for (const click of run.clicks) {
            opened().clicking();
            await editor.click(id(click.inject));
            for (const [debugId, check] of Object.entries(click.shows)) {
              let shown: unknown;
              try {
                shown = shownValue(await opened().next(id(debugId), CLICK_TIMEOUT_MS, isError(Object.keys(click.shows).map(id))));
                check(shown as Fields, running().url);
              } catch (err) {
                problems.push(`${click.inject} -> ${debugId}: ${(err as Error).message}; shown: ${JSON.stringify(shown)?.slice(0, 300)}`);
              }
            }
            for (const [nodeId, text] of Object.entries(click.status ?? {})) {
              const shown = () => text.test(opened().status(id(nodeId))?.text ?? '');
              await waitUntil(shown, `${nodeId}'s status`, CLICK_TIMEOUT_MS).catch(() => undefined);
              if (!shown()) problems.push(`${click.inject}: status of ${nodeId} is ${JSON.stringify(opened().status(id(nodeId)))}`);
            }
          }
          if (run.pages) await run.pages(running().url);
          should(problems).be.empty();
        });
      }

      it('shows no error but those the examples show on purpose: nothing else at a Catch node or in the log, no other red status', function () {
        const unexpected = opened().untaken(isError([]));
        const logged = running()
          .problems()
          .filter((line) => !baselineProblems.includes(line));
        should(logged).be.empty();
        should(unexpected.map((message) => JSON.stringify(message).slice(0, 300))).be.empty();
        const allowedRed = new Set(Object.entries(RUNS).flatMap(([name, run]) => (run.red ?? []).map((id) => importedIds.get(name)?.get(id) ?? id)));
        const red = deployed.filter((node) => opened().status(node.id)?.fill === 'red' && !allowedRed.has(node.id));
        should(red.map((node) => `${node.id}: ${opened().status(node.id)?.text}`)).be.empty();
      });

      it('runs the sandbox inside Node-RED: no other process, no port but its own', function () {
        const pid = running().pid as number;
        // This test started Node-RED and nothing else; Node-RED started nothing that still runs.
        should(descendants(process.pid)).eql([pid]);
        should(listeningPorts(pid)).eql([running().port]);
      });
    });
  }
});
