import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import should from 'should';
import { installTarball, newUserDir, NodeRedProcess, packModule, PackResult } from './support/node-red-process';
import { REPO_ROOT } from './support/paths';

/**
 * `npm run test:package` (not part of `npm test`: it takes tens of seconds). Packs the module as
 * `npm publish` would, installs the tarball into a fresh Node-RED user directory as a user would
 * (`npm install <tarball>`, dependencies from the npm cache or registry), starts Node-RED 4 (the dev
 * dependency) on that directory and checks what it registered and logged.
 */

const PACKAGE = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  'node-red': { nodes: Record<string, string> };
};
const NODE_TYPES = Object.keys(PACKAGE['node-red'].nodes);
const EXAMPLES = fs.readdirSync(path.join(REPO_ROOT, 'examples')).filter((f) => f.endsWith('.json'));

interface NodeSet {
  id: string;
  module: string;
  types: string[];
  enabled: boolean;
  err?: unknown;
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
    packed = await packModule(workDir);
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
          `dist/nodes/${type}.html`,
          `dist/nodes/locales/en-US/${type}.json`,
          `dist/nodes/locales/en-US/${type}.html`,
          `dist/nodes/icons/${type}.svg`,
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

    before(async function () {
      const baseline = await NodeRedProcess.start(newUserDir(workDir, 'baseline'));
      await baseline.stop(10_000);
      baselineProblems = baseline.problems();

      const userDir = newUserDir(workDir, 'userdir');
      await installTarball(userDir, path.join(workDir, packed.filename));
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
