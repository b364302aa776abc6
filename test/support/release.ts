import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parsePackJson, PackResult, userEnv } from './node-red-process';
import { REPO_ROOT } from './paths';
import { runCommand } from './process-group';

/**
 * The release as a user receives it: a fresh `git clone` of the committed HEAD of this repository,
 * then `npm ci && npm pack` there and nothing else, which is what a release job or `npm publish`
 * does. Uncommitted changes in the working tree are not part of it.
 */

export interface Release {
  /** The temp folder holding the clone, and the tests' user directories. */
  workDir: string;
  /** The clone, with its node_modules and build from `npm ci && npm pack`. */
  cloneDir: string;
  commit: string;
  /** The tarball's absolute path. */
  tarball: string;
  packed: PackResult;
}

/** What `npm publish --dry-run` reported. */
export interface DryRun {
  packed: PackResult;
  /** Its `npm warn` lines, less those about the machine rather than the package (see below). */
  warnings: string[];
  notices: string[];
}

/**
 * `npm warn` lines that describe this machine, not the package: a dry run cannot be logged in (CI
 * holds no npm token), and an npmrc outside the repository may carry settings this npm does not know.
 */
const MACHINE_WARNINGS = [/^npm warn publish This command requires you to be logged in /, /^npm warn Unknown (user|global|env) config /];

async function git(args: string[], cwd: string): Promise<string> {
  return (await runCommand('git', args, { cwd, timeoutMs: 60_000 })).stdout.trim();
}

/** Lists uncommitted changes of the repository the test runs from (they are not in the release). */
export async function uncommittedChanges(): Promise<string[]> {
  return (await git(['status', '--porcelain'], REPO_ROOT)).split('\n').filter((line) => line !== '');
}

/** Clones the committed HEAD into `workDir/clone`, then runs `npm ci` and `npm pack` there. */
export async function packFreshClone(workDir: string): Promise<Release> {
  const commit = await git(['rev-parse', 'HEAD'], REPO_ROOT);
  const cloneDir = path.join(workDir, 'clone');
  // A clone checks out the source's HEAD, detached or on a branch.
  await git(['-c', 'advice.detachedHead=false', 'clone', '--quiet', REPO_ROOT, cloneDir], workDir);
  const cloned = await git(['rev-parse', 'HEAD'], cloneDir);
  if (cloned !== commit) throw new Error(`the clone is at ${cloned}, not at the repository's HEAD ${commit}`);

  // userEnv: the clone must build with its own tools, not this repository's node_modules/.bin.
  // --prefer-offline and the quiet flags change where packages come from and what is printed, not what is installed.
  const env = userEnv();
  await runCommand('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: cloneDir, env, timeoutMs: 300_000 });
  const { stdout } = await runCommand('npm', ['pack', '--json'], { cwd: cloneDir, env, timeoutMs: 180_000 });
  const packed = parsePackJson(stdout);
  return { workDir, cloneDir, commit, tarball: path.join(cloneDir, packed.filename), packed };
}

let shared: { workDir: string; release: Promise<Release> } | undefined;

/** The release of this test run, packed on first use in a temp folder, for every spec file of `npm run test:package`. */
export function sharedRelease(): Promise<Release> {
  if (!shared) {
    const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-package-test-'));
    shared = { workDir, release: packFreshClone(workDir) };
  }
  return shared.release;
}

/** Removes the shared release's temp folder (a root `after` hook of each spec file that uses it). */
export function removeSharedRelease(): void {
  if (shared) fs.rmSync(shared.workDir, { recursive: true, force: true });
  shared = undefined;
}

/**
 * `npm publish --dry-run` in the packed clone: npm's checks of the manifest and what it would publish.
 * --ignore-scripts: prepack already built this clone for `npm pack`, and building again takes time
 * and proves nothing new. --offline: otherwise npm asks the registry for the published versions,
 * which says nothing about the package and stalls for a minute without a network.
 */
export async function publishDryRun(cloneDir: string): Promise<DryRun> {
  const args = ['publish', '--dry-run', '--offline', '--ignore-scripts', '--json'];
  const { stdout, stderr } = await runCommand('npm', args, { cwd: cloneDir, env: userEnv(), timeoutMs: 120_000 });
  const lines = stderr.split('\n').map((line) => line.trim());
  return {
    packed: parsePackJson(stdout),
    warnings: lines.filter((line) => line.startsWith('npm warn') && !MACHINE_WARNINGS.some((re) => re.test(line))),
    notices: lines.filter((line) => line.startsWith('npm notice')),
  };
}
