// ESLint flat config: type-checked typescript-eslint rules for the TypeScript in nodes/, sandbox/ and test/,
// the recommended JavaScript rules for the package's bin/ and the build's scripts.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/**
 * The sandbox platform (sandbox/) stands apart from the node code (CONTRIBUTING, The layers): nothing in
 * nodes/ imports it, so a Node-RED that does not use it never loads it.
 */
const notSandbox = {
  regex: '(^|/)sandbox(/|$)',
  message: 'nodes/ never imports the sandbox (sandbox/): it stands in for the platform, apart from the client.',
};

/**
 * The layer rule of nodes/lib (CONTRIBUTING, The layers): imports run one way, node files -> node-red/
 * (Node-RED glue) -> platform/, state/ and geo/ -> format/ -> util/. `notImported` lists the lib folders a
 * layer must not import (any folder not below it); Node-RED and Express stay in the glue layer.
 */
function layer(folder, notImported) {
  const nodeRed = { message: 'Only node files and nodes/lib/node-red/ use Node-RED; this layer runs without it.' };
  return {
    files: [`nodes/lib/${folder}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'node-red', ...nodeRed },
            { name: 'express', ...nodeRed },
          ],
          patterns: [
            { regex: '^@node-red/', ...nodeRed },
            { regex: '(^|/)svc-[^/]+$', message: 'nodes/lib never imports a node file.' },
            notSandbox,
            ...notImported.map((other) => ({
              regex: `^\\.\\./${other}/`,
              message: `nodes/lib/${folder}/ is below nodes/lib/${other}/ (or beside it) and must not import it: imports run one way.`,
            })),
          ],
        },
      ],
    },
  };
}

/**
 * import-x's no-cycle passes over `import type`: a cycle of types alone is allowed there, since it costs
 * nothing at run time. Ours counts them too, because a cycle of types is still two modules that cannot
 * be read one without the other. The rule is import-x's own, shown every import as a value import:
 * those of the file it lints, and (through a parser that marks nothing as type-only) those of every file
 * it follows.
 */
const valueKind = (node) => {
  if (node.importKind === 'type') node.importKind = 'value';
  if (node.source && node.exportKind === 'type') node.exportKind = 'value';
  for (const specifier of node.specifiers ?? []) {
    if (specifier.importKind === 'type') specifier.importKind = 'value';
    if (specifier.exportKind === 'type') specifier.exportKind = 'value';
  }
  return node;
};
const typesAsValues = {
  meta: { name: 'types-as-values' },
  parseForESLint(code, options) {
    const parsed = tseslint.parser.parseForESLint(code, options);
    parsed.ast.body.forEach(valueKind);
    return parsed;
  },
};
const noCycle = importX.rules['no-cycle'];
const noCycleWithTypes = {
  meta: noCycle.meta,
  create(context) {
    const counted = Object.create(context, {
      languageOptions: { value: { ...context.languageOptions, parser: typesAsValues } },
      parserPath: { value: undefined },
    });
    const visitor = noCycle.create(counted);
    const asValue = (handler) => handler && ((node) => handler(valueKind({ ...node, specifiers: node.specifiers?.map((s) => ({ ...s })) })));
    return {
      ...visitor,
      ImportDeclaration: asValue(visitor.ImportDeclaration),
      ExportNamedDeclaration: asValue(visitor.ExportNamedDeclaration),
      ExportAllDeclaration: asValue(visitor.ExportAllDeclaration),
    };
  },
};

export default defineConfig(
  { ignores: ['dist/', 'resources/', 'node_modules/', 'test/nr5/node_modules/', 'test/artifacts/', 'test/bench/results/'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        // types/ declares the editor page's globals for tsconfig.editor.json, outside the runtime's tsconfig.json.
        projectService: { allowDefaultProject: ['types/*.d.ts'], defaultProject: 'tsconfig.editor.json' },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // As tsc's noUnusedParameters: a leading underscore marks a parameter kept for its position
      // (Express tells error handlers by their four parameters); rest siblings drop members on purpose.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Passing on a caught error of unknown type is not inventing a non-Error reason.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // An async method that awaits nothing is how an in-memory store implements an async interface
      // (a throw becomes a rejection); forgotten awaits are caught by no-floating-promises.
      '@typescript-eslint/require-await': 'off',
      // `void promise` would hide a rejection as surely as a bare call: each promise is awaited,
      // returned, or given a .catch that reports it.
      '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: false }],
    },
  },
  {
    // The editor code runs on the editor page: its types are tsconfig.editor.json's (DOM and the editor's globals).
    files: ['nodes/*/editor.ts', 'nodes/lib/editor/**/*.ts'],
    languageOptions: { parserOptions: { projectService: false, project: './tsconfig.editor.json' } },
  },
  {
    // Node files (the layers below repeat it in their own rule, which takes this one's place).
    files: ['nodes/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [notSandbox] }] },
  },
  {
    // No module of nodes/ imports itself back through others, not even for a type (see noCycleWithTypes).
    files: ['nodes/**/*.ts'],
    plugins: { 'import-x': importX, svc: { rules: { 'no-cycle': noCycleWithTypes } } },
    settings: { 'import-x/extensions': ['.ts'], 'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'] })] },
    rules: { 'svc/no-cycle': ['error', { ignoreExternal: true }] },
  },
  layer('platform', ['node-red', 'geo', 'state']),
  layer('state', ['node-red', 'geo']),
  layer('geo', ['node-red', 'platform', 'state']),
  layer('format', ['node-red', 'platform', 'state', 'geo']),
  layer('util', ['node-red', 'platform', 'state', 'geo', 'format']),
  layer('editor', ['node-red', 'platform', 'state', 'geo', 'format', 'util']),
  {
    // The glue layer may use Node-RED, but not the node files built on it.
    files: ['nodes/lib/node-red/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '(^|/)svc-[^/]+$', message: 'nodes/lib never imports a node file.' }, notSandbox] }],
    },
  },
  {
    // The one exception (issue 52): the built-in sandbox's glue serves sandbox/ inside Node-RED. It imports its
    // types only, and requires it when the first sandbox config starts (test/sandbox/unloaded_spec.ts).
    files: ['nodes/lib/node-red/builtin-sandbox.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '(^|/)svc-[^/]+$', message: 'nodes/lib never imports a node file.' }] }],
    },
  },
  {
    // The sandbox platform (sandbox/) ships in the package and runs without Node-RED, the node code or the
    // tests: its own implementation of the interface, so a bug in the client cannot hide behind the same bug here.
    files: ['sandbox/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'node-red', message: 'The sandbox runs without Node-RED.' },
            { name: 'express', message: 'The sandbox runs without Node-RED.' },
          ],
          patterns: [
            { regex: '^@node-red/', message: 'The sandbox runs without Node-RED.' },
            {
              regex: '(^|/)nodes(/|$)',
              message: 'sandbox/ imports nothing of nodes/: it is a second implementation of the interface, written apart from the client.',
            },
            { regex: '(^|/)test(/|$)', message: 'sandbox/ ships in the package: it imports nothing of test/.' },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Tests load compiled nodes, core nodes and tools' internals by paths computed at run time, synchronously.
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    // The package's commands: CommonJS run by Node as written.
    files: ['bin/**/*.js'],
    extends: [js.configs.recommended],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', process: 'readonly', console: 'readonly' } },
  },
  {
    // npm start's build step: CommonJS run by Node as written, before anything is compiled.
    files: ['build/**/*.js'],
    extends: [js.configs.recommended],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', process: 'readonly', console: 'readonly', __dirname: 'readonly' } },
  },
  {
    files: ['eslint.config.mjs'],
    extends: [js.configs.recommended],
  },
);
