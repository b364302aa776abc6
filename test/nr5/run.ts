import { spawnSync, SpawnSyncOptions } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * `npm run test:nr5`: the whole mocha suite against Node-RED 5 on Node 22.
 * Both come from this folder's own install (package.json + package-lock.json here): the npm
 * registry's `node` package brings a real Node 22 binary. They are kept out of the root
 * devDependencies, where `.bin/node` would shadow Node 20 for every npm script.
 * Arguments are passed on to mocha (e.g. `-- --grep geocode`).
 */

const NR5_DIR = __dirname;
const REPO_ROOT = path.resolve(NR5_DIR, '..', '..');
const MODULES = path.join(NR5_DIR, 'node_modules');
const NODE_22 = path.join(MODULES, 'node', 'bin', 'node');
const NODE_RED_5 = path.join(MODULES, 'node-red');
const MOCHA = path.join(REPO_ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');

interface Lockfile {
  packages: Record<string, { version?: string }>;
}

function installedVersion(name: string): string | undefined {
  try {
    return (JSON.parse(fs.readFileSync(path.join(MODULES, name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return undefined;
  }
}

/** True when node_modules is missing, lacks the Node binary or holds other versions than the lockfile. */
function installIsStale(): boolean {
  if (!fs.existsSync(NODE_22)) return true;
  const lock = JSON.parse(fs.readFileSync(path.join(NR5_DIR, 'package-lock.json'), 'utf8')) as Lockfile;
  return ['node', 'node-red'].some((name) => installedVersion(name) !== lock.packages[`node_modules/${name}`]?.version);
}

function run(command: string, args: string[], options: SpawnSyncOptions): void {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  if (result.status !== 0) process.exit(result.status ?? 1);
}

if (installIsStale()) {
  console.log('test:nr5: installing Node-RED 5 and Node 22 into test/nr5 (npm ci)');
  // Run in the folder itself, not with --prefix: the `node` package's install step runs a nested
  // `npm install`, which must not inherit a prefix pointing at this folder.
  run('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: NR5_DIR });
}
const nodeVersion = spawnSync(NODE_22, ['--version'], { encoding: 'utf8' }).stdout.trim();
console.log(`test:nr5: Node-RED ${installedVersion('node-red')} on Node ${nodeVersion}`);
run(NODE_22, [MOCHA, ...process.argv.slice(2)], {
  cwd: REPO_ROOT,
  env: { ...process.env, NODE_RED_PATH: NODE_RED_5 },
});
