import { ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { promisify } from 'node:util';
import should from 'should';

/**
 * `npm run test:package` (not part of `npm test`: it takes tens of seconds). Packs the module as
 * `npm publish` would, installs the tarball into a fresh Node-RED user directory as a user would
 * (`npm install <tarball>`, dependencies from the npm cache or registry), starts Node-RED 4 (the dev
 * dependency) on that directory and checks what it registered and logged.
 */

const run = promisify(execFile);
const REPO_ROOT = path.resolve(__dirname, '..');
const PACKAGE = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  'node-red': { nodes: Record<string, string> };
};
const NODE_TYPES = Object.keys(PACKAGE['node-red'].nodes);
const EXAMPLES = fs.readdirSync(path.join(REPO_ROOT, 'examples')).filter((f) => f.endsWith('.json'));

interface PackResult {
  filename: string;
  files: Array<{ path: string }>;
}

interface NodeSet {
  id: string;
  module: string;
  types: string[];
  enabled: boolean;
  err?: unknown;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A Node-RED 4 child process on `userDir`, with its whole log kept. */
class NodeRedProcess {
  readonly log: string[] = [];
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;

  static async start(userDir: string): Promise<NodeRedProcess> {
    const nodeRed = new NodeRedProcess(userDir, await freePort());
    await nodeRed.started(60_000);
    return nodeRed;
  }

  private constructor(
    readonly userDir: string,
    readonly port: number,
  ) {
    // Node-RED's own command line and default settings, listening on the loopback only.
    const args = ['--userDir', userDir, '--port', String(port), '--define', 'uiHost=127.0.0.1', '--no-telemetry'];
    this.child = spawn(process.execPath, [require.resolve('node-red/red.js'), ...args], {
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

  /** Ctrl-C, as a user stops it; killed if it has not stopped within `timeoutMs`. */
  async stop(timeoutMs: number): Promise<void> {
    if (this.hasExited()) return;
    this.child.kill('SIGINT');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    await this.exited;
    clearTimeout(timer);
  }
}

describe('the npm package', function () {
  let workDir: string;
  let packed: PackResult;
  let nodeRed: NodeRedProcess | undefined;
  const running = (): NodeRedProcess => {
    if (!nodeRed) throw new Error('Node-RED is not running');
    return nodeRed;
  };

  before(async function () {
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-package-test-'));
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', workDir], { cwd: REPO_ROOT, timeout: 60_000 });
    [packed] = JSON.parse(stdout) as PackResult[];
  });

  after(async function () {
    await nodeRed?.stop(10_000);
    fs.rmSync(workDir, { recursive: true, force: true });
  });

  describe('tarball', function () {
    const packedPaths = () => new Set(packed.files.map((f) => f.path));

    it('holds every node: runtime, editor, help, message catalog and icon', function () {
      const paths = packedPaths();
      const missing = NODE_TYPES.flatMap((type) =>
        [
          PACKAGE['node-red'].nodes[type],
          `nodes/${type}.html`,
          `nodes/locales/en-US/${type}.json`,
          `nodes/locales/en-US/${type}.html`,
          `nodes/icons/${type}.svg`,
        ].filter((file) => !paths.has(file)),
      );
      should(missing).be.empty();
    });

    it('holds the examples, README, LICENSE and package.json', function () {
      const paths = packedPaths();
      const wanted = ['package.json', 'README.md', 'LICENSE', ...EXAMPLES.map((f) => `examples/${f}`)];
      should(wanted.filter((file) => !paths.has(file))).be.empty();
    });

    it('holds no sources, tests, CI or build configuration', function () {
      const unwanted = [...packedPaths()].filter(
        (file) => file.endsWith('.ts') || /^(test|\.ci|icons|node_modules)\//.test(file) || /^(tsconfig\.json|\.mocharc\.json|\.gitignore)$/.test(file),
      );
      should(unwanted).be.empty();
    });

    it('holds no compiled file whose TypeScript source is gone (a stale build)', function () {
      const stale = [...packedPaths()].filter(
        (file) => file.startsWith('nodes/') && file.endsWith('.js') && !fs.existsSync(path.join(REPO_ROOT, file.replace(/\.js$/, '.ts'))),
      );
      should(stale).be.empty();
    });
  });

  describe('installed into a fresh Node-RED 4 user directory', function () {
    /** What Node-RED logs on a fresh user directory without the pack (its own first-start notices). */
    let baselineProblems: string[];

    /** A new user directory with the package.json Node-RED itself creates, so npm installs here. */
    function newUserDir(name: string): string {
      const userDir = path.join(workDir, name);
      fs.mkdirSync(userDir);
      fs.writeFileSync(path.join(userDir, 'package.json'), JSON.stringify({ name: 'node-red-project', version: '0.0.1', private: true }));
      return userDir;
    }

    before(async function () {
      const baseline = await NodeRedProcess.start(newUserDir('baseline'));
      await baseline.stop(10_000);
      baselineProblems = baseline.problems();

      const userDir = newUserDir('userdir');
      await run('npm', ['install', path.join(workDir, packed.filename), '--prefer-offline', '--no-audit', '--no-fund'], {
        cwd: userDir,
        timeout: 120_000,
      });
      nodeRed = await NodeRedProcess.start(userDir);
    });

    it('registers every node type of the pack, from the installed module, with no load errors', async function () {
      const sets = (await running().get<NodeSet[]>('/nodes')).filter((set) => set.module === PACKAGE.name);
      should(sets.filter((set) => set.err !== undefined || !set.enabled).map((set) => set.id)).be.empty();
      should(sets.flatMap((set) => set.types).sort()).eql([...NODE_TYPES].sort());
    });

    it('serves each editor definition and help text', async function () {
      const editorHtml = await running().get<string>('/nodes', 'text/html');
      const missing = NODE_TYPES.flatMap((type) =>
        [`registerType('${type}'`, `data-help-name="${type}"`].filter((part) => !editorHtml.includes(part)),
      );
      should(missing).be.empty();
    });

    it('serves each icon and message catalog', async function () {
      const icons = (await running().get<Record<string, string[]>>('/icons'))[PACKAGE.name] ?? [];
      should(NODE_TYPES.filter((type) => !icons.includes(`${type}.svg`))).be.empty();
      // Catalogs are keyed by node set (`<module>/<type>`); each file's top-level member is the type.
      const catalogs = await running().get<Record<string, Record<string, unknown>>>('/nodes/messages?lng=en-US');
      should(NODE_TYPES.filter((type) => catalogs[`${PACKAGE.name}/${type}`]?.[type] === undefined)).be.empty();
    });

    it('offers the examples under Import > Examples', async function () {
      const listed = await running().get<Array<{ fn: string }>>(`/library/examples/flows/${PACKAGE.name}`);
      should(listed.map((entry) => `${entry.fn}.json`).sort()).eql([...EXAMPLES].sort());
    });

    it('logs no errors or warnings beyond Node-RED\'s own first-start notices, from start to stop', async function () {
      await running().stop(10_000);
      should(running().problems().filter((line) => !baselineProblems.includes(line))).be.empty();
    });
  });
});
