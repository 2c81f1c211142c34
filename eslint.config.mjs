// ESLint for the TypeScript sources: typescript-eslint's recommended rules,
// the promise rules that catch a forgotten await, Prettier owning layout,
// and the layer rule dependency-cruiser cannot see: query building (a call
// on a knex handle) only in src/queries and src/db.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

const KNEX_HANDLE = /^(db|trx|knex|q)$/;

export default tseslint.config(
  { ignores: ['dist/**', 'web/dist/**', 'generated/**', 'node_modules/**', 'coverage/**', 'data/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx', '**/*.mts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/queries/**', 'src/db/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: `CallExpression[callee.type='Identifier'][callee.name=${KNEX_HANDLE}]`,
          message: 'SQL belongs in src/queries: call a query function instead of building a query here.',
        },
        {
          selector: `CallExpression[callee.type='MemberExpression'][callee.property.name=${KNEX_HANDLE}]`,
          message: 'SQL belongs in src/queries: call a query function instead of building a query here.',
        },
        {
          selector: `CallExpression[callee.property.name='raw'][callee.object.property.name=${KNEX_HANDLE}]`,
          message: 'SQL belongs in src/queries.',
        },
      ],
    },
  },
  {
    // Tests read JSON bodies whose shape the contract checker has already checked.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        URL: 'readonly',
        structuredClone: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        __dirname: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URLSearchParams: 'readonly',
        fetch: 'readonly',
      },
    },
    // CommonJS scripts (dredd hooks, build scripts, jest setup) load modules with require.
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  prettier,
);
