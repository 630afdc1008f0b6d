/**
 * synthTemplate({ bundle: true }) finds the function's esbuild bundle through the asset manifest;
 * the bundle is an ESM module with the createRequire banner that a fresh Node process can import.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { ESM_REQUIRE_BANNER } from '@contest-sync/scheduled-singleton/cdk';
import { measureDependencies } from '../../local/bundle-deps.js';
import { findSyncFunction, synthTemplate, type SynthTemplateResult } from '../../local/template.js';

const run = promisify(execFile);
/** Largest `index.mjs` contest-sync's function may ship (contest-sync's own budget, not the package's). */
const BUNDLE_BUDGET_BYTES = 1024 * 1024;
let result: SynthTemplateResult;

beforeAll(async () => {
  result = await synthTemplate({ bundle: true });
}, 180_000);

describe('function bundle', () => {
  it('is the asset the template deploys, inside the cloud assembly', () => {
    const bundleDir = result.bundleDir!;
    expect(bundleDir.startsWith(result.outdir)).toBe(true);
    expect(existsSync(join(bundleDir, 'index.mjs'))).toBe(true);
    const { resource } = findSyncFunction(result.template);
    const s3Key = (resource.Properties?.Code as { S3Key: string }).S3Key;
    expect(s3Key).toBe(`${bundleDir.split('asset.').pop()}.zip`);
  });

  it('is ESM with the createRequire banner and a source map', () => {
    const code = readFileSync(join(result.bundleDir!, 'index.mjs'), 'utf8');
    expect(code.startsWith(ESM_REQUIRE_BANNER)).toBe(true);
    expect(code).toMatch(/\bexport\s*\{[^}]*\bhandler\b[^}]*\}/);
    expect(existsSync(join(result.bundleDir!, 'index.mjs.map'))).toBe(true);
    // The map names the sources but does not carry them (they would ship and be parsed at import).
    const map = JSON.parse(readFileSync(join(result.bundleDir!, 'index.mjs.map'), 'utf8')) as {
      sources: string[];
      sourcesContent?: unknown;
    };
    expect(map.sources.some((source) => source.endsWith('lambda/sync/handler.ts'))).toBe(true);
    expect(map.sourcesContent).toBeUndefined();
  });

  it('imports in a fresh node process and exports handler as a function', async () => {
    const { resource } = findSyncFunction(result.template);
    const environment = (resource.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
    const entry = pathToFileURL(join(result.bundleDir!, 'index.mjs')).href;
    const script = `const m = await import(${JSON.stringify(entry)}); console.log(typeof m.handler);`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
      cwd: result.outdir,
      // What Lambda would provide (values are never used: nothing is invoked).
      env: {
        PATH: process.env.PATH ?? '',
        AWS_REGION: 'us-east-1',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        ...Object.fromEntries(Object.entries(environment).map(([k, v]) => [k, typeof v === 'string' ? v : `local-${k.toLowerCase()}`])),
      },
      timeout: 30_000,
    });
    expect(stdout.trim()).toBe('function');
  });

  it(`fits the budget: index.mjs <= ${BUNDLE_BUDGET_BYTES} B`, () => {
    const bytes = statSync(join(result.bundleDir!, 'index.mjs')).size;
    console.info(`[bundle] index.mjs ${bytes} B, budget ${BUNDLE_BUDGET_BYTES} B`);
    expect(bytes).toBeLessThanOrEqual(BUNDLE_BUDGET_BYTES);
  });

  it('is what the dependency table (local/bundle-deps.ts) measures, without zod locales or undici fetch/mock', async () => {
    const sizes = await measureDependencies();
    const bytes = statSync(join(result.bundleDir!, 'index.mjs')).size;
    // The deployed file adds only the source-map comment to what the metafile build produces.
    expect(Math.abs(bytes - sizes.totalBytes)).toBeLessThan(100);
    // Only zod's English messages (registered by zod itself) may remain of its locales.
    expect(sizes.probes['zod locales']).toBeLessThan(5_000);
    expect(sizes.probes['undici fetch/websocket/cache/mock']).toBe(0);
  });

  it('without bundling returns no bundle directory', async () => {
    const unbundled = await synthTemplate({ bundle: false });
    expect(unbundled.bundleDir).toBeUndefined();
    expect(unbundled.template.Resources).toBeDefined();
  });
});
