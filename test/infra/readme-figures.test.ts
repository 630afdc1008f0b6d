/**
 * The figures README.md and the package's README state that a test can check against what they
 * describe: the tables `npm start` creates (those of the synthesized template, local/tables.ts),
 * and the package's entry points (its package.json `exports`).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { localTableNames, tableDefinitionsFromTemplate } from '../../local/tables.js';
import { synthesizedTemplate } from '../support/tables.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const NUMBERS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];

/** The number a README spells before `what` (`five tables`), once. */
function spelled(text: string, what: string): number {
  const found = [...text.matchAll(new RegExp(`\\b(${NUMBERS.join('|')}) ${what}\\b`, 'g'))].map((m) => NUMBERS.indexOf(m[1]!));
  expect(found, `"<number> ${what}" in the README`).toHaveLength(1);
  return found[0]!;
}

describe('figures in the READMEs', () => {
  it('npm start creates as many tables as README.md says, each named in the step it prints', () => {
    const readme = read('README.md');
    // Tables a template keeps only for an upgrade (roles `legacy…`) are not among those npm start creates.
    const definitions = tableDefinitionsFromTemplate(synthesizedTemplate()).filter((d) => !d.role.startsWith('legacy'));
    expect(spelled(readme, 'tables')).toBe(definitions.length);
    const names = localTableNames('local', true, true);
    expect(Object.keys(names).sort()).toEqual(definitions.map((d) => d.role).sort());
  });

  it("the package's README names each of its entry points, as many as package.json exports", () => {
    const readme = read('packages/scheduled-singleton/README.md');
    const pkg = JSON.parse(read('packages/scheduled-singleton/package.json')) as { name: string; exports: Record<string, unknown> };
    const entries = Object.keys(pkg.exports).filter((key) => key !== './package.json');
    expect(spelled(readme, 'entry points')).toBe(entries.length);
    const intro = readme.split('\n## ')[0]!;
    for (const entry of entries) expect(intro).toContain(entry === '.' ? `**\`${pkg.name}\`**` : `**\`${entry.slice(1)}\`**`);
  });
});
