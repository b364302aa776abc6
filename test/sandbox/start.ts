import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { LocalSettings } from '@node-red/runtime';
import { SANDBOX_DEFAULTS } from '../../sandbox/index';
import { countsOf, SandboxSnapshot } from '../../sandbox/state-store';
import { SANDBOX_FOLDER, SANDBOX_PATH, STATE_FILE } from '../../nodes/lib/node-red/builtin-sandbox';
import {
  BACKUPS_KEPT,
  CredentialKeys,
  Credentials,
  FoundCredentials,
  SECRET_VARIABLE,
  backUp,
  credentialKeys,
  encryptCredentials,
  readCredentials,
  sameCredentials,
} from './start-files';
import { writeAtomically } from '../../nodes/lib/util/files';
import { NODE_RED_DIR, REPO_ROOT } from '../support/paths';

/**
 * `npm start`: a local Node-RED (the `node-red` dev dependency, or NODE_RED_PATH's) with this pack loaded
 * as an installed module and every example flow deployed, each on its own tab, the Map first; the
 * examples' config node uses the built-in sandbox, which this Node-RED serves itself (issue 52).
 * Node-RED finds worldmap (a dev dependency too) beside itself in node_modules, and serves the map at
 * /worldmap. It listens on 127.0.0.1 only. Ctrl-C stops it.
 *
 * Nothing made in the editor is lost at a restart: the examples are refreshed, the user's own tabs
 * and nodes kept with their credentials (`--keep-flows`: everything kept as deployed), and the
 * sandbox's topics, subscriptions and jobs are kept in the user directory (`--fresh`: start
 * the sandbox empty). What an earlier `npm start` ran on a sandbox of its own (127.0.0.1:18790) moves
 * to the built-in one: its state file, and config nodes of the user's that pointed there with its
 * credentials (migrateOldSandbox). Credentials stay as encrypted as they were: NODE_RED_CREDENTIAL_SECRET gives
 * Node-RED its credentialSecret, and a flows_cred.json no known secret opens is left untouched
 * (start-files.ts). The flows and credentials found are copied to backups/ before anything is
 * written. The terminal says what was refreshed, what was kept and what was not.
 */

/** Node-RED's user directory and the sandbox's state; START_USERDIR moves it (the tests do, to a temp directory). */
const USER_DIR = process.env.START_USERDIR ? path.resolve(process.env.START_USERDIR) : path.join(REPO_ROOT, '.dev-userdir');
/** The built-in sandbox's state (nodes/lib/node-red/builtin-sandbox.ts), and where `npm start` kept it before it. */
const SANDBOX_STATE_FILE = path.join(USER_DIR, SANDBOX_FOLDER, STATE_FILE);
const OLD_SANDBOX_STATE_FILE = path.join(USER_DIR, 'sandbox-state.json');
/** Where `npm start` ran its own sandbox before the built-in one. */
const OLD_SANDBOX_PORT = '18790';
const EXAMPLES_DIR = path.join(REPO_ROOT, 'examples');
/** This Node-RED's address as the examples write it (Node-RED's default port): the Map's streets request goes to it. */
const EXAMPLE_NODE_RED_URL = 'http://127.0.0.1:1880';
const PACKAGE_NAME = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string }).name;
const HOST = '127.0.0.1';
const WORLDMAP = 'node-red-contrib-web-worldmap';
/**
 * The Node-RED that runs: the `node-red` dev dependency, or the install NODE_RED_PATH names (the
 * browser suite runs npm start so on Node-RED 5, with that install's Node; CONTRIBUTING).
 */
const RED = require(NODE_RED_DIR) as typeof import('node-red');

type FlowNode = Record<string, unknown> & { id: string; type: string };
/** An Express app is also a plain `(req, res, next)` handler; its typings only admit Express' own Request. */
type ChainedHandler = (req: http.IncomingMessage, res: http.ServerResponse, next: () => void) => void;

/**
 * Makes Node-RED find the pack the way it finds an installed one: a link at
 * `<userDir>/node_modules/<package name>` to the repository. Node-RED scans `<userDir>/node_modules`
 * for packages with a `node-red` section and registers their `examples/` under Import > Examples.
 * A Node-RED from NODE_RED_PATH has no worldmap beside it: worldmap is linked there too.
 */
function linkPackages(): void {
  linkModule(PACKAGE_NAME, REPO_ROOT);
  if (process.env.NODE_RED_PATH) linkModule(WORLDMAP, path.dirname(require.resolve(`${WORLDMAP}/package.json`)));
}

function linkModule(name: string, target: string): void {
  const link = path.join(USER_DIR, 'node_modules', ...name.split('/'));
  fs.mkdirSync(path.dirname(link), { recursive: true });
  try {
    if (fs.readlinkSync(link) === target) return;
    fs.unlinkSync(link);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.symlinkSync(target, link, 'dir');
}

/**
 * One flow from every examples/*.json, each example on its own tab. Flow nodes get the tab's `z`;
 * nodes without a position (config nodes such as the shared `svc-sandbox`, on the built-in sandbox) stay global, once.
 */
export function buildFlows(editorUrl = EXAMPLE_NODE_RED_URL): FlowNode[] {
  const tabs: FlowNode[] = [];
  const flowNodes: FlowNode[] = [];
  const globalNodes = new Map<string, FlowNode>();
  const ownerOf = new Map<string, string>();
  const examples: Array<{ file: string; nodes: FlowNode[] }> = [];
  for (const file of fs
    .readdirSync(EXAMPLES_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    try {
      const nodes = JSON.parse(fs.readFileSync(path.join(EXAMPLES_DIR, file), 'utf8')) as FlowNode[];
      if (!Array.isArray(nodes)) throw new Error('not an array of nodes');
      examples.push({ file, nodes });
    } catch (err) {
      console.warn(`skipping examples/${file}: ${(err as Error).message}`);
    }
  }
  // The editor opens on the first tab: the Map (examples drawing on worldmap) comes first.
  const drawsOnMap = (nodes: FlowNode[]) => nodes.some((node) => node.type === 'worldmap');
  examples.sort((a, b) => Number(drawsOnMap(b.nodes)) - Number(drawsOnMap(a.nodes)));
  for (const { file, nodes } of examples) {
    const tabId = `tab-${path.basename(file, '.json')}`;
    const comment = nodes.find((n) => n.type === 'comment');
    tabs.push({ id: tabId, type: 'tab', label: typeof comment?.name === 'string' ? comment.name : path.basename(file, '.json'), disabled: false, info: '' });
    for (const node of nodes) {
      if ('z' in node || !('x' in node)) {
        const known = globalNodes.get(node.id);
        if (known && JSON.stringify(known) !== JSON.stringify(node)) {
          console.warn(`examples/${file}: config node ${node.id} differs from the one in ${ownerOf.get(node.id)}; using the first`);
        }
        if (!known) {
          globalNodes.set(node.id, node);
          ownerOf.set(node.id, `examples/${file}`);
        }
        continue;
      }
      if (ownerOf.has(node.id)) {
        throw new Error(`examples/${file} reuses node id ${node.id} from ${ownerOf.get(node.id)}: give each example its own ids`);
      }
      ownerOf.set(node.id, `examples/${file}`);
      // A request of an example to this Node-RED (the Map's streets, from the built-in sandbox) goes to the port this run listens on.
      const url =
        typeof node.url === 'string' && node.url.startsWith(EXAMPLE_NODE_RED_URL) ? { url: editorUrl + node.url.slice(EXAMPLE_NODE_RED_URL.length) } : {};
      flowNodes.push({ ...node, ...url, z: tabId });
    }
  }
  return [...tabs, ...flowNodes, ...globalNodes.values()];
}

/** What `npm start` did to the flows it found, for the terminal. */
export interface FlowsUpdate {
  flows: FlowNode[];
  credentials: Credentials;
  /** Labels of the example tabs, and names of the example config nodes, that differed from examples/ and were put back. */
  replaced: string[];
  /** Tabs, other nodes, and config nodes that are not the examples' and were kept as they were. */
  kept: { tabs: number; nodes: number; configNodes: number };
}

/**
 * The user's config nodes that an earlier `npm start` pointed at its own sandbox (an address on port
 * 18790 of this machine, with that sandbox's fixed API key or client id) moved to the built-in sandbox:
 * platform 'sandbox', their addresses emptied and those credentials dropped (a Redis URL is kept).
 * Their nodes' demo webhook secrets stay: both ends of a subscription still hold the same one.
 * Returns the flows, the credentials and the names of the nodes moved.
 */
export function migrateOldSandbox(flows: FlowNode[], credentials: Credentials): { flows: FlowNode[]; credentials: Credentials; moved: string[] } {
  const moved: string[] = [];
  const kept: Credentials = { ...credentials };
  const onOldSandbox = (node: FlowNode) => {
    if (node.type !== 'svc-config' || node.platform === 'sandbox') return false;
    const oldAddress = ['baseUrl', 'authUrl', 'sandboxUrl'].some((setting) => {
      const address = typeof node[setting] === 'string' ? node[setting] : '';
      return /^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?\/?$/.test(address) && new URL(address).port === OLD_SANDBOX_PORT;
    });
    const held = (credentials[node.id] ?? {}) as Record<string, unknown>;
    return oldAddress && (held.apiKey === SANDBOX_DEFAULTS.apiKey || held.clientId === SANDBOX_DEFAULTS.clientId);
  };
  const migrated = flows.map((node) => {
    if (!onOldSandbox(node)) return node;
    moved.push(typeof node.name === 'string' && node.name !== '' ? `"${node.name}" (${node.id})` : node.id);
    const { redisUrl } = (credentials[node.id] ?? {}) as { redisUrl?: unknown };
    if (redisUrl) kept[node.id] = { redisUrl };
    else delete kept[node.id];
    return { ...node, version: 3, platform: 'sandbox', baseUrl: '', authUrl: '', sandboxUrl: '', audience: '', projectId: '' };
  });
  return { flows: migrated, credentials: kept, moved };
}

/** Whether a deployed node still is the example's: every property the example sets has its value (the editor may add others). */
function sameAsExample(deployed: FlowNode, example: FlowNode): boolean {
  return Object.entries(example).every(([key, value]) => JSON.stringify(deployed[key]) === JSON.stringify(value));
}

/**
 * The examples refreshed into the flows deployed last time: every node of an example (its tab, its
 * nodes, its config nodes) is put back as examples/ has it, with its credentials; every other node
 * (tabs, subflows and config nodes of the user's, nodes the user added to an example's tab) is kept
 * as it was. Every credential that is not an example node's is kept as it was (Node-RED drops those
 * of nodes gone at its next deploy). Without previous flows, the examples alone.
 */
export function refreshExamples(examples: FlowNode[], previous: FlowNode[] | undefined, previousCredentials: Credentials): FlowsUpdate {
  // The example nodes hold no credentials: the built-in sandbox's own are found, never typed.
  const credentials: Credentials = {};
  const exampleIds = new Set(examples.map((node) => node.id));
  for (const [id, nodeCredentials] of Object.entries(previousCredentials)) {
    if (!exampleIds.has(id)) credentials[id] = nodeCredentials;
  }
  if (!previous) return { flows: examples, credentials, replaced: [], kept: { tabs: 0, nodes: 0, configNodes: 0 } };
  const before = new Map(previous.map((node) => [node.id, node]));
  const tabLabel = new Map(examples.filter((node) => node.type === 'tab').map((tab) => [tab.id, String(tab.label)]));
  const replaced = new Set<string>();
  for (const node of examples) {
    const deployed = before.get(node.id);
    // A node that was never deployed (an example added since) is new, not replaced.
    if (!deployed || sameAsExample(deployed, node)) continue;
    const where = node.type === 'tab' ? node.id : typeof node.z === 'string' ? node.z : undefined;
    replaced.add(where ? (tabLabel.get(where) ?? where) : `${typeof node.name === 'string' && node.name !== '' ? node.name : node.id} (config node)`);
  }
  // Example nodes the user deleted come back too: their tab counts as replaced.
  for (const node of examples) {
    if (!before.has(node.id) && typeof node.z === 'string' && before.has(node.z)) replaced.add(tabLabel.get(node.z) ?? node.z);
  }
  const own = previous.filter((node) => !exampleIds.has(node.id));
  const kept = { tabs: 0, nodes: 0, configNodes: 0 };
  for (const node of own) {
    if (node.type === 'tab') kept.tabs++;
    else if ('x' in node || 'z' in node) kept.nodes++;
    else kept.configNodes++;
  }
  const tabs = [...examples.filter((node) => node.type === 'tab'), ...own.filter((node) => node.type === 'tab')];
  const rest = [...examples.filter((node) => node.type !== 'tab'), ...own.filter((node) => node.type !== 'tab')];
  return { flows: [...tabs, ...rest], credentials, replaced: [...replaced], kept };
}

/** A file for the terminal: relative to the repository when inside it. */
function shown(file: string): string {
  const relative = path.relative(REPO_ROOT, file);
  return relative.startsWith('..') ? file : relative;
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`${shown(file)} cannot be read (${(err as Error).message}): move it away or fix it, then start again`, { cause: err });
  }
}

const FLOWS_FILE = path.join(USER_DIR, 'flows.json');
const CREDENTIALS_FILE = path.join(USER_DIR, 'flows_cred.json');

/**
 * Writes the flows and credentials Node-RED starts with: the examples refreshed into what was deployed
 * last time (see refreshExamples), or, with `--keep-flows`, what was deployed last time as it is.
 * Both files are read first (one that cannot be read stops the start before anything is written),
 * copied to backups/ (backUp), then written where they change. The credentials are written with the
 * secret Node-RED reads them with (never in plain text when they were encrypted); an encrypted file
 * that no known secret opens is not written at all. Returns the lines for the terminal.
 */
async function writeUserDir(keepFlows: boolean, keys: CredentialKeys, editorUrl: string): Promise<{ text: string; credentialsRead: boolean }> {
  linkPackages();
  const previous = readJson<FlowNode[]>(FLOWS_FILE);
  const found = readCredentials(CREDENTIALS_FILE, keys.known, shown);
  const credentialsRead = found.kind !== 'sealed';
  const backup = backUp(USER_DIR, [FLOWS_FILE, CREDENTIALS_FILE]);
  const lines: string[] = [];
  if (backup) {
    lines.push(
      backup.made
        ? `backup: the flows and credentials found copied to ${shown(backup.dir)} before any change (the newest ${BACKUPS_KEPT} backups are kept)`
        : `backup: the flows and credentials found are those of ${shown(backup.dir)}`,
    );
  }
  if (found.kind === 'sealed') lines.push(...sealedLines(keys, backup?.dir));
  // Config nodes on the sandbox an earlier npm start ran itself move to the built-in one (told by their credentials, so not when sealed).
  const old =
    previous && found.kind !== 'sealed' && found.kind !== 'none'
      ? migrateOldSandbox(previous, found.credentials)
      : { flows: previous, credentials: found.kind === 'sealed' || found.kind === 'none' ? {} : found.credentials, moved: [] };
  if (old.moved.length > 0) {
    lines.push(
      `sandbox: moved to the built-in sandbox (Platform: built-in sandbox; their addresses and the old sandbox's credentials removed), as the sandbox on 127.0.0.1:${OLD_SANDBOX_PORT} no longer runs: ${old.moved.join(', ')}`,
    );
  }
  if (keepFlows && previous) {
    if (old.moved.length > 0 && found.kind !== 'sealed') {
      await writeAtomically(FLOWS_FILE, JSON.stringify(old.flows, null, 2));
      lines.push(await writeCredentials(found, old.credentials, keys));
    }
    lines.push(`flows: ${shown(FLOWS_FILE)} deployed as it is (--keep-flows): the examples were not refreshed`);
    return { text: lines.join('\n'), credentialsRead };
  }
  const update = refreshExamples(buildFlows(editorUrl), old.flows, old.credentials);
  if (JSON.stringify(update.flows) !== JSON.stringify(previous)) await writeAtomically(FLOWS_FILE, JSON.stringify(update.flows, null, 2));
  if (credentialsRead) lines.push(await writeCredentials(found, update.credentials, keys));
  if (!previous) {
    lines.push(`flows: ${shown(FLOWS_FILE)} written from examples/`);
    return { text: lines.join('\n'), credentialsRead };
  }
  const { tabs, nodes, configNodes } = update.kept;
  const credentialsKept = credentialsRead ? 'with their credentials' : 'without their credentials (see credentials above)';
  lines.push(
    `flows: the examples refreshed from examples/ into ${shown(FLOWS_FILE)}; kept as they were: ${tabs} tab(s), ${nodes} other node(s) and ${configNodes} config node(s) of yours, ${credentialsKept}`,
  );
  if (update.replaced.length > 0 && backup) {
    lines.push(`  put back as examples/ has them (your changes there are in ${shown(path.join(backup.dir, 'flows.json'))}): ${update.replaced.join(', ')}`);
  }
  lines.push('  `npm start -- --keep-flows` deploys the flows as they are, without refreshing the examples');
  return { text: lines.join('\n'), credentialsRead };
}

/** Writes flows_cred.json, if it changes, with the secret Node-RED reads it with (plain text only when it has none); the line for the terminal. */
async function writeCredentials(found: Exclude<FoundCredentials, { kind: 'sealed' }>, credentials: Credentials, keys: CredentialKeys): Promise<string> {
  const target = keys.nodeRedReads;
  const how = target
    ? `encrypted with ${target.source}`
    : `in plain text (no credentialSecret; \`${SECRET_VARIABLE}=<a secret of yours> npm start\` encrypts it)`;
  const sameSecret = found.kind === 'plain' ? target === undefined : found.kind === 'decrypted' && found.secret.secret === target?.secret;
  if (found.kind !== 'none' && sameSecret && sameCredentials(found.credentials, credentials)) {
    return `credentials: ${shown(CREDENTIALS_FILE)} kept as it was, ${how}`;
  }
  await writeAtomically(CREDENTIALS_FILE, JSON.stringify(target ? encryptCredentials(target.secret, credentials) : credentials, null, 2));
  return `credentials: ${shown(CREDENTIALS_FILE)} written ${how}`;
}

/** What the terminal says of an encrypted flows_cred.json no known secret opens: what was not done, why, and what to do. */
function sealedLines(keys: CredentialKeys, backupDir: string | undefined): string[] {
  const tried =
    keys.known.length > 0 ? `${keys.known.map((key) => key.source).join(' nor ')} does not open it` : `no credentialSecret was given (${SECRET_VARIABLE})`;
  return [
    `credentials: ${shown(CREDENTIALS_FILE)} is encrypted and ${tried}: it was left as it was, byte for byte; no credentials were read from it or added to it`,
    `  Node-RED cannot read it either: every node starts without its credentials, the examples' too (Sandbox platform's keys, the webhook secrets),` +
      ` and a Deploy replaces the file${backupDir ? ` (the copy in ${shown(backupDir)} stays)` : ''}`,
    `  to keep them: stop (Ctrl-C) and start again with \`${SECRET_VARIABLE}=<the credentialSecret that encrypted it> npm start\`;` +
      ` to start over with the examples' credentials, move ${shown(CREDENTIALS_FILE)} away`,
  ];
}

/**
 * Node-RED's settings for `npm start`: a local instance for someone trying the pack, who should
 * see the flows at once, so no welcome tour over the first screen, no telemetry prompt.
 */
export function devSettings(
  editorPort: number,
  credentialSecret: string | false | undefined = false,
): LocalSettings & { telemetry: { enabled: boolean }; editorTheme: { tours: boolean } } {
  return {
    uiHost: HOST,
    uiPort: editorPort,
    userDir: USER_DIR,
    flowFile: 'flows.json',
    flowFilePretty: true,
    // A local development instance: credentials stay unencrypted in .dev-userdir/flows_cred.json
    // (gitignored) unless the user gives a secret or Node-RED generated one there (credentialKeys).
    ...(credentialSecret === undefined ? {} : { credentialSecret }),
    httpAdminRoot: '/',
    httpNodeRoot: '/',
    logging: { console: { level: 'info', metrics: false, audit: false } },
    // A local development instance: no telemetry consent prompt and no update check.
    telemetry: { enabled: false },
    editorTheme: { tours: false },
  };
}

/** `npm start -- --fresh --keep-flows`: what the arguments after `--` ask for. */
export function startOptions(args: string[]): { fresh: boolean; keepFlows: boolean } {
  const known = ['--fresh', '--keep-flows'];
  const unknown = args.filter((arg) => !known.includes(arg));
  if (unknown.length > 0) throw new Error(`unknown option ${unknown.join(' ')}: npm start takes ${known.join(' and ')}`);
  return { fresh: args.includes('--fresh'), keepFlows: args.includes('--keep-flows') };
}

/**
 * The built-in sandbox's state for this start, for the terminal: moved from where an earlier `npm start`
 * kept its own sandbox's, removed with `--fresh`, else what it holds (the sandbox reads it when it starts).
 */
function sandboxStateLines(fresh: boolean): string[] {
  const lines: string[] = [];
  if (fs.existsSync(OLD_SANDBOX_STATE_FILE)) {
    if (fs.existsSync(SANDBOX_STATE_FILE)) {
      lines.push(
        `sandbox state: ${shown(OLD_SANDBOX_STATE_FILE)} (the old sandbox's) left as it is: the built-in sandbox has ${shown(SANDBOX_STATE_FILE)} already`,
      );
    } else {
      fs.mkdirSync(path.dirname(SANDBOX_STATE_FILE), { recursive: true });
      fs.renameSync(OLD_SANDBOX_STATE_FILE, SANDBOX_STATE_FILE);
      lines.push(`sandbox state: moved from ${shown(OLD_SANDBOX_STATE_FILE)} to ${shown(SANDBOX_STATE_FILE)}, the built-in sandbox's`);
    }
  }
  if (fresh) {
    fs.rmSync(SANDBOX_STATE_FILE, { force: true });
    lines.push(`sandbox state: started empty (--fresh); kept in ${shown(SANDBOX_STATE_FILE)} from now on`);
    return lines;
  }
  const snapshot = readJson<SandboxSnapshot>(SANDBOX_STATE_FILE);
  if (!snapshot) {
    lines.push(`sandbox state: none yet; topics, subscriptions and jobs are kept in ${shown(SANDBOX_STATE_FILE)} across restarts`);
    return lines;
  }
  const counts = countsOf(snapshot);
  lines.push(
    `sandbox state: kept from the last run (${shown(SANDBOX_STATE_FILE)}): ${counts.topics} topic(s), ${counts.subscriptions} subscription(s), ` +
      `${counts.jobs} job(s); \`npm start -- --fresh\` starts it empty`,
  );
  return lines;
}

async function main(): Promise<void> {
  const options = startOptions(process.argv.slice(2));
  const editorPort = Number(process.env.PORT ?? 1880);
  const keys = credentialKeys(USER_DIR, process.env, shown);
  const userDir = await writeUserDir(options.keepFlows, keys, `http://${HOST}:${editorPort}`);
  console.log(
    `sandbox: the built-in sandbox, served by this Node-RED at http://${HOST}:${editorPort}/${SANDBOX_PATH} while a config node on it is deployed ` +
      `(the examples' is); its own credentials are in ${shown(path.join(USER_DIR, SANDBOX_FOLDER, 'sandbox.json'))}, nothing to type`,
  );
  console.log(sandboxStateLines(options.fresh).join('\n'));
  console.log(userDir.text);

  const server = http.createServer();
  const settings = devSettings(editorPort, keys.setting);
  RED.init(server, settings);
  // The admin app responds first (editor, admin API); whatever it passes on goes to the HTTP nodes.
  const adminApp = RED.httpAdmin as unknown as ChainedHandler;
  const nodeApp = RED.httpNode as unknown as ChainedHandler;
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    adminApp(req, res, () => {
      nodeApp(req, res, () => {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(editorPort, HOST, () => resolve());
  });
  await RED.start();
  console.log(`\nNode-RED editor: http://${HOST}:${editorPort}/   (Ctrl-C stops it)\n`);

  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    // Stopping the flows closes the sandbox's config nodes: the last one saves its state.
    void RED.stop()
      .then(() => {
        server.closeAllConnections();
        server.close();
      })
      .then(
        () => process.exit(0),
        (err: unknown) => {
          console.error(err);
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

// Run as `npm start`; imported (by the tests), it only lends its flows and settings.
if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
