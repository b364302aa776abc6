import fs from 'node:fs';
import path from 'node:path';
import { parsePackJson, userEnv } from '../support/node-red-process';
import { REPO_ROOT } from '../support/paths';
import { runCommand } from '../support/process-group';

/**
 * The release before this one, built from this repository's history: the last commit before the
 * stored jobs' Redis keys moved under a hash tag (3b6708b, `svc-location:jobs:<id>` became
 * `svc-location:{jobs:<id>}`). It stores jobs in the user directory and registers them in Redis under
 * the old names, which is what an upgrade in place has to carry over. A clone of the repository (CI's
 * `git clone`) has it; a shallow clone does not, and the suite says so.
 */
export const PREVIOUS_COMMIT = '25cbc0eaf57294fb682b90abd7c615a46f4bc541';

/**
 * `git archive` of PREVIOUS_COMMIT into `workDir/previous`, then `npm pack` there (its prepack builds
 * it), as its release job did. Its dependencies and build tools are this checkout's node_modules,
 * linked: the two lockfiles differ only by a lint plugin the build does not use, and the link saves
 * an `npm ci` of about a minute. Should the build fail on them one day, `npm ci` installs its own.
 * Resolves the tarball's absolute path.
 */
export async function packPreviousRelease(workDir: string): Promise<string> {
  const dir = path.join(workDir, 'previous');
  fs.mkdirSync(dir);
  try {
    await runCommand('git', ['cat-file', '-e', `${PREVIOUS_COMMIT}^{commit}`], { cwd: REPO_ROOT, timeoutMs: 30_000 });
  } catch {
    throw new Error(`commit ${PREVIOUS_COMMIT} (the previous release) is not in this clone: a shallow clone? fetch the full history`);
  }
  const archive = path.join(workDir, 'previous.tar');
  await runCommand('git', ['archive', '--format=tar', '-o', archive, PREVIOUS_COMMIT], { cwd: REPO_ROOT, timeoutMs: 60_000 });
  await runCommand('tar', ['-xf', archive, '-C', dir], { cwd: workDir, timeoutMs: 60_000 });
  const modules = path.join(dir, 'node_modules');
  fs.symlinkSync(path.join(REPO_ROOT, 'node_modules'), modules, 'dir');
  // userEnv: the old tree builds with its own scripts, not through this repository's npm run.
  const pack = () => runCommand('npm', ['pack', '--json', '--pack-destination', workDir], { cwd: dir, env: userEnv(), timeoutMs: 300_000 });
  let stdout: string;
  try {
    ({ stdout } = await pack());
  } catch {
    fs.rmSync(modules);
    await runCommand('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: dir, env: userEnv(), timeoutMs: 300_000 });
    ({ stdout } = await pack());
  }
  return path.join(workDir, parsePackJson(stdout).filename);
}

/**
 * This checkout's build packed into `workDir/current/` (`npm run test:upgrade` has just built it;
 * --ignore-scripts: prepack would delete and rebuild the dist/ this suite runs from).
 */
export async function packCurrent(workDir: string): Promise<string> {
  const destination = path.join(workDir, 'current');
  fs.mkdirSync(destination);
  const { stdout } = await runCommand('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', destination], {
    cwd: REPO_ROOT,
    env: userEnv(),
    timeoutMs: 180_000,
  });
  return path.join(destination, parsePackJson(stdout).filename);
}
