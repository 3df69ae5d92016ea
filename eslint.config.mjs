import tseslint from 'typescript-eslint';

// The pure core: libs/domain decides, it never does I/O.
const ioModules = [
  'fs', 'node:fs', 'fs/promises', 'node:fs/promises', 'child_process', 'node:child_process',
  'net', 'node:net', 'http', 'node:http', 'https', 'node:https', 'pg', 'kysely', 'better-sqlite3',
];
const ioPatterns = ['@nestjs/*', '@nats-io/*', '@electric-sql/*', '@stageflow/*'];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.stageflow/**', 'coverage/**', '**/*.js', '**/*.mjs'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'off',
    },
  },
  {
    files: ['libs/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: ioModules, patterns: ioPatterns }],
      'no-restricted-globals': ['error', 'process', 'setTimeout', 'setInterval', 'fetch'],
    },
  },
  {
    files: ['**/*.spec.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
