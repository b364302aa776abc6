import { spawnSync, SpawnSyncOptions } from 'node:child_process';
import path from 'node:path';
import { ensureNodeRed5, installedVersion, NODE_22, NODE_RED_5 } from '../support/node-red-5';
import { REPO_ROOT } from '../support/paths';

/**
 * `npm run test:nr5`: the whole mocha suite against Node-RED 5 on Node 22.
 * Both come from this folder's own install (see test/support/node-red-5.ts).
 * Arguments are passed on to mocha (e.g. `-- --grep geocode`).
 */

const MOCHA = path.join(REPO_ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');

function run(command: string, args: string[], options: SpawnSyncOptions): void {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  if (result.status !== 0) process.exit(result.status ?? 1);
}

ensureNodeRed5();
const nodeVersion = spawnSync(NODE_22, ['--version'], { encoding: 'utf8' }).stdout.trim();
console.log(`test:nr5: Node-RED ${installedVersion('node-red')} on Node ${nodeVersion}`);
run(NODE_22, [MOCHA, ...process.argv.slice(2)], {
  cwd: REPO_ROOT,
  env: { ...process.env, NODE_RED_PATH: NODE_RED_5 },
});
