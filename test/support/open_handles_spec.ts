import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import should from 'should';
import { REPO_ROOT } from './paths';

/** The suite runs without mocha's `exit`: a handle a test leaves open fails the run and names itself instead of hanging it. */
describe('open handles after the last test', function () {
  this.timeout(30_000);
  const MOCHA = path.join(REPO_ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
  const HOOKS = path.join(__dirname, 'open-handles.js');
  let dir: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-open-handles-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  function runSpec(body: string): { status: number | null; stderr: string } {
    const spec = path.join(dir, 'one_spec.js');
    fs.writeFileSync(spec, body);
    const result = spawnSync(process.execPath, [MOCHA, '--no-config', '--require', HOOKS, spec], { encoding: 'utf8', timeout: 20_000 });
    return { status: result.status, stderr: result.stderr };
  }

  it('fails the run, naming a server a test left listening', function () {
    const result = runSpec("it('leaks', (done) => { require('node:net').createServer().listen(0, '127.0.0.1', done); });");
    should(result.status).equal(1);
    should(result.stderr).match(/left open 1 × TCPServerWrap/);
  });

  it('ends the run with status 0 when every test closes what it opens', function () {
    const result = runSpec("it('closes', (done) => { const s = require('node:net').createServer().listen(0, '127.0.0.1', () => s.close(done)); });");
    should(result.status).equal(0);
    should(result.stderr).equal('');
  });
});
