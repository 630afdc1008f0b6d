/**
 * The package from outside this repository, as an adopter gets it: `npm pack` it, install the
 * tarball into a fresh app in a temporary folder (its own package.json, the same pinned versions as
 * this repository, served from npm's cache), write the job from the README's code blocks alone
 * (every block type-checks there), synthesize it with cdk-nag, then run the bundle esbuild built in
 * the app in 4 processes on DynamoDB Local with the runtime's JSON-log `console` wrapping emulated:
 * one run succeeds, the others skip, and the EMF lines feed every metric the alarms read.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { localDynamoClient } from '../../local/dynamodb-local.js';
import { createTableFromResource, type CfnTableProperties } from '../../local/tables.js';
import { bundleDirOfFunction, type CfnTemplate } from '../../local/template.js';
import { alarmMetrics, extractEmf, unfed } from '../support/emf.js';
import { invokeBundle, scheduledEvent } from '../support/processes.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../', import.meta.url));
const packageDir = join(repo, 'packages/scheduled-singleton');
const tsc = join(repo, 'node_modules/typescript/bin/tsc');
const tsx = join(repo, 'node_modules/tsx/dist/cli.mjs');
const rootPackage = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
const pinned = (...names: string[]) =>
  Object.fromEntries(names.map((name) => [name, rootPackage.dependencies?.[name] ?? rootPackage.devDependencies?.[name] ?? 'missing']));

/** The README's ```ts blocks, each opening with `// <file>.ts`. */
function readmeBlocks(): { file: string; code: string }[] {
  const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');
  return [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => {
    const code = match[1]!;
    const file = /^\/\/ (\S+\.ts)\n/.exec(code)?.[1];
    if (file === undefined) throw new Error(`a README ts block does not open with "// <file>.ts":\n${code}`);
    return { file, code };
  });
}

let root: string;
let app: string;
let packOutput: string;
let template: CfnTemplate;
let bundle: string;
/** What `tsc` said about the README's blocks, and what synthesizing a stack nag must refuse printed. */
let typecheck: string;
let unsafeSynth: string;

/** A child process's output, whether it succeeded or not. */
const outputOf = (child: Promise<{ stdout: string; stderr: string }>, success = ''): Promise<string> =>
  child.then(
    (done) => success || `${done.stdout}${done.stderr}`,
    (error: { stdout?: string; stderr?: string; message: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}${error.message}`,
  );

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'scheduled-singleton-outside-'));
  app = join(root, 'app');
  mkdirSync(app);
  // `npm pack` builds (prepack: tsc to dist) and packs.
  const packed = await run('npm', ['pack', '--pack-destination', root, '--json'], { cwd: packageDir, maxBuffer: 1 << 24 });
  packOutput = packed.stdout;
  const [tarball] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string }[];
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({
      name: 'outside-app',
      private: true,
      type: 'module',
      dependencies: {
        '@contest-sync/scheduled-singleton': `file:../${tarball!.filename}`,
        ...pinned('aws-cdk-lib', 'constructs', '@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb', '@aws-sdk/util-dynamodb'),
      },
      devDependencies: pinned('esbuild', 'cdk-nag', '@types/node'),
    }),
  );
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: app, maxBuffer: 1 << 24 });
  for (const { file, code } of readmeBlocks()) writeFileSync(join(app, file), code);
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: ['node'] },
      include: ['*.ts'],
    }),
  );
  // In parallel: the blocks type-checked; the README's stack (a whole CDK app) synthesized with
  // bundling (the app's esbuild) and cdk-nag; and the same stack without the table's PITR, which
  // cdk-nag must refuse (proof that the checks run: an accepted synthesis reports no plugin).
  const unsafe = readFileSync(join(app, 'stack.ts'), 'utf8').replace(/\s*pointInTimeRecoverySpecification: \{[^}]*\},/, '');
  writeFileSync(join(app, 'stack-unsafe.ts'), unsafe);
  const synth = (file: string, outdir: string, extra: Record<string, string> = {}) =>
    run(process.execPath, [tsx, file], { cwd: app, env: { ...process.env, CDK_OUTDIR: outdir, ...extra }, maxBuffer: 1 << 24 });
  let synthesized: string;
  [typecheck, synthesized, unsafeSynth] = await Promise.all([
    outputOf(run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app })),
    outputOf(synth('stack.ts', join(app, 'cdk.out')), 'synthesized'),
    outputOf(synth('stack-unsafe.ts', join(root, 'unsafe.out'), { CDK_CONTEXT_JSON: JSON.stringify({ 'aws:cdk:bundling-stacks': [] }) }), 'synthesized'),
  ]);
  expect(synthesized).toBe('synthesized');
  template = JSON.parse(readFileSync(join(app, 'cdk.out', 'Reports.template.json'), 'utf8'));
  const functionId = Object.keys(template.Resources).find((id) => template.Resources[id].Properties?.Environment?.Variables?.LEASE_KEY !== undefined)!;
  bundle = join(bundleDirOfFunction(join(app, 'cdk.out'), template, functionId), 'index.mjs');
}, 300_000);

describe('the packed package, installed in a fresh app', () => {
  it('packs dist (JavaScript and declarations) and the README, nothing else', () => {
    const [info] = JSON.parse(packOutput.slice(packOutput.indexOf('['))) as { files: { path: string }[]; name: string; version: string }[];
    const paths = info!.files.map((f) => f.path);
    expect(info!.name).toBe('@contest-sync/scheduled-singleton');
    expect(info!.version).toMatch(/^0\./);
    expect(paths.filter((p) => !p.startsWith('dist/') && !['README.md', 'package.json'].includes(p))).toEqual([]);
    for (const entry of ['runtime/index', 'cdk/index', 'nag', 'contract']) {
      expect(paths).toContain(`dist/${entry}.js`);
      expect(paths).toContain(`dist/${entry}.d.ts`);
    }
  });

  it("type-checks every code block of the README as written, against the installed package's declarations", () => {
    expect(readmeBlocks().map((b) => b.file)).toEqual(expect.arrayContaining(['handler.ts', 'stack.ts']));
    expect(typecheck).toBe('');
  });

  it('bundles the entry from the app (its own lock file and node_modules), not from this repository', () => {
    const sources = (JSON.parse(readFileSync(`${bundle}.map`, 'utf8')) as { sources: string[] }).sources;
    expect(sources).toContain('../../handler.ts');
    expect(sources.some((source) => source.endsWith('node_modules/@contest-sync/scheduled-singleton/dist/runtime/singleton.js'))).toBe(true);
    expect(sources.filter((source) => source.includes('packages/scheduled-singleton') || !source.startsWith('../../') || source.startsWith('../../../'))).toEqual([]);
  });

  it('fails synthesis on a finding nobody acknowledged (cdk-nag is on)', () => {
    expect(unsafeSynth).toMatch(/AwsSolutions-DDB3|Serverless-DynamoDBPITREnabled/);
  });

  it('runs in 4 processes on DynamoDB Local: one succeeded, the others skipped; the EMF lines feed the alarms', async () => {
    const client = localDynamoClient(inject('dynamoEndpoint'));
    const prefix = `outside-${randomBytes(3).toString('hex')}`;
    const env: Record<string, string> = { AWS_ENDPOINT_URL_DYNAMODB: inject('dynamoEndpoint'), EMULATE_LAMBDA_JSON_LOGS: 'true' };
    const resources = template.Resources as Record<string, { Type: string; Properties: any }>;
    for (const [id, resource] of Object.entries(resources)) {
      if (resource.Type === 'AWS::DynamoDB::Table') await createTableFromResource(client, `${prefix}-${id}`, resource.Properties as CfnTableProperties);
    }
    const fn = Object.values(resources).find((r) => r.Properties?.Environment?.Variables?.LEASE_KEY !== undefined)!;
    for (const [name, value] of Object.entries(fn.Properties.Environment.Variables as Record<string, unknown>)) {
      const ref = (value as { Ref?: string }).Ref;
      env[name] = ref !== undefined ? `${prefix}-${ref}` : String(value);
    }

    const event = scheduledEvent(new Date(Date.now() - 60_000).toISOString());
    const outcomes = await Promise.all(Array.from({ length: 4 }, () => invokeBundle({ entry: bundle, event, env, timeoutMs: 60_000 }).done));
    const results = outcomes.map((o) => o.summary as unknown as Record<string, unknown>);
    console.log('outside app, 4 processes:', results.map((r) => `${String(r.outcome)}${r.reason ? ` (${String(r.reason)})` : ''}`).join(', '));
    for (const outcome of outcomes) expect(outcome.ok, `${outcome.stdout}\n${outcome.stderr}`).toBe(true);
    expect(results.filter((r) => r.outcome === 'succeeded')).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'skipped')).toHaveLength(3);
    for (const r of results.filter((r) => r.outcome === 'skipped')) expect(['lease-held', 'already-done']).toContain(r.reason);

    const rows = (await DynamoDBDocumentClient.from(client).send(new ScanCommand({ TableName: env.TABLE_NAME, ConsistentRead: true }))).Items ?? [];
    expect(rows).toEqual([expect.objectContaining({ pk: `report#${String(results.find((r) => r.outcome === 'succeeded')!.interval)}`, fence: 1 })]);

    // What CloudWatch would extract (top-level `_aws` only) against what the synthesized alarms read.
    const emitted = outcomes.flatMap((o) => extractEmf(o.stdout));
    const alarms = alarmMetrics(template);
    const sum = (name: string) => emitted.filter((d) => d.name === name).reduce((total, d) => total + d.value, 0);
    console.log(
      'alarms read:', alarms.map((m) => `${m.namespace}/${m.name}{service=${m.dimensions.service}}`).join(', '),
      '| emitted:', ['RunSucceeded', 'RunSkipped', 'RunFailed', 'LeaseLost'].map((name) => `${name}=${sum(name)}`).join(' '),
      '| unfed:', JSON.stringify(unfed(alarms, emitted)),
    );
    expect(alarms.map((m) => m.name).sort()).toEqual(['LeaseLost', 'RunFailed', 'RunSucceeded']);
    expect(unfed(alarms, emitted)).toEqual([]);
    expect({ RunSucceeded: sum('RunSucceeded'), RunSkipped: sum('RunSkipped'), RunFailed: sum('RunFailed'), LeaseLost: sum('LeaseLost') }).toEqual({
      RunSucceeded: 1,
      RunSkipped: 3,
      RunFailed: 0,
      LeaseLost: 0,
    });
  });
});
