/**
 * What each dependency costs in the deployed bundle: esbuild builds lambda/sync/handler.ts with the
 * function's own bundling settings (BUNDLING in packages/scheduled-singleton/src/cdk/scheduled-singleton-job.ts) and its metafile
 * attributes every output byte to an input file, grouped here by npm package. `npm run deps`
 * prints the table; `npm run bench` puts it in bench/results.json and the report.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { BUNDLING } from '@contest-sync/scheduled-singleton/cdk';

export interface DependencySize {
  /** npm package name, or `lambda/ (own code)`, or `(banner and glue)`. */
  name: string;
  bytes: number;
}

export interface DependencySizes {
  /** Size of index.mjs as this build produced it (without the source-map comment). */
  totalBytes: number;
  packages: DependencySize[];
  /** Bytes of input files matching each probe (e.g. zod locales), to show what a change removed. */
  probes: Record<string, number>;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OWN = 'lambda/ (own code)';
const GLUE = '(banner, esbuild runtime)';

export const PROBES: Record<string, RegExp> = {
  'zod locales': /node_modules\/zod\/v4\/locales\//,
  'undici fetch/websocket/cache/mock':
    /node_modules\/undici\/lib\/(web\/(fetch\/index|websocket|eventsource|cache)|mock|cache|interceptor)/,
};

/** Package of a metafile input path: `node_modules/@scope/name/...` → `@scope/name` (the innermost one). */
export function packageOf(input: string): string {
  const matches = [...input.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)];
  const last = matches.at(-1);
  if (last) return last[1]!;
  return input.startsWith('lambda/') ? OWN : input;
}

export async function measureDependencies(entry = 'lambda/sync/handler.ts'): Promise<DependencySizes> {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: BUNDLING.format,
    target: BUNDLING.target,
    minify: BUNDLING.minify,
    mainFields: [...BUNDLING.mainFields],
    banner: { js: BUNDLING.banner },
    outfile: 'index.mjs',
    write: false,
    metafile: true,
    logLevel: 'error',
  });
  const output = Object.values(result.metafile.outputs).find((o) => o.entryPoint !== undefined);
  if (output === undefined) throw new Error('esbuild produced no entry output');
  const byPackage = new Map<string, number>();
  const probes: Record<string, number> = Object.fromEntries(Object.keys(PROBES).map((k) => [k, 0]));
  let attributed = 0;
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const name = packageOf(input);
    byPackage.set(name, (byPackage.get(name) ?? 0) + bytesInOutput);
    attributed += bytesInOutput;
    for (const [probe, pattern] of Object.entries(PROBES)) if (pattern.test(input)) probes[probe]! += bytesInOutput;
  }
  byPackage.set(GLUE, output.bytes - attributed);
  const packages = [...byPackage].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes);
  return { totalBytes: output.bytes, packages, probes };
}

/** The largest packages one per row, the rest summed in one row (pure). */
export function dependencyRows(sizes: DependencySizes, top = 12): { name: string; bytes: number; share: string }[] {
  const share = (bytes: number) => `${((100 * bytes) / sizes.totalBytes).toFixed(1)} %`;
  const shown = sizes.packages.slice(0, top);
  const rest = sizes.packages.slice(top);
  const rows = shown.map((p) => ({ ...p, share: share(p.bytes) }));
  if (rest.length > 0) {
    const bytes = rest.reduce((sum, p) => sum + p.bytes, 0);
    rows.push({ name: `${rest.length} other packages`, bytes, share: share(bytes) });
  }
  return rows;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const sizes = await measureDependencies();
  console.log(`index.mjs ${sizes.totalBytes.toLocaleString('en-US')} B (esbuild metafile, the function's bundling settings)\n`);
  console.log('| package | bytes in index.mjs | share |\n|---|---|---|');
  for (const row of dependencyRows(sizes)) console.log(`| ${row.name} | ${row.bytes.toLocaleString('en-US')} | ${row.share} |`);
  for (const [probe, bytes] of Object.entries(sizes.probes)) console.log(`\n${probe}: ${bytes.toLocaleString('en-US')} B`);
}
