import fs from 'node:fs';
import path from 'node:path';
import type { Page, Response } from 'playwright-core';
import should from 'should';
import { SANDBOX_DEFAULTS } from '../../sandbox';
import { Editor, eventually, SERVER_TIMEOUT_MS } from './editor';
import {
  BrowserSession,
  CONFIG_TYPE,
  ConsoleEntry,
  coreNoise,
  EditorServer,
  EXAMPLE_NAMES,
  NODE_TYPES,
  PACKAGE,
  packMentioned,
  packProblems,
  PALETTE_TYPES,
  publishReadmeImage,
  TARGETS,
  usePackedModule,
  writeConsoleReport,
} from './environment';
import type { EditorWindow, PageElement } from './page-types';
import { defaults as configDefaults } from '../../nodes/svc-config/defaults';
import type { Defaults } from '../../nodes/lib/node-red/editor-definition';
import { REPO_ROOT, SOURCE_NODES_DIR } from '../support/paths';
import type { BuiltinSandboxKeys } from '../support/npm-start';

/**
 * `npm run test:browser`: the pack in Node-RED's editor, in Debian's Chromium, as a user meets it:
 * installed from the packed tarball, on Node-RED 4.1 (Node 20) and Node-RED 5 (Node 22), in English
 * and Japanese, and in Node-RED 5's dark theme. Screenshots go to test/artifacts/browser/.
 */

type Catalog = Record<string, Record<string, Record<string, string>>>;
const CONFIG_CATALOG = JSON.parse(fs.readFileSync(path.join(SOURCE_NODES_DIR, CONFIG_TYPE, 'locales', 'en-US', `${CONFIG_TYPE}.json`), 'utf8')) as Catalog;
const TEST_TEXT = CONFIG_CATALOG[CONFIG_TYPE].test;
const SECRETS = [SANDBOX_DEFAULTS.clientSecret, SANDBOX_DEFAULTS.apiKey, SANDBOX_DEFAULTS.pubsubApiKey];
/** What Node-RED puts in a password input for a credential it has stored: never the value itself. */
const PASSWORD_PLACEHOLDER = '__PWRD__';
const PASSWORD_CREDENTIALS = ['clientSecret', 'apiKey', 'pubsubApiKey'];
const JAPANESE = /[\u3040-\u30ff\u3400-\u9fff]/;

/** The palette label of a node type: the type without `svc-`, words separated by spaces. */
function paletteLabel(type: string): string {
  return type === CONFIG_TYPE ? type : type.replace(/^svc-/, '').replace(/-/g, ' ');
}

/** The nodes with a Map output (a second output for worldmap). */
const MAP_OUTPUT_TYPES = ['svc-geocode', 'svc-words', 'svc-bulk-geocode', 'svc-isoline', 'svc-sequence', 'svc-route'];

/** A node's Map output settings as the editor holds them, and the label of its second port. */
function mapSettings(editor: Editor, id: string): Promise<{ outputs: unknown; worldmap: unknown; layer: unknown; portLabel: unknown }> {
  return editor.page.evaluate((nodeId) => {
    type MapNode = { outputs: number; worldmap: boolean; worldmapLayer: string; _def: { outputLabels(this: unknown, index: number): string } };
    const { RED } = globalThis as unknown as EditorWindow;
    const node = RED.nodes.node(nodeId) as unknown as MapNode;
    return { outputs: node.outputs, worldmap: node.worldmap, layer: node.worldmapLayer, portLabel: node._def.outputLabels.call(node, 1) };
  }, id);
}

/** "Failed (__code__): __message__" as a pattern for the given code. */
/** What "Test connection" shows when the token, the API key and the topics key all work (in the runtime's language, English here). */
const ALL_ACCEPTED = 'token ✓ · API key ✓ · topics key ✓';

type ExampleNode = { type: string; name?: string; info?: string };

function readExample(name: string): ExampleNode[] {
  return JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'examples', `${name}.json`), 'utf8')) as ExampleNode[];
}

/**
 * `type:name` of the pack's nodes that an example's Comment node names and asks to be given a
 * credential: the only nodes an example may leave invalid, or erroring at deploy, until the user does.
 */
const CREDENTIAL_NODES = new Set(
  EXAMPLE_NAMES.flatMap((name) => {
    const nodes = readExample(name);
    const comment = nodes
      .filter((n) => n.type === 'comment')
      .map((n) => `${n.name ?? ''}\n${n.info ?? ''}`)
      .join('\n');
    if (!/secret|credential|password|key/i.test(comment)) return [];
    return nodes.filter((n) => n.type.startsWith('svc-') && !!n.name && comment.includes(n.name)).map((n) => `${n.type}:${n.name}`);
  }),
);

/** The choices of a select whose text is wider than the select shows (its arrow and padding taken off), by the select's own font. */
function selectTextsCut(page: Page, id: string): Promise<string[]> {
  return page.evaluate((selectId) => {
    type Measured = { font: string; paddingLeft: string; paddingRight: string };
    type Select = { clientWidth: number; options: ArrayLike<{ text: string }> };
    const doc = (globalThis as unknown as { document: { getElementById(id: string): unknown; createElement(tag: 'canvas'): unknown } }).document;
    const select = doc.getElementById(selectId) as Select;
    const style = (globalThis as unknown as { getComputedStyle(element: unknown): Measured }).getComputedStyle(select);
    const context = (doc.createElement('canvas') as { getContext(kind: '2d'): { font: string; measureText(text: string): { width: number } } }).getContext(
      '2d',
    );
    context.font = style.font;
    // Room for the text: the select's inner width less its padding and the drop-down arrow (about 20 px).
    const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
    return Array.from(select.options)
      .filter((option) => context.measureText(option.text).width > room)
      .map((option) => option.text);
  }, id);
}

/** The tabs of the svc-config dialog, with their labels, and the fields on each (its name stays above them). */
const CONFIG_TABS = { connection: 'Connection', credentials: 'Credentials', limits: 'Limits', advanced: 'Advanced' };
const CONFIG_GROUPS: Record<keyof typeof CONFIG_TABS, string[]> = {
  connection: ['baseUrl', 'authUrl', 'sandboxUrl', 'audience', 'projectId'],
  credentials: ['clientId', 'clientSecret', 'apiKey', 'pubsubApiKey'],
  limits: [
    'rateScope',
    'rateLimit',
    'rateWords',
    'rateRouting',
    'rateBulk',
    'rateTopics',
    'maxConcurrency',
    'maxQueue',
    'maxRetries',
    'dailyLimit',
    'cacheTtl',
  ],
  advanced: ['timeout', 'tokenLifetime', 'maxResponseSize', 'maxFileSize', 'drainSeconds', 'tls', 'proxy', 'redisUrl'],
};

/** Fills the sandbox's address and credentials into the open config-node dialog, as an account's (Platform: your account). */
async function fillSandboxConfig(editor: Editor, sandboxUrl: string): Promise<void> {
  await editor.page.selectOption('#node-config-input-platform', 'account');
  const values: Record<string, string> = {
    baseUrl: sandboxUrl,
    authUrl: sandboxUrl,
    sandboxUrl,
    audience: SANDBOX_DEFAULTS.audience,
    projectId: SANDBOX_DEFAULTS.projectId,
    clientId: SANDBOX_DEFAULTS.clientId,
    clientSecret: SANDBOX_DEFAULTS.clientSecret,
    apiKey: SANDBOX_DEFAULTS.apiKey,
    pubsubApiKey: SANDBOX_DEFAULTS.pubsubApiKey,
  };
  for (const [name, value] of Object.entries(values)) {
    await editor.showTabOf(`#node-config-input-${name}`);
    await editor.page.fill(`#node-config-input-${name}`, value);
  }
}

/** Clicks "Test connection" and returns the line it shows once the request has its response (and, below it, one line per credential that did not pass). */
async function testConnection(editor: Editor): Promise<string> {
  const result = editor.page.locator('#svc-config-test-result');
  await editor.showTabOf('#svc-config-test');
  await editor.page.click('#svc-config-test');
  let text = '';
  await eventually(async () => {
    text = (await result.innerText()).trim();
    return text !== '' && text !== TEST_TEXT.running;
  }, SERVER_TIMEOUT_MS);
  const details = (await editor.page.locator('#svc-config-test-details .svc-config-test-detail').allInnerTexts()).map((line) => line.trim());
  return [text, ...details].join('\n');
}

/** The secrets the page shows anywhere: in its markup or in an input's value. */
function secretsShown(editor: Editor): Promise<string[]> {
  return editor.page.evaluate((secrets) => {
    const { document } = globalThis as unknown as EditorWindow;
    const shown = [document.documentElement.outerHTML, ...Array.from(document.querySelectorAll('input, textarea')).map((el) => el.value ?? '')];
    return secrets.filter((secret) => shown.some((text) => text.includes(secret)));
  }, SECRETS);
}

/** WCAG contrast ratio between the text colour of `foreground` and the fill or background of `background`. */
function contrast(editor: Editor, foreground: string, background: string): Promise<number> {
  return editor.page.evaluate(
    ({ fg, bg }) => {
      const page = globalThis as unknown as EditorWindow;
      const { document } = page;
      const colour = (selector: string, text: boolean): number[] => {
        const element = document.querySelector(selector);
        if (!element) throw new Error(`${selector} is not on the page`);
        const style = page.getComputedStyle(element);
        const isSvg = element.closest('svg') !== null;
        const value = isSvg ? style.fill : text ? style.color : style.backgroundColor;
        const channels = (value.match(/[\d.]+/g) ?? []).map(Number);
        if (channels.length < 3) throw new Error(`${selector} has no colour (${value})`);
        return channels.slice(0, 3);
      };
      const luminance = ([r, g, b]: number[]) => {
        const linear = (c: number) => (c / 255 <= 0.03928 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4);
        return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
      };
      const [light, dark] = [luminance(colour(fg, true)), luminance(colour(bg, false))].sort((a, b) => b - a);
      return (light + 0.05) / (dark + 0.05);
    },
    { fg: foreground, bg: background },
  );
}

/** Fetches an icon from the editor's origin: true when it is served as an SVG. */
function iconServed(editor: Editor, iconPath: string): Promise<boolean> {
  return editor.page.evaluate(async (url) => {
    const response = await fetch(url);
    return response.ok && (response.headers.get('content-type') ?? '').includes('svg');
  }, iconPath);
}

describe('the editor in a real browser (Chromium)', function () {
  const packed = usePackedModule();

  for (const target of TARGETS) {
    describe(target.runtime.title, function () {
      let server: EditorServer | undefined;
      const seen: ConsoleEntry[] = [];
      /** Example name -> the flow it was imported into. */
      const exampleFlows = new Map<string, string>();
      const running = (): EditorServer => {
        if (!server) throw new Error('Node-RED is not running');
        return server;
      };

      before(async function () {
        this.timeout(300_000);
        server = await EditorServer.start(target, packed());
      });

      after(async function () {
        this.timeout(30_000);
        await server?.stop();
      });

      /** A browser session for the suite it is called in: launched before, closed (console kept) after. */
      function useBrowser(locale: string): () => Editor {
        let session: BrowserSession | undefined;
        let editor: Editor | undefined;
        before(async function () {
          this.timeout(90_000);
          session = await BrowserSession.launch(locale);
          editor = new Editor(session.page, running().url);
          await editor.open();
        });
        afterEach(async function () {
          if (this.currentTest?.state !== 'failed' || !editor) return;
          const slug = (this.currentTest.title.match(/^[\w-]+/)?.[0] ?? 'test').slice(0, 40);
          await editor.screenshot(`failed-${target.name}-${locale}-${slug}`).catch(() => undefined);
          await editor.closeDialogs();
          await editor.removeInvalidNodes();
        });
        after(async function () {
          this.timeout(30_000);
          seen.push(...(session?.console ?? []));
          await session?.close();
        });
        return () => {
          if (!editor) throw new Error('the browser is not open');
          return editor;
        };
      }

      describe('in English (en-US)', function () {
        const editor = useBrowser('en-US');
        let configuredNode: string | undefined;

        it('the palette shows every node of the pack in category "location" with its icon and label; the config node is not in the palette', async function () {
          const category = editor().paletteCategory('location');
          await category.waitFor({ state: 'attached' });
          const inCategory = await category.locator('.red-ui-palette-node').evaluateAll((nodes) =>
            (nodes as unknown as PageElement[]).map((node) => ({
              type: node.getAttribute('data-palette-type') ?? '',
              label: (node.querySelector('.red-ui-palette-label')?.textContent ?? '').replace(/\s+/g, ' ').trim(),
              icon: node.querySelector('.red-ui-palette-icon-container')?.getAttribute('data-palette-icon') ?? '',
            })),
          );
          // worldmap (a devDependency that Node-RED finds beside itself) shares the category.
          const shown = inCategory.filter((node) => NODE_TYPES.includes(node.type));
          should(shown).eql(PALETTE_TYPES.map((type) => ({ type, label: paletteLabel(type), icon: `icons/${PACKAGE.name}/${type}.svg` })));
          for (const { icon } of shown) should(await iconServed(editor(), icon)).be.true(`${icon} is served as SVG`);
          should(await editor().paletteNode(CONFIG_TYPE).count()).equal(0);
          should(await editor().rawIds(['#red-ui-palette-container-location'])).be.empty();
          publishReadmeImage(target, await editor().screenshot(`${target.name}-palette`, category), 'palette');
        });

        for (const type of PALETTE_TYPES) {
          it(`${type}: added from the palette, its dialog shows every field, TypedInput and config-node selector and marks bad values invalid`, async function () {
            const id = await editor().addNode(type);
            const icon = await editor().canvasNode(id).locator('image.red-ui-flow-node-icon').getAttribute('href');
            should(icon).equal(`icons/${PACKAGE.name}/${type}.svg`);
            await editor().openNodeDialog(id);
            const report = await editor().dialogReport(type, 'node-input');
            should({ missing: report.missing, notTyped: report.notTyped, noSelector: report.noSelector, notPassword: report.notPassword }).eql({
              missing: [],
              notTyped: [],
              noSelector: [],
              notPassword: [],
            });
            // Every node but the webhook receiver (no input) reads its request through TypedInputs and a config node.
            if (type !== 'svc-webhook-in') {
              should(report.typedInputs).not.be.empty();
              should(report.selectors).eql(['server']);
            }
            // A new node reads each TypedInput from the message, at the member its defaults name, but for a value
            // fixed so that the node runs as dropped (issue 54: svc-isoline's range, time 600 s; svc-topic's operation, list-topics).
            const typed = await editor().typedInputs(type);
            const fixedOnDrop = ({ 'svc-isoline': ['rangeType', 'rangeValue'], 'svc-topic': ['operation'] } as Record<string, string[]>)[type] ?? [];
            should(typed.filter((input) => !input.expected.startsWith('msg:') && !fixedOnDrop.includes(input.name))).be.empty();
            should(typed.filter((input) => input.shown !== input.expected)).be.empty();
            should(await editor().rawIds(['.red-ui-tray', '.red-ui-typedInput-options'])).be.empty();
            await editor().screenshot(`${target.name}-dialog-${type}`, 'dialog');

            const { tried, unmarked } = await editor().markInvalidInputs(type, 'node-input');
            should(tried).not.be.empty();
            should(unmarked).be.empty();
            await editor().closeNodeDialog('cancel');
            // A new node has no config node yet, so it is invalid; the webhook receiver, whose config node is optional, is valid
            // as dropped (issue 54: its path /svc-webhook).
            should(await editor().showsInvalidMarker(id)).equal(type !== 'svc-webhook-in', 'the canvas marks a new node invalid but the webhook receiver');
            await editor().deleteNode(id);
          });

          it(`${type}: the help sidebar shows Inputs, Outputs and Details`, async function () {
            const help = await editor().showHelp(paletteLabel(type));
            should(help.headings).containDeep(['Inputs', 'Outputs', 'Details']);
            should(await editor().rawIds(['.red-ui-sidebar-help-stack'])).be.empty();
          });
        }

        it('the Map output checkbox of the six locating nodes adds a labelled second output, on a layer of its own; unticked, the output goes', async function () {
          const page = editor().page;
          const checkbox = page.locator('#node-input-worldmap');
          const layer = page.locator('#node-input-worldmapLayer');
          for (const type of MAP_OUTPUT_TYPES) {
            const id = await editor().addNode(type);
            const ports = () => editor().outputPorts(id).count();
            should(await ports()).equal(1, type);
            await editor().openNodeDialog(id);
            should(await checkbox.isChecked()).be.false(`${type}: off by default`);
            should(await layer.isVisible()).be.false(`${type}: no layer field while off`);
            await checkbox.check();
            await layer.fill('depots');
            await editor().closeNodeDialog('ok');
            should(await eventually(async () => (await ports()) === 2)).be.true(`${type}: a second port`);
            should(await mapSettings(editor(), id)).eql({ outputs: 2, worldmap: true, layer: 'depots', portLabel: 'map (worldmap)' }, type);
            await editor().openNodeDialog(id);
            await checkbox.uncheck();
            await editor().closeNodeDialog('ok');
            should(await eventually(async () => (await ports()) === 1)).be.true(`${type}: back to one port`);
            await editor().deleteNode(id);
          }
        });

        it('a job node written by 1.0.0 (version 0, legacy pollInterval in its old unit) is migrated when its dialog opens: it shows the wait in seconds; Done stores seconds only, at its current version', async function () {
          const page = editor().page;
          const legacyNodes = [
            // Version 2 of both keeps what 1.0.0 did: the bulk parts summary, the isoline range from the message (issue 54).
            { type: 'svc-bulk-geocode', pollInterval: 500, seconds: '0.5', version: '2' },
            { type: 'svc-isoline', pollInterval: 3, seconds: '3', version: '2' },
            // Version 2 of svc-sequence also writes an instant departure in UTC (issue 28 point 3).
            { type: 'svc-sequence', pollInterval: 2, seconds: '2', version: '2' },
          ];
          for (const legacy of legacyNodes) {
            const id = await editor().addNode(legacy.type);
            await page.evaluate(
              ({ nodeId, pollInterval }) => {
                const node = (globalThis as unknown as EditorWindow).RED.nodes.node(nodeId) as unknown as Record<string, unknown>;
                node.pollInterval = pollInterval;
                delete node.pollIntervalSec;
                // 1.0.0 wrote no settings version.
                delete node.version;
              },
              { nodeId: id, pollInterval: legacy.pollInterval },
            );
            await editor().openNodeDialog(id);
            should(await page.inputValue('#node-input-pollIntervalSec')).equal(legacy.seconds, legacy.type);
            await editor().closeNodeDialog('ok');
            const saved = await page.evaluate((nodeId) => {
              const node = (globalThis as unknown as EditorWindow).RED.nodes.node(nodeId) as unknown as Record<string, unknown>;
              return { pollInterval: node.pollInterval, pollIntervalSec: String(node.pollIntervalSec), version: String(node.version) };
            }, id);
            should(saved).eql({ pollInterval: '', pollIntervalSec: legacy.seconds, version: legacy.version }, legacy.type);
            await editor().deleteNode(id);
          }
        });

        it('a fixed TypedInput value the runtime would refuse is marked invalid; a good one is not', async function () {
          const checks = [
            { type: 'svc-isoline', name: 'rangeValue', source: 'num', bad: '-5', good: '300' },
            { type: 'svc-isoline', name: 'rangeValue', source: 'str', bad: '300,,600', good: '300,600' },
            { type: 'svc-isoline', name: 'shape', source: 'num', bad: '10', good: '40' },
          ];
          for (const check of checks) {
            const id = await editor().addNode(check.type);
            await editor().openNodeDialog(id);
            const label = `${check.type} ${check.name} ${check.source}`;
            should(await editor().typedInputShows(check.name, check.source, check.bad, true)).be.true(`${label} '${check.bad}' marked invalid`);
            should(await editor().typedInputShows(check.name, check.source, check.good, false)).be.true(`${label} '${check.good}' accepted`);
            // Read from the message, the value is checked at run time.
            should(await editor().typedInputShows(check.name, 'msg', 'payload.x', false)).be.true(`${label}: msg accepted`);
            await editor().closeNodeDialog('cancel');
            await editor().deleteNode(id);
          }
        });

        it('svc-webhook-in: a route pattern, and a path another webhook node receives, are marked invalid before deploy (naming that node and its tab)', async function () {
          const page = editor().page;
          const first = await editor().addNode('svc-webhook-in');
          await editor().openNodeDialog(first);
          await page.locator('#node-input-url').fill('/same-path');
          await page.locator('#node-input-name').fill('Hook A');
          await editor().closeNodeDialog('ok');
          const second = await editor().addNode('svc-webhook-in');
          await editor().openNodeDialog(second);
          const url = page.locator('#node-input-url');
          const marked = async (path: string, invalid: boolean) => {
            await url.fill(path);
            await url.dispatchEvent('change');
            return eventually(async () => ((await url.getAttribute('class'))?.split(/\s+/).includes('input-error') ?? false) === invalid);
          };
          // Compared as the runtime's router compares paths: case and a trailing slash aside.
          should(await marked('/Same-Path/', true)).be.true('/Same-Path/ marked');
          const { text, tab } = await page.evaluate((id) => {
            const { RED } = globalThis as unknown as EditorWindow;
            const validate = RED.nodes.getType('svc-webhook-in')?.defaults.url.validate as (this: unknown, value: string, opt: object) => unknown;
            return { text: validate.call(RED.nodes.node(id), '/Same-Path/', {}), tab: RED.nodes.workspace(RED.workspaces.active())?.label };
          }, second);
          should(text).equal(`"Hook A" on tab "${tab}" already receives this path: give each webhook node its own path`);
          should(await marked('/other-path', false)).be.true('/other-path accepted');
          // One fixed path: route parameters and wildcards are marked, as the runtime refuses them.
          for (const pattern of ['/:id', '/*', '/hook/:tenant', '/x|']) should(await marked(pattern, true)).be.true(`${pattern} marked`);
          const patternText = await page.evaluate((id) => {
            const { RED } = globalThis as unknown as EditorWindow;
            const validate = RED.nodes.getType('svc-webhook-in')?.defaults.url.validate as (this: unknown, value: string, opt: object) => unknown;
            return validate.call(RED.nodes.node(id), '/:id', {});
          }, second);
          should(patternText).match(/^One fixed path such as \/location-events: a subscription sends to one address/);
          should(await marked('/same-path', true)).be.true('/same-path marked');
          await editor().closeNodeDialog('ok');
          should(await editor().showsInvalidMarker(second)).be.true();
          await editor().deleteNode(second);
          await editor().deleteNode(first);
        });

        it('rows that apply to one choice only show with that choice', async function () {
          const page = editor().page;
          const choices = [
            { type: 'svc-isoline', control: 'originFormat', rows: ['precision'], shownFor: 'geohash', hiddenFor: 'coordinates' },
            { type: 'svc-bulk-geocode', control: 'output', rows: ['outputFile', 'rawCsv'], shownFor: 'file', hiddenFor: 'message' },
            { type: 'svc-webhook-in', control: 'verify', rows: ['secret', 'previousSecret', 'tolerance'], shownFor: 'signature', hiddenFor: 'none' },
          ];
          for (const choice of choices) {
            const id = await editor().addNode(choice.type);
            await editor().openNodeDialog(id);
            for (const [value, visible] of [
              [choice.hiddenFor, false],
              [choice.shownFor, true],
            ] as const) {
              await page.selectOption(`#node-input-${choice.control}`, value);
              for (const row of choice.rows) should(await page.locator(`#node-input-${row}`).isVisible()).equal(visible, `${choice.type} ${row} for ${value}`);
            }
            await editor().closeNodeDialog('cancel');
            await editor().deleteNode(id);
          }
        });

        it('svc-route: Transport shows the modes chosen, not "N selected" (issue 54 point 5)', async function () {
          const page = editor().page;
          const id = await editor().addNode('svc-route');
          await editor().openNodeDialog(id);
          const shown = async (modes: string) =>
            page.evaluate((value) => {
              // The typedInput widget's own calls, as the dialog's menu makes them.
              type Query = {
                typedInput(method: 'type' | 'value', value: string): void;
                next(selector: string): Query;
                find(selector: string): Query;
                text(): string;
              };
              const input = (globalThis as unknown as { $: (selector: string) => Query }).$('#node-input-transportMode');
              input.typedInput('type', 'fixed');
              input.typedInput('value', value);
              // The widget follows the input it was made on.
              return input.next('.red-ui-typedInput-container').find('.red-ui-typedInput-option-label').text().trim();
            }, modes);
          should(await shown('car')).equal('car');
          should(await shown('car,truck')).equal('car, truck');
          await editor().closeNodeDialog('cancel');
          // Without a config node yet it is invalid: left on the canvas, it would fail a later test's deploy.
          await editor().deleteNode(id);
        });

        it(`${CONFIG_TYPE}: the help sidebar shows its Details`, async function () {
          const help = await editor().showHelp(CONFIG_TYPE);
          should(help.headings).containEql('Details');
          should(await editor().rawIds(['.red-ui-sidebar-help-stack'])).be.empty();
        });

        it(`${CONFIG_TYPE}: its dialog is grouped in tabs as core's MQTT broker dialog is, every field in one of them, a new one showing the defaults (issue 21 point 5)`, async function () {
          const page = editor().page;
          const id = await editor().addNode('svc-geocode');
          await editor().openNodeDialog(id);
          await editor().openConfigDialog('server', 'add');
          // A new config node is on the built-in sandbox: the account's fields show once the account is chosen.
          should(await page.locator('#node-config-input-platform').inputValue()).equal('sandbox');
          should(await page.locator('#node-config-input-baseUrl').isVisible()).be.false();
          // Test connection shows where the dialog opens, not on a tab of its own (issue 54 point 5).
          should(await page.locator('#svc-config-test').isVisible()).be.true('Test connection where the dialog opens');
          await page.selectOption('#node-config-input-platform', 'account');
          should((await page.locator('#svc-config-tabs li a').allInnerTexts()).map((text) => text.trim())).eql(Object.values(CONFIG_TABS));
          const everyField = Object.values(CONFIG_GROUPS).flat();
          const definition = await page.evaluate(() => {
            const def = (globalThis as unknown as EditorWindow).RED.nodes.getType('svc-config');
            return { defaults: def?.defaults ?? {}, credentials: Object.keys(def?.credentials ?? {}) };
          });
          // Every setting and credential but the settings `version` (a hidden input).
          const settings = Object.keys(definition.defaults).filter((field) => field !== 'version');
          should([...everyField, 'name', 'platform'].sort()).eql([...settings, ...definition.credentials].sort());
          for (const [group, fields] of Object.entries(CONFIG_GROUPS)) {
            await editor().showTab(`svc-config-tab-${group}`);
            for (const field of everyField) {
              should(await page.locator(`#node-config-input-${field}`).isVisible()).equal(fields.includes(field), `${field} shown on tab ${group}`);
            }
            should(await page.locator('#node-config-input-name').isVisible()).be.true('the name stays above the tabs');
            should(await page.locator('#node-config-input-platform').isVisible()).be.true('the platform stays above the tabs');
            should(await page.locator('#svc-config-test').isVisible()).be.true('Test connection stays above the tabs');
            if (group === 'limits') should(await selectTextsCut(page, 'node-config-input-rateScope')).eql([], 'Rate limits: every choice reads whole');
            if (group === 'limits') await editor().screenshot(`${target.name}-dialog-${CONFIG_TYPE}-limits`, 'dialog');
          }
          // A new config node shows every default in its field (Node-RED leaves a default of 0 out of a new config node: its placeholder shows it).
          for (const [field, property] of Object.entries(definition.defaults)) {
            if (typeof property.value !== 'number' || field === 'version') continue;
            const input = page.locator(`#node-config-input-${field}`);
            should((await input.inputValue()) || (await input.getAttribute('placeholder'))).equal(String(property.value), field);
          }
          await editor().closeConfigDialog('cancel');
          await editor().closeNodeDialog('cancel');
          await editor().deleteNode(id);
        });

        it(`${CONFIG_TYPE}: its dialog has every field (secrets in password inputs) and marks missing values invalid; "Test connection" reports success and a wrong-secret failure`, async function () {
          const id = await editor().addNode('svc-geocode');
          await editor().openNodeDialog(id);
          await editor().openConfigDialog('server', 'add');
          const report = await editor().dialogReport(CONFIG_TYPE, 'node-config-input');
          should({ missing: report.missing, noSelector: report.noSelector, notPassword: report.notPassword }).eql({
            missing: [],
            noSelector: [],
            notPassword: [],
          });
          should(report.selectors.sort()).eql(['proxy', 'tls']);
          should(await editor().rawIds(['.red-ui-tray'])).be.empty();
          // An account's fields are required; the built-in sandbox needs none.
          await editor().page.selectOption('#node-config-input-platform', 'account');
          const { tried, unmarked } = await editor().markInvalidInputs(CONFIG_TYPE, 'node-config-input');
          should(tried).containEql('baseUrl');
          should(unmarked).be.empty();
          await editor().closeConfigDialog('cancel');

          await editor().openConfigDialog('server', 'add');
          await fillSandboxConfig(editor(), running().sandbox.url);
          await editor().page.fill('#node-config-input-name', 'Browser test sandbox');
          should(await testConnection(editor())).equal(ALL_ACCEPTED);
          await editor().page.fill('#node-config-input-clientSecret', 'not-the-secret');
          should(await testConnection(editor())).equal(
            `token ✗ 401 · API key ✓ · topics key ✓\n${TEST_TEXT.token}: refused (401): check the Client id, Client secret and Audience fields`,
          );
          await editor().page.fill('#node-config-input-clientSecret', SANDBOX_DEFAULTS.clientSecret);
          await editor().page.fill('#node-config-input-apiKey', 'not-the-key');
          await editor().page.fill('#node-config-input-pubsubApiKey', '');
          should(await testConnection(editor())).equal(
            `token ✓ · API key ✗ 401 · topics key not set\n${TEST_TEXT.apiKey}: refused (401): check the API key and Project id fields`,
          );
          await editor().page.fill('#node-config-input-apiKey', SANDBOX_DEFAULTS.apiKey);
          await editor().page.fill('#node-config-input-pubsubApiKey', SANDBOX_DEFAULTS.pubsubApiKey);
          should(await testConnection(editor())).equal(ALL_ACCEPTED);
          await editor().closeConfigDialog('ok');
          await editor().closeNodeDialog('ok');
          should(await editor().nodeMember(id, 'valid')).be.true();
          configuredNode = id;
        });

        it(`${CONFIG_TYPE}: after deploy, reopened (and in a new editor session) its password inputs hold only the placeholder, and "Test connection" uses the stored secret`, async function () {
          if (!configuredNode) throw new Error('needs the node configured by the previous test');
          const nodeId = configuredNode;
          const result = await editor().deploy();
          should(result.invalid).be.empty();

          // What the admin API sends the editor from here on (credentials, flows, settings).
          const responses: string[] = [];
          const keepResponse = (response: Response): void => {
            if ((response.headers()['content-type'] ?? '').includes('json')) {
              response.text().then(
                (body) => responses.push(`${response.url()} ${body}`),
                () => undefined,
              );
            }
          };
          editor().page.on('response', keepResponse);
          for (const reload of [false, true]) {
            if (reload) await editor().open();
            await editor().openNodeDialog(nodeId);
            await editor().openConfigDialog('server', 'edit');
            for (const name of PASSWORD_CREDENTIALS) {
              should(await editor().page.inputValue(`#node-config-input-${name}`)).equal(PASSWORD_PLACEHOLDER, name);
            }
            should(await editor().page.inputValue('#node-config-input-clientId')).equal(SANDBOX_DEFAULTS.clientId);
            should(await secretsShown(editor())).be.empty();
            should(await testConnection(editor())).equal(ALL_ACCEPTED);
            if (reload) publishReadmeImage(target, await editor().screenshot(`${target.name}-dialog-${CONFIG_TYPE}`, 'dialog'), 'config-node');
            await editor().closeConfigDialog('cancel');
            await editor().closeNodeDialog('cancel');
          }
          editor().page.off('response', keepResponse);
          should(responses.filter((response) => SECRETS.some((secret) => response.includes(secret)))).be.empty();
        });

        it('a new node, svc-webhook-in too (issue 54), takes the only svc-config there is; with two, the user chooses (issue 21 point 7)', async function () {
          const page = editor().page;
          const configs = () =>
            page.evaluate(() => {
              const ids: string[] = [];
              (globalThis as unknown as EditorWindow).RED.nodes.eachConfig((node) => node.type === 'svc-config' && ids.push(node.id));
              return ids;
            });
          const serverOf = (nodeId: string) => editor().nodeMember(nodeId, 'server');
          const only = await configs();
          should(only).have.length(1, 'the config node made by the earlier test is the only one');
          const picked = await editor().addNode('svc-words');
          should(await serverOf(picked)).equal(only[0]);
          await editor().moveNode(picked, 560, 520);
          await editor().openNodeDialog(picked);
          should(await page.inputValue('#node-input-server')).equal(only[0]);
          await editor().closeNodeDialog('cancel');
          const webhook = await editor().addNode('svc-webhook-in');
          should(await serverOf(webhook)).equal(only[0]);
          should(await editor().nodeMember(webhook, 'url')).equal('/svc-webhook');

          await page.evaluate(() =>
            (globalThis as unknown as EditorWindow).RED.view.importNodes([
              { id: 'second-svc-config', type: 'svc-config', name: 'second', baseUrl: 'https://second.example.com' },
            ]),
          );
          should(await configs()).have.length(2);
          const unpicked = await editor().addNode('svc-words');
          should(await serverOf(unpicked)).equal('');
          const unpickedWebhook = await editor().addNode('svc-webhook-in');
          should(await serverOf(unpickedWebhook)).equal('');
          await editor().removeNodes([picked, unpicked, webhook, unpickedWebhook, 'second-svc-config']);
          should(await configs()).eql(only);
        });

        it('Output = the location feeds a core debug node: the debug sidebar shows msg.payload as { name, lat, lon, … } (issue 21 point 4)', async function () {
          if (!configuredNode) throw new Error('needs the node configured by an earlier test');
          const page = editor().page;
          const server = await editor().nodeMember(configuredNode, 'server');
          await page.evaluate((config) => {
            const { RED } = globalThis as unknown as EditorWindow;
            const z = RED.workspaces.active();
            RED.view.importNodes([
              {
                id: 'oc-inject',
                type: 'inject',
                z,
                x: 140,
                y: 420,
                props: [{ p: 'payload' }],
                payload: '3 Harbour Lane, Sandbox City',
                payloadType: 'str',
                wires: [['oc-geocode']],
              },
              {
                id: 'oc-geocode',
                type: 'svc-geocode',
                z,
                x: 360,
                y: 420,
                server: config,
                output: 'location',
                address: 'payload',
                addressType: 'msg',
                precision: 9,
                wires: [['oc-debug']],
              },
              { id: 'oc-debug', type: 'debug', z, x: 580, y: 420, active: true, tosidebar: true, complete: 'payload', targetType: 'msg', wires: [] },
            ]);
          }, server);
          await editor().deploy();
          await editor().showDebugOfCurrentFlow();
          await editor().clickInject('oc-inject');
          should(await eventually(async () => (await editor().debugMessageCount()) > 0)).be.true('the debug sidebar shows the location');
          const shown = await page.locator('.red-ui-debug-msg').last().innerText();
          should(shown).match(/msg\.payload : Object/);
          should(shown).match(/name: "3 Harbour Lane, Sandbox/);
          should(shown).match(/lat: 5\d\.\d+/);
          should(shown).match(/lon: \d+\.\d+/);
          await editor().screenshot(`${target.name}-output-location-debug`, 'page');
          await editor().removeNodes(['oc-inject', 'oc-geocode', 'oc-debug']);
          await editor().deploy();
        });

        it('Import > Examples lists every example of the pack', async function () {
          should(await editor().listedExamples()).eql(EXAMPLE_NAMES);
        });

        for (const name of EXAMPLE_NAMES) {
          it(`example "${name}": imports from Import > Examples and deploys, no node invalid unless its comment asks for a credential`, async function () {
            const flow = await editor().importExample(name);
            exampleFlows.set(name, flow);
            const invalid = await editor().invalidNodes();
            const undocumented = invalid.filter((node) => !CREDENTIAL_NODES.has(`${node.type}:${node.name}`));
            should(undocumented).be.empty();
            await editor().deploy();
            await editor().screenshot(`${target.name}-example-${name}`, 'canvas');
          });
        }

        it('an example runs as imported, on the built-in sandbox, with nothing typed: the nodes show their status', async function () {
          const flow = exampleFlows.get('geocode-an-address');
          if (!flow) throw new Error('needs the geocode-an-address example imported by an earlier test');
          await editor().page.click(`#red-ui-tab-${flow} a`);
          const [geocode] = await editor().nodeIds({ type: 'svc-geocode', z: flow });
          const [inject] = await editor().nodeIds({ type: 'inject', z: flow });
          const [debug] = await editor().nodeIds({ type: 'debug', z: flow });
          // Deployed as imported by the tests above: nothing typed, nothing to deploy again.
          await editor().showDebugOfCurrentFlow();
          await editor().clickInject(inject);
          should(await editor().statusText(geocode)).not.be.empty();
          should(await editor().statusText(debug)).not.be.empty();
          should(await eventually(async () => (await editor().debugMessageCount()) > 0)).be.true('the debug sidebar shows the location');
          await editor().clearSelection();
          await editor().waitForNotificationsToClose();
          publishReadmeImage(target, await editor().screenshot(`${target.name}-example-flow`, 'canvas'), 'example-flow');
        });
      });

      describe('nodes dropped as is (issue 54), in English', function () {
        const editor = useBrowser('en-US');

        it('every node dropped from the palette with its defaults and wired (svc-isoline behind svc-geocode, svc-route and svc-sequence behind split → svc-geocode → join, svc-webhook-in receiving the sandbox’s delivery of the publish), deploy and each reach a debug node', async function () {
          this.timeout(240_000);
          const page = editor().page;
          // Its own config node on the built-in sandbox: earlier tests leave others, so a dropped node would not pick one itself.
          const configSettings = Object.fromEntries(Object.entries(configDefaults as Defaults).map(([name, d]) => [name, d.value]));
          await page.evaluate(
            (settings) =>
              (globalThis as unknown as EditorWindow).RED.view.importNodes([
                { ...settings, id: 'dropped-cfg', type: 'svc-config', name: 'dropped', version: 3 },
              ]),
            configSettings,
          );
          const added: string[] = [];
          const drop = async (type: string, x: number, y: number): Promise<string> => {
            const id = await editor().addNode(type);
            await editor().moveNode(id, x, y);
            added.push(id);
            return id;
          };
          const addresses = '["1 Main Street, Berlin","2 Station Road, Potsdam"]';
          // What each inject sends (none: the chain starts with svc-webhook-in); svc-topic-publish also gets the topic and the cell, which the spec gives no default for.
          const chains: Array<{ payload?: string; payloadType?: string; props?: Array<{ p: string; v: string; vt: string }>; types: string[] }> = [
            { payload: '1 Main Street, Berlin', payloadType: 'str', types: ['svc-geocode', 'svc-isoline'] },
            { payload: addresses, payloadType: 'json', types: ['split', 'svc-geocode', 'join', 'svc-route'] },
            { payload: addresses, payloadType: 'json', types: ['split', 'svc-geocode', 'join', 'svc-sequence'] },
            { payload: '///wheat.ribbon.magnet', payloadType: 'str', types: ['svc-words'] },
            { payload: addresses, payloadType: 'json', types: ['svc-bulk-geocode'] },
            { payload: '', payloadType: 'date', types: ['svc-topic'] },
            {
              payload: '{"temperature":21.5}',
              payloadType: 'json',
              props: [
                { p: 'topicId', v: '0', vt: 'num' },
                { p: 'locationId', v: 'cell-1', vt: 'str' },
              ],
              types: ['svc-topic-publish'],
            },
            { types: ['svc-webhook-in'] },
          ];
          const last: string[] = [];
          let publishInject = '';
          for (const [row, chain] of chains.entries()) {
            const y = 120 + row * 100;
            const ids = chain.payload === undefined ? [] : [await drop('inject', 120, y)];
            for (const [i, type] of chain.types.entries()) ids.push(await drop(type, 280 + i * 170, y));
            ids.push(await drop('debug', 280 + chain.types.length * 170, y));
            last.push(ids[ids.length - 2]);
            if (chain.types[0] === 'svc-topic-publish') publishInject = ids[0];
            await page.evaluate(
              ({ nodeIds, payload, payloadType, props }) => {
                const { RED } = globalThis as unknown as EditorWindow;
                const nodes = RED.nodes as unknown as { addLink(link: object): void };
                const inject = RED.nodes.node(nodeIds[0]) as unknown as Record<string, unknown>;
                // The one value typed: what the inject node sends.
                if (inject.type === 'inject') {
                  inject.payload = payload;
                  inject.payloadType = payloadType;
                  inject.props = [{ p: 'payload' }, ...props];
                }
                for (const id of nodeIds) {
                  const node = RED.nodes.node(id) as unknown as Record<string, unknown> & { type: string };
                  if (node.type.startsWith('svc-')) node.server = 'dropped-cfg';
                  RED.editor.validateNode(node as never);
                }
                for (let i = 0; i + 1 < nodeIds.length; i++)
                  nodes.addLink({ source: RED.nodes.node(nodeIds[i]), sourcePort: 0, target: RED.nodes.node(nodeIds[i + 1]) });
                RED.nodes.dirty(true);
                RED.view.redraw(true);
              },
              { nodeIds: ids, payload: chain.payload, payloadType: chain.payloadType, props: chain.props ?? [] },
            );
          }
          const result = await editor().deploy();
          should(result.invalid).be.empty();
          // The built-in sandbox runs now: the test makes a topic there and subscribes the dropped webhook node's
          // address to it, signed with the sandbox's own secret; the publish chain's inject gets the topic id, deployed again.
          const keysFile = path.join(running().nodeRed.userDir, 'svc-location', 'sandbox.json');
          should(await eventually(async () => fs.existsSync(keysFile), 10_000)).be.true('the built-in sandbox has started');
          const keys = JSON.parse(fs.readFileSync(keysFile, 'utf8')) as BuiltinSandboxKeys;
          const pubsub = async (member: string, body: object): Promise<{ id: number }> => {
            const response = await fetch(`${running().url}svc-sandbox/v1/pubsub/${member}`, {
              method: 'POST',
              headers: { apikey: keys.pubsubApiKey, 'content-type': 'application/json' },
              body: JSON.stringify(body),
            });
            should(response.status).equal(200, `POST ${member}`);
            return ((await response.json()) as { data: { id: number } }).data;
          };
          const topic = await pubsub('topics', { Name: 'dropped', Description: 'issue 54' });
          await pubsub('subscriptions', {
            TopicId: topic.id,
            WebhookAddress: `${running().url}svc-webhook`,
            SecretToken: keys.webhookSecret,
            LocationIds: ['cell-1'],
          });
          await page.evaluate(
            ({ id, topicId }) => {
              const { RED } = globalThis as unknown as EditorWindow;
              const inject = RED.nodes.node(id) as unknown as Record<string, unknown> & { props: Array<{ p: string; v?: string }> };
              for (const prop of inject.props) if (prop.p === 'topicId') prop.v = String(topicId);
              inject.changed = true;
              RED.nodes.dirty(true);
            },
            { id: publishInject, topicId: topic.id },
          );
          await editor().deploy();
          await editor().showDebugOfCurrentFlow();
          for (const inject of await editor().nodeIds({
            type: 'inject',
            z: await page.evaluate(() => (globalThis as unknown as EditorWindow).RED.workspaces.active()),
          })) {
            if (added.includes(inject)) await editor().clickInject(inject);
          }
          // Errors show in the debug sidebar too (level 20): only the debug nodes' messages count, and no error may show.
          const results = page.locator('.red-ui-debug-msg:not(.red-ui-debug-msg-level-20)');
          should(await eventually(async () => (await results.count()) >= chains.length, 60_000)).be.true('every chain reaches its debug node');
          should(await page.locator('.red-ui-debug-msg-level-20').count()).equal(0);
          for (const id of last) should(await editor().statusText(id)).not.match(/^[A-Z_]+[ :(]/);
          // The webhook node's one message is the sandbox's signed delivery of the publish.
          should(await editor().statusText(last[last.length - 1])).equal('1 accepted, 0 refused');
          await editor().removeNodes([...added, 'dropped-cfg']);
          await editor().deploy();
        });
      });

      describe('the small things (issue 29 point 7), in English', function () {
        const editor = useBrowser('en-US');

        it('the geocode example shows its Output chosen; the config dialog reads "none" for TLS and Proxy, shows the Redis placeholder whole and keeps the Test connection result right of the labels; its help explains the placeholders', async function () {
          const page = editor().page;
          const flow = await editor().importExample('geocode-an-address');
          const [geocode] = await editor().nodeIds({ type: 'svc-geocode', z: flow });
          await editor().openNodeDialog(geocode);
          should(await page.locator('#node-input-output').inputValue()).equal('location');
          should((await page.locator('#node-input-output option:checked').innerText()).trim()).not.be.empty();

          await editor().openConfigDialog('server', 'edit');
          await editor().showTab('svc-config-tab-advanced');
          for (const select of ['tls', 'proxy']) {
            should((await page.locator(`#node-config-input-${select} option:checked`).innerText()).trim()).equal('none', `${select} with none chosen`);
          }
          // The placeholder is as wide as its text at most: nothing of it is cut.
          const redis = await page.evaluate(() => {
            interface Measured {
              placeholder: string;
              textContent: string;
              clientWidth: number;
              offsetWidth: number;
              style: Record<string, string>;
              remove(): void;
            }
            const { document, getComputedStyle } = globalThis as unknown as {
              document: { getElementById(id: string): Measured; createElement(tag: string): Measured; body: { appendChild(element: Measured): void } };
              getComputedStyle: (element: Measured) => { font: string };
            };
            const input = document.getElementById('node-config-input-redisUrl');
            const probe = document.createElement('span');
            probe.textContent = input.placeholder;
            probe.style.font = getComputedStyle(input).font;
            probe.style.position = 'absolute';
            probe.style.whiteSpace = 'pre';
            document.body.appendChild(probe);
            const width = probe.offsetWidth;
            probe.remove();
            return { width, room: input.clientWidth };
          });
          should(redis.width).be.belowOrEqual(redis.room - 8, 'the Redis URL placeholder fits its input');

          await fillSandboxConfig(editor(), running().sandbox.url);
          await page.fill('#node-config-input-apiKey', 'not-the-key');
          await testConnection(editor());
          const layout = await page.evaluate(() => {
            const { document } = globalThis as unknown as EditorWindow;
            const left = (id: string) => (document.getElementById(id) as unknown as { getBoundingClientRect(): { left: number } }).getBoundingClientRect().left;
            const rects = (document.getElementById('svc-config-test-result') as unknown as { getClientRects(): ArrayLike<{ left: number }> }).getClientRects();
            return { button: left('svc-config-test'), details: left('svc-config-test-details'), result: Array.from(rects).map((rect) => rect.left) };
          });
          for (const left of [layout.details, ...layout.result])
            should(left).be.aboveOrEqual(layout.button - 1, 'the result and its details stay right of the label column');
          await editor().closeConfigDialog('cancel');
          await editor().closeNodeDialog('cancel');

          const help = await editor().showHelp(CONFIG_TYPE);
          should(help.text)
            .match(/documentation writes as \{base_url\}/)
            .and.match(/not the local sandbox/)
            .and.match(/calls the project id the VPM id/);
        });
      });

      describe('in Japanese (ja)', function () {
        const editor = useBrowser('ja');
        const dialogTexts = new Map<string, string>();
        const helpTexts = new Map<string, string>();

        it('the palette shows the pack with no raw message ids', async function () {
          should(await editor().paletteNode(PALETTE_TYPES[0]).count()).equal(1);
          should(await editor().rawIds(['#red-ui-palette-container-location'])).be.empty();
        });

        for (const type of NODE_TYPES) {
          it(`${type}: its dialog and help show no raw message ids`, async function () {
            const id = await editor().addNode(type === CONFIG_TYPE ? 'svc-geocode' : type);
            await editor().openNodeDialog(id);
            if (type === CONFIG_TYPE) await editor().openConfigDialog('server', 'add');
            should(await editor().rawIds(['.red-ui-tray', '.red-ui-typedInput-options'])).be.empty();
            const form = type === CONFIG_TYPE ? '#node-config-dialog-edit-form' : '#dialog-form';
            dialogTexts.set(type, await editor().visibleText(form));
            if (type === 'svc-isoline' || type === CONFIG_TYPE) await editor().screenshot(`${target.name}-ja-dialog-${type}`, 'dialog');
            if (type === CONFIG_TYPE) await editor().closeConfigDialog('cancel');
            await editor().closeNodeDialog('cancel');
            await editor().deleteNode(id);

            const help = await editor().showHelp(paletteLabel(type));
            should(help.headings.length).be.aboveOrEqual(type === CONFIG_TYPE ? 2 : 3);
            should(await editor().rawIds(['.red-ui-sidebar-help-stack'])).be.empty();
            helpTexts.set(type, help.text);
          });

          it(`${type}: its dialog and help are in Japanese`, function () {
            const dialog = dialogTexts.get(type);
            const help = helpTexts.get(type);
            if (dialog === undefined || help === undefined) throw new Error('needs the dialog and help read by the previous test');
            should(JAPANESE.test(dialog)).be.true(`the ${type} dialog shows Japanese labels`);
            should(JAPANESE.test(help)).be.true(`the ${type} help is in Japanese`);
          });
        }
      });

      if (target.hasDarkTheme) {
        describe('in the dark theme', function () {
          const editor = useBrowser('en-US');

          it('User Settings > View switches the editor to its dark theme', async function () {
            await editor().page.click('#red-ui-header-button-sidemenu');
            await editor().page.click('#menu-item-user-settings');
            await editor().page.selectOption('#user-settings-view-dark-theme', 'dark');
            await editor().page.click('#node-dialog-ok');
            const dark = await eventually(() =>
              editor().page.evaluate(() => (globalThis as unknown as EditorWindow).document.documentElement.classList.contains('nr-theme-dark')),
            );
            should(dark).be.true('the editor uses its dark theme');
          });

          it('palette labels are readable and icons shown', async function () {
            for (const type of PALETTE_TYPES) {
              const node = `.red-ui-palette-node[data-palette-type="${type}"]`;
              should(await contrast(editor(), `${node} .red-ui-palette-label`, node)).be.aboveOrEqual(4.5, `${type} palette label`);
              should(await editor().paletteNode(type).locator('.red-ui-palette-icon').isVisible()).be.true();
            }
            await editor().screenshot(`${target.name}-dark-palette`, editor().paletteCategory('location'));
          });

          it('on the canvas, labels, icons and status of the pack are readable', async function () {
            const flow = exampleFlows.get('geocode-an-address');
            if (!flow) throw new Error('needs the geocode-an-address example imported by an earlier test');
            await editor().page.click(`#red-ui-tab-${flow} a`);
            const [geocode] = await editor().nodeIds({ type: 'svc-geocode', z: flow });
            const [inject] = await editor().nodeIds({ type: 'inject', z: flow });
            await editor().showDebugOfCurrentFlow();
            await editor().clickInject(inject);
            should(await editor().statusText(geocode)).not.be.empty();
            should(await eventually(async () => (await editor().debugMessageCount()) > 0)).be.true('the debug sidebar shows the location');
            const node = `#red-ui-workspace-chart g.red-ui-flow-node-group[id="${geocode}"]`;
            should(await contrast(editor(), `${node} .red-ui-flow-node-label-text`, `${node} rect.red-ui-flow-node`)).be.aboveOrEqual(4.5, 'node label');
            const statusBackground = `${node} .red-ui-flow-node-status-background`;
            const background = (await editor().page.locator(statusBackground).isVisible()) ? statusBackground : '.red-ui-workspace-chart-background';
            should(await contrast(editor(), `${node} .red-ui-flow-node-status-label`, background)).be.aboveOrEqual(4.5, 'status text');
            const icon = editor().canvasNode(geocode).locator('image.red-ui-flow-node-icon');
            should(await icon.isVisible()).be.true();
            should(await iconServed(editor(), (await icon.getAttribute('href')) ?? '')).be.true();
            await editor().clearSelection();
            await editor().waitForNotificationsToClose();
            await editor().screenshot(`${target.name}-dark-example-flow`, 'canvas');
            await editor().openNodeDialog(geocode);
            await editor().screenshot(`${target.name}-dark-dialog-svc-geocode`, 'dialog');
            await editor().closeNodeDialog('cancel');
          });
        });
      }

      describe('afterwards', function () {
        it('the browser console showed no errors or warnings from the pack (Node-RED core noise is listed, not failed)', function () {
          const report = writeConsoleReport(target.name, seen);
          const noise = [...new Set(coreNoise(seen).map((e) => `[${e.kind}/${e.type}] ${e.text}`))];
          if (noise.length > 0)
            console.log(
              `      Node-RED core noise (${noise.length} kinds, all in ${path.relative(REPO_ROOT, report)}):\n${noise.map((n) => `        ${n}`).join('\n')}`,
            );
          should(packProblems(seen)).be.empty();
        });

        it('Node-RED logged no errors or warnings from the pack, but for nodes whose example asks the user to enter a credential', function () {
          const fromPack = running().nodeRed.problems().filter(packMentioned);
          const documented = fromPack.filter((line) => {
            const node = /\[(svc-[a-z-]+):([^\]]+)\]/.exec(line);
            return node !== null && CREDENTIAL_NODES.has(`${node[1]}:${node[2]}`);
          });
          if (documented.length > 0)
            console.log(`      expected until the user enters the credential:\n${[...new Set(documented)].map((l) => `        ${l}`).join('\n')}`);
          should(fromPack.filter((line) => !documented.includes(line))).be.empty();
        });
      });
    });
  }
});
