/**
 * The deployed asset: size of the bundle esbuild produced for Lambda (index.mjs, and its source
 * map separately) and the time to import it in a fresh Node process — the module-load part of a
 * cold start (Lambda adds its own runtime start-up on top). Measured twice, alternating: with the
 * NODE_OPTIONS the function is deployed with (read from the template: `--enable-source-maps` makes
 * Node read and parse the .map at import), and with none.
 */
import { execFile } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { median, round } from './stats.js';

const run = promisify(execFile);

export interface BundleResult {
  file: string;
  bytes: number;
  mapBytes: number | null;
  /** Every file in the asset directory (what is zipped and uploaded). */
  assetBytes: number;
  /** The function's NODE_OPTIONS in the template ('' if none). */
  nodeOptions: string;
  /** Median import time with the deployed NODE_OPTIONS. */
  importMs: number;
  importSamplesMs: number[];
  /** Median import time with no NODE_OPTIONS. */
  importMsPlain: number;
  importPlainSamplesMs: number[];
}

const IMPORT_SCRIPT = [
  'const url = process.argv[1];',
  'const t = performance.now();',
  'await import(url);',
  'process.stdout.write(String(performance.now() - t));',
].join('\n');

async function importOnce(entry: string, nodeOptions: string): Promise<number> {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', IMPORT_SCRIPT, pathToFileURL(entry).href], {
    env: {
      PATH: process.env.PATH ?? '',
      AWS_REGION: 'us-east-1',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...(nodeOptions === '' ? {} : { NODE_OPTIONS: nodeOptions }),
    },
  });
  const ms = Number(stdout.trim());
  if (!Number.isFinite(ms)) throw new Error(`could not read the import time: ${stdout}`);
  return round(ms, 2);
}

export async function measureBundle(bundleDir: string, nodeOptions: string, runs = 7): Promise<BundleResult> {
  const entry = join(bundleDir, 'index.mjs');
  const map = join(bundleDir, 'index.mjs.map');
  const sizeOf = (path: string): number | null => {
    try {
      return statSync(path).size;
    } catch {
      return null;
    }
  };
  const assetBytes = readdirSync(bundleDir).reduce((sum, name) => sum + statSync(join(bundleDir, name)).size, 0);

  const deployed: number[] = [];
  const plain: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    deployed.push(await importOnce(entry, nodeOptions));
    plain.push(await importOnce(entry, ''));
  }
  return {
    file: 'index.mjs',
    bytes: statSync(entry).size,
    mapBytes: sizeOf(map),
    assetBytes,
    nodeOptions,
    importMs: round(median(deployed), 2),
    importSamplesMs: deployed,
    importMsPlain: round(median(plain), 2),
    importPlainSamplesMs: plain,
  };
}
