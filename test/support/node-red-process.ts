import { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import should from 'should';
import { NODE_RED_DIR, REPO_ROOT, packageVersion } from './paths';
import { killGroup, runCommand, spawnGroup } from './process-group';

/**
 * The pack as a user gets it: packed as `npm publish` would, installed with `npm install <tarball>`
 * into a Node-RED user directory, and Node-RED started on that directory as a child process.
 * Used by `npm run test:package` and the browser suite.
 */

/** What `npm pack --json` reports of one tarball. */
export interface PackResult {
  name: string;
  version: string;
  filename: string;
  /** Bytes of the .tgz. */
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: Array<{ path: string; size: number }>;
}

/** Which Node-RED to start, with which Node binary. */
export interface NodeRedRuntime {
  /** For test titles, e.g. "Node-RED 5 on Node 24". */
  title: string;
  /** The major version of `node`, checked against the version Node-RED logs at start. */
  nodeMajor: number;
  node: string;
  redJs: string;
  /** Makes the runtime available (installs it when needed). */
  prepare(): void;
}

/**
 * The tarball in what `npm pack --json` (an array of tarballs) or `npm publish --json` (an object
 * keyed by package name) prints; lifecycle scripts' output goes to stderr, but skip anything before it.
 */
export function parsePackJson(stdout: string): PackResult {
  const parsed: unknown = JSON.parse(stdout.slice(stdout.search(/^[[{]/m)));
  const [packed] = Array.isArray(parsed) ? (parsed as unknown[]) : Object.values(parsed as Record<string, unknown>);
  return packed as PackResult;
}

/** Node-RED's log line once the flows have started, in English or in Japanese (a runtime whose `lang` is ja). */
export function flowsStarted(line: string): boolean {
  return line.includes('Started flows') || line.includes('フローを開始しました');
}

/** Node-RED 4 (the dev dependency) on the Node running this process (Node 20 in CI). */
export const NODE_RED_4: NodeRedRuntime = {
  title: `Node-RED 4.1 on Node ${process.versions.node.split('.')[0]}`,
  nodeMajor: Number(process.versions.node.split('.')[0]),
  node: process.execPath,
  redJs: require.resolve('node-red/red.js'),
  prepare: () => undefined,
};

/**
 * The Node-RED a suite starts as a child process: 4.1 under `npm test`, and the Node-RED that
 * NODE_RED_PATH names (5, on the Node running the suite) under `npm run test:nr5`.
 */
export function runtimeUnderTest(): NodeRedRuntime {
  if (!process.env.NODE_RED_PATH) return NODE_RED_4;
  return {
    title: `Node-RED ${packageVersion(NODE_RED_DIR)} on Node ${process.versions.node.split('.')[0]}`,
    nodeMajor: Number(process.versions.node.split('.')[0]),
    node: process.execPath,
    redJs: path.join(NODE_RED_DIR, 'red.js'),
    prepare: () => undefined,
  };
}

/**
 * The environment of a user's own shell: this process's, without what `npm run` adds for its scripts
 * (node_modules/.bin on PATH, npm_lifecycle_*, npm_package_*), so that a nested npm, a clone's build
 * or Node-RED's palette installer can neither use this repository's tools nor see its package.
 * npm configuration (npm_config_*: registry, cache …) is kept.
 */
export function userEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^npm_(lifecycle|package)_/.test(name) || ['npm_command', 'npm_execpath', 'npm_node_execpath', 'INIT_CWD', 'NODE'].includes(name)) continue;
    env[name] = value;
  }
  env.PATH = (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => !/node_modules[\\/]\.bin$/.test(dir))
    .join(path.delimiter);
  return { ...env, ...extra };
}

/** The ports of the Fetch standard's "bad port" list from 10,000 up: `fetch` refuses them ("bad port"). */
const FETCH_BAD_PORTS = new Set([10080]);

/**
 * A loopback port nothing listens on (for the moment), outside the range the kernel takes connections'
 * own ports from (ip_local_port_range). A server stopped and started again on its port (a Redis
 * restarted, a Node-RED killed) then never finds it taken by a client's connection meanwhile, and a
 * client retrying a closed port never connects to itself (a TCP self-connect: its own port drawn equal
 * to the one it dials). Not one of `taken`: ports drawn already for servers not listening yet; nor one fetch refuses.
 */
export async function freePort(taken: ReadonlySet<number> = new Set()): Promise<number> {
  const [first, last] = portsOutsideEphemeralRange();
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = first + Math.floor(Math.random() * (last - first + 1));
    if (!taken.has(port) && !FETCH_BAD_PORTS.has(port) && (await canListen(port))) return port;
  }
  throw new Error(`no free loopback port in ${first}-${last} after 50 tries`);
}

/** `count` different ports from freePort, for servers started together: none listens when the next is drawn. */
export async function freePorts(count: number): Promise<number[]> {
  const taken = new Set<number>();
  while (taken.size < count) taken.add(await freePort(taken));
  return [...taken];
}

/** The larger of the port ranges below and above the ephemeral range, leaving the well-known ports and the first thousands alone. */
function portsOutsideEphemeralRange(): [number, number] {
  let [low, high] = [32768, 60999];
  try {
    [low, high] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  } catch {
    // Not Linux: its usual range.
  }
  const below: [number, number] = [10_000, low - 1];
  const above: [number, number] = [high + 1, 65_535];
  return below[1] - below[0] >= above[1] - above[0] ? below : above;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** `npm pack` of the working tree into `destination` (the package test packs a fresh clone instead). */
export async function packModule(destination: string): Promise<PackResult> {
  const { stdout } = await runCommand('npm', ['pack', '--json', '--pack-destination', destination], { cwd: REPO_ROOT, timeoutMs: 180_000 });
  return parsePackJson(stdout);
}

/** A new user directory `parent/name` with the package.json Node-RED itself creates, so npm installs here. */
export function newUserDir(parent: string, name: string): string {
  const userDir = path.join(parent, name);
  fs.mkdirSync(userDir);
  fs.writeFileSync(path.join(userDir, 'package.json'), JSON.stringify({ name: 'node-red-project', version: '0.0.1', private: true }));
  return userDir;
}

/** `npm install <tarball>` in the user directory, as a user installs a downloaded pack. */
export async function installTarball(userDir: string, tarball: string): Promise<void> {
  await runCommand('npm', ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund'], { cwd: userDir, env: userEnv(), timeoutMs: 120_000 });
}

/** What Node-RED returns for an installed module (`POST /nodes`, `GET /nodes/<module>`). */
export interface ModuleInfo {
  name: string;
  version: string;
  nodes: Array<{ id: string; types: string[]; enabled: boolean; err?: unknown }>;
}

/**
 * A Node-RED child process on `userDir`, with its whole log kept. It leads a process group of its
 * own, so that a palette install's `npm` still running when the test gives up is stopped with it.
 */
export class NodeRedProcess {
  readonly log: string[] = [];
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;

  /**
   * Starts Node-RED (the runtime under test unless one is named) and resolves once its flows have
   * started (at most `timeoutMs`); stops it if that fails. `env` adds to the environment (e.g.
   * NODE_EXTRA_CA_CERTS).
   */
  static async start(userDir: string, runtime: NodeRedRuntime = runtimeUnderTest(), timeoutMs = 60_000, env: NodeJS.ProcessEnv = {}): Promise<NodeRedProcess> {
    const nodeRed = new NodeRedProcess(userDir, await freePort(), runtime, env);
    try {
      await nodeRed.started(timeoutMs);
    } catch (err) {
      await nodeRed.stop(5_000);
      throw err;
    }
    return nodeRed;
  }

  private constructor(
    readonly userDir: string,
    readonly port: number,
    runtime: NodeRedRuntime,
    env: NodeJS.ProcessEnv,
  ) {
    // Node-RED's own command line, listening on the loopback only.
    const args = ['--userDir', userDir, '--port', String(port), '--define', 'uiHost=127.0.0.1', '--no-telemetry'];
    this.child = spawnGroup(runtime.node, [runtime.redJs, ...args], {
      cwd: userDir,
      // The palette installer's npm inherits this: prefer the npm cache, as our own installs do.
      env: userEnv({ npm_config_prefer_offline: 'true', ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const [prefix, stream] of [
      ['', this.child.stdout],
      ['stderr:', this.child.stderr],
    ] as const) {
      if (!stream) continue;
      readline.createInterface({ input: stream }).on('line', (line) => {
        if (line.trim() !== '') this.log.push(prefix + line);
      });
    }
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
  }

  /** Node-RED's own process id (it runs as this child, not below a shell). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/`;
  }

  /**
   * Warnings and errors, and anything on stderr (e.g. Node's deprecation warnings), without
   * timestamps, process ids and the user directory, so that two runs can be compared.
   */
  problems(): string[] {
    return this.log
      .filter((line) => line.startsWith('stderr:') || /\[(warn|error)\]/.test(line))
      .map((line) =>
        line
          .replace(/^(stderr:)?\d+ \w+ [\d:]+ - /, '$1')
          .replace(/\(node:\d+\)/, '(node)')
          .split(this.userDir)
          .join('<userDir>'),
      );
  }

  /**
   * Resolves once the flows have started and the HTTP server listens; rejects if Node-RED exits or
   * takes longer than `timeoutMs`. Node-RED starts its flows while the editor loads its catalogs, and
   * only then listens: under load "Started flows" comes first, and a request then is refused.
   */
  private async started(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    // Node-RED's "Server now running at <url>" in any language: an info line naming this port (a port in use is an error line).
    const listening = new RegExp(`\\[info\\] .*//127\\.0\\.0\\.1:${this.port}(/|$)`);
    while (!this.log.some(flowsStarted) || !this.log.some((line) => listening.test(line))) {
      if (this.hasExited()) throw new Error(`Node-RED exited early:\n${this.log.join('\n')}`);
      if (Date.now() > deadline) throw new Error(`Node-RED did not start within ${timeoutMs} ms:\n${this.log.join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** A request to Node-RED's HTTP server, given up after `timeoutMs`. */
  request(urlPath: string, init: RequestInit = {}, timeoutMs = 30_000): Promise<Response> {
    return fetch(`http://127.0.0.1:${this.port}${urlPath}`, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  }

  /** GET, expecting 200; JSON when `accept` asks for it, else the text. */
  async get<T>(urlPath: string, accept = 'application/json', headers: Record<string, string> = {}): Promise<T> {
    const response = await this.request(urlPath, { headers: { ...headers, accept } });
    should(response.status).equal(200, `GET ${urlPath}`);
    return (accept === 'application/json' ? response.json() : response.text()) as Promise<T>;
  }

  /**
   * Installs a module tarball as the editor's Manage palette > Install > Upload module does: a
   * multipart `POST /nodes` with the file in the form field `tarball`. Node-RED writes it to
   * `<userDir>/nodes/` and runs `npm install` on it there (dependencies from the npm cache or registry).
   * `headers`: the editor's, e.g. its Authorization with adminAuth.
   */
  async upload(tarball: string, timeoutMs = 180_000, headers: Record<string, string> = {}): Promise<ModuleInfo> {
    const form = new FormData();
    form.append('tarball', new Blob([fs.readFileSync(tarball)], { type: 'application/gzip' }), path.basename(tarball));
    const response = await this.request('/nodes', { method: 'POST', body: form, headers }, timeoutMs);
    const body = await response.text();
    if (response.status !== 200) throw new Error(`POST /nodes responded with ${response.status}: ${body}\n${this.log.join('\n')}`);
    return JSON.parse(body) as ModuleInfo;
  }

  private hasExited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** SIGKILL: the process dies at once, as in a crash or an out-of-memory kill, with no close handler run. */
  async kill(): Promise<void> {
    if (this.hasExited()) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  /**
   * Ctrl-C, as a user stops it (or SIGTERM, as a service manager or a container runtime does); its
   * process group is killed if it has not stopped within `timeoutMs`.
   */
  async stop(timeoutMs: number, signal: 'SIGINT' | 'SIGTERM' = 'SIGINT'): Promise<void> {
    if (this.hasExited()) return;
    this.child.kill(signal);
    const pid = this.child.pid;
    const timer = setTimeout(() => pid !== undefined && killGroup(pid, 'SIGKILL'), timeoutMs);
    await this.exited;
    clearTimeout(timer);
  }
}
