import fs from 'node:fs';
import path from 'node:path';

/**
 * Where things are, from compiled test code: tests run from the build folder (`dist/test/…`), so
 * `__dirname` says nothing stable about the repository; the root is the folder holding our package.json.
 */
function findRepoRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest) && (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: string }).name === '@svc/node-red-location') {
      return dir;
    }
    if (path.dirname(dir) === dir) throw new Error(`no @svc/node-red-location package.json above ${start}`);
  }
}

export const REPO_ROOT = findRepoRoot(__dirname);
/** The build folder: what `npm run build` writes and the package ships (`dist/nodes`). */
export const BUILD_DIR = path.join(REPO_ROOT, 'dist');
/** The nodes as Node-RED loads them: compiled runtime beside the copied editor files, catalogs and icons. */
export const NODES_DIR = path.join(BUILD_DIR, 'nodes');
/**
 * The `node-red` package that tests, `npm start` and the bench run: the dev dependency (4.1), or the
 * install NODE_RED_PATH names (Node-RED 5, under `npm run test:nr5` and on Node-RED 5's Node).
 */
export const NODE_RED_DIR = process.env.NODE_RED_PATH
  ? path.resolve(process.env.NODE_RED_PATH)
  : path.dirname(require.resolve('node-red/package.json', { paths: [REPO_ROOT] }));
/** The nodes' sources: TypeScript, editor HTML and catalogs as written. */
export const SOURCE_NODES_DIR = path.join(REPO_ROOT, 'nodes');

/** The version of the package in `dir` (its package.json's `version`). */
export function packageVersion(dir: string): string {
  return (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}
