// Mocha's settings for `npm test`, `npx mocha` and `npm run test:nr5`: the fast suites (every
// dist/test/**/*_spec.js), or only the files and globs named on the command line
// (`npm test -- dist/test/nodes/geocode_spec.js`), which mocha would otherwise run besides them.
'use strict';
const { types, aliases } = require('mocha/lib/cli/run-option-metadata');

/** Mocha's flags that take no value, with their aliases: any other flag's next argument is its value. */
const flags = new Set(types.boolean.flatMap((flag) => [flag, ...(aliases[flag] ?? [])]));

/** The arguments that name test files, as mocha reads them: neither a flag nor a flag's value. */
function namedFiles(args) {
  const named = [];
  for (let i = 0; i < args.length; i++) {
    const flag = /^--?([^=]+)$/.exec(args[i]);
    if (args[i] === '--') {
      named.push(...args.slice(i + 1));
      break;
    }
    if (flag) {
      if (!flags.has(flag[1].replace(/^no-/, ''))) i++;
    } else if (!args[i].startsWith('-')) named.push(args[i]);
  }
  return named;
}

module.exports = {
  spec: namedFiles(process.argv.slice(2)).length > 0 ? [] : ['dist/test/**/*_spec.js'],
  // The release test runs alone (npm run test:package), the Node-RED 5 runner is no spec.
  ignore: ['dist/test/nr5/**', 'dist/test/package_spec.js', 'dist/test/package_examples_spec.js'],
  timeout: 15000,
  reporter: 'spec',
  require: ['dist/test/support/open-handles.js', 'dist/test/support/english.js'],
};
