/**
 * Every option of the package's public option types says its default (`@default` in its JSDoc), so
 * an adopter reads it in the editor: the option, props, deps and settings interfaces of src/, and
 * the few whose names say otherwise.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = fileURLToPath(new URL('../src/', import.meta.url));
const OPTION_TYPES = /^(\w+(Options|Props|Deps|Settings|Config|Parts)|JobOutbox|JobMetrics|FenceExtras|ExclusiveRun|FailureNaming)$/;

/** `Interface.option` of every optional property of an option type, and whether its JSDoc has `@default`. */
function options(): { name: string; documented: boolean }[] {
  const files = (readdirSync(src, { recursive: true }) as string[]).filter((file) => file.endsWith('.ts'));
  return files.flatMap((file) => {
    const lines = readFileSync(join(src, file), 'utf8').split('\n');
    const found: { name: string; documented: boolean }[] = [];
    let current: string | undefined;
    lines.forEach((line, i) => {
      const opened = /^export interface (\w+)/.exec(line)?.[1];
      if (opened !== undefined) current = OPTION_TYPES.test(opened) ? opened : undefined;
      if (line.startsWith('}')) current = undefined;
      const option = /^ {2}(?:readonly )?(\w+)\?:/.exec(line)?.[1];
      if (current === undefined || option === undefined) return;
      let doc = '';
      for (let j = i - 1; j >= 0 && /^\s*(\/\*\*|\*)/.test(lines[j]!); j -= 1) doc = lines[j]! + doc;
      found.push({ name: `${current}.${option}`, documented: doc.includes('@default') });
    });
    return found;
  });
}

describe('the public option types', () => {
  it('say the default of every option', () => {
    const all = options();
    expect(all.length).toBeGreaterThan(80);
    expect(all.map((o) => o.name)).toEqual(
      expect.arrayContaining(['ScheduledSingletonOptions.configure', 'ScheduledSingletonJobProps.leaseDuration']),
    );
    expect(all.filter((o) => !o.documented).map((o) => o.name)).toEqual([]);
  });
});
