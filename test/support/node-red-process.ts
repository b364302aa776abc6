import { ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { promisify } from 'node:util';
import should from 'should';
import { REPO_ROOT } from './paths';

/**
 * The pack as a user gets it: packed as `npm publish` would, installed with `npm install <tarball>`
 * into a Node-RED user directory, and Node-RED started on that directory as a child process.
 * Used by `npm run test:package` and the browser suite.
 */

const run = promisify(execFile);

export interface PackResult {
  filename: string;
  files: Array<{ path: string }>;
}

/** Which Node-RED to start, with which Node binary. */
export interface NodeRedRuntime {
  node: string;
  redJs: string;
}

/** Node-RED 4 (the dev dependency) on the Node running this process. */
export const NODE_RED_4: NodeRedRuntime = { node: process.execPath, redJs: require.resolve('node-red/red.js') };

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** `npm pack` of the repository into `destination`. */
export async function packModule(destination: string): Promise<PackResult> {
  // prepack builds (tsc), which alone can take a minute on a busy 2-core machine.
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', destination], { cwd: REPO_ROOT, timeout: 180_000 });
  const [packed] = JSON.parse(stdout) as PackResult[];
  return packed;
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
  await run('npm', ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund'], { cwd: userDir, timeout: 120_000 });
}

/** A Node-RED child process on `userDir`, with its whole log kept. */
export class NodeRedProcess {
  readonly log: string[] = [];
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;

  /** Starts Node-RED and resolves once its flows have started (at most `timeoutMs`); stops it if that fails. */
  static async start(userDir: string, runtime: NodeRedRuntime = NODE_RED_4, timeoutMs = 60_000): Promise<NodeRedProcess> {
    const nodeRed = new NodeRedProcess(userDir, await freePort(), runtime);
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
  ) {
    // Node-RED's own command line, listening on the loopback only.
    const args = ['--userDir', userDir, '--port', String(port), '--define', 'uiHost=127.0.0.1', '--no-telemetry'];
    this.child = spawn(runtime.node, [runtime.redJs, ...args], {
      cwd: userDir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const [prefix, stream] of [['', this.child.stdout], ['stderr:', this.child.stderr]] as const) {
      if (!stream) continue;
      readline.createInterface({ input: stream }).on('line', (line) => {
        if (line.trim() !== '') this.log.push(prefix + line);
      });
    }
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()));
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

  /** Resolves once the flows have started; rejects if Node-RED exits or takes longer than `timeoutMs`. */
  private async started(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.log.some((line) => line.includes('Started flows'))) {
      if (this.hasExited()) throw new Error(`Node-RED exited early:\n${this.log.join('\n')}`);
      if (Date.now() > deadline) throw new Error(`Node-RED did not start within ${timeoutMs} ms:\n${this.log.join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async get<T>(urlPath: string, accept = 'application/json'): Promise<T> {
    const response = await fetch(`http://127.0.0.1:${this.port}${urlPath}`, { headers: { accept } });
    should(response.status).equal(200, `GET ${urlPath}`);
    return (accept === 'application/json' ? response.json() : response.text()) as Promise<T>;
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

  /** Ctrl-C, as a user stops it; killed if it has not stopped within `timeoutMs`. */
  async stop(timeoutMs: number): Promise<void> {
    if (this.hasExited()) return;
    this.child.kill('SIGINT');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    await this.exited;
    clearTimeout(timer);
  }
}
