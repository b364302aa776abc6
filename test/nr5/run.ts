import { spawnSync, SpawnSyncOptions } from 'node:child_process';
import path from 'node:path';
import { ensureInstall, installedVersion, NODE_RED_5_INSTALLS } from '../support/node-red-5';
import { REPO_ROOT } from '../support/paths';

/**
 * `npm run test:nr5`: the whole mocha suite against Node-RED 5 on Node 22, or on Node 24 with
 * `-- --node 24`. Both come from their install folder (see test/support/node-red-5.ts). Other
 * arguments are passed on to mocha (e.g. `-- --grep geocode`).
 */

const MOCHA = path.join(REPO_ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');

function run(command: string, args: string[], options: SpawnSyncOptions): void {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  if (result.status !== 0) process.exit(result.status ?? 1);
}

/** Splits `--node <major>` / `--node=<major>` (default 22) from the arguments meant for mocha. */
function parseArgs(args: string[]): { nodeMajor: number; mochaArgs: string[] } {
  let nodeMajor = 22;
  const mochaArgs: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const inline = /^--node=(\d+)$/.exec(args[i]);
    if (inline) nodeMajor = Number(inline[1]);
    else if (args[i] === '--node') nodeMajor = Number(args[++i]);
    else mochaArgs.push(args[i]);
  }
  return { nodeMajor, mochaArgs };
}

const { nodeMajor, mochaArgs } = parseArgs(process.argv.slice(2));
const install = NODE_RED_5_INSTALLS.find((candidate) => candidate.nodeMajor === nodeMajor);
if (!install) {
  console.error(`test:nr5: no install folder for Node ${nodeMajor}; choose one of ${NODE_RED_5_INSTALLS.map((i) => i.nodeMajor).join(', ')}`);
  process.exit(2);
}
ensureInstall(install);
const nodeVersion = spawnSync(install.node, ['--version'], { encoding: 'utf8' }).stdout.trim();
console.log(`test:nr5: Node-RED ${installedVersion(install, 'node-red')} on Node ${nodeVersion}`);
run(install.node, [MOCHA, ...mochaArgs], {
  cwd: REPO_ROOT,
  env: { ...process.env, NODE_RED_PATH: install.nodeRedDir },
});
