import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BrowserContext, chromium, Page } from 'playwright-core';
import { startSandbox, Sandbox } from '../../sandbox';
import { NODE_RED_5_NODE_22 } from '../support/node-red-5';
import { installTarball, newUserDir, NODE_RED_4, NodeRedProcess, NodeRedRuntime, packModule } from '../support/node-red-process';
import { REPO_ROOT } from '../support/paths';

/**
 * What the browser suite runs on: the packed module installed into a fresh Node-RED user directory
 * per Node-RED version, the sandbox platform, and Debian's Chromium driven by playwright-core.
 * Everything started here is stopped by `stop()` / `close()`, which the spec calls in `after` hooks.
 */

export const PACKAGE = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  'node-red': { nodes: Record<string, string> };
};
export const NODE_TYPES = Object.keys(PACKAGE['node-red'].nodes);
export const CONFIG_TYPE = 'svc-config';
/** Node types that appear in the palette (the config node does not). */
export const PALETTE_TYPES = NODE_TYPES.filter((type) => type !== CONFIG_TYPE);
export const EXAMPLE_NAMES = fs
  .readdirSync(path.join(REPO_ROOT, 'examples'))
  .filter((f) => f.endsWith('.json'))
  .map((f) => path.basename(f, '.json'))
  .sort();
export const ARTIFACTS_DIR = path.join(REPO_ROOT, 'test', 'artifacts', 'browser');
export const CHROMIUM = '/usr/bin/chromium';

/**
 * The README's screenshots (docs/images/) are taken by this suite: with `README_IMAGES=1`
 * (`README_IMAGES=1 npm run test:browser`), the screenshots of Node-RED 4.1 in English that the
 * README shows are copied there as they are taken. Off by default, so that a test run leaves the
 * work tree as it was.
 */
export function publishReadmeImage(target: { name: string }, screenshot: string, image: 'palette' | 'config-node' | 'example-flow' | 'map'): void {
  if (process.env.README_IMAGES !== '1' || target.name !== TARGETS[0].name) return;
  fs.copyFileSync(screenshot, path.join(REPO_ROOT, 'docs', 'images', `${image}.png`));
}
/** Headless Chromium for a machine without internet; the user-data-dir is a new temp dir per launch. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/** A Node-RED version the suite runs against. */
export interface EditorTarget {
  /** Short name, used in artifact file names. */
  name: string;
  runtime: NodeRedRuntime;
  /** Whether this version ships a dark theme (Node-RED 5: User Settings > View > Appearance). */
  hasDarkTheme: boolean;
}

export const TARGETS: EditorTarget[] = [
  { name: 'nr4', runtime: NODE_RED_4, hasDarkTheme: false },
  { name: 'nr5', runtime: NODE_RED_5_NODE_22, hasDarkTheme: true },
];

/**
 * Node-RED's settings for the suite: its defaults, plus no welcome tour (it would cover the editor),
 * no palette catalogue download and no telemetry (the machine has no internet; tests talk to
 * 127.0.0.1 only).
 */
const SETTINGS_JS = `module.exports = {
    flowFile: 'flows.json',
    uiHost: '127.0.0.1',
    credentialSecret: 'browser-suite',
    telemetry: { enabled: false },
    editorTheme: { tours: false, palette: { catalogues: [] } }
};
`;

/** The tarball, packed once per run, and a temp dir holding it and the user directories. */
export class PackedModule {
  private constructor(
    readonly workDir: string,
    readonly tarball: string,
  ) {}

  static async pack(): Promise<PackedModule> {
    const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-browser-test-'));
    try {
      const packed = await packModule(workDir);
      return new PackedModule(workDir, path.join(workDir, packed.filename));
    } catch (err) {
      fs.rmSync(workDir, { recursive: true, force: true });
      throw err;
    }
  }

  /** How many user directories were made: the suites share one packed module, so each directory gets a number of its own. */
  private userDirs = 0;

  /** A fresh user directory with the tarball installed (`npm install <tarball>`) and the suite's settings. */
  async userDir(name: string): Promise<string> {
    this.userDirs += 1;
    const userDir = newUserDir(this.workDir, `${name}-${this.userDirs}`);
    await installTarball(userDir, this.tarball);
    fs.writeFileSync(path.join(userDir, 'settings.js'), SETTINGS_JS);
    return userDir;
  }

  remove(): void {
    fs.rmSync(this.workDir, { recursive: true, force: true });
  }
}

let sharedPack: Promise<PackedModule> | undefined;

/**
 * The tarball for a suite, packed once per test run and shared by every browser spec (prepack
 * builds, which takes a minute or more on a busy machine); removed when the process exits.
 */
export function usePackedModule(): () => PackedModule {
  let packed: PackedModule | undefined;
  before(async function () {
    this.timeout(240_000);
    if (!sharedPack) {
      sharedPack = PackedModule.pack();
      sharedPack.then(
        (pack) => process.once('exit', () => pack.remove()),
        () => undefined,
      );
    }
    packed = await sharedPack;
  });
  return () => {
    if (!packed) throw new Error('the module was not packed');
    return packed;
  };
}

/** Node-RED with the pack installed and the sandbox platform, for one target. */
export class EditorServer {
  private constructor(
    readonly nodeRed: NodeRedProcess,
    readonly sandbox: Sandbox,
  ) {}

  static async start(target: EditorTarget, packed: PackedModule): Promise<EditorServer> {
    target.runtime.prepare();
    const userDir = await packed.userDir(target.name);
    const sandbox = await startSandbox();
    try {
      return new EditorServer(await NodeRedProcess.start(userDir, target.runtime, 90_000), sandbox);
    } catch (err) {
      await sandbox.close();
      throw err;
    }
  }

  get url(): string {
    return this.nodeRed.url;
  }

  async stop(): Promise<void> {
    await this.nodeRed.stop(10_000);
    await this.sandbox.close();
  }
}

/** One console message, page error or blocked request seen in a browser session. */
export interface ConsoleEntry {
  kind: 'console' | 'pageerror' | 'blocked-request' | 'failed-request';
  type: string;
  text: string;
  /** Where it came from: script URL and line, or the request URL. */
  source: string;
}

/** Anything that names the pack: its node types, its module name, its resources. */
const PACK_MENTION = new RegExp(`svc-|${PACKAGE.name.replace(/[/@]/g, '\\$&')}|node-red-location`);

/** Whether a text names the pack. */
export function packMentioned(text: string): boolean {
  return PACK_MENTION.test(text);
}

/** Console output that concerns the pack and is an error or warning (Node-RED logs editor-code failures with console.log). */
export function packProblems(entries: ConsoleEntry[]): ConsoleEntry[] {
  return entries.filter(
    (e) =>
      packMentioned(`${e.text} ${e.source}`) &&
      (e.kind !== 'console' || e.type === 'error' || e.type === 'warning' || /error|warn|exception|deprecat|fail/i.test(e.text)),
  );
}

/** Errors and warnings that do not concern the pack (Node-RED core noise), for the report. */
export function coreNoise(entries: ConsoleEntry[]): ConsoleEntry[] {
  const ofPack = new Set(packProblems(entries));
  return entries.filter((e) => !ofPack.has(e) && (e.kind !== 'console' || e.type === 'error' || e.type === 'warning'));
}

/** Debian's Chromium, headless, with one page; records the console and blocks anything but 127.0.0.1. */
export class BrowserSession {
  readonly console: ConsoleEntry[] = [];

  private constructor(
    private readonly context: BrowserContext,
    readonly page: Page,
    private readonly userDataDir: string,
  ) {}

  /** Launches Chromium whose language (navigator.language, which Node-RED's editor follows) is `locale`. */
  static async launch(locale: string): Promise<BrowserSession> {
    const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-chromium-'));
    let context: BrowserContext;
    try {
      context = await chromium.launchPersistentContext(userDataDir, {
        executablePath: CHROMIUM,
        headless: true,
        args: CHROMIUM_ARGS,
        locale,
        viewport: { width: 1400, height: 900 },
        deviceScaleFactor: 1,
        timeout: 30_000,
      });
    } catch (err) {
      fs.rmSync(userDataDir, { recursive: true, force: true });
      throw err;
    }
    const session = new BrowserSession(context, context.pages()[0] ?? (await context.newPage()), userDataDir);
    try {
      context.setDefaultTimeout(10_000);
      context.setDefaultNavigationTimeout(30_000);
      await session.record();
    } catch (err) {
      await session.close();
      throw err;
    }
    return session;
  }

  /** Another tab of the same browser (its console is not recorded). */
  newPage(): Promise<Page> {
    return this.context.newPage();
  }

  private async record(): Promise<void> {
    await this.context.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === '127.0.0.1') return route.continue();
      this.console.push({ kind: 'blocked-request', type: 'error', text: `request to ${url.origin} blocked`, source: url.href });
      return route.abort('blockedbyclient');
    });
    this.page.on('console', (message) => {
      const { url, lineNumber } = message.location();
      this.console.push({ kind: 'console', type: message.type(), text: message.text(), source: url ? `${url}:${lineNumber}` : '' });
    });
    this.page.on('pageerror', (error) => {
      this.console.push({ kind: 'pageerror', type: 'error', text: error.message, source: error.stack ?? '' });
    });
    this.page.on('requestfailed', (request) => {
      const failure = request.failure()?.errorText ?? 'failed';
      // Blocked requests are recorded above; aborted ones are cut short by a page load, as intended.
      if (failure.includes('BLOCKED_BY_CLIENT') || failure.includes('ERR_ABORTED')) return;
      this.console.push({ kind: 'failed-request', type: 'error', text: `${request.method()} ${failure}`, source: request.url() });
    });
  }

  async close(): Promise<void> {
    await this.context.close().catch(() => undefined);
    fs.rmSync(this.userDataDir, { recursive: true, force: true });
  }
}

/** Writes a console report for one session to the artifacts, so core noise can be read after a run. */
export function writeConsoleReport(name: string, entries: ConsoleEntry[]): string {
  fs.mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const file = path.join(ARTIFACTS_DIR, `console-${name}.txt`);
  fs.writeFileSync(file, entries.map((e) => `[${e.kind}/${e.type}] ${e.text}${e.source ? `  (${e.source})` : ''}`).join('\n') + '\n');
  return file;
}
