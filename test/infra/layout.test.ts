/**
 * lib/ is the CDK app only: it imports nothing from the local-run tools, the CLI, the tests or the
 * bench, and its constructs read no CDK context (only lib/app.ts and lib/config.ts do).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );

describe('lib/', () => {
  const sources = files(join(root, 'lib'));

  it('imports nothing from local/, cli/, test/ or bench/', () => {
    const offending = sources.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/from\s+'(\.[^']+)'/g)]
        .map((match) => relative(root, resolve(file, '..', match[1]!)))
        .filter((target) => /^(local|cli|test|bench)\//.test(target))
        .map((target) => `${relative(root, file)} -> ${target}`),
    );
    expect(sources.length).toBeGreaterThan(5);
    expect(offending).toEqual([]);
  });

  it('reads CDK context only in app.ts and config.ts', () => {
    const readers = sources
      .filter((file) => /tryGetContext|getContext\(/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(root, file));
    expect(readers.filter((file) => file !== 'lib/app.ts' && file !== 'lib/config.ts')).toEqual([]);
  });
});

describe('test/', () => {
  it('imports nothing from bench/ (the bench only measures; what both need lives in local/)', () => {
    const sources = files(join(root, 'test'));
    const offending = sources.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/from\s+'(\.[^']+)'/g)]
        .map((match) => relative(root, resolve(file, '..', match[1]!)))
        .filter((target) => target.startsWith('bench/'))
        .map((target) => `${relative(root, file)} -> ${target}`),
    );
    expect(sources.length).toBeGreaterThan(20);
    expect(offending).toEqual([]);
  });
});
