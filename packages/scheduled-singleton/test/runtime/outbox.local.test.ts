/**
 * The fenced outbox on DynamoDB Local: the package's lease and writer (DynamoLease,
 * DynamoFencedWriter, runExclusively) with the coordination and outbox tables of a synthesized
 * OutboxDelivery + ScheduledSingletonJob (bundling skipped). Events are written in the job's
 * transaction or not at all; an id already written is written once and does not fail the run;
 * a run that lost its lease publishes nothing; an undeliverable event writes nothing.
 */
import { randomBytes } from 'node:crypto';
import { App, Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as events from 'aws-cdk-lib/aws-events';
import { DynamoDBDocumentClient, GetCommand, ScanCommand, type ScanCommandOutput } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import {
  DynamoFencedWriter,
  DynamoLease,
  FencedWriteError,
  LeaseLostError,
  OutboxEventError,
  intervalOf,
  leaseTiming,
  outboxPuts,
  runExclusively,
  type CommitResult,
  type ExclusiveDeps,
  type OutboxEvent,
  type TransactAction,
  type WorkContext,
} from '@contest-sync/scheduled-singleton';
import { OutboxDelivery, ScheduledSingletonJob } from '@contest-sync/scheduled-singleton/cdk';
import { localDynamoClient } from '../../../../local/dynamodb-local.js';
import { createTableFromResource, type CfnTableProperties } from '../../../../local/tables.js';

const SOURCE = 'outbox-test';
let doc: DynamoDBDocumentClient;
let env: Record<string, string>;

beforeAll(async () => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Outbox');
  const delivery = new OutboxDelivery(stack, 'Events', { metrics: { namespace: 'Outbox', service: 'outbox-events' } });
  new ScheduledSingletonJob(stack, 'Job', {
    entry: new URL('../fixtures/job.ts', import.meta.url).pathname,
    schedule: events.Schedule.rate(Duration.minutes(5)),
    periodMinutes: 5,
    leaseKey: 'lease#outbox-test',
    runRecordPrefix: 'run#outbox-test#',
    leaseDuration: Duration.seconds(2),
    timeout: Duration.seconds(30),
    metrics: { namespace: 'Outbox', service: 'outbox-test' },
    outbox: { delivery, source: SOURCE },
  });
  const template = Template.fromStack(stack).toJSON() as { Resources: Record<string, { Type: string; Properties: any }> };
  const client = localDynamoClient(inject('dynamoEndpoint'));
  doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  const prefix = `outbox-${randomBytes(3).toString('hex')}`;
  const fn = Object.values(template.Resources).find(
    (r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.OUTBOX_TABLE_NAME,
  )!;
  env = {};
  for (const [name, value] of Object.entries(fn.Properties.Environment.Variables as Record<string, unknown>)) {
    const ref = (value as { Ref?: string }).Ref;
    env[name] = ref !== undefined ? `${prefix}-${ref}` : String(value);
  }
  for (const [id, resource] of Object.entries(template.Resources)) {
    if (resource.Type === 'AWS::DynamoDB::Table')
      await createTableFromResource(client, `${prefix}-${id}`, resource.Properties as CfnTableProperties);
  }
  expect(env.OUTBOX_EVENT_SOURCE).toBe(SOURCE);
  expect(env.OUTBOX_RETENTION_DAYS).toBe('7');
});

let leaseKey = 0;
/** The deps of runExclusively on DynamoDB Local: a fresh lease key per call, so tests never share a lease. */
function deps(leaseSeconds = 8): ExclusiveDeps {
  // Long enough that a first commit on a cold process and a busy machine keeps it: these tests are
  // about the outbox, not the lease's timing (runtime/run.test.ts and the lease's tests are).
  const timing = leaseTiming(leaseSeconds);
  const now = Date.now;
  leaseKey += 1;
  return {
    lease: new DynamoLease({ doc, table: env.COORDINATION_TABLE_NAME!, key: `lease#outbox-test-${leaseKey}`, timing, now }),
    writer: new DynamoFencedWriter(doc, { now }),
    timing,
    now,
    runRecordPrefix: `run#outbox-test-${leaseKey}#`,
    outbox: { table: env.OUTBOX_TABLE_NAME!, source: SOURCE, retentionDays: 7 },
  };
}

const run = (id: string) => ({ runId: id, source: 'console', remainingMs: () => 30_000 });
const beat = (key: string, extra: Record<string, unknown> = {}): TransactAction => ({
  Put: { TableName: env.OUTBOX_TABLE_NAME!, Item: { pk: `data#${key}`, ...extra } },
});
const change = (id: string, detail: Record<string, unknown> = {}): OutboxEvent => ({
  id,
  detailType: 'Changed',
  detail: { what: id, ...detail },
});

async function outbox(prefix: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page: ScanCommandOutput = await doc.send(
      new ScanCommand({ TableName: env.OUTBOX_TABLE_NAME!, ConsistentRead: true, ExclusiveStartKey }),
    );
    items.push(...(page.Items ?? []).filter((item) => String(item.pk).startsWith(`${SOURCE}#${prefix}`)));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey !== undefined);
  return items;
}

/** Runs `work` once under a fresh lease (or the given deps) and returns its value, failing the test on any other outcome. */
async function commitOnce(
  work: (ctx: WorkContext) => Promise<CommitResult>,
  using: ExclusiveDeps = deps(),
  runId = randomBytes(4).toString('hex'),
): Promise<CommitResult> {
  const outcome = await runExclusively(run(runId), work, using);
  if (outcome.outcome !== 'succeeded') throw new Error(`run ${outcome.outcome}: ${JSON.stringify(outcome)}`);
  return outcome.value;
}

describe('commit(actions, { events }) on DynamoDB Local', () => {
  it('writes each event as an outbox item in the same transaction as the data', async () => {
    const p = `a${randomBytes(3).toString('hex')}`;
    const result = await commitOnce((ctx) => ctx.commit([beat(`${p}-1`)], { events: [change(`${p}-1`), change(`${p}-2`)] }));
    expect(result).toEqual({ transactions: 1, events: { written: 2, duplicates: 0 } });
    const items = await outbox(p);
    expect(items.map((i) => i.eventId).sort()).toEqual([`${p}-1`, `${p}-2`]);
    expect(JSON.parse(String(items[0]!.detail))).toMatchObject({ eventId: items[0]!.eventId });
    expect(Number(items[0]!.ttl)).toBeGreaterThan(Date.now() / 1000 + 6.9 * 86_400);
    expect((await doc.send(new GetCommand({ TableName: env.OUTBOX_TABLE_NAME!, Key: { pk: `data#${p}-1` } }))).Item).toBeDefined();
  });

  it('the same change committed again (a retry, a duplicate run): the data is written, the event is not written twice, the run succeeds', async () => {
    const p = `b${randomBytes(3).toString('hex')}`;
    const first = await commitOnce((ctx) => ctx.commit([beat(`${p}-x`, { v: 1 })], { events: [change(`${p}-1`)] }), deps(), 'first-run');
    expect(first.events).toEqual({ written: 1, duplicates: 0 });
    // Another run (another lease, another fence) redoes the same change plus a new one.
    const again = await commitOnce(
      (ctx) => ctx.commit([beat(`${p}-x`, { v: 2 })], { events: [change(`${p}-1`, { late: true }), change(`${p}-2`)] }),
      deps(),
      'second-run',
    );
    expect(again).toEqual({ transactions: 1, events: { written: 1, duplicates: 1 } });
    const items = await outbox(p);
    expect(items).toHaveLength(2);
    // The first write of an id stands: the duplicate's different detail is not written over it.
    const one = items.find((i) => i.eventId === `${p}-1`)!;
    expect(one.runId).toBe('first-run');
    expect(JSON.parse(String(one.detail))).not.toHaveProperty('late');
    expect((await doc.send(new GetCommand({ TableName: env.OUTBOX_TABLE_NAME!, Key: { pk: `data#${p}-x` } }))).Item?.v).toBe(2);
  });

  it('a last commit whose events are all written already still marks the interval done', async () => {
    const p = `c${randomBytes(3).toString('hex')}`;
    await commitOnce((ctx) => ctx.commit([], { events: [change(`${p}-1`)] }));
    const using = deps();
    const interval = intervalOf(Date.now(), 60); // within the ledger's retention
    const outcome = await runExclusively(
      { ...run('r'), source: 'schedule', interval },
      (ctx) => ctx.commit([], { final: true, events: [change(`${p}-1`)] }),
      using,
    );
    expect(outcome).toMatchObject({ outcome: 'succeeded', value: { transactions: 1, events: { written: 0, duplicates: 1 } } });
    expect(await runExclusively({ ...run('r2'), source: 'schedule', interval }, async () => undefined, using)).toEqual({
      outcome: 'skipped',
      reason: 'already-done',
    });
  });

  it('a data action refused by its condition writes none of the transaction’s events', async () => {
    const p = `d${randomBytes(3).toString('hex')}`;
    const refused: TransactAction = { Put: { ...beat(`${p}-y`).Put!, ConditionExpression: 'attribute_exists(pk)' } };
    const outcome = await runExclusively(run('r'), (ctx) => ctx.commit([refused], { events: [change(`${p}-1`)] }), deps());
    expect(outcome).toMatchObject({ outcome: 'failed', reason: 'work' });
    const error = (outcome as { error: FencedWriteError }).error;
    expect(error).toBeInstanceOf(FencedWriteError);
    expect(error.refused).toEqual([refused]);
    expect(await outbox(p)).toEqual([]);
  });

  it('a run that lost its lease publishes nothing: its fenced transaction is refused whole', async () => {
    const p = `e${randomBytes(3).toString('hex')}`;
    const using = deps(2);
    const stale = await using.lease.acquire('stale', 'console', undefined);
    if (!stale.acquired) throw new Error('no lease');
    // A frozen holder: its lease lapses (2 s) and another run takes over; then the holder wakes and commits.
    await new Promise((resolve) => setTimeout(resolve, 2_300));
    const taker = await using.lease.acquire('taker', 'console', undefined);
    expect(taker).toMatchObject({ acquired: true, lease: { fence: stale.lease.fence + 1 } });
    const puts = outboxPuts([change(`${p}-1`)], using.outbox!, { runId: 'stale', fence: stale.lease.fence, nowMs: Date.now() });
    await expect(using.writer.commit([beat(`${p}-z`)], () => using.lease.fenceCheck(stale.lease), undefined, puts)).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    expect(await outbox(p)).toEqual([]);
    expect((await doc.send(new GetCommand({ TableName: env.OUTBOX_TABLE_NAME!, Key: { pk: `data#${p}-z` } }))).Item).toBeUndefined();
  });

  it('refuses an undeliverable event before writing anything, with a typed error naming it', async () => {
    const p = `f${randomBytes(3).toString('hex')}`;
    const huge = change(`${p}-2`, { text: 'x'.repeat(300 * 1024) });
    const outcome = await runExclusively(run('r'), (ctx) => ctx.commit([beat(`${p}-w`)], { events: [change(`${p}-1`), huge] }), deps());
    expect(outcome).toMatchObject({ outcome: 'failed', reason: 'work' });
    const error = (outcome as { error: OutboxEventError }).error;
    expect(error).toBeInstanceOf(OutboxEventError);
    expect(error.eventId).toBe(`${p}-2`);
    expect(await outbox(p)).toEqual([]);
    expect((await doc.send(new GetCommand({ TableName: env.OUTBOX_TABLE_NAME!, Key: { pk: `data#${p}-w` } }))).Item).toBeUndefined();
  });

  it('a commit above one transaction is split, events first; 250 KB events are packed under the 4 MB cap', async () => {
    const p = `g${randomBytes(3).toString('hex')}`;
    const many = Array.from({ length: 150 }, (_, i) => beat(`${p}-${i}`));
    const big = Array.from({ length: 20 }, (_, i) => change(`${p}-big-${i}`, { text: 'y'.repeat(250 * 1024) }));
    const small = Array.from({ length: 30 }, (_, i) => change(`${p}-small-${i}`));
    const transactions: number[] = [];
    const using = deps();
    using.writer = new DynamoFencedWriter(doc, { now: Date.now, onCommit: (info) => transactions.push(info.actions.length) });
    const result = await commitOnce((ctx) => ctx.commit(many, { events: [...big, ...small] }), using);
    expect(result.events).toEqual({ written: 50, duplicates: 0 });
    // 20 × 250 KB cannot share one transaction: at most 14 of them fit under the 3.75 MB budget.
    expect(transactions.reduce((a, b) => a + b, 0)).toBe(200);
    expect(transactions.every((n) => n <= 99)).toBe(true);
    expect(transactions[0]).toBeLessThanOrEqual(15);
    expect(result.transactions).toBe(transactions.length);
    expect(await outbox(p)).toHaveLength(50);
  });

  it('a commit with events from a job without an outbox is refused before any write', async () => {
    const { outbox: _none, ...without } = deps();
    const outcome = await runExclusively(run('r'), (ctx) => ctx.commit([], { events: [change('nowhere')] }), without);
    expect((outcome as { error: Error }).error).toBeInstanceOf(OutboxEventError);
    expect((outcome as { error: Error }).error.message).toMatch(/this job has no outbox/);
  });
});

describe('releaseWith(actions, { events }) on DynamoDB Local: the last write in the release', () => {
  /** The requests a run sends, by command (the lease's and the writer's client). */
  function counting(using: ExclusiveDeps): { deps: ExclusiveDeps; sent: string[] } {
    const sent: string[] = [];
    const spying = DynamoDBDocumentClient.from(localDynamoClient(inject('dynamoEndpoint')), {
      marshallOptions: { removeUndefinedValues: true },
    });
    const send = spying.send.bind(spying) as (command: unknown, options?: unknown) => Promise<unknown>;
    (spying as unknown as { send: typeof send }).send = (command, options) => {
      sent.push((command as { constructor: { name: string } }).constructor.name);
      return send(command, options);
    };
    const lease = new DynamoLease({
      doc: spying,
      table: env.COORDINATION_TABLE_NAME!,
      key: `${(using.lease as DynamoLease).key}-counted`,
      timing: using.timing,
      now: Date.now,
    });
    return { deps: { ...using, lease, writer: new DynamoFencedWriter(spying, { now: Date.now }) }, sent };
  }

  it('writes the data, its event, the run record and the interval done with the release: acquire + release, 2 requests', async () => {
    const p = `h${randomBytes(3).toString('hex')}`;
    const { deps: using, sent } = counting(deps());
    const interval = intervalOf(Date.now(), 60);
    const scheduled = { ...run('r'), source: 'schedule', interval };
    const outcome = await runExclusively(
      scheduled,
      async (ctx) => ctx.releaseWith([beat(`${p}-1`, { fence: ctx.fence })], { events: [change(`${p}-1`)] }),
      using,
    );
    expect(outcome).toMatchObject({ outcome: 'succeeded' });
    expect(sent).toEqual(['UpdateItemCommand', 'TransactWriteCommand']); // acquire, then the release with everything
    expect((await doc.send(new GetCommand({ TableName: env.OUTBOX_TABLE_NAME!, Key: { pk: `data#${p}-1` } }))).Item).toMatchObject({
      fence: 1,
    });
    expect((await outbox(p)).map((item) => item.eventId)).toEqual([`${p}-1`]);
    const record = await doc.send(
      new GetCommand({ TableName: env.COORDINATION_TABLE_NAME!, Key: { pk: `${using.runRecordPrefix}${interval}` } }),
    );
    expect(record.Item).toMatchObject({ outcome: 'succeeded' });
    expect(await runExclusively({ ...scheduled, runId: 'again' }, async () => undefined, using)).toEqual({
      outcome: 'skipped',
      reason: 'already-done',
    });
  });

  it('drops an event already written (a retry of the same change) and commits the rest with the release', async () => {
    const p = `i${randomBytes(3).toString('hex')}`;
    await commitOnce((ctx) => ctx.commit([], { events: [change(`${p}-1`)] }), deps(), 'first-run');
    const outcome = await runExclusively(
      run('second-run'),
      async (ctx) => ctx.releaseWith([beat(`${p}-2`)], { events: [change(`${p}-1`, { late: true }), change(`${p}-2`)] }),
      deps(),
    );
    expect(outcome).toMatchObject({ outcome: 'succeeded' });
    const items = await outbox(p);
    expect(items.map((item) => item.eventId).sort()).toEqual([`${p}-1`, `${p}-2`]);
    expect(items.find((item) => item.eventId === `${p}-1`)?.runId).toBe('first-run');
  });

  it('a write its own condition refuses fails the run and writes nothing of it; the lease is released, the interval not done', async () => {
    const p = `j${randomBytes(3).toString('hex')}`;
    const using = deps();
    const interval = intervalOf(Date.now(), 60);
    const scheduled = { ...run('r'), source: 'schedule', interval };
    const refused: TransactAction = { Put: { ...beat(`${p}-y`).Put!, ConditionExpression: 'attribute_exists(pk)' } };
    const outcome = await runExclusively(
      scheduled,
      async (ctx) => ctx.releaseWith([beat(`${p}-x`), refused], { events: [change(`${p}-1`)] }),
      using,
    );
    expect(outcome).toMatchObject({ outcome: 'failed', reason: 'work' });
    expect((outcome as { error: FencedWriteError }).error.refused).toEqual([refused]);
    expect((await doc.send(new GetCommand({ TableName: env.OUTBOX_TABLE_NAME!, Key: { pk: `data#${p}-x` } }))).Item).toBeUndefined();
    expect(await outbox(p)).toEqual([]);
    const record = await doc.send(
      new GetCommand({ TableName: env.COORDINATION_TABLE_NAME!, Key: { pk: `${using.runRecordPrefix}${interval}` } }),
    );
    expect(record.Item).toMatchObject({ outcome: 'failed' });
    // Released (a contender takes it at once) and not done: the retry runs.
    expect(await runExclusively({ ...scheduled, runId: 'retry' }, async () => 'ran', using)).toMatchObject({
      outcome: 'succeeded',
      value: 'ran',
    });
  });
});
