import fs from 'node:fs';
import path from 'node:path';
import { bundleVendor } from './bundle-vendor';
import { writeEditorHtml } from './editor-html';

/**
 * The build's step after tsc: writes each node's editor HTML (build/editor-html.ts) and copies what
 * Node-RED loads beside the compiled code (message catalogs, help, icons) into dist/nodes, writing each
 * help page whole. A help section that
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

/** The node folders below `sourceDir`: each `nodes/<type>/` holding its runtime `<type>.ts`. */
export function nodeFolders(sourceDir: string): string[] {
  return fs
    .readdirSync(sourceDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(sourceDir, entry.name, `${entry.name}.ts`)))
    .map((entry) => entry.name)
    .sort();
}

/**
 * Node-RED's layout in dist/nodes, one folder per node as in the sources: `<type>/<type>.js` (tsc),
 * the `<type>.html` beside it (written from the editor definition), `locales/<lang>/<type>.json|.html`
 * (help pages whole) and the node's icon in `icons/`, where Node-RED looks for it beside the node file.
 */
async function copyAssets(repoRoot: string): Promise<void> {
  const sourceDir = path.join(repoRoot, 'nodes');
  const targetDir = path.join(repoRoot, 'dist', 'nodes');
  for (const type of nodeFolders(sourceDir)) {
    const nodeDir = path.join(targetDir, type);
    const locales = path.join(sourceDir, type, 'locales');
    fs.cpSync(locales, path.join(nodeDir, 'locales'), { recursive: true });
    for (const language of fs.readdirSync(locales)) {
      const page = path.join(nodeDir, 'locales', language, `${type}.html`);
      fs.writeFileSync(page, resolveIncludes(fs.readFileSync(page, 'utf8'), path.join(sourceDir, 'locales', language, PARTIALS_FOLDER)));
    }
    const icon = path.join(repoRoot, 'icons', `${type}.svg`);
    if (fs.existsSync(icon)) fs.cpSync(icon, path.join(nodeDir, 'icons', `${type}.svg`));
    await writeEditorHtml(type, sourceDir, targetDir);
  }
}

// Compiled to dist/build/copy-assets.js: the repository is two folders up.
if (require.main === module) {
  const repoRoot = path.join(__dirname, '..', '..');
  Promise.all([copyAssets(repoRoot), bundleVendor(repoRoot)]).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
