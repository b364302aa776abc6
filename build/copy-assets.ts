import fs from 'node:fs';
import path from 'node:path';

/**
 * The build's step after tsc: copies what Node-RED loads beside the compiled code (editor HTML,
 * message catalogs, help, icons) into dist/nodes, writing each help page whole. A help section that
 * several nodes share is written once, in `nodes/locales/<lang>/_partials/<name>.html`, and a page takes
 * it with a line of its own, `<!-- include <name> -->`; dist gets neither the markers nor the partials.
 */

export const PARTIALS_FOLDER = '_partials';
const INCLUDE = /^([ \t]*)<!-- include ([\w-]+) -->[ \t]*$/gm;

/** A help page with each include line replaced by the partial of that name from `partialsDir`, indented as the line. */
export function resolveIncludes(page: string, partialsDir: string): string {
  return page.replace(INCLUDE, (_line, indent: string, name: string) => {
    const file = path.join(partialsDir, `${name}.html`);
    if (!fs.existsSync(file)) throw new Error(`help includes "${name}", but ${file} does not exist`);
    return fs
      .readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => (line === '' ? line : indent + line))
      .join('\n');
  });
}

/** The names a help page includes, in order. */
export function includedPartials(page: string): string[] {
  return [...page.matchAll(INCLUDE)].map((match) => match[2]);
}

function copyAssets(repoRoot: string): void {
  const sourceDir = path.join(repoRoot, 'nodes');
  const targetDir = path.join(repoRoot, 'dist', 'nodes');
  fs.cpSync(sourceDir, targetDir, { recursive: true, filter: (file) => !file.endsWith('.ts') && path.basename(file) !== PARTIALS_FOLDER });
  fs.cpSync(path.join(repoRoot, 'icons'), path.join(targetDir, 'icons'), { recursive: true });
  for (const language of fs.readdirSync(path.join(targetDir, 'locales'))) {
    const helpDir = path.join(targetDir, 'locales', language);
    for (const file of fs.readdirSync(helpDir).filter((name) => name.endsWith('.html'))) {
      const page = path.join(helpDir, file);
      fs.writeFileSync(page, resolveIncludes(fs.readFileSync(page, 'utf8'), path.join(sourceDir, 'locales', language, PARTIALS_FOLDER)));
    }
  }
}

// Compiled to dist/build/copy-assets.js: the repository is two folders up.
if (require.main === module) copyAssets(path.join(__dirname, '..', '..'));
