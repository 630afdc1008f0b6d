/**
 * `prepack`, after `npm run build`: refuse to pack a dist/ that is missing a file or older than its
 * sources, or an export that points at nothing. It only reads files (Node alone, no dev dependency).
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const problems = [];
const sources = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
for (const source of sources(join(root, 'src'))) {
  const base = join(root, 'dist', relative(join(root, 'src'), source)).replace(/\.ts$/, '');
  for (const built of [`${base}.js`, `${base}.d.ts`]) {
    if (!existsSync(built)) problems.push(`${relative(root, built)} is missing`);
    else if (statSync(built).mtimeMs < statSync(source).mtimeMs)
      problems.push(`${relative(root, built)} is older than ${relative(root, source)}`);
  }
}
const { exports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
for (const [entry, target] of Object.entries(exports)) {
  for (const file of typeof target === 'string' ? [target] : Object.values(target)) {
    if (!existsSync(join(root, file))) problems.push(`export "${entry}" points at ${file}, which does not exist`);
  }
}
if (problems.length > 0) {
  console.error(`prepack: dist/ is not a build of these sources; run "npm run build" first:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.error('prepack: dist/ is built from these sources');
