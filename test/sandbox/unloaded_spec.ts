import path from 'node:path';
import should from 'should';
import { BUILD_DIR, NODES_DIR, REPO_ROOT } from '../support/paths';
import { runCommand } from '../support/process-group';

/**
 * What the sandbox costs a Node-RED whose flows do not use it (issue 52 point 3): nothing, since no
 * module of the nodes loads it (ESLint keeps imports from nodes/ to sandbox/ out). Checked in a fresh
 * process that loads every compiled module of the nodes, as Node-RED's require of each node file and
 * all it imports would.
 */

/** Requires every .js under the nodes' build folder, then prints which modules of the sandbox are loaded. */
const LOAD_EVERY_NODE_MODULE = `
const fs = require('node:fs');
const path = require('node:path');
const [nodesDir, sandboxDir] = process.argv.slice(1);
const files = fs.readdirSync(nodesDir, { recursive: true }).filter((f) => f.endsWith('.js')).map((f) => path.join(nodesDir, f));
for (const file of files) require(file);
const loaded = Object.keys(require.cache);
console.log(JSON.stringify({ required: files.length, nodeModules: loaded.filter((f) => f.startsWith(nodesDir + path.sep)).length, sandbox: loaded.filter((f) => f.startsWith(sandboxDir + path.sep)) }));
`;

describe('the sandbox in a Node-RED that does not use it', function () {
  it('is never loaded by any module of the nodes', async function () {
    const { stdout } = await runCommand(process.execPath, ['-e', LOAD_EVERY_NODE_MODULE, NODES_DIR, path.join(BUILD_DIR, 'sandbox')], {
      cwd: REPO_ROOT,
      timeoutMs: 30_000,
    });
    const report = JSON.parse(stdout.trim()) as { required: number; nodeModules: number; sandbox: string[] };
    should(report.required).be.above(50);
    should(report.nodeModules).equal(report.required);
    should(report.sandbox).be.empty();
  });
});
