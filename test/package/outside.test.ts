/**
 * The package from outside this repository, as an adopter gets it, following its README alone:
 * `npm pack` it (its `prepack` builds dist/ from the sources); in a fresh folder, run the README's
 * install lines as written (`npm init -y`, `npm pkg set type=module`, the pinned installs, the
 * outbox's EventBridge client, the Powertools line), with the tarball in place of the package's name; write every ```ts and ```jsonc block of the README as the file its
 * first line names; type-check them with the TypeScript installed and with the lowest one the
 * README names (installed from npm, exact); run the README's unit test (`npx vitest run`), its
 * synth commands (cdk-nag on, and refusing a stack without PITR; the outbox's stack, its relay
 * bundled), its local-run block as written
 * (the one difference: PORT is a free port, not 8000: it starts DynamoDB Local, waits for it, runs
 * local.ts and stops it, the java child included), a job that ignores its signal on DynamoDB Local, and the bundle esbuild built in the app in 4 processes with
 * the runtime's JSON-log `console` wrapping emulated: one run succeeds, the others skip, and the
 * EMF lines feed every metric the alarms read. The packed declarations point at no unshipped file.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify, stripVTControlCharacters } from 'node:util';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort, localDynamoClient } from '../../local/dynamodb-local.js';
import { createTableFromResource, type CfnTableProperties } from '../../local/tables.js';
import { bundleDirOfFunction, type CfnTemplate } from '../../local/template.js';
import { alarmMetrics, extractEmf, unfed } from '../support/emf.js';
import { invokeBundle, scheduledEvent } from '../support/processes.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../', import.meta.url));
const packageDir = join(repo, 'packages/scheduled-singleton');
const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');
const npmEnv = {
  ...process.env,
  npm_config_prefer_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};

/** The README's ```ts and ```jsonc blocks, each opening with `// <file>`. */
function readmeBlocks(): { file: string; code: string }[] {
  return [...readme.matchAll(/```(?:ts|jsonc)\n([\s\S]*?)```/g)].map((match) => {
    const code = match[1]!;
    const file = /^\/\/ (\S+\.(?:ts|json))\n/.exec(code)?.[1];
    if (file === undefined) throw new Error(`a README block does not open with "// <file>":\n${code}`);
    return { file, code };
  });
}

/** The lines of the README's ```sh blocks, in order. */
const shBlocks = (): string[][] =>
  [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.split('\n').filter((line) => line.trim() !== ''));
/** The README's install lines: every `npm init`, `npm pkg` and `npm install` of its sh blocks, in order, then the Powertools one. */
const installLines = (): string[] => [
  ...shBlocks()
    .flat()
    .filter((line) => /^npm (init|pkg|install) /.test(line)),
  /`(npm install @aws-lambda-powertools\/[^`]+)`/.exec(readme)![1]!,
];
const lowestTypeScript = (): string => /\| TypeScript \| (\d+\.\d+\.\d+) \(the lowest supported\)/.exec(readme)![1]!;

let root: string;
let app: string;
let packOutput: string;
let template: CfnTemplate;
let bundle: string;
let installed: Record<string, unknown>;
/** What each step printed (empty or 'ok' when it succeeded), and what synthesizing the unsafe stack printed. */
let typecheck: string;
let typecheckLowest: string;
let unitTest: string;
let synthOutput: string;
let unsafeSynth: string;
let eventsSynth: string;
let localRun: string;
let localPort: number;
let ignoresSignal: string;

/** A child process's output, whether it succeeded or not ('' + output on success when `keep`). */
const outputOf = (child: Promise<{ stdout: string; stderr: string }>, success?: string): Promise<string> =>
  child.then(
    (done) => success ?? stripVTControlCharacters(`${done.stdout}${done.stderr}`),
    (error: { stdout?: string; stderr?: string; message: string }) =>
      `FAILED ${stripVTControlCharacters(`${error.stdout ?? ''}${error.stderr ?? ''}${error.message}`)}`,
  );
const sh = (line: string, env: NodeJS.ProcessEnv = npmEnv, timeout = 0) =>
  run('sh', ['-c', line], { cwd: app, env, maxBuffer: 1 << 26, timeout });
/** Whether something listens on the port (DynamoDB Local left running). */
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });

/** A job that ignores its signal, on DynamoDB Local: written by this test, not by the README. */
const IGNORES_SIGNAL = `
import { setTimeout as sleep } from 'node:timers/promises';
import { GetItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { expect, it } from 'vitest';
import { scheduledSingleton, worstCallMs } from '@contest-sync/scheduled-singleton';
import { localJob, scheduledTick } from '@contest-sync/scheduled-singleton/testing';

for (const commitsLate of [true, false]) {
  it(\`a job that ignores its signal \${commitsLate ? 'and commits late' : 'and returns late'}\`, async () => {
    const handler = scheduledSingleton(async ({ commit, interval }) => {
      await sleep(4_000); // deaf to the deadline
      if (commitsLate) await commit([{ Put: { TableName: process.env.TABLE_NAME, Item: { pk: \`late#\${interval}\` } } }], { final: true });
      return { late: true };
    });
    const job = await localJob(handler, { template: 'cdk.out/Reports.template.json', env: { LEASE_DURATION_SECONDS: '3' }, print: false });
    const invocation = scheduledTick(Date.now(), { remainingMs: 15_500 });
    const deadline = Date.now() + 15_500 - (worstCallMs() + 1_000);
    const { result, threw } = await job.invoke(invocation);
    console.log('ignores its signal:', JSON.stringify(result));
    expect(threw).toBe(true);
    expect(result).toMatchObject({ outcome: 'failed', reason: 'work', deadline: true });
    expect(result.error).toMatch(commitsLate ? /^RunDeadlineError: the run reached its deadline/ : /^RunDeadlineError: the work returned \\d+ ms after the run's deadline/);
    const rows = await job.client.send(new ScanCommand({ TableName: job.env.TABLE_NAME, ConsistentRead: true }));
    expect(rows.Count).toBe(0);
    const lease = (await job.client.send(new GetItemCommand({ TableName: job.env.COORDINATION_TABLE_NAME, Key: { pk: { S: 'lease#report' } }, ConsistentRead: true }))).Item!;
    expect(Number(lease.renewedAtMs!.N)).toBeLessThan(deadline + 50);
    expect(lease.done).toBeUndefined(); // the interval is not done: the retry runs it
  }, 30_000);
}
`;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'scheduled-singleton-outside-'));
  app = join(root, 'app');
  mkdirSync(app);
  // `npm pack` alone: its prepack builds dist/ from src/ (removed first, as in a clean clone) and checks it.
  await run('rm', ['-rf', join(packageDir, 'dist')]);
  const packed = await run('npm', ['pack', '--pack-destination', root, '--json'], { cwd: packageDir, maxBuffer: 1 << 24 });
  packOutput = packed.stdout;
  const [tarball] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string }[];
  for (const line of installLines())
    await sh(line.replace(/ @contest-sync\/scheduled-singleton( |$)/, ` ${join(root, tarball!.filename)}$1`));
  installed = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as Record<string, unknown>;
  for (const { file, code } of readmeBlocks()) writeFileSync(join(app, file), code);
  await sh(`npm install --no-save typescript-lowest@npm:typescript@${lowestTypeScript()}`);

  // In parallel: the blocks type-checked (the installed TypeScript, the lowest named); the README's
  // unit test; its synth command (bundling with the app's esbuild, cdk-nag); and the same stack
  // without the table's PITR, which cdk-nag must refuse.
  const unsafe = readFileSync(join(app, 'stack.ts'), 'utf8').replace(/\s*pointInTimeRecoverySpecification: \{[^}]*\},/, '');
  writeFileSync(join(app, 'stack-unsafe.ts'), unsafe);
  const [synthLine, eventsSynthLine] = shBlocks()
    .flat()
    .filter((line) => line.startsWith('npx cdk synth'));
  [typecheck, typecheckLowest, unitTest, synthOutput, unsafeSynth, eventsSynth] = await Promise.all([
    outputOf(sh('npx tsc -p tsconfig.json'), ''),
    outputOf(sh('node node_modules/typescript-lowest/bin/tsc -p tsconfig.json'), ''),
    outputOf(sh('npx vitest run')),
    outputOf(sh(synthLine!)),
    outputOf(
      sh('npx tsx stack-unsafe.ts', {
        ...npmEnv,
        CDK_OUTDIR: join(root, 'unsafe.out'),
        CDK_CONTEXT_JSON: JSON.stringify({ 'aws:cdk:bundling-stacks': [] }),
      }),
      'synthesized',
    ),
    // The outbox's stack as the README synthesizes it (into its own folder: both stacks are `Reports`).
    outputOf(sh(`${eventsSynthLine!} --output cdk.out.events`), 'synthesized'),
  ]);
  expect(synthOutput).not.toMatch(/^FAILED/);
  template = JSON.parse(readFileSync(join(app, 'cdk.out', 'Reports.template.json'), 'utf8'));
  const functionId = Object.keys(template.Resources).find(
    (id) => template.Resources[id].Properties?.Environment?.Variables?.LEASE_KEY !== undefined,
  )!;
  bundle = join(bundleDirOfFunction(join(app, 'cdk.out'), template, functionId), 'index.mjs');

  // The local-run block as the README writes it, on a free port (the shell returns only when the
  // java child has closed its output too: left running, it would hold the pipe until the timeout).
  const localBlock = shBlocks().find((lines) => lines.some((line) => line.includes('npx tsx local.ts')))!;
  expect(localBlock[0]).toBe('PORT=8000');
  localPort = await freePort();
  localRun = await outputOf(sh([`PORT=${localPort}`, ...localBlock.slice(1)].join('\n'), npmEnv, 180_000));
  writeFileSync(join(app, 'ignores-signal.test.ts'), IGNORES_SIGNAL);
  ignoresSignal = await outputOf(sh('npx vitest run ignores-signal', { ...npmEnv, AWS_ENDPOINT_URL_DYNAMODB: inject('dynamoEndpoint') }));
}, 600_000);

describe('the packed package, installed in a fresh app', () => {
  it('packs dist (JavaScript and declarations) and the README, nothing else', () => {
    const [info] = JSON.parse(packOutput.slice(packOutput.indexOf('['))) as { files: { path: string }[]; name: string; version: string }[];
    const paths = info!.files.map((f) => f.path);
    expect(info!.name).toBe('@contest-sync/scheduled-singleton');
    expect(info!.version).toMatch(/^0\./);
    expect(paths.filter((p) => !p.startsWith('dist/') && !['README.md', 'package.json'].includes(p))).toEqual([]);
    for (const entry of ['runtime/index', 'cdk/index', 'testing/index', 'nag', 'contract']) {
      expect(paths).toContain(`dist/${entry}.js`);
      expect(paths).toContain(`dist/${entry}.d.ts`);
    }
  });

  it('ships declarations whose comments point at no file it does not ship', () => {
    const dist = join(app, 'node_modules/@contest-sync/scheduled-singleton/dist');
    const declarations = (readdirSync(dist, { recursive: true }) as string[]).filter((file) => file.endsWith('.d.ts'));
    expect(declarations.length).toBeGreaterThan(20);
    const offending: string[] = [];
    for (const file of declarations) {
      const text = readFileSync(join(dist, file), 'utf8')
        .split('\n')
        .filter((line) => !/^\s*(import|export) .* from '/.test(line))
        .join('\n');
      const mentions = [
        ...[...text.matchAll(/[\w./-]*\b[\w-]+\.ts\b/g)].map((m) => m[0]).filter((m) => !m.endsWith('.d.ts')), // a source file
        ...[...text.matchAll(/\b(?:docs|test|lambda|local|lib|bin|bench|examples|src)\/[\w./-]+/g)].map((m) => m[0]), // a repository path
        ...[...text.matchAll(/\b[\w-]+\.md\b/g)].map((m) => m[0]).filter((m) => m !== 'README.md'),
        ...[...text.matchAll(/beside this file/g)].map((m) => m[0]),
      ];
      offending.push(...mentions.map((mention) => `${file}: ${mention}`));
    }
    expect(offending).toEqual([]);
  });

  it("ends with npm's default package.json plus only what the README adds", () => {
    const names = (kind: '--save-dev' | '') =>
      installLines()
        .filter((line) => line.startsWith('npm install') && (kind === '' ? !line.includes('--save-dev') : line.includes(kind)))
        .flatMap((line) =>
          line
            .split(' ')
            .slice(2)
            .filter((word) => !word.startsWith('-')),
        )
        .map((spec) => spec.replace(/(.)@[^@/]*$/, '$1'))
        .sort();
    expect(installLines().slice(0, 2)).toEqual(['npm init -y', 'npm pkg set type=module']);
    expect(installed.type).toBe('module');
    expect(Object.keys(installed.dependencies as object).sort()).toEqual(names(''));
    expect(Object.keys(installed.devDependencies as object).sort()).toEqual(names('--save-dev'));
    expect(Object.keys(installed).sort()).toEqual(
      expect.arrayContaining(['name', 'version', 'main', 'scripts', 'type', 'dependencies', 'devDependencies']),
    );
  });

  it('type-checks every block of the README with the TypeScript it installs and with the lowest it names', () => {
    expect(readmeBlocks().map((b) => b.file)).toEqual(
      expect.arrayContaining(['tsconfig.json', 'handler.ts', 'stack.ts', 'handler.test.ts', 'local.ts', 'powertools.ts']),
    );
    expect(lowestTypeScript()).toMatch(/^5\.0\./);
    expect(JSON.parse(readFileSync(join(app, 'node_modules/typescript-lowest/package.json'), 'utf8')).version).toBe(lowestTypeScript());
    expect(typecheck).toBe('');
    expect(typecheckLowest).toBe('');
  });

  it("passes the README's unit test as written (npx vitest run)", () => {
    console.log('README unit test:', /Tests\s+.*/.exec(unitTest)?.[0]);
    expect(unitTest).not.toMatch(/^FAILED/);
    expect(unitTest).toMatch(/Tests\s+3 passed/);
  });

  it("synthesizes with the README's command; cdk-nag says what it checked, and refuses a finding nobody acknowledged", () => {
    expect(synthOutput).toMatch(/cdk-nag AwsSolutions: checked \d+ resources in 1 template\(s\): 0 finding\(s\) not acknowledged/);
    expect(synthOutput).toMatch(/cdk-nag Serverless: checked \d+ resources/);
    expect(unsafeSynth).toMatch(/AwsSolutions-DDB3|Serverless-DynamoDBPITREnabled/);
  });

  it("passes the README's local run on DynamoDB Local as written, and its stop line leaves nothing running", async () => {
    expect(localRun).not.toMatch(/^FAILED/);
    expect(localRun).toMatch(/local run passed: \d{4}-\d\d-\d\dT\d\d:\d\d:00Z/);
    expect(await listening(localPort)).toBe(false);
  });

  it('reports a job that ignores its signal failed (deadline), writes nothing of it, and renews nothing after the deadline', () => {
    console.log('ignores its signal:', /Tests\s+.*/.exec(ignoresSignal)?.[0]);
    expect(ignoresSignal, ignoresSignal).not.toMatch(/^FAILED/);
    expect(ignoresSignal).toMatch(/Tests\s+2 passed/);
  });

  it('bundles the entry from the app (its own lock file and node_modules), not from this repository', () => {
    const sources = (JSON.parse(readFileSync(`${bundle}.map`, 'utf8')) as { sources: string[] }).sources;
    expect(sources).toContain('../../handler.ts');
    expect(sources.some((source) => source.endsWith('node_modules/@contest-sync/scheduled-singleton/dist/runtime/singleton.js'))).toBe(
      true,
    );
    expect(
      sources.filter(
        (source) => source.includes('packages/scheduled-singleton') || !source.startsWith('../../') || source.startsWith('../../../'),
      ),
    ).toEqual([]);
  });

  it("synthesizes the outbox's stack with the README's command: the relay bundles the EventBridge client it installs", () => {
    expect(eventsSynth).toBe('synthesized');
    const relay = (readdirSync(join(app, 'cdk.out.events'), { recursive: true }) as string[]).filter((file) => file.endsWith('index.mjs'));
    expect(relay.length).toBe(2); // the job's bundle and the relay's
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
      if (resource.Type === 'AWS::DynamoDB::Table')
        await createTableFromResource(client, `${prefix}-${id}`, resource.Properties as CfnTableProperties);
    }
    const fn = Object.values(resources).find((r) => r.Properties?.Environment?.Variables?.LEASE_KEY !== undefined)!;
    for (const [name, value] of Object.entries(fn.Properties.Environment.Variables as Record<string, unknown>)) {
      const ref = (value as { Ref?: string }).Ref;
      env[name] = ref !== undefined ? `${prefix}-${ref}` : String(value);
    }

    const event = scheduledEvent(new Date(Date.now() - 60_000).toISOString());
    const outcomes = await Promise.all(
      Array.from({ length: 4 }, () => invokeBundle({ entry: bundle, event, env, timeoutMs: 60_000 }).done),
    );
    const results = outcomes.map((o) => o.summary as unknown as Record<string, unknown>);
    console.log(
      'outside app, 4 processes:',
      results.map((r) => `${String(r.outcome)}${r.reason ? ` (${String(r.reason)})` : ''}`).join(', '),
    );
    for (const outcome of outcomes) expect(outcome.ok, `${outcome.stdout}\n${outcome.stderr}`).toBe(true);
    expect(results.filter((r) => r.outcome === 'succeeded')).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'skipped')).toHaveLength(3);
    for (const r of results.filter((r) => r.outcome === 'skipped')) expect(['lease-held', 'already-done']).toContain(r.reason);

    const rows =
      (await DynamoDBDocumentClient.from(client).send(new ScanCommand({ TableName: env.TABLE_NAME, ConsistentRead: true }))).Items ?? [];
    expect(rows).toEqual([
      expect.objectContaining({ pk: `report#${String(results.find((r) => r.outcome === 'succeeded')!.interval)}`, fence: 1 }),
    ]);

    // What CloudWatch would extract (top-level `_aws` only) against what the synthesized alarms read.
    const emitted = outcomes.flatMap((o) => extractEmf(o.stdout));
    const alarms = alarmMetrics(template);
    const sum = (name: string) => emitted.filter((d) => d.name === name).reduce((total, d) => total + d.value, 0);
    console.log(
      'alarms read:',
      alarms.map((m) => `${m.namespace}/${m.name}{service=${m.dimensions.service}}`).join(', '),
      '| emitted:',
      ['RunSucceeded', 'RunSkipped', 'RunFailed', 'LeaseLost'].map((name) => `${name}=${sum(name)}`).join(' '),
      '| unfed:',
      JSON.stringify(unfed(alarms, emitted)),
    );
    expect(alarms.map((m) => m.name).sort()).toEqual(['LeaseLost', 'RunFailed', 'RunSucceeded']);
    expect(unfed(alarms, emitted)).toEqual([]);
    expect({
      RunSucceeded: sum('RunSucceeded'),
      RunSkipped: sum('RunSkipped'),
      RunFailed: sum('RunFailed'),
      LeaseLost: sum('LeaseLost'),
    }).toEqual({
      RunSucceeded: 1,
      RunSkipped: 3,
      RunFailed: 0,
      LeaseLost: 0,
    });
  });
});
