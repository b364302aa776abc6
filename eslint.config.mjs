// ESLint flat config: type-checked typescript-eslint rules for the TypeScript in nodes/ and test/,
// the recommended JavaScript rules for the editor scripts in nodes/*.html and resources/.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import html from 'eslint-plugin-html';
import tseslint from 'typescript-eslint';

/**
 * The layer rule of nodes/lib (README, Architecture): imports run one way, node files -> node-red/
 * (Node-RED glue) -> platform/, shared/ and geo/ -> format/ -> util/. `notImported` lists the lib folders a
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

export default defineConfig(
  { ignores: ['dist/', 'node_modules/', 'test/nr5/node_modules/', 'test/artifacts/', 'test/bench/results/'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
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
  layer('platform', ['node-red', 'geo', 'shared']),
  layer('shared', ['node-red', 'geo']),
  layer('geo', ['node-red', 'platform', 'shared']),
  layer('format', ['node-red', 'platform', 'shared', 'geo']),
  layer('util', ['node-red', 'platform', 'shared', 'geo', 'format']),
  {
    // The glue layer may use Node-RED, but not the node files built on it.
    files: ['nodes/lib/node-red/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ regex: '(^|/)svc-[^/]+$', message: 'nodes/lib never imports a node file.' }] }],
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
    files: ['nodes/**/*.html', 'resources/**/*.js'],
    plugins: { html },
    extends: [js.configs.recommended],
    languageOptions: {
      sourceType: 'script',
      globals: {
        RED: 'readonly',
        $: 'readonly',
        window: 'readonly',
        document: 'readonly',
        // The pack's shared editor code, defined on window by resources/editor.js.
        SvcEditor: 'readonly',
      },
    },
  },
  {
    files: ['eslint.config.mjs'],
    extends: [js.configs.recommended],
  },
);
