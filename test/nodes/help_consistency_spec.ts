import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import should from 'should';
import { runEditorScripts } from '../support/editor-script';
import { NODES_DIR, REPO_ROOT } from '../support/paths';

/**
 * Issue 21 point 6: help checked against behaviour. Each node's help names every field its dialog
 * shows, in en-US and ja; the svc-config table (docs/configuration.md) lists every setting of the editor's
 * `defaults` with its default and the dialog tab it is on; no help page speaks of "the spec"; what a
 * help page says of a behaviour agrees with what the node does; and (issue 23) the pack's English
 * says "response" for an HTTP response, one word for one idea.
 */

type Catalog = { [key: string]: string | Catalog };

const MANIFEST = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  repository: { url: string };
  'node-red': { nodes: Record<string, string> };
};
const TYPES = Object.keys(MANIFEST['node-red'].nodes);
const LANGUAGES = ['en-US', 'ja'] as const;
/** Rows every dialog has, named in Node-RED's own words. */
const COMMON_FIELDS = new Set(['name', 'server']);
/** The dialog's labels: `<label for="node-input-<field>">…<span data-i18n="<key>">`. */
const LABEL = /<label for="node-(?:config-)?input-(\w+)"><i class="fa fa-[\w-]+"><\/i> <span data-i18n="([^"]+)"><\/span><\/label>/g;

const scripts = runEditorScripts(TYPES);

function catalog(language: string, type: string): Catalog {
  return JSON.parse(fs.readFileSync(path.join(NODES_DIR, type, 'locales', language, `${type}.json`), 'utf8')) as Catalog;
}

/** The help page as Node-RED serves it (the build writes the shared sections in). */
function help(language: string, type: string): string {
  return fs.readFileSync(path.join(NODES_DIR, type, 'locales', language, `${type}.html`), 'utf8');
}

/** A catalog text by its key, `<namespace>:<key>` for another node's catalog. */
function text(language: string, type: string, key: string): string | undefined {
  const [namespace, name] = key.includes(':') ? [key.slice(0, key.indexOf(':')).split('/').pop() as string, key.slice(key.indexOf(':') + 1)] : [type, key];
  let node: string | Catalog | undefined = catalog(language, namespace);
  for (const part of name.split('.')) node = typeof node === 'object' ? node[part] : undefined;
  return typeof node === 'string' ? node : undefined;
}

/** The fields a dialog shows, with their label keys. */
function dialogFields(type: string): Array<{ field: string; key: string }> {
  return [...(scripts.templates.get(type) ?? '').matchAll(LABEL)].map(([, field, key]) => ({ field, key }));
}

describe('help, catalogs and README in step with each node', function () {
  for (const language of LANGUAGES) {
    it(`${language}: each help page names every field of its dialog by its label, and none speaks of "the spec"`, function () {
      const unnamed: string[] = [];
      const jargon: string[] = [];
      for (const type of TYPES) {
        const page = help(language, type);
        for (const { field, key } of dialogFields(type)) {
          if (COMMON_FIELDS.has(field)) continue;
          const label = text(language, type, key);
          if (label === undefined) unnamed.push(`${type}.${field}: no label ${key}`);
          else if (!page.includes(`<i>${label}</i>`) && !new RegExp(`<dt>[^<]*${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`).test(page)) {
            unnamed.push(`${type}.${field}: "${label}"`);
          }
        }
        if (/\bspec\b|specification|仕様/i.test(page.replace(/<code>[^<]*<\/code>/g, ''))) jargon.push(type);
      }
      should(unnamed).deepEqual([]);
      should(jargon).deepEqual([]);
    });
  }

  it('one word for an HTTP response: code, tests, editor, help, English catalogs, examples, README and CONTRIBUTING say "response", never "answer" (issue 23 point 2)', function () {
    // What git tracks (no installed modules, no local results); the 1.0.0 flows stay as 1.0.0 wrote them,
    // the Japanese texts have words of their own, and this file names the word it looks for.
    const files = execFileSync(
      'git',
      ['ls-files', '--', 'README.md', 'docs', 'CONTRIBUTING.md', 'nodes', 'resources', 'types', 'examples', 'sandbox', 'bin', 'test'],
      {
        cwd: REPO_ROOT,
        encoding: 'utf8',
      },
    )
      .split('\n')
      .filter((file) => /\.(?:ts|js|html|json|md)$/.test(file) && !/\/ja\/|^test\/fixtures\//.test(file) && file !== 'test/nodes/help_consistency_spec.ts');
    const answer = /\banswer(?:s|ed|ing)?\b/i;
    const found: string[] = [];
    for (const file of files) {
      fs.readFileSync(path.join(REPO_ROOT, file), 'utf8')
        .split('\n')
        .forEach((line, index) => answer.test(line) && found.push(`${file}:${index + 1}: ${line.trim()}`));
    }
    should(found).deepEqual([]);
  });

  it("README's svc-config table lists every setting and credential of the editor's definition, on its dialog tab, with the editor's default", function () {
    // The table is in docs/configuration.md since the README was split into docs/ pages (issue 32 point 3).
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'configuration.md'), 'utf8');
    const section = readme.slice(readme.indexOf('# Configure the platform'));
    const rows = section
      .slice(0, section.indexOf('\n\n', section.indexOf('| Tab |')))
      .split('\n')
      .filter((line) => line.startsWith('| '));
    const definition = scripts.definitions.get('svc-config');
    const defaults = (definition?.defaults ?? {}) as Record<string, { value?: unknown }>;
    const credentials = Object.keys((definition as { credentials?: object } | undefined)?.credentials ?? {});
    const tabs = (catalog('en-US', 'svc-config')['svc-config'] as Catalog).tabs as Record<string, string>;
    const template = scripts.templates.get('svc-config') ?? '';
    const tabOf = (field: string) =>
      Object.keys(tabs).find((tab) => {
        const panel = template.indexOf(`id="svc-config-tab-${tab}"`);
        const next = template.indexOf('id="svc-config-tab-', panel + 1);
        const input = template.indexOf(`id="node-config-input-${field}"`);
        return panel >= 0 && input > panel && (next < 0 || input < next);
      });
    const shown = new Set(dialogFields('svc-config').map(({ field }) => field));
    const problems = [...shown].filter((field) => !(field in defaults) && !credentials.includes(field)).map((field) => `${field}: not in the definition`);
    // Every setting and credential the dialog shows (the settings `version` is not one).
    for (const field of [...Object.keys(defaults), ...credentials].filter((name) => shown.has(name))) {
      if (field === 'name') continue;
      const row = rows.find((line) => line.includes(`\`${field}\``));
      if (!row) {
        problems.push(`${field}: no row`);
        continue;
      }
      // A field above the tabs (Platform) has the row "| Above the tabs |".
      const tab = tabOf(field);
      if (!row.startsWith(`| ${tab ? tabs[tab] : 'Above the tabs'} |`)) problems.push(`${field}: the dialog has it on ${tab ? tabs[tab] : 'no tab'}`);
      const value = defaults[field]?.value;
      if (typeof value === 'number' && !row.includes(`default ${value}`)) problems.push(`${field}: default ${value} not in "${row}"`);
    }
    should(problems).deepEqual([]);
  });

  it('svc-geocode: its help says each request counts against the daily limit, as its status shows (used/limit)', function () {
    for (const language of LANGUAGES) {
      const page = help(language, 'svc-geocode');
      const dailyLimit = text(language, 'svc-config', 'svc-config.label.dailyLimit') as string;
      should(page).not.match(/not counted by the node|ノードでは数えません/);
      should(page).containEql(`<i>${dailyLimit}</i>`);
      should(page).match(/QUOTA_EXCEEDED/);
    }
  });

  it('the README is read in five minutes (under 250 lines and 900 words), and every link between README, docs/ and CONTRIBUTING lands on a file and heading that exist (issue 32 point 3, issue 54 point 4)', function () {
    const pages = trackedFiles(['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', 'docs/*.md']);
    const readme = fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    should(readme.split('\n').length).be.below(250);
    should(readme.split(/\s+/).filter(Boolean).length).be.belowOrEqual(900);
    const broken = pages.flatMap((page) =>
      [...fs.readFileSync(path.join(REPO_ROOT, page), 'utf8').matchAll(/\]\(([^)\s]+)\)/g)]
        .map(([, target]) => target)
        .filter((target) => !/^(https?:|mailto:)/.test(target))
        .flatMap((target) => brokenLink(page, target).map((problem) => `${page}: ${problem}`)),
    );
    should(broken).deepEqual([]);
  });

  it('every link from the help pages, catalogs, examples and editor code to the README or docs/ (by the address of the repository or of the npm package) lands on a file and heading that exist (issue 32 point 3)', function () {
    const files = trackedFiles(['nodes', 'resources', 'examples', 'build']).filter((file) => /\.(html|json|ts|js)$/.test(file));
    should(files.filter((file) => /\/locales\/(en-US|ja)\/.+\.html$/.test(file)).length).be.above(TYPES.length * LANGUAGES.length - 1);
    const broken = files.flatMap((file) => {
      const source = fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');
      // Node-RED serves the editor and its help: a relative link to README.md or docs/ lands on Node-RED's address.
      const relative = [...source.matchAll(/href=\\?["']([^"':\\]+\.md\b[^"'\\]*)/g)].map(([, href]) => href);
      return [
        ...relative.map((href) => `${file}: ${href} (relative: give the repository's address)`),
        ...[...source.matchAll(PACKAGE_ADDRESS)].flatMap(([, page, anchor]) =>
          brokenLink('', `${page ?? 'README.md'}${anchor ?? ''}`).map((problem) => `${file}: ${problem}`),
        ),
      ];
    });
    should(broken).deepEqual([]);
  });

  it('no text tells of an earlier release ("as before", "as 1.0.0 did"): README, docs/, CONTRIBUTING, help pages and catalogs (issue 54 point 4)', function () {
    // docs/upgrading.md is about the earlier release: it names it.
    const files = trackedFiles(['README.md', 'CONTRIBUTING.md', 'docs', 'nodes']).filter(
      (file) => /\.(md|html|json)$/.test(file) && file !== 'docs/upgrading.md',
    );
    const found = files.filter((file) => /\bas before\b|\bas (?:in )?1\.0\.0\b|1\.0\.0と同じ/i.test(fs.readFileSync(path.join(REPO_ROOT, file), 'utf8')));
    should(found).deepEqual([]);
  });

  it('every README anchor other pages linked to before the README was split into docs/ is still a heading of the README or of a docs/ page (issue 32 point 3)', function () {
    const pages = trackedFiles(['README.md', 'docs/*.md']);
    const headings = new Set(pages.flatMap((page) => [...headingAnchors(path.join(REPO_ROOT, page))]));
    should(LINKED_README_ANCHORS.filter((anchor) => !headings.has(anchor))).deepEqual([]);
  });
});

/**
 * Anchors of the README before issue 32 split it into docs/ pages that CONTRIBUTING (the first four) and the README
 * itself linked to: a link kept from then, or an old bookmark, finds the section on its page of docs/.
 */
const LINKED_README_ANCHORS = [
  'try-it-without-an-account',
  'performance-and-reliability',
  'restart-safe-jobs',
  'running-several-instances',
  'bounded-responses',
  'decisions-where-the-spec-is-silent',
  'rate-limits',
  'secrets-in-responses',
  'security',
  'show-it-on-a-map-worldmap',
  'the-editors-admin-endpoint',
];

/** Text that matches itself in a regular expression. */
function literally(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/**
 * A link to the pack's README or docs/ as the editor or a help page would write it: the repository on GitHub
 * (package.json's `repository`: its front page is the README, a file is `/blob/<ref>/<path>`) or the npm package's
 * page (the README). Groups: the file below the repository (none for the README) and the anchor.
 */
const PACKAGE_ADDRESS = new RegExp(
  `(?:${literally(MANIFEST.repository.url.replace(/^git\+/, '').replace(/\.git$/, ''))}(?:/(?:blob|tree)/[\\w.-]+/([\\w./-]+))?` +
    `|${literally(`https://www.npmjs.com/package/${MANIFEST.name}`)})(#[\\w-]+)?`,
  'g',
);

/** The files git holds (or would: new ones not ignored) below the given paths. */
function trackedFiles(paths: string[]): string[] {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', ...paths], { cwd: REPO_ROOT, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
}

/** What is wrong with a link from `page` (below the repository; '' for its root) to a file of the repository: nothing when it lands on a file and heading that exist. */
function brokenLink(page: string, target: string): string[] {
  const [file, anchor] = target.split('#');
  const resolved = file ? path.join(path.dirname(page), file) : page;
  if (!fs.existsSync(path.join(REPO_ROOT, resolved))) return [`${target} (no such file)`];
  if (anchor && resolved.endsWith('.md') && !headingAnchors(path.join(REPO_ROOT, resolved)).has(anchor)) return [`${target} (no such heading)`];
  return [];
}

/** The anchors GitHub gives the headings of a Markdown file (lower case, punctuation dropped, spaces as hyphens), code blocks skipped. */
function headingAnchors(file: string): Set<string> {
  const anchors = new Set<string>();
  let inCode = false;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('```')) inCode = !inCode;
    const heading = /^#{1,6} (.*)$/.exec(line);
    if (heading && !inCode)
      anchors.add(
        heading[1]
          .trim()
          .toLowerCase()
          .replace(/[^\p{L}\p{N}_\- ]/gu, '')
          .replace(/ /g, '-'),
      );
  }
  return anchors;
}
