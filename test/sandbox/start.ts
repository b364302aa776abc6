import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { LocalSettings } from '@node-red/runtime';
import RED from 'node-red';
import { Sandbox, SANDBOX_DEFAULTS, startSandbox } from './index';
import { REPO_ROOT } from '../support/paths';

/**
 * `npm start`: the sandbox platform and a local Node-RED (the `node-red` dev dependency) with this
 * pack loaded as an installed module and every example flow deployed, each on its own tab, the Map
 * first. Node-RED finds worldmap (a dev dependency too) beside itself in node_modules, and serves
 * the map at /worldmap. Both listen on 127.0.0.1 only. Ctrl-C stops both.
 */

const USER_DIR = path.join(REPO_ROOT, '.dev-userdir');
const EXAMPLES_DIR = path.join(REPO_ROOT, 'examples');
const PACKAGE_NAME = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { name: string }).name;
/** The shared config node every example uses (see examples/geocode-an-address.json). */
const SANDBOX_CONFIG_ID = 'svc-sandbox';
/** The secret the examples' subscriptions sign with and their webhook receivers check, under npm start. */
const DEMO_WEBHOOK_SECRET = 'sandbox-webhook-secret';
const HOST = '127.0.0.1';

type FlowNode = Record<string, unknown> & { id: string; type: string };
/** An Express app is also a plain `(req, res, next)` handler; its typings only admit Express' own Request. */
type ChainedHandler = (req: http.IncomingMessage, res: http.ServerResponse, next: () => void) => void;

/**
 * Makes Node-RED find the pack the way it finds an installed one: a link at
 * `<userDir>/node_modules/<package name>` to the repository. Node-RED scans `<userDir>/node_modules`
 * for packages with a `node-red` section and registers their `examples/` under Import > Examples.
 */
function linkPackage(): void {
  const link = path.join(USER_DIR, 'node_modules', ...PACKAGE_NAME.split('/'));
  fs.mkdirSync(path.dirname(link), { recursive: true });
  try {
    if (fs.readlinkSync(link) === REPO_ROOT) return;
    fs.unlinkSync(link);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.symlinkSync(REPO_ROOT, link, 'dir');
}

/**
 * One flow from every examples/*.json, each example on its own tab. Flow nodes get the tab's `z`;
 * nodes without a position (config nodes such as the shared `svc-sandbox`) stay global, once.
 * The sandbox config node is pointed at the sandbox actually running.
 */
export function buildFlows(sandboxUrl: string): FlowNode[] {
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
      flowNodes.push({ ...node, z: tabId });
    }
  }
  const sandboxConfig = globalNodes.get(SANDBOX_CONFIG_ID);
  if (sandboxConfig) {
    globalNodes.set(SANDBOX_CONFIG_ID, { ...sandboxConfig, baseUrl: sandboxUrl, authUrl: sandboxUrl, sandboxUrl });
  }
  return [...tabs, ...flowNodes, ...globalNodes.values()];
}

/**
 * Writes the flows and the sandbox credentials. They are rebuilt from examples/ on every start,
 * so changes deployed from the editor last until the next `npm start`.
 */
function writeUserDir(sandboxUrl: string): void {
  linkPackage();
  const flows = buildFlows(sandboxUrl);
  fs.writeFileSync(path.join(USER_DIR, 'flows.json'), JSON.stringify(flows, null, 2));
  const credentials: Record<string, Record<string, string>> = {};
  for (const node of flows) {
    if (node.id === SANDBOX_CONFIG_ID) {
      credentials[node.id] = {
        clientId: SANDBOX_DEFAULTS.clientId,
        clientSecret: SANDBOX_DEFAULTS.clientSecret,
        apiKey: SANDBOX_DEFAULTS.apiKey,
        pubsubApiKey: SANDBOX_DEFAULTS.pubsubApiKey,
      };
    } else if (node.type === 'svc-topic') {
      // The examples' subscriptions and webhook receivers share one demo secret, so the signed
      // round trips work at once; a user importing an example enters a secret of their own.
      credentials[node.id] = { secretToken: DEMO_WEBHOOK_SECRET };
    } else if (node.type === 'svc-webhook-in' && node.verify !== 'none') {
      credentials[node.id] = { secret: DEMO_WEBHOOK_SECRET };
    }
  }
  fs.writeFileSync(path.join(USER_DIR, 'flows_cred.json'), JSON.stringify(credentials, null, 2));
}

/**
 * Node-RED's settings for `npm start`: a local instance for someone trying the pack, who should
 * see the flows at once, so no welcome tour over the first screen, no telemetry prompt.
 */
export function devSettings(editorPort: number): LocalSettings & { telemetry: { enabled: boolean }; editorTheme: { tours: boolean } } {
  return {
    uiHost: HOST,
    uiPort: editorPort,
    userDir: USER_DIR,
    flowFile: 'flows.json',
    flowFilePretty: true,
    // A local development instance: credentials stay unencrypted in .dev-userdir/flows_cred.json
    // (gitignored), so this script can write the sandbox's known test credentials there.
    credentialSecret: false,
    httpAdminRoot: '/',
    httpNodeRoot: '/',
    logging: { console: { level: 'info', metrics: false, audit: false } },
    // A local development instance: no telemetry consent prompt and no update check.
    telemetry: { enabled: false },
    editorTheme: { tours: false },
  };
}

/** Prints each sandbox request once, after its response (and forgets it), so clicks in the editor show here. */
function printSandboxRequests(sandbox: Sandbox): NodeJS.Timeout {
  return setInterval(() => {
    while (sandbox.log.length > 0 && sandbox.log[0].status !== undefined) {
      const [entry] = sandbox.log.splice(0, 1);
      console.log(`[sandbox] ${entry.method} ${entry.path} -> ${entry.status} (${entry.endpoint})`);
    }
  }, 250);
}

async function main(): Promise<void> {
  const sandboxPort = Number(process.env.SANDBOX_PORT ?? 18790);
  const editorPort = Number(process.env.PORT ?? 1880);
  const sandbox = await startSandbox({ port: sandboxPort, host: HOST });
  console.log(`sandbox platform listening on ${sandbox.url}`);
  writeUserDir(sandbox.url);

  const server = http.createServer();
  const settings = devSettings(editorPort);
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
  const printer = printSandboxRequests(sandbox);
  console.log(`\nNode-RED editor: http://${HOST}:${editorPort}/   (Ctrl-C stops Node-RED and the sandbox)\n`);

  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    clearInterval(printer);
    void RED.stop()
      .then(() => {
        server.closeAllConnections();
        server.close();
        return sandbox.close();
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
