import fs from 'node:fs';
import path from 'node:path';

/**
 * The build's step after tsc: copies what Node-RED loads beside the compiled code (editor HTML,
 * message catalogs, help, icons) into dist/nodes, writing each help page whole. A help section that
 * several nodes share is written once, in `nodes/locales/<lang>/_partials/<name>.html`, and a page takes
 * it with a line of its own, `<!-- include <name> -->`. A shared frame around a page's own lines (the
 * output ports around the node's own output members) is a partial with a line `<!-- content -->`,
 * which the page's lines between `<!-- begin <name> -->` and `<!-- end <name> -->` take the place of
 * (included with a plain include line, the frame has nothing in that place). dist gets neither the markers nor the partials.
 */

export const PARTIALS_FOLDER = '_partials';
const INCLUDE = /^([ \t]*)<!-- include ([\w-]+) -->[ \t]*$/gm;
const FRAME = /^([ \t]*)<!-- begin ([\w-]+) -->[ \t]*\n([\s\S]*?)^[ \t]*<!-- end \2 -->[ \t]*$/gm;
const CONTENT = /^[ \t]*<!-- content -->[ \t]*$/m;
/** A frame included without lines of the page's own: its content line goes. */
const CONTENT_LINE = /^[ \t]*<!-- content -->[ \t]*\n/m;

/** The partial `name` from `partialsDir`, each line indented by `indent`. */
function partial(partialsDir: string, name: string, indent: string): string {
  const file = path.join(partialsDir, `${name}.html`);
  if (!fs.existsSync(file)) throw new Error(`help includes "${name}", but ${file} does not exist`);
  return fs
    .readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => (line === '' ? line : indent + line))
    .join('\n');
}

/** A help page with each include line and each framed block replaced by the partial of that name from `partialsDir`, indented as the line. */
export function resolveIncludes(page: string, partialsDir: string): string {
  return page
    .replace(FRAME, (_block, indent: string, name: string, content: string) => {
      const frame = partial(partialsDir, name, indent);
      if (!CONTENT.test(frame)) throw new Error(`help frames lines with "${name}", but that partial has no <!-- content --> line`);
      return frame.replace(CONTENT, () => content.trimEnd());
    })
    .replace(INCLUDE, (_line, indent: string, name: string) => partial(partialsDir, name, indent).replace(CONTENT_LINE, ''));
}

/** The names a help page includes or frames its lines with, in order. */
export function includedPartials(page: string): string[] {
  return [...page.matchAll(/^[ \t]*<!-- (?:include|begin) ([\w-]+) -->[ \t]*$/gm)].map((match) => match[1]);
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
