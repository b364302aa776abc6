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
/** The nodes' sources: TypeScript, editor HTML and catalogs as written. */
export const SOURCE_NODES_DIR = path.join(REPO_ROOT, 'nodes');
