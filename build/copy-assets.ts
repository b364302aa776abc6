import fs from 'node:fs';
import path from 'node:path';
import Handlebars from 'handlebars';
import { bundleVendor } from './bundle-vendor';
import { writeEditorHtml, writeEditorScript } from './editor-html';

/**
 * The build's step after tsc: writes resources/editor.js and each node's editor HTML (build/editor-html.ts)
 * and copies what Node-RED loads beside the compiled code (message catalogs, help, icons) into dist/nodes,
 * writing each help page whole. Help pages are Handlebars templates: a section several nodes share is written once,
 * as the partial `nodes/locales/<lang>/_partials/<name>.html`, which a page takes with `{{> name}}`;
 * a shared frame around a page's own lines (the output ports around the node's output members) is a
 * partial block, `{{#> name}}` … `{{/name}}`, the partial placing them with `{{> @partial-block}}`.
 */

export const PARTIALS_FOLDER = '_partials';

/** Help page `page` with its partials from `partialsDir` in place. */
export function helpPage(page: string, partialsDir: string): string {
  const templates = Handlebars.create();
  for (const file of fs.readdirSync(partialsDir))
    templates.registerPartial(path.basename(file, '.html'), fs.readFileSync(path.join(partialsDir, file), 'utf8'));
  // Help pages are HTML as written: nothing to escape, and a partial named that does not exist is an error.
  return templates.compile(page, { noEscape: true, strict: true })({});
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
      fs.writeFileSync(page, helpPage(fs.readFileSync(page, 'utf8'), path.join(sourceDir, 'locales', language, PARTIALS_FOLDER)));
    }
    const icon = path.join(repoRoot, 'icons', `${type}.svg`);
    if (fs.existsSync(icon)) fs.cpSync(icon, path.join(nodeDir, 'icons', `${type}.svg`));
    await writeEditorHtml(type, sourceDir, targetDir);
  }
}

// Compiled to dist/build/copy-assets.js: the repository is two folders up.
if (require.main === module) {
  const repoRoot = path.join(__dirname, '..', '..');
  Promise.all([copyAssets(repoRoot), writeEditorScript(repoRoot), bundleVendor(repoRoot)]).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
