/**
 * The heartbeat example (examples/heartbeat/), a second job built on the package
 * (@contest-sync/scheduled-singleton, imported by its name): synthesized with bundling (and
 * cdk-nag), its tables created in DynamoDB Local from that template, and its bundled index.mjs run
 * in several child processes, one process per Lambda invocation, with the Lambda runtime's
 * `console` wrapping of the JSON log format emulated: its metrics must still reach its alarms.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { localDynamoClient } from '../../local/dynamodb-local.js';
import { createTableFromResource, type CfnTableProperties } from '../../local/tables.js';
import { bundleDirOfFunction, type CfnTemplate } from '../../local/template.js';
import type { RunResult } from '@contest-sync/scheduled-singleton';
import { createHeartbeatApp } from '../../examples/heartbeat/stack.js';
import { alarmMetrics, extractEmf, unfed, widgetMetrics, type EmfDatum } from '../support/emf.js';
import { invokeBundle, scheduledEvent, type InvocationOutcome } from '../support/processes.js';

type HeartbeatResult = RunResult & { beat?: string };
const LEASE_KEY = 'lease#heartbeat';
const RUN_RECORD_PREFIX = 'run#heartbeat#';
const ENV = { beatsTable: 'BEATS_TABLE_NAME', workDelayMs: 'HEARTBEAT_WORK_DELAY_MS' };
const examplesDir = fileURLToPath(new URL('../../examples/', import.meta.url));

// The stack's lease. Shorter ones make the takeover test quicker but, with four processes on two
// cores shared with other work, are lost (safely: the run fails `lease-lost`, nothing is written).
const LEASE_SECONDS = 10;
const PERIOD_MS = 5 * 60_000;

let template: CfnTemplate;
let entry: string;
/** The function's environment with each `{ Ref: table }` still unresolved. */
let functionEnv: Record<string, unknown>;

beforeAll(async () => {
  const outdir = mkdtempSync(join(tmpdir(), 'heartbeat-synth-'));
  // Synthesis runs cdk-nag: an unacknowledged finding fails it.
  const { app, stack, job } = createHeartbeatApp({ outdir });
  template = app.synth().getStackArtifact(stack.artifactId).template;
  const functionId = stack.getLogicalId(job.function.node.defaultChild as CfnFunction);
  entry = join(bundleDirOfFunction(outdir, template, functionId), 'index.mjs');
  functionEnv = template.Resources[functionId].Properties.Environment.Variables;
});

interface Tables {
  env: Record<string, string>;
  beats: string;
  coordination: string;
  doc: DynamoDBDocumentClient;
}

/** Every table of the template, created under a fresh prefix; the function's env pointing at them. */
async function freshTables(): Promise<Tables> {
  const endpoint = inject('dynamoEndpoint');
  const client = localDynamoClient(endpoint);
  const prefix = `heartbeat-${randomBytes(3).toString('hex')}`;
  const names: Record<string, string> = {};
  for (const [logicalId, resource] of Object.entries(
    template.Resources as Record<string, { Type: string; Properties: CfnTableProperties }>,
  )) {
    if (resource.Type !== 'AWS::DynamoDB::Table') continue;
    names[logicalId] = `${prefix}-${logicalId}`;
    await createTableFromResource(client, names[logicalId], resource.Properties);
  }
  const env: Record<string, string> = { AWS_ENDPOINT_URL_DYNAMODB: endpoint };
  for (const [name, value] of Object.entries(functionEnv)) {
    const ref = (value as { Ref?: string }).Ref;
    env[name] = ref !== undefined ? names[ref]! : String(value);
  }
  expect(env.LEASE_DURATION_SECONDS).toBe(String(LEASE_SECONDS));
  return {
    env,
    beats: env[ENV.beatsTable]!,
    coordination: env.COORDINATION_TABLE_NAME!,
    doc: DynamoDBDocumentClient.from(client),
  };
}

/** One invocation, with the runtime's console wrapping of the JSON log format emulated. */
function invoke(tables: Tables, event: unknown, env: Record<string, string> = {}) {
  return invokeBundle({ entry, event, env: { ...tables.env, EMULATE_LAMBDA_JSON_LOGS: 'true', ...env }, timeoutMs: 60_000 });
}

function resultOf(outcome: InvocationOutcome): HeartbeatResult {
  const result = (outcome.result ?? {}) as unknown as HeartbeatResult;
  expect(outcome.ok, `${outcome.stdout}\n${outcome.stderr}`).toBe(true);
  return result;
}

async function beats(tables: Tables): Promise<Record<string, unknown>[]> {
  return (await tables.doc.send(new ScanCommand({ TableName: tables.beats, ConsistentRead: true }))).Items ?? [];
}

/** An interval start `back` periods ago (as the wrapper names it), and a schedule event inside it. */
function intervalEvent(back: number): { interval: string; event: Record<string, unknown> } {
  const start = Math.floor(Date.now() / PERIOD_MS) * PERIOD_MS - back * PERIOD_MS;
  return { interval: new Date(start).toISOString().replace('.000Z', 'Z'), event: scheduledEvent(new Date(start + 7_000).toISOString()) };
}

/** Every `.ts` file under examples/, with its import specifiers. */
function exampleImports(): { file: string; lines: number; imports: string[] }[] {
  return (readdirSync(examplesDir, { recursive: true }) as string[])
    .filter((file) => file.endsWith('.ts'))
    .map((file) => {
      const source = readFileSync(join(examplesDir, file), 'utf8');
      const imports = [...source.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => m[1]!);
      return { file, lines: source.split('\n').length - (source.endsWith('\n') ? 1 : 0), imports };
    });
}

describe('heartbeat job: the synthesized stack', () => {
  it('is two files of at most 60 formatted lines together, importing the package by its name and nothing of lambda/ or lib/', () => {
    const files = exampleImports();
    const heartbeat = files.filter((f) => f.file.startsWith('heartbeat/'));
    expect(heartbeat.map((f) => f.file).sort()).toEqual(['heartbeat/handler.ts', 'heartbeat/stack.ts']);
    expect(heartbeat.reduce((sum, f) => sum + f.lines, 0)).toBeLessThanOrEqual(60);
    for (const { file, imports } of files) {
      expect(
        imports.filter((name) => name.startsWith('.') && /(^|\/)(lambda|lib)\//.test(name)),
        file,
      ).toEqual([]);
    }
    const handler = heartbeat.find((f) => f.file === 'heartbeat/handler.ts')!;
    expect(handler.imports.filter((name) => !name.startsWith('node:'))).toEqual(['@contest-sync/scheduled-singleton']);
  });

  it('has its own coordination table, the beats table, its outbox, and grants scoped to its lease key, run records and event source', () => {
    const tables = Object.values(template.Resources as Record<string, { Type: string }>).filter((r) => r.Type === 'AWS::DynamoDB::Table');
    expect(tables).toHaveLength(3);
    const statements = Object.values(template.Resources as Record<string, { Type: string; Properties: any }>)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .flatMap((r) => r.Properties.PolicyDocument.Statement as { Sid?: string; Condition?: unknown }[]);
    expect(statements.find((s) => s.Sid === 'CoordinationTable')?.Condition).toEqual({
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [LEASE_KEY, `${RUN_RECORD_PREFIX}*`] },
    });
    expect(statements.find((s) => s.Sid === 'OutboxTable')?.Condition).toEqual({
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['heartbeat#*'] },
    });
  });
});

describe('heartbeat job: several processes on DynamoDB Local', () => {
  let tables: Tables;
  beforeAll(async () => {
    tables = await freshTables();
  });

  it('4 simultaneous deliveries of one interval: exactly one row, one succeeded, the rest skipped with their reason', async () => {
    const { interval, event } = intervalEvent(2);
    const outcomes = await Promise.all(Array.from({ length: 4 }, () => invoke(tables, event).done));
    const results = outcomes.map(resultOf);
    console.log(
      'simultaneous:',
      results.map((r) => `${r.outcome}${r.reason ? ` (${r.reason})` : ''}${r.fence ? ` fence ${r.fence}` : ''}`).join(', '),
    );

    const succeeded = results.filter((r) => r.outcome === 'succeeded');
    expect(succeeded).toHaveLength(1);
    expect(succeeded[0]!.fence).toBe(1);
    for (const r of results.filter((r) => r.outcome !== 'succeeded')) {
      expect(r.outcome).toBe('skipped');
      expect(['lease-held', 'already-done']).toContain(r.reason);
    }
    const rows = await beats(tables);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ pk: `beat#${interval}`, runId: succeeded[0]!.runId, fence: 1 });
    // Its Beat event: one outbox item, written with the row.
    const outbox = (await tables.doc.send(new ScanCommand({ TableName: tables.env.OUTBOX_TABLE_NAME, ConsistentRead: true }))).Items ?? [];
    expect(outbox).toEqual([
      expect.objectContaining({ pk: `heartbeat#beat#${interval}`, detailType: 'Beat', runId: succeeded[0]!.runId, fence: 1 }),
    ]);

    const record = await tables.doc.send(
      new GetCommand({ TableName: tables.coordination, Key: { pk: `${RUN_RECORD_PREFIX}${interval}` }, ConsistentRead: true }),
    );
    expect(record.Item).toMatchObject({ runId: succeeded[0]!.runId, outcome: 'succeeded', fence: 1, source: 'schedule' });

    // Under the JSON log format: each process's metrics are one top-level EMF record that CloudWatch
    // extracts, and together they feed every metric the alarms and the dashboard read.
    const emitted = outcomes.map((o) => extractEmf(o.stdout));
    for (const [i, data] of emitted.entries()) {
      const value = (name: string) => data.find((d: EmfDatum) => d.name === name)?.value;
      expect(value('RunSucceeded'), outcomes[i]!.stdout).toBe(results[i]!.outcome === 'succeeded' ? 1 : 0);
      expect(value('RunSkipped')).toBe(results[i]!.outcome === 'skipped' ? 1 : 0);
      expect(value('RunFailed')).toBe(0);
    }
    // The job's own metrics (service `heartbeat`); the relay's (`heartbeat-events`) are its own
    // processes' to feed (test/multiprocess/outbox.test.ts).
    const jobs = (metrics: ReturnType<typeof alarmMetrics>) => metrics.filter((m) => m.dimensions.service !== 'heartbeat-events');
    const read = [...jobs(alarmMetrics(template)), ...widgetMetrics(template)];
    expect(
      jobs(alarmMetrics(template))
        .map((m) => m.name)
        .sort(),
    ).toEqual(['LeaseLost', 'RunFailed', 'RunSucceeded']);
    expect(
      alarmMetrics(template)
        .filter((m) => m.dimensions.service === 'heartbeat-events')
        .map((m) => m.name),
    ).toEqual(['EventsFailed']);
    expect(new Set(widgetMetrics(template).map((m) => m.name))).toEqual(
      new Set(['RunSucceeded', 'RunSkipped', 'RunFailed', 'LeaseLost', 'Duration']),
    );
    expect(unfed(read, emitted.flat())).toEqual([]);
    console.log('metrics:', `${emitted.flat().length} EMF data from ${outcomes.length} processes feed ${read.length} alarm/widget metrics`);
  });

  it('a later duplicate of that interval is skipped as already-done and writes nothing', async () => {
    const { event } = intervalEvent(2);
    const result = resultOf(await invoke(tables, event).done);
    console.log('duplicate:', result.outcome, result.reason);
    expect(result).toMatchObject({ outcome: 'skipped', reason: 'already-done' });
    expect(await beats(tables)).toHaveLength(1);
  });
});

describe('heartbeat job: a holder killed mid-work', () => {
  it('is taken over after its lease lapses: the retry succeeds with fence 2 and writes the one row', async () => {
    const tables = await freshTables();
    const { interval, event } = intervalEvent(1);

    const holder = invoke(tables, event, { [ENV.workDelayMs]: '60000' });
    const acquired = await holder.waitForLog((line) => line.message === 'lease acquired');
    expect(acquired.fence).toBe(1);

    // While the holder lives (and heartbeats), another delivery is skipped: lease-held.
    const during = resultOf(await invoke(tables, event).done);
    expect(during).toMatchObject({ outcome: 'skipped', reason: 'lease-held' });

    holder.child.kill('SIGKILL');
    const killed = await holder.done;
    expect(killed.signal).toBe('SIGKILL');
    await sleep(LEASE_SECONDS * 1000 + 500);

    const retry = resultOf(await invoke(tables, event).done);
    console.log('takeover:', `during: ${during.outcome} (${during.reason}); after kill: ${retry.outcome} fence ${retry.fence}`);
    expect(retry).toMatchObject({ outcome: 'succeeded', fence: 2, interval });
    const rows = await beats(tables);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ pk: `beat#${interval}`, runId: retry.runId, fence: 2 });
  });
});
