import path from 'node:path';
import should from 'should';
import { BUILD_DIR, NODES_DIR, REPO_ROOT } from '../support/paths';
import { runCommand } from '../support/process-group';

/**
 * What the sandbox costs a Node-RED whose flows do not use it (issue 52 point 3): nothing, since no
 * module of the nodes loads it (ESLint keeps imports from nodes/ to sandbox/ out) but the built-in
 * sandbox's glue, which requires it when a config node on the built-in sandbox starts. Checked in a fresh
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

/**
 * A Node-RED (the test helper's) that deploys a config node on the platform 'account' with a geocode
 * node, then one on the built-in sandbox: prints which modules of the sandbox are loaded after each.
 */
const DEPLOY_ACCOUNT_THEN_SANDBOX = `
const path = require('node:path');
const [nodesDir, sandboxDir, nodeRedDir] = process.argv.slice(1);
const helper = require('node-red-node-test-helper');
helper.init(require.resolve(nodeRedDir));
const loaded = () => Object.keys(require.cache).filter((f) => f.startsWith(sandboxDir + path.sep)).length;
const modules = ['svc-config', 'svc-geocode'].map((type) => require(path.join(nodesDir, type, type + '.js')));
const flow = (platform) => [
  { id: 'cfg', type: 'svc-config', version: 3, platform, baseUrl: 'http://127.0.0.1:9', projectId: 'p' },
  { id: 'geo', type: 'svc-geocode', server: 'cfg', wires: [] },
];
(async () => {
  await helper.startServer();
  await helper.load(modules, flow('account'), { cfg: { apiKey: 'k' } });
  const account = loaded();
  await helper.unload();
  await helper.load(modules, flow('sandbox'));
  const sandbox = loaded();
  await helper.unload();
  await helper.stopServer();
  console.log(JSON.stringify({ account, sandbox }));
  process.exit(0);
})().catch((err) => { console.error(err); process.exit(1); });
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

  it('is loaded only once a config node on the built-in sandbox is deployed, not for one on an account', async function () {
    const { stdout } = await runCommand(
      process.execPath,
      [
        '-e',
        DEPLOY_ACCOUNT_THEN_SANDBOX,
        NODES_DIR,
        path.join(BUILD_DIR, 'sandbox'),
        path.dirname(require.resolve('node-red/package.json', { paths: [REPO_ROOT] })),
      ],
      { cwd: REPO_ROOT, timeoutMs: 60_000 },
    );
    const report = JSON.parse(stdout.trim().split('\n').pop() ?? '') as { account: number; sandbox: number };
    should(report.account).equal(0);
    should(report.sandbox).be.above(5);
  });
});
