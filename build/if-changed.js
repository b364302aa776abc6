#!/usr/bin/env node
// The build of `npm start`, `npm test` and the other suites' scripts: runs `npm run build` only when a
// source changed since the last build it ran, so a CI run or a run of several suites builds once.
// The sources are every file below SOURCES (but installed modules and test output) and SOURCE_FILES; the
// build is current when dist/ holds the stamp this script wrote before its last build, no source is newer
// than the stamp, and the list of sources is the one the stamp recorded (a deleted or added file rebuilds).
// `npm run build` empties dist/, stamp included, so the next script after it builds once more.
'use strict';
const { execSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const STAMP = path.join(ROOT, 'dist', '.build-stamp.json');
const SOURCES = ['nodes', 'sandbox', 'test', 'build', 'types', 'icons'];
const SOURCE_FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.editor.json'];
/** Folders below SOURCES that hold no source: installed modules and what tests write. */
const SKIPPED = new Set(['node_modules', path.join('test', 'artifacts'), path.join('test', 'bench', 'results')]);

/** Every source file (relative to the repository) with its modification time, ms. */
function sources() {
  const found = new Map();
  const walk = (relative) => {
    if (!fs.existsSync(path.join(ROOT, relative))) return;
    for (const entry of fs.readdirSync(path.join(ROOT, relative), { withFileTypes: true })) {
      const file = path.join(relative, entry.name);
      if (SKIPPED.has(entry.name) || SKIPPED.has(file)) continue;
      if (entry.isDirectory()) walk(file);
      else if (entry.isFile()) found.set(file, fs.statSync(path.join(ROOT, file)).mtimeMs);
    }
  };
  for (const folder of SOURCES) walk(folder);
  for (const file of SOURCE_FILES) if (fs.existsSync(path.join(ROOT, file))) found.set(file, fs.statSync(path.join(ROOT, file)).mtimeMs);
  return found;
}

/** Why a build is needed, or undefined when dist/ is current. */
function staleness(files) {
  if (!fs.existsSync(STAMP)) return 'no build stamp in dist/';
  const stamp = JSON.parse(fs.readFileSync(STAMP, 'utf8'));
  const changed = [...files].find(([, time]) => time >= stamp.time);
  if (changed) return `${changed[0]} changed`;
  const listed = [...files.keys()].sort().join('\n');
  if (listed !== stamp.files.join('\n')) return 'a source was added or deleted';
  return undefined;
}

const started = Date.now();
const files = sources();
const why = staleness(files);
if (why === undefined) {
  console.log('build: dist/ is current, nothing to rebuild');
} else {
  console.log(`build: ${why}, building`);
  execSync('npm run build', { cwd: ROOT, stdio: 'inherit' });
  fs.writeFileSync(STAMP, JSON.stringify({ time: started, files: [...files.keys()].sort() }));
}
