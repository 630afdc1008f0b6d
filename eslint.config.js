// @ts-check
/**
 * ESLint with typescript-eslint's type-aware rules (the type checker informs the lint): `npm run
 * lint`, run by CI. Generated and vendored output (cdk.out, node_modules) is not linted.
 */
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'cdk.out/**',
      'node_modules/**',
      '.local/**',
      'packages/*/dist/**',
      'lambda/sources/undici-lean.cjs',
      '**/*.d.cts',
      'test/support/invoke-bundle.mjs',
      'test/support/starvation-probe.mjs',
      '**/*.d.mts',
      'local/door/function-host.mjs',
      'packages/*/scripts/*.mjs',
      'eslint.config.js',
      // Recorded data, and the script that recorded it inside the previous release (test/fixtures/upgrade/README.md).
      'test/fixtures/**',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Unhandled promises lose errors: every promise is awaited, returned or explicitly voided.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
    },
  },
  {
    // Tests and test tooling read loosely typed JSON (templates, log lines, DynamoDB items).
    files: ['test/**/*.ts', 'packages/*/test/**/*.ts', 'bench/**/*.ts', 'local/**/*.ts', 'bin/**/*.ts'],
    rules: {
      '@typescript-eslint/no-base-to-string': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Test doubles: `expect(mock.method)` and async stand-ins that resolve at once are the idiom.
    files: ['test/**/*.ts', 'packages/*/test/**/*.ts'],
    rules: {
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/prefer-promise-reject-errors': 'off',
    },
  },
  {
    // One HTTP attempt reports what went wrong as a `Problem` record (kind, retryable, cause) that
    // the retry loop turns into the one CodeforcesError the client throws.
    files: ['lambda/sources/codeforces/client.ts'],
    rules: { '@typescript-eslint/only-throw-error': 'off', '@typescript-eslint/prefer-promise-reject-errors': 'off' },
  },
);
