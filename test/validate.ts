import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './support/paths';

/**
 * `npm run validate`: the Flow Library scorecard (`node-red-dev validate`) for this package, run
 * through node-red-dev's own check modules so that one unreachable host does not abort the rest.
 *
 * The stock command stops at the first failed download. Two checks read the Flow Library catalogue
 * (https://catalogue.nodered.org): P08 (a similarly named package exists) and N01 (node type names
 * are unique in the catalogue). When the catalogue cannot be reached they are reported as NOT RUN,
 * never as passed. The checks that ask the npm registry (P06 Node-RED versions, P07 Node version,
 * D02 dependency tree, D03 dependencies up to date) run here, since the registry is reachable; if
 * it is not, the run fails. Everything else (P01, P03, P04, P05, N02, D01) reads only this package.
 *
 * Exit code 1 when a check that ran failed or warned, unless it is an accepted deviation below.
 */

const CATALOGUE_URL = 'https://catalogue.nodered.org/catalogue.json';
const SCORECARD_FILE = path.join(REPO_ROOT, 'test', 'artifacts', 'scorecard.json');

/** Known deviations, each with its reason; anything else that fails or warns fails the run. */
const ACCEPTED: Record<string, { packages: string[]; reason: string }> = {
  D03: {
    packages: ['undici', 'entities'],
    reason:
      'undici 8 needs Node >= 22.19 and this pack supports Node 20, so it stays on undici 7.x; ' +
      'entities 8 and 9 are ES modules only and need Node >= 20.19, this pack supports Node 20.18.1 and loads CommonJS, so it stays on entities 7.x (CommonJS and ES builds)',
  },
};

/** The tool's success lines for the catalogue checks, which it prints even from a stand-in catalogue. */
const CATALOGUE_PASS_LINES: Record<string, string> = {
  P08: '✅ No similar named packages found',
  N01: '✅ Nodes all have unique names',
};

interface CheckResult {
  test: boolean | null;
  packages?: string[];
  notRun?: string;
  [detail: string]: unknown;
}
type Scorecard = Record<string, CheckResult | Record<string, unknown>>;

/** The `cli` object node-red-dev's checks report through (the tool passes its oclif command). */
interface Cli {
  log(message: string): void;
  warn(message: string): void;
  error(err: unknown): never;
}
type Check = (packageDir: string, cli: Cli, scorecard: Scorecard, npmMetadata: false) => Promise<Scorecard>;

interface AxiosConfig {
  url?: string;
}
interface AxiosLike {
  defaults: { adapter: (config: AxiosConfig) => Promise<unknown> };
}

const devLibs = path.dirname(require.resolve('node-red-dev/src/libs/checkpackage'));
const loadCheck = (name: string) => require(path.join(devLibs, name)) as Check;

/**
 * Lets the tool go on when the catalogue is unreachable: its request gets an empty catalogue, and
 * the two checks built on it are marked not run afterwards. Returns why the catalogue was unreachable.
 */
function standInForUnreachableCatalogue(): () => string | undefined {
  const axios = require(require.resolve('axios', { paths: [devLibs] })) as AxiosLike;
  const realAdapter = axios.defaults.adapter;
  let unreachable: string | undefined;
  axios.defaults.adapter = async (config) => {
    try {
      return await realAdapter(config);
    } catch (err) {
      const failure = err as { code?: string; message: string; response?: unknown };
      if (config.url !== CATALOGUE_URL || failure.response) throw err;
      unreachable = failure.code ?? failure.message;
      return { data: { modules: [] }, status: 200, statusText: 'stand-in', headers: {}, config };
    }
  };
  return () => unreachable;
}

async function main(): Promise<number> {
  const catalogueFailure = standInForUnreachableCatalogue();
  const warnings: string[] = [];
  const cli: Cli = {
    log(message) {
      const skipped = Object.entries(CATALOGUE_PASS_LINES).find(([, line]) => line === message);
      if (skipped && catalogueFailure()) {
        console.log(`⏭️  ${skipped[0]} NOT RUN: ${CATALOGUE_URL} unreachable (${catalogueFailure()})`);
        return;
      }
      console.log(message);
    },
    warn(message) {
      warnings.push(message);
      console.log(`⚠️  ${message}`);
    },
    error(err) {
      throw err instanceof Error ? err : new Error(String(err));
    },
  };

  // The tool reports an editor file it cannot parse with a bare console.log and then leaves that
  // node out of the node checks; such a line is a failure here.
  const unparsed: string[] = [];
  const consoleLog = console.log;
  console.log = (...args: unknown[]) => {
    if (String(args[0]).startsWith('Unable to parse')) unparsed.push(args.map(String).join(' ').replace(/\s+/g, ' '));
    consoleLog(...args);
  };
  let scorecard: Scorecard = {};
  try {
    for (const check of ['checkpackage', 'checknodes', 'checkdeps']) {
      scorecard = await loadCheck(check)(REPO_ROOT, cli, scorecard, false);
    }
  } finally {
    console.log = consoleLog;
  }
  const unreachable = catalogueFailure();
  if (unreachable) {
    for (const id of Object.keys(CATALOGUE_PASS_LINES)) {
      scorecard[id] = { test: null, notRun: `${CATALOGUE_URL} unreachable (${unreachable})` };
    }
  }
  fs.mkdirSync(path.dirname(SCORECARD_FILE), { recursive: true });
  fs.writeFileSync(SCORECARD_FILE, JSON.stringify(scorecard, null, 2));

  const checks = Object.entries(scorecard).filter(([id]) => /^[A-Z]\d\d$/.test(id)) as Array<[string, CheckResult]>;
  const problems: string[] = [...unparsed];
  const accepted: string[] = [];
  for (const [id, result] of checks) {
    if (result.test !== false) continue;
    const deviation = ACCEPTED[id];
    if (deviation && (result.packages ?? []).every((p) => deviation.packages.includes(p))) {
      console.log(`ℹ️  ${id} accepted: ${deviation.reason}`);
      accepted.push(id);
    } else {
      problems.push(`${id} failed`);
    }
  }
  for (const warning of warnings) {
    const [id] = warning.split(' ');
    if (!ACCEPTED[id]?.packages.some((p) => warning.startsWith(`${id} ${p} `))) problems.push(`warning: ${warning}`);
  }
  const passed = checks.filter(([, r]) => r.test === true).length;
  const notRun = checks.filter(([, r]) => r.test === null).map(([id]) => id);
  console.log(
    `\nvalidate: ${passed} of ${checks.length} checks passed` +
      (accepted.length ? `, accepted deviations: ${accepted.join(', ')}` : '') +
      (notRun.length ? `, not run here: ${notRun.join(', ')}` : '') +
      `; scorecard in ${path.relative(REPO_ROOT, SCORECARD_FILE)}`,
  );
  for (const problem of problems) console.log(`✖ ${problem}`);
  return problems.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error('validate:', err);
    process.exit(1);
  },
);
