import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './paths';
import type { NodeRedRuntime } from './node-red-process';

/**
 * Node-RED 5 on Node 22, from test/nr5's own install (package.json + package-lock.json there): the npm
 * registry's `node` package brings a real Node 22 binary. They are kept out of the root
 * devDependencies, where `.bin/node` would shadow Node 20 for every npm script.
 */

export const NR5_DIR = path.join(REPO_ROOT, 'test', 'nr5');
const MODULES = path.join(NR5_DIR, 'node_modules');
export const NODE_22 = path.join(MODULES, 'node', 'bin', 'node');
export const NODE_RED_5 = path.join(MODULES, 'node-red');

/** Node-RED 5 started with the Node 22 binary. */
export const NODE_RED_5_RUNTIME: NodeRedRuntime = { node: NODE_22, redJs: path.join(NODE_RED_5, 'red.js') };

interface Lockfile {
  packages: Record<string, { version?: string }>;
}

export function installedVersion(name: string): string | undefined {
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

/** Installs Node-RED 5 and Node 22 into test/nr5 (`npm ci`) unless they are there already; throws if npm fails. */
export function ensureNodeRed5(): void {
  if (!installIsStale()) return;
  console.log('test:nr5: installing Node-RED 5 and Node 22 into test/nr5 (npm ci)');
  // Run in the folder itself, not with --prefix: the `node` package's install step runs a nested
  // `npm install`, which must not inherit a prefix pointing at this folder.
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: NR5_DIR, stdio: 'inherit', timeout: 600_000 });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`npm ci in test/nr5 failed with exit code ${result.status}`);
}
