// ESLint flat config: type-checked typescript-eslint rules for the TypeScript in nodes/ and test/,
// the recommended JavaScript rules for the editor scripts in nodes/*.html and resources/.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import html from 'eslint-plugin-html';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'node_modules/', 'test/nr5/node_modules/', 'test/artifacts/', 'test/bench/results/'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    files: ['nodes/**/*.html', 'resources/**/*.js'],
    plugins: { html },
    extends: [js.configs.recommended],
    languageOptions: {
      sourceType: 'script',
      globals: { RED: 'readonly', $: 'readonly', window: 'readonly', document: 'readonly' },
    },
  },
  {
    files: ['eslint.config.mjs'],
    extends: [js.configs.recommended],
  },
);
