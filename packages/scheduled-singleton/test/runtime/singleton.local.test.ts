/**
 * The wrapper against the construct: a ScheduledSingletonJob is synthesized (bundling skipped,
 * dashboard on), its function's environment is what the wrapper reads (tables on DynamoDB Local),
 * and the wrapper runs through success, skip, failure and lease loss with the Lambda runtime's
 * JSON-log `console` wrapping emulated. What CloudWatch would extract from its output (top-level
 * `_aws` only) must feed every metric the synthesized alarms and dashboard widgets read.
 */
import { randomBytes } from 'node:crypto';
import { format } from 'node:util';
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as events from 'aws-cdk-lib/aws-events';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { scheduledSingleton, ScheduledRunFailedError, type RunResult } from '@contest-sync/scheduled-singleton';
import { ScheduledSingletonJob, createCoordinationTable } from '@contest-sync/scheduled-singleton/cdk';
import { localDynamoClient } from '../../../../local/dynamodb-local.js';
import { createTableFromResource, type CfnTableProperties } from '../../../../local/tables.js';
import { alarmMetrics, extractEmf, unfed, widgetMetrics } from '../../../../test/support/emf.js';
import { scheduledTick } from '@contest-sync/scheduled-singleton/testing';

const PERIOD_MS = 5 * 60_000;
let template: any;
let env: Record<string, string>;
let doc: DynamoDBDocumentClient;
let output: string[];

beforeAll(async () => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Jobs');
  new ScheduledSingletonJob(stack, 'Beat', {
    entry: new URL('../fixtures/job.ts', import.meta.url).pathname,
    schedule: events.Schedule.rate(Duration.minutes(5)),
    periodMinutes: 5,
    leaseKey: 'lease#beat',
    runRecordPrefix: 'run#beat#',
    coordinationTable: createCoordinationTable(stack, 'Coordination'),
    leaseDuration: Duration.seconds(5),
    timeout: Duration.seconds(60),
    metrics: { namespace: 'Jobs', service: 'beat' },
    dashboard: true,
  });
  template = Template.fromStack(stack).toJSON();
  const client = localDynamoClient(inject('dynamoEndpoint'));
  doc = DynamoDBDocumentClient.from(client);
  const prefix = `wrapper-${randomBytes(3).toString('hex')}`;
  const resources = template.Resources as Record<string, { Type: string; Properties: any }>;
  for (const [id, resource] of Object.entries(resources)) {
    if (resource.Type === 'AWS::DynamoDB::Table')
      await createTableFromResource(client, `${prefix}-${id}`, resource.Properties as CfnTableProperties);
  }
  const fn = Object.values(resources).find((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment)!;
  env = {};
  for (const [name, value] of Object.entries(fn.Properties.Environment.Variables as Record<string, unknown>)) {
    const ref = (value as { Ref?: string }).Ref;
    env[name] = ref !== undefined ? `${prefix}-${ref}` : String(value);
  }
});

/** Captures stdout, and wraps `console` as Lambda's Node.js runtime does under the JSON log format. */
function captureLambdaOutput(): void {
  output = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    output.push(String(chunk));
    return true;
  });
  for (const [method, level] of [
    ['log', 'INFO'],
    ['info', 'INFO'],
    ['warn', 'WARN'],
    ['error', 'ERROR'],
    ['debug', 'DEBUG'],
  ] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      output.push(`${JSON.stringify({ timestamp: new Date().toISOString(), level, requestId: 'r', message: format(...args) })}\n`);
    });
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

type Mode = 'ok' | 'throw' | 'steal';
function handlerFor(mode: Mode) {
  return scheduledSingleton(
    async ({ fence, commit, interval }) => {
      console.log('EMF-looking text printed by the work: {"_aws": "is not top-level here"}');
      if (mode === 'throw') throw new Error('the work failed');
      if (mode === 'steal') {
        // Another run takes the lease over (as after a freeze past the lease): the next write is refused.
        await doc.send(
          new UpdateCommand({
            TableName: env.COORDINATION_TABLE_NAME,
            Key: { pk: 'lease#beat' },
            UpdateExpression: 'SET holder = :other, fence = fence + :one, expiresAtMs = :later',
            ExpressionAttributeValues: { ':other': 'someone-else', ':one': 1, ':later': Date.now() + 5_000 },
          }),
        );
      }
      await commit([], { final: true });
      return { fenceSeen: fence, interval };
    },
    { env, dynamo: localDynamoClient(inject('dynamoEndpoint')), summary: (value) => ({ fenceSeen: value.fenceSeen }) },
  );
}

const context = { getRemainingTimeInMillis: () => 60_000, invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:Beat' };
const eventIn = (back: number) => scheduledTick(Math.floor(Date.now() / PERIOD_MS) * PERIOD_MS - back * PERIOD_MS + 5_000).event;

async function invoke(mode: Mode, event: unknown, ctx = context): Promise<{ result?: RunResult; error?: unknown; text: string }> {
  captureLambdaOutput();
  try {
    const result = await handlerFor(mode)(event, ctx);
    return { result, text: output.join('') };
  } catch (error) {
    return { error, text: output.join('') };
  } finally {
    vi.restoreAllMocks();
  }
}

describe('scheduledSingleton against the synthesized ScheduledSingletonJob', () => {
  const runs: { label: string; text: string; expected: Record<string, number> }[] = [];
  const summaryOf = (text: string) =>
    text
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .find((l) => l.summary === true);

  it('success: returns the result, one summary line with the job fields, RunSucceeded 1', async () => {
    const { result, text } = await invoke('ok', eventIn(3));
    expect(result).toMatchObject({ outcome: 'succeeded', source: 'schedule', fence: 1, fenceSeen: 1 });
    expect(summaryOf(text)).toMatchObject({ level: 'INFO', message: 'succeeded', outcome: 'succeeded', fenceSeen: 1, service: 'beat' });
    runs.push({ label: 'success', text, expected: { RunSucceeded: 1, RunFailed: 0, RunSkipped: 0, LeaseLost: 0 } });
  });

  it('skip: the same interval again is already-done, RunSkipped 1', async () => {
    const { result, text } = await invoke('ok', eventIn(3));
    expect(result).toMatchObject({ outcome: 'skipped', reason: 'already-done' });
    runs.push({ label: 'skip', text, expected: { RunSucceeded: 0, RunFailed: 0, RunSkipped: 1, LeaseLost: 0 } });
  });

  it('failure: a scheduled run whose work throws throws (Lambda retries it), RunFailed 1', async () => {
    const { error, text } = await invoke('throw', eventIn(2));
    expect(error).toBeInstanceOf(ScheduledRunFailedError);
    expect((error as ScheduledRunFailedError).summary).toMatchObject({
      outcome: 'failed',
      reason: 'work',
      error: 'Error: the work failed',
    });
    expect(summaryOf(text)).toMatchObject({ level: 'ERROR', outcome: 'failed', reason: 'work' });
    runs.push({ label: 'failure', text, expected: { RunSucceeded: 0, RunFailed: 1, RunSkipped: 0, LeaseLost: 0 } });
  });

  it('the deploy-time `{}` (a published version) runs without an interval and returns its outcome', async () => {
    const { result, text } = await invoke('ok', {}, { ...context, invokedFunctionArn: `${context.invokedFunctionArn}:7` });
    expect(result).toMatchObject({ outcome: 'succeeded', source: 'deploy' });
    expect(result?.interval).toBeUndefined();
    runs.push({ label: 'deploy', text, expected: { RunSucceeded: 1, RunFailed: 0, RunSkipped: 0, LeaseLost: 0 } });
  });

  it('a bad event is refused with a clear error, before the lease', async () => {
    const { error, text } = await invoke('ok', { interval: 'yesterday', extra: 1 });
    expect((error as ScheduledRunFailedError).summary).toMatchObject({ outcome: 'failed', reason: 'event' });
    expect((error as Error).message).toMatch(/unknown field\(s\) "extra"; interval: must be an ISO-8601 date-time/);
    runs.push({ label: 'bad event', text, expected: { RunSucceeded: 0, RunFailed: 1, RunSkipped: 0, LeaseLost: 0 } });
  });

  it('lease loss: a taken-over run writes nothing and fails lease-lost, LeaseLost 1', async () => {
    const { error, text } = await invoke('steal', eventIn(1));
    expect((error as ScheduledRunFailedError).summary).toMatchObject({ outcome: 'failed', reason: 'lease-lost' });
    runs.push({ label: 'lease loss', text, expected: { RunSucceeded: 0, RunFailed: 1, RunSkipped: 0, LeaseLost: 1 } });
  });

  it('every run: exactly one extractable EMF record with its values; together they feed every alarm and widget metric', () => {
    expect(runs.map((r) => r.label)).toEqual(['success', 'skip', 'failure', 'deploy', 'bad event', 'lease loss']);
    for (const run of runs) {
      // The work's console line (when the work ran) is wrapped, not top-level; the wrapper's lines are not.
      if (!['skip', 'bad event'].includes(run.label))
        expect(run.text, run.label).toContain('"message":"EMF-looking text printed by the work');
      const data = extractEmf(run.text);
      expect(data.map((d) => d.name).sort(), run.label).toEqual(['Duration', 'LeaseLost', 'RunFailed', 'RunSkipped', 'RunSucceeded']);
      for (const datum of data) {
        expect(datum).toMatchObject({ namespace: 'Jobs', dimensions: { service: 'beat' } });
        if (datum.name !== 'Duration') expect(datum.value, `${run.label} ${datum.name}`).toBe(run.expected[datum.name]);
      }
    }
    const emitted = runs.flatMap((r) => extractEmf(r.text));
    expect(unfed(alarmMetrics(template), emitted)).toEqual([]);
    expect(unfed(widgetMetrics(template), emitted)).toEqual([]);
    expect(new Set(widgetMetrics(template).map((m) => m.name))).toEqual(
      new Set(['RunSucceeded', 'RunSkipped', 'RunFailed', 'LeaseLost', 'Duration']),
    );
    expect(
      alarmMetrics(template)
        .map((m) => m.name)
        .sort(),
    ).toEqual(['LeaseLost', 'RunFailed', 'RunSucceeded']);
  });
});
