import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import should from 'should';
import { REPO_ROOT } from '../../support/paths';

/**
 * The build step of `npm start`, `npm test` and the suites (build/if-changed.js): run in a copy of its folder beside a
 * package.json whose build only counts its runs, it builds the first time, not again while no source
 * changed, and again when a source is changed, added or deleted.
 */
describe('the build step builds only when a source changed', function () {
  this.timeout(30_000);
  let root = '';
  const run = (): string => execFileSync(process.execPath, [path.join(root, 'build', 'if-changed.js')], { cwd: root, encoding: 'utf8' });
  const builds = (): number => (fs.existsSync(path.join(root, 'builds')) ? fs.readFileSync(path.join(root, 'builds'), 'utf8').length : 0);
  const source = path.join('nodes', 'a.ts');
  /** Sets a file's modification time to now: after the stamp of the last build, before the next one's. */
  const touch = (file: string): void => {
    const now = new Date();
    fs.utimesSync(path.join(root, file), now, now);
  };

  before(function () {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'if-changed-'));
    fs.mkdirSync(path.join(root, 'build'));
    fs.mkdirSync(path.join(root, 'nodes'));
    fs.copyFileSync(path.join(REPO_ROOT, 'build', 'if-changed.js'), path.join(root, 'build', 'if-changed.js'));
    const build = "node -e \"require('fs').mkdirSync('dist',{recursive:true});require('fs').appendFileSync('builds','x')\"";
    fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'if-changed-test', private: true, scripts: { build } }));
    fs.writeFileSync(path.join(root, source), 'export {};\n');
  });
  after(function () {
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('builds the first time, then not while nothing changed', function () {
    should(run()).match(/^build: no build stamp in dist\/, building/);
    should(builds()).equal(1);
    should(run()).equal('build: dist/ is current, nothing to rebuild\n');
    should(builds()).equal(1);
  });

  it('builds when a source changed, was added or deleted', function () {
    touch(source);
    should(run()).match(/^build: nodes\/a\.ts changed, building/);
    should(builds()).equal(2);
    fs.writeFileSync(path.join(root, 'nodes', 'b.ts'), 'export {};\n');
    fs.utimesSync(path.join(root, 'nodes', 'b.ts'), new Date(0), new Date(0));
    should(run()).match(/^build: a source was added or deleted, building/);
    should(builds()).equal(3);
    fs.rmSync(path.join(root, 'nodes', 'b.ts'));
    should(run()).match(/^build: a source was added or deleted, building/);
    should(builds()).equal(4);
    should(run()).match(/nothing to rebuild/);
  });
});
