/**
 * The heartbeat example (examples/heartbeat/), a second job built with ScheduledSingletonJob and
 * the single-execution module alone: synthesized with bundling (and cdk-nag), its tables created in
 * DynamoDB Local from that template, and its bundled index.mjs run in several child processes, one
 * process per Lambda invocation.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
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
import { ENV, LEASE_KEY, RUN_RECORD_PREFIX } from '../../examples/heartbeat/contract.js';
import type { HeartbeatResult } from '../../examples/heartbeat/handler.js';
import { createHeartbeatApp } from '../../examples/heartbeat/stack.js';
import { invokeBundle, scheduledEvent, type InvocationOutcome } from '../support/processes.js';

const LEASE_SECONDS = 2;
const PERIOD_MS = 5 * 60_000;

let template: CfnTemplate;
let entry: string;
/** The function's environment with each `{ Ref: table }` still unresolved. */
let functionEnv: Record<string, unknown>;

beforeAll(async () => {
  const outdir = mkdtempSync(join(tmpdir(), 'heartbeat-synth-'));
  // Synthesis runs cdk-nag: an unacknowledged finding fails it.
  const { app, stack } = createHeartbeatApp({ outdir });
  template = app.synth().getStackArtifact(stack.artifactId).template;
  const functionId = stack.getLogicalId(stack.job.function.node.defaultChild as CfnFunction);
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
  for (const [logicalId, resource] of Object.entries(template.Resources as Record<string, { Type: string; Properties: CfnTableProperties }>)) {
    if (resource.Type !== 'AWS::DynamoDB::Table') continue;
    names[logicalId] = `${prefix}-${logicalId}`;
    await createTableFromResource(client, names[logicalId], resource.Properties);
  }
  const env: Record<string, string> = { AWS_ENDPOINT_URL_DYNAMODB: endpoint };
  for (const [name, value] of Object.entries(functionEnv)) {
    const ref = (value as { Ref?: string }).Ref;
    env[name] = ref !== undefined ? names[ref]! : String(value);
  }
  // The 2-second lease of the multi-process tests (the stack's is 10 s).
  env.LEASE_DURATION_SECONDS = String(LEASE_SECONDS);
  return {
    env,
    beats: env[ENV.beatsTable]!,
    coordination: env.COORDINATION_TABLE_NAME!,
    doc: DynamoDBDocumentClient.from(client),
  };
}

function invoke(tables: Tables, event: unknown, env: Record<string, string> = {}) {
  return invokeBundle({ entry, event, env: { ...tables.env, ...env }, timeoutMs: 60_000 });
}

function resultOf(outcome: InvocationOutcome): HeartbeatResult {
  const result = (outcome.result ?? {}) as unknown as HeartbeatResult;
  expect(outcome.ok, `${outcome.stdout}\n${outcome.stderr}`).toBe(true);
  return result;
}

async function beats(tables: Tables): Promise<Record<string, unknown>[]> {
  return (await tables.doc.send(new ScanCommand({ TableName: tables.beats, ConsistentRead: true }))).Items ?? [];
}

/** An interval start `back` periods ago, and a schedule event inside it. */
function intervalEvent(back: number): { interval: string; event: Record<string, unknown> } {
  const start = Math.floor(Date.now() / PERIOD_MS) * PERIOD_MS - back * PERIOD_MS;
  return { interval: new Date(start).toISOString(), event: scheduledEvent(new Date(start + 7_000).toISOString()) };
}

describe('heartbeat job: the synthesized stack', () => {
  it('the handler uses the single-execution module and the AWS SDK only', () => {
    const source = readFileSync(fileURLToPath(new URL('../../examples/heartbeat/handler.ts', import.meta.url)), 'utf8');
    const imports = [...source.matchAll(/from\s+'([^']+)'/g)].map((m) => m[1]!);
    const allowed = (name: string) =>
      name.startsWith('node:') || name.startsWith('@aws-sdk/') || name === '../../lambda/single-execution/index.js' || name === './contract.js';
    expect(imports.filter((name) => !allowed(name))).toEqual([]);
    expect(imports).toContain('../../lambda/single-execution/index.js');
  });


  it('has its own coordination table, the beats table, and grants scoped to its lease key and run records', () => {
    const tables = Object.values(template.Resources as Record<string, { Type: string }>).filter((r) => r.Type === 'AWS::DynamoDB::Table');
    expect(tables).toHaveLength(2);
    const statements = Object.values(template.Resources as Record<string, { Type: string; Properties: any }>)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .flatMap((r) => r.Properties.PolicyDocument.Statement as { Sid?: string; Condition?: unknown }[]);
    expect(statements.find((s) => s.Sid === 'CoordinationTable')?.Condition).toEqual({
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [LEASE_KEY, `${RUN_RECORD_PREFIX}*`] },
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
    console.log('simultaneous:', results.map((r) => `${r.outcome}${r.reason ? ` (${r.reason})` : ''}${r.fence ? ` fence ${r.fence}` : ''}`).join(', '));

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

    const record = await tables.doc.send(new GetCommand({ TableName: tables.coordination, Key: { pk: `${RUN_RECORD_PREFIX}${interval}` }, ConsistentRead: true }));
    expect(record.Item).toMatchObject({ runId: succeeded[0]!.runId, outcome: 'succeeded', fence: 1, source: 'schedule' });
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
