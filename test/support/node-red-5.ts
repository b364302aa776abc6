import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, packageVersion } from './paths';
import { NodeRedRuntime, userEnv } from './node-red-process';

/**
 * Node-RED 5 on Node 22 and on Node 24, each from an install folder of its own under test/
 * (package.json + package-lock.json there): the npm registry's `node` package brings a real Node
 * binary. They are kept out of the root devDependencies, where `.bin/node` would shadow Node 20 for
 * every npm script. Both folders are installed on first use by `ensureInstall`.
 */

/** A Node-RED 5 install folder and the runtime it provides. */
export interface NodeRed5Install extends NodeRedRuntime {
  /** The folder holding package.json, package-lock.json and, once installed, node_modules. */
  dir: string;
  /** The installed `node-red` package, for NODE_RED_PATH. */
  nodeRedDir: string;
}

function nodeRed5Install(folder: string, nodeMajor: number): NodeRed5Install {
  const dir = path.join(REPO_ROOT, 'test', folder);
  const modules = path.join(dir, 'node_modules');
  const install: NodeRed5Install = {
    title: `Node-RED 5 on Node ${nodeMajor}`,
    nodeMajor,
    dir,
    node: path.join(modules, 'node', 'bin', 'node'),
    nodeRedDir: path.join(modules, 'node-red'),
    redJs: path.join(modules, 'node-red', 'red.js'),
    prepare: () => ensureInstall(install),
  };
  return install;
}

/** test/nr5: Node-RED 5 on Node 22, used by `npm run test:nr5`, the browser suite and the package test. */
export const NODE_RED_5_NODE_22 = nodeRed5Install('nr5', 22);
/** test/nr5-node24: Node-RED 5 on Node 24 (the active LTS), used by the package test and `test:nr5 -- --node 24`. */
export const NODE_RED_5_NODE_24 = nodeRed5Install('nr5-node24', 24);
export const NODE_RED_5_INSTALLS = [NODE_RED_5_NODE_22, NODE_RED_5_NODE_24];

interface Lockfile {
  packages: Record<string, { version?: string }>;
}

/** The version of package `name` installed in the folder, or undefined. */
export function installedVersion(install: NodeRed5Install, name: string): string | undefined {
  try {
    return packageVersion(path.join(install.dir, 'node_modules', name));
  } catch {
    return undefined;
  }
}

/** True when node_modules is missing, lacks the Node binary or holds other versions than the lockfile. */
function installIsStale(install: NodeRed5Install): boolean {
  if (!fs.existsSync(install.node)) return true;
  const lock = JSON.parse(fs.readFileSync(path.join(install.dir, 'package-lock.json'), 'utf8')) as Lockfile;
  return ['node', 'node-red'].some((name) => installedVersion(install, name) !== lock.packages[`node_modules/${name}`]?.version);
}

/** Installs the folder's Node-RED and Node (`npm ci`) unless they are there already; throws if npm fails. */
export function ensureInstall(install: NodeRed5Install): void {
  if (!installIsStale(install)) return;
  const folder = path.relative(REPO_ROOT, install.dir);
  console.log(`installing ${install.title} into ${folder} (npm ci)`);
  // Run in the folder itself, not with --prefix: the `node` package's install step runs a nested
  // `npm install`, which must not inherit a prefix pointing at this folder.
  // userEnv: the user's own npm, not the older one Node-RED 4 puts in our node_modules/.bin.
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd: install.dir,
    env: userEnv(),
    stdio: 'inherit',
    timeout: 600_000,
  });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`npm ci in ${folder} failed with exit code ${result.status}`);
}
