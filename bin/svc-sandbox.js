#!/usr/bin/env node
// The package's `svc-sandbox` command: the sandbox platform on its own (sandbox/cli.ts; `svc-sandbox --help`).
'use strict';
require('../dist/sandbox/cli.js')
  .run(process.argv.slice(2))
  .catch((err) => {
    console.error(err);
    process.exit(1);
  });
