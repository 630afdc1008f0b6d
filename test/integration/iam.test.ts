/**
 * DynamoDB Local enforces no IAM, so a grant that misses an action or mis-scopes a key would pass
 * every other test and fail in production. Here every DynamoDB request the handler makes, through
 * a varied set of runs, is recorded on the client (transactions split into their actions, as IAM
 * authorises them) and checked against the function role's policy in the synthesized template:
 * action, table ARN and the `dynamodb:LeadingKeys` condition. And the other way round: every
 * granted action is one the code uses. The same for the relay, the reminder delivery job, and the
 * reminder write path (lambda/reminders/) against what DataTables.grantReminderWritePath grants
 * the function that calls it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { tableDefinitionsFromTemplate, type TableRole } from '../../local/tables.js';
import type { CodeforcesStandin } from '../../local/codeforces-standin.js';
import { addReminder, putContest, sampleList } from '../support/contests.js';
import { SOURCE_BODIES } from '../support/source-bodies.js';
import { jobNames } from '../../lambda/sources/job.js';
import { SOURCE_JOBS } from '../../lambda/sources/jobs.js';
import { localDynamoClient } from '../../local/dynamodb-local.js';
import { defaultBodies, misbehave, type StandinPlatform } from '../../local/source-standins.js';
import { sourceFunctionId, startOfflineSources, syncSources, type OfflineSources } from '../../local/sync-sources.js';
import type { CfnTemplate } from '../../local/template.js';
import { localHandler } from '../support/handler.js';
import { allows, callsOf, firstValue, functionStatements, roleStatements, type Call, type Statement } from '../support/iam.js';
import { scheduledEvent } from '../support/processes.js';
import { synthesizedTemplate, type TestTables } from '../support/tables.js';
import { useWorld } from '../support/world.js';
import { cf } from '../support/ids.js';
import { reminderKey } from '../../lambda/reminders/table.js';
import { replyClockId } from '../../lambda/contests/model.js';

let standin: CodeforcesStandin;
let tables: TestTables;
useWorld('iam', (world) => {
  ({ standin, tables } = world);
});

/**
 * Every call allowed by `statements` (action, table ARN or index ARN, `dynamodb:LeadingKeys`), and
 * every table action the statements grant used by some call.
 */
function expectUsedEqualsGranted(label: string, calls: (Call & { index?: string })[], statements: Statement[]): void {
  const roleOf = new Map<string, TableRole>(Object.entries(tables.names).map(([role, name]) => [name, role as TableRole]));
  const logicalIdOf = new Map(tableDefinitionsFromTemplate(synthesizedTemplate() as never).map((d) => [d.role, d.logicalId]));
  const refused = calls.filter((call) => {
    const logicalId = logicalIdOf.get(roleOf.get(call.table)!)!;
    return !statements.some((statement) =>
      call.index !== undefined
        ? statement.Effect === 'Allow' &&
          [statement.Action].flat().includes(call.action) &&
          JSON.stringify(statement.Resource).includes(`"${logicalId}"`) &&
          JSON.stringify(statement.Resource).includes(`/index/${call.index}"`)
        : allows(statement, call.action, logicalId, call.key),
    );
  });
  expect(refused, JSON.stringify(refused.slice(0, 5))).toEqual([]);

  const used = new Set(calls.map((call) => `${roleOf.get(call.table)}${call.index !== undefined ? `/${call.index}` : ''} ${call.action}`));
  const granted = new Set(
    statements.flatMap((statement) => {
      const text = JSON.stringify(statement.Resource);
      const role = [...logicalIdOf].find(([, id]) => text.includes(`"${id}"`))?.[0];
      const index = /\/index\/([A-Za-z0-9_.-]+)/.exec(text)?.[1];
      return role === undefined
        ? []
        : [statement.Action].flat().map((action) => `${role}${index !== undefined ? `/${index}` : ''} ${action}`);
    }),
  );
  expect([...used].sort()).toEqual([...granted].sort());
  console.info(
    `[iam] ${label}: ${calls.length} requests checked against ${statements.length} statements; used = granted: ${[...used].sort().join(', ')}`,
  );
}

describe('the synthesized IAM policy against the calls the code makes', () => {
  it('allows every DynamoDB request of a varied set of runs, and grants nothing the code does not use', async () => {
    const calls: (Call & { index?: string })[] = [];
    const { invoke, requests } = localHandler(tables, standin.baseUrl, { leaseSeconds: 8 });
    let loseNextReleaseAnswer = false;
    requests.client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Record<string, any>;
        calls.push(
          ...callsOf(context.commandName ?? 'unknown', input).map((call) => ({
            ...call,
            ...(input.IndexName !== undefined ? { index: String(input.IndexName) } : {}),
          })),
        );
        const result = await next(args);
        const isRelease = ((args.input as { TransactItems?: { Put?: { Item?: Record<string, unknown> } }[] }).TransactItems ?? []).some(
          (i) => firstValue(i.Put?.Item)?.startsWith('run#'),
        );
        if (isRelease && loseNextReleaseAnswer) {
          loseNextReleaseAnswer = false;
          throw Object.assign(new Error('socket hang up after the write was applied'), { name: 'TimeoutError' });
        }
        return result;
      },
      { step: 'initialize', name: 'recordCalls' },
    );

    const list = sampleList(Date.now());
    standin.setContests(list);
    const hour = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const firstRun = await invoke(scheduledEvent(hour));
    expect(firstRun.summary?.error).toBeUndefined();
    expect(firstRun.summary?.outcome).toBe('succeeded'); // writes contests
    expect((await invoke(scheduledEvent(hour))).summary?.reason).toBe('already-done');
    const start2104 = list.find((c) => c.id === 2104)?.startTimeSeconds as number;
    await addReminder(tables, 2104, 'alice', 30, start2104);
    await addReminder(tables, 2100, 'bob', 30, list.find((c) => c.id === 2100)?.startTimeSeconds as number);
    standin.setContests(
      list
        .filter((c) => c.id !== 2103)
        .map((c) =>
          c.id === 2104
            ? { ...c, startTimeSeconds: start2104 + 3600 }
            : c.id === 2100
              ? { ...c, phase: 'FINISHED' as const, durationSeconds: 3000 }
              : c,
        ),
    );
    loseNextReleaseAnswer = true; // the release lands, its answer is lost: the read-back (GetItem) decides
    expect((await invoke({})).summary).toMatchObject({
      outcome: 'succeeded',
      counts: { remindersMoved: 1, remindersPaused: 1, contestsVanished: 1 },
    });
    // The next reply confirms the move (no reminder is ever deleted: no DeleteItem on Reminders).
    const confirm = (await invoke({})).summary;
    expect(confirm?.outcome).toBe('succeeded');
    expect(confirm?.counts.contestsRechecked).toBeGreaterThan(0); // reminders of the contests changed last run queried again
    const third = (await invoke({})).summary?.counts;
    expect(third?.contestsRemoved).toBe(1); // missed by a third sync: deleted
    // The contest removed last run has its reminders read once more (and nothing written); then a
    // write that touches no reminder and hands nothing over: contest and clock in one transaction,
    // the lease checked, not updated (ConditionCheckItem).
    expect((await invoke({})).summary?.counts).toMatchObject({ contestsWritten: 0, transactions: 0 });
    standin.setContests(
      list
        .filter((c) => c.id !== 2103)
        .map((c) =>
          c.id === 2104
            ? { ...c, startTimeSeconds: start2104 + 3600 }
            : c.id === 2100
              ? { ...c, phase: 'FINISHED' as const, durationSeconds: 3000 }
              : c.id === 2101
                ? { ...c, name: 'Codeforces Round 1051 (Div. 2)' }
                : c,
        ),
    );
    expect((await invoke({})).summary?.counts).toMatchObject({ contestsWritten: 1, transactions: 1 });
    // DUE_SHARDS was 4 before this deployment (the clock says so): the run sweeps byDue partitions 1 to 3.
    await tables.doc.send(
      new UpdateCommand({
        TableName: tables.names.contests,
        Key: { contestId: replyClockId('codeforces') },
        UpdateExpression: 'SET dueShards = :four',
        ExpressionAttributeValues: { ':four': 4 },
      }),
    );
    const due = start2104 + 3600 - 1800;
    await tables.doc.send(
      new PutCommand({
        TableName: tables.names.reminders,
        Item: {
          ...reminderKey(cf(2104), 'carol'),
          contestId: cf(2104),
          minutesBefore: 30,
          remindAt: due,
          dueAt: due,
          dueShard: 2,
          dueStart: start2104 + 3600,
        },
      }),
    );
    expect((await invoke({})).summary).toMatchObject({ outcome: 'succeeded', counts: { remindersResharded: 1 } });
    await tables.doc.send(
      new PutCommand({
        TableName: tables.names.coordination,
        Item: { pk: 'lease#contest-sync', holder: 'other', fence: 99, expiresAtMs: Date.now() + 60_000 },
      }),
    );
    expect((await invoke({})).summary?.reason).toBe('lease-held');

    // The upgrade's grants (Sid Migration…) are checked against its own run in test/integration/upgrade.test.ts.
    const statements = functionStatements().filter((statement) => !String((statement as { Sid?: string }).Sid).startsWith('Migration'));
    // The run after the lowered setting swept the byDue partitions above it: the index grant is used.
    expect(calls.some((call) => call.index === 'byDue' && call.action === 'dynamodb:Query')).toBe(true);
    expectUsedEqualsGranted('codeforces', calls, statements);
  });

  it('would refuse a call outside the lease and run-record keys of Coordination', () => {
    const statements = functionStatements();
    const coordination = tableDefinitionsFromTemplate(synthesizedTemplate() as never).find((d) => d.role === 'coordination')!.logicalId;
    expect(statements.some((s) => allows(s, 'dynamodb:UpdateItem', coordination, 'lease#contest-sync'))).toBe(true);
    expect(statements.some((s) => allows(s, 'dynamodb:PutItem', coordination, 'run#2026-11-29T14:00:00Z'))).toBe(true);
    expect(statements.some((s) => allows(s, 'dynamodb:UpdateItem', coordination, 'lease#another-job'))).toBe(false);
    expect(statements.some((s) => allows(s, 'dynamodb:Query', coordination, 'run#x'))).toBe(false);
  });
});

/**
 * Each other source's job (AtCoder, CodeChef, LeetCode) against its own role: its entry with its
 * function's environment from the template (local/sync-sources.ts), against the local stand-ins.
 */
describe.each(SOURCE_JOBS.filter((job) => job.platform !== 'codeforces'))('the $label sync job’s synthesized policy', (job) => {
  let offline: OfflineSources;
  const anchorMs = Date.now();
  beforeAll(async () => {
    offline = await startOfflineSources(anchorMs);
  });
  afterAll(async () => {
    await offline?.close();
  });

  it('allows every DynamoDB request of a varied set of runs (first, unchanged, a change, a failed source, a dry run), and grants nothing the job does not use', async () => {
    const platform = job.platform as StandinPlatform;
    const names = jobNames(job);
    const template = synthesizedTemplate() as CfnTemplate;
    const statements = roleStatements((template.Resources as Record<string, { Properties?: any }>)[sourceFunctionId(template, job)]!);
    const client = localDynamoClient(tables.endpoint);
    const calls: (Call & { index?: string })[] = [];
    let loseNextReleaseAnswer = false;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Record<string, any>;
        const recorded = callsOf(context.commandName ?? 'unknown', input);
        calls.push(...recorded.map((call) => ({ ...call, ...(input.IndexName !== undefined ? { index: String(input.IndexName) } : {}) })));
        const result = await next(args);
        // The release lands, its answer is lost: the read-back (GetItem) decides.
        if (
          loseNextReleaseAnswer &&
          recorded.some((call) => call.action === 'dynamodb:PutItem' && call.key?.startsWith(names.runRecordPrefix))
        ) {
          loseNextReleaseAnswer = false;
          throw Object.assign(new Error('socket hang up after the write was applied'), { name: 'TimeoutError' });
        }
        return result;
      },
      { step: 'initialize', name: 'recordCalls' },
    );
    const run = async (event: unknown) => {
      const [done] = await syncSources({
        template,
        names: tables.names,
        client,
        event,
        env: { ...offline.env, LEASE_DURATION_SECONDS: '8' },
        write: () => undefined,
        jobs: [job],
      });
      return done!.summary;
    };
    // The platform's reply and two contests days ahead (the recorded LeetCode reply has one upcoming contest, hours ahead).
    const startOf = (days: number) => Math.floor(anchorMs / 1000) + days * 86_400;
    const kept = { id: 'iam-kept', name: 'Kept Round', startSeconds: startOf(3) };
    const dropped = { id: 'iam-dropped', name: 'Dropped Round', startSeconds: startOf(4) };
    const body = (...entries: (typeof kept)[]) => SOURCE_BODIES[platform].withEntries(defaultBodies(anchorMs)[platform], entries);
    offline.standins.setBody(platform, body(kept, dropped));
    const hour = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');

    const first = await run(scheduledEvent(hour));
    expect(first, first.error).toMatchObject({ outcome: 'succeeded' });
    expect(first.counts.contestsWritten).toBeGreaterThan(0);
    expect((await run(scheduledEvent(hour))).reason).toBe('already-done');
    expect((await run({})).counts).toMatchObject({ contestsWritten: 0, transactions: 0 }); // unchanged

    // Reminders on both; then a reply without one of them, its release answer lost.
    const keptId = `${platform}:${kept.id}`;
    await addReminder(tables, keptId, 'alice', 30, kept.startSeconds);
    await addReminder(tables, `${platform}:${dropped.id}`, 'bob', 30, dropped.startSeconds);
    offline.standins.setBody(platform, body(kept));
    loseNextReleaseAnswer = true;
    expect((await run({})).counts).toMatchObject({ contestsVanished: 1 });
    expect(loseNextReleaseAnswer).toBe(false);
    // Missed by enough syncs: deleted (its reminders kept: no DeleteItem on Reminders).
    let removed = 0;
    for (let i = 0; i < 4 && removed === 0; i += 1) removed = (await run({})).counts.contestsRemoved;
    expect(removed).toBe(1);

    // A failed source: nothing written.
    offline.standins.enqueue(platform, misbehave.status(404, 'Not Found'));
    expect(await run({})).toMatchObject({ outcome: 'failed', reason: platform, counts: { contestsWritten: 0 } });
    // A dry run of a reply that brings the dropped contest back: it would write, it writes nothing.
    offline.standins.setBody(platform, body(kept, dropped));
    const dry = await run({ dryRun: true });
    expect(dry).toMatchObject({ outcome: 'succeeded', dryRun: true, counts: { contestsWritten: 0 } });
    expect(dry.changes?.writeTotal).toBeGreaterThan(0);

    // DUE_SHARDS was 4 before this deployment (the clock says so): the run sweeps byDue partitions 1 to 3.
    await tables.doc.send(
      new UpdateCommand({
        TableName: tables.names.contests,
        Key: { contestId: replyClockId(platform) },
        UpdateExpression: 'SET dueShards = :four',
        ExpressionAttributeValues: { ':four': 4 },
      }),
    );
    const due = kept.startSeconds - 1800;
    await tables.doc.send(
      new PutCommand({
        TableName: tables.names.reminders,
        Item: {
          ...reminderKey(keptId, 'carol'),
          contestId: keptId,
          minutesBefore: 30,
          remindAt: due,
          dueAt: due,
          dueShard: 2,
          dueStart: kept.startSeconds,
        },
      }),
    );
    expect(await run({})).toMatchObject({ outcome: 'succeeded', counts: { remindersResharded: 1 } });
    expect(calls.some((call) => call.index === 'byDue' && call.action === 'dynamodb:Query')).toBe(true);
    // Its lease held by another: skipped.
    await tables.doc.send(
      new PutCommand({
        TableName: tables.names.coordination,
        Item: { pk: names.leaseKey, holder: 'other', fence: 99, expiresAtMs: Date.now() + 60_000 },
      }),
    );
    expect((await run({})).reason).toBe('lease-held');

    // Only its own keys in Coordination, and no grant of the upgrade (Codeforces' job alone copies).
    expect(
      calls.filter(
        (call) =>
          call.table === tables.names.coordination &&
          ![names.leaseKey].includes(call.key ?? '') &&
          !call.key?.startsWith(names.runRecordPrefix),
      ),
    ).toEqual([]);
    expect(statements.map((statement) => (statement as { Sid?: string }).Sid).filter((sid) => String(sid).startsWith('Migration'))).toEqual(
      [],
    );
    expectUsedEqualsGranted(job.platform, calls, statements);
  }, 120_000);
});

describe('the relay’s synthesized policy against the calls it makes', () => {
  it('allows the relay’s PutEvents on its bus and grants nothing else its code or its stream mapping does not use', async () => {
    const { EventBridgeClient } = await import('@aws-sdk/client-eventbridge');
    const { outboxRelay } = await import('@contest-sync/scheduled-singleton/relay');
    const { outboxPuts } = await import('@contest-sync/scheduled-singleton');
    const { marshall } = await import('@aws-sdk/util-dynamodb');
    const { startBusStandin } = await import('../../local/bus-standin.js');
    const resources = (synthesizedTemplate() as { Resources: Record<string, { Type: string; Properties: any }> }).Resources;
    const [relayId, relayFn] = Object.entries(resources).find(
      ([, r]) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.EVENT_BUS_NAME,
    )!;
    const statements = roleStatements(relayFn);
    const busId = relayFn.Properties.Environment.Variables.EVENT_BUS_NAME.Ref as string;
    const [mapping] = Object.values(resources).filter(
      (r) => r.Type === 'AWS::Lambda::EventSourceMapping' && r.Properties.FunctionName.Ref === relayId,
    );
    const streamOf = mapping!.Properties.EventSourceArn as { 'Fn::GetAtt': [string, string] };
    const dlq = mapping!.Properties.DestinationConfig.OnFailure.Destination as { 'Fn::GetAtt': [string, string] };

    // The relay's own calls, recorded on its client, through a batch with a partial failure.
    const bus = await startBusStandin({
      rules: [],
      targets: {},
      faults: { failEntry: (_entry, request) => (request === 1 ? 'ThrottlingException' : undefined) },
    });
    const client = new EventBridgeClient({ endpoint: bus.endpoint });
    const used: string[] = [];
    client.middlewareStack.add(
      (next, context) => async (args) => {
        used.push(`events:${String(context.commandName).replace(/Command$/, '')}`);
        return next(args);
      },
      { step: 'initialize', name: 'recordCalls' },
    );
    const { PutEventsCommand } = await import('@aws-sdk/client-eventbridge');
    const relay = outboxRelay({
      putEvents: (entries) => client.send(new PutEventsCommand({ Entries: entries })),
      env: { EVENT_BUS_NAME: 'bus' },
      sleep: async () => undefined,
      write: () => undefined,
    });
    const [put] = outboxPuts(
      [{ id: 'e1', detailType: 'T', detail: {} }],
      { table: 'outbox', source: 'contest-sync.contests', retentionDays: 7 },
      { runId: 'r', fence: 1, nowMs: Date.now() },
    );
    expect(
      await relay({ Records: [{ eventName: 'INSERT', dynamodb: { SequenceNumber: '1', NewImage: marshall(put!.Put!.Item) } }] }),
    ).toEqual({ batchItemFailures: [] });
    await bus.close();
    expect(used).toEqual(['events:PutEvents', 'events:PutEvents']);

    const on = (resource: unknown) => JSON.stringify(resource);
    const allowed = (action: string, resource: unknown) =>
      statements.some(
        (s) => s.Effect === 'Allow' && [s.Action].flat().includes(action) && [s.Resource].flat().some((r) => on(r) === on(resource)),
      );
    for (const action of new Set(used)) expect(allowed(action, { 'Fn::GetAtt': [busId, 'Arn'] }), action).toBe(true);
    // What Lambda's event source mapping does with the function's role: read the stream, send to the queue.
    const mappingActions = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator', 'dynamodb:ListStreams'];
    for (const action of mappingActions) expect(allowed(action, streamOf), action).toBe(true);
    for (const action of ['sqs:SendMessage', 'sqs:GetQueueAttributes']) expect(allowed(action, dlq), action).toBe(true);
    const granted = statements
      .flatMap((s) => [s.Action].flat())
      .filter((a) => !a.startsWith('logs:'))
      .sort();
    expect(granted).toEqual([...new Set(used), ...mappingActions, 'sqs:SendMessage', 'sqs:GetQueueAttributes'].sort());
  });
});

describe('the reminder delivery job’s synthesized policy against the calls it makes', () => {
  it('allows every DynamoDB request of its passes (idle, a dry run, claiming with a release answer lost, a lease held) and grants nothing it does not use', async () => {
    const { createDeliveryHandler } = await import('../../lambda/delivery/handler.js');
    const { functionEnv } = await import('../../local/local-events.js');
    const { findDeliveryFunction } = await import('../../local/template.js');
    const { localDynamoClient } = await import('../../local/dynamodb-local.js');
    const template = synthesizedTemplate() as { Resources: Record<string, { Type: string; Properties: any }> };
    const { logicalId: fnId, resource: fn } = findDeliveryFunction(template);
    const statements = roleStatements(fn);

    const client = localDynamoClient(tables.endpoint);
    const calls: (Call & { index?: string })[] = [];
    let loseNextReleaseAnswer = false;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Record<string, any>;
        const recorded = callsOf(context.commandName ?? 'unknown', input);
        if (context.commandName === 'BatchGetItemCommand') {
          for (const [table, request] of Object.entries(input.RequestItems as Record<string, { Keys: Record<string, unknown>[] }>)) {
            for (const key of request.Keys) calls.push({ action: 'dynamodb:BatchGetItem', table, key: firstValue(key) });
          }
        } else
          calls.push(
            ...recorded.map((call) => ({ ...call, ...(input.IndexName !== undefined ? { index: String(input.IndexName) } : {}) })),
          );
        const result = await next(args);
        // The release lands, its answer is lost: the read-back (GetItem) decides.
        const isRelease = recorded.some((call) => call.key?.startsWith('run#reminder-delivery#'));
        if (isRelease && loseNextReleaseAnswer) {
          loseNextReleaseAnswer = false;
          throw Object.assign(new Error('socket hang up after the write was applied'), { name: 'TimeoutError' });
        }
        return result;
      },
      { step: 'initialize', name: 'recordCalls' },
    );
    const handler = createDeliveryHandler({
      env: { ...functionEnv(template, fnId, tables.names), AWS_REGION: 'us-east-1' },
      dynamo: client,
      write: () => undefined,
    });
    const context = { getRemainingTimeInMillis: () => 60_000 };
    const minute = () => scheduledEvent(new Date(Math.floor(Date.now() / 60_000) * 60_000).toISOString());

    // An idle minute: its Queries (one per byDue partition served), nothing else.
    expect(await handler(minute(), context)).toMatchObject({ outcome: 'succeeded', idle: true });
    // Due rows: a dry run, a pass whose release answer is lost, then a held lease.
    const now = Math.floor(Date.now() / 1000);
    const start = now + 1800;
    await putContest(tables, {
      contestId: cf(2051),
      platform: 'codeforces',
      platformId: '2051',
      name: 'Round 2051',
      type: 'CF',
      phase: 'BEFORE',
      startTimeSeconds: start,
      durationSeconds: 7200,
      url: 'https://codeforces.com/contest/2051',
      updatedAt: 'x',
      expiresAt: start + 86_400,
      // Its reminders may fire at its start: the claim checks its bucket gates (dueStart = :dueStart, ConditionCheckItem on Contests).
      dueStart: start,
    });
    await tables.doc.send(
      new PutCommand({ TableName: tables.names.contests, Item: { contestId: 'clock#codeforces', replyMadeAt: now, updatedAt: 'x' } }),
    );
    for (const userId of ['a', 'b', 'c']) {
      await tables.doc.send(
        new PutCommand({
          TableName: tables.names.reminders,
          Item: {
            ...reminderKey(cf(2051), userId),
            contestId: cf(2051),
            minutesBefore: 60,
            remindAt: start - 3600,
            dueAt: start - 3600,
            dueShard: 0,
            dueStart: start,
          },
        }),
      );
    }
    expect(await handler({ dryRun: true }, context)).toMatchObject({ outcome: 'succeeded' });
    loseNextReleaseAnswer = true;
    expect(await handler({}, context)).toMatchObject({ outcome: 'succeeded', counts: { delivered: 3 } });
    expect(loseNextReleaseAnswer).toBe(false);
    await tables.doc.send(
      new PutCommand({
        TableName: tables.names.reminders,
        Item: {
          ...reminderKey(cf(2051), 'd'),
          contestId: cf(2051),
          minutesBefore: 60,
          remindAt: start - 3600,
          dueAt: start - 3600,
          dueShard: 0,
          dueStart: start,
        },
      }),
    );
    await tables.doc.send(
      new PutCommand({
        TableName: tables.names.coordination,
        Item: { pk: 'lease#reminder-delivery#0', holder: 'other', fence: 99, expiresAtMs: Date.now() + 60_000 },
      }),
    );
    expect(await handler({}, context)).toMatchObject({ outcome: 'skipped', reason: 'lease-held' });

    const roleOf = new Map<string, string>(Object.entries(tables.names).map(([role, name]) => [name, role]));
    const logicalIdOf = new Map(tableDefinitionsFromTemplate(template as never).map((d) => [d.role as string, d.logicalId]));
    const allowsIndex = (statement: Statement, action: string, logicalId: string, index: string) =>
      statement.Effect === 'Allow' &&
      [statement.Action].flat().includes(action) &&
      JSON.stringify(statement.Resource).includes(logicalId) &&
      JSON.stringify(statement.Resource).includes(`/index/${index}`);
    const refused = calls.filter((call) => {
      const logicalId = logicalIdOf.get(roleOf.get(call.table)!)!;
      return !statements.some((statement) =>
        call.index !== undefined
          ? allowsIndex(statement, call.action, logicalId, call.index)
          : allows(statement, call.action, logicalId, call.key),
      );
    });
    expect(refused, JSON.stringify(refused.slice(0, 5))).toEqual([]);
    const used = new Set(
      calls.map((call) => `${roleOf.get(call.table)}${call.index !== undefined ? `/${call.index}` : ''} ${call.action}`),
    );
    const granted = new Set(
      statements.flatMap((statement) => {
        const text = JSON.stringify(statement.Resource);
        const role = [...logicalIdOf].find(([, id]) => text.includes(`"${id}"`))?.[0];
        if (role === undefined) return [];
        const index = /\/index\/([A-Za-z0-9_.-]+)/.exec(text)?.[1];
        return [statement.Action].flat().map((action) => `${role}${index !== undefined ? `/${index}` : ''} ${action}`);
      }),
    );
    expect([...used].sort()).toEqual([...granted].sort());
    console.info(
      `[iam] delivery: ${calls.length} requests checked against ${statements.length} statements; used = granted: ${[...used].sort().join(', ')}`,
    );
  });
});

describe('the reminder write path’s actions against the calls it makes', () => {
  it('sends only REMINDER_WRITE_PATH_ACTIONS, uses every one of them, and grantReminderWritePath allows exactly those calls', async () => {
    const { App, Stack } = await import('aws-cdk-lib');
    const iam = await import('aws-cdk-lib/aws-iam');
    const { Template } = await import('aws-cdk-lib/assertions');
    const { DataTables } = await import('../../lib/constructs/data-tables.js');
    const { REMINDER_WRITE_PATH_ACTIONS } = await import('../../lib/table-access.js');
    const { createReminderClient } = await import('../../lambda/reminders/index.js');
    const { localDynamoClient } = await import('../../local/dynamodb-local.js');
    const { DynamoDBDocumentClient, DeleteCommand } = await import('@aws-sdk/lib-dynamodb');

    const client = localDynamoClient(tables.endpoint);
    const calls: (Call & { index?: string })[] = [];
    let raceOnce = false;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as Record<string, any>;
        calls.push(
          ...callsOf(context.commandName ?? 'unknown', input).map((call) => ({
            ...call,
            ...(input.IndexName !== undefined ? { index: String(input.IndexName) } : {}),
          })),
        );
        // A cancel lands between a set's read and its transaction: the set reads again.
        if (raceOnce && context.commandName === 'TransactWriteItemsCommand') {
          raceOnce = false;
          await tables.doc.send(new DeleteCommand({ TableName: tables.names.reminders, Key: reminderKey(cf(2051), 'alice') }));
        }
        return next(args);
      },
      { step: 'initialize', name: 'recordCalls' },
    );
    const reminders = createReminderClient({
      dynamo: DynamoDBDocumentClient.from(client),
      tables: { contests: tables.names.contests, reminders: tables.names.reminders },
    });
    const start = Math.floor(Date.now() / 1000) + 86_400;
    const contest = (id: number, extra: Record<string, unknown>) =>
      tables.doc.send(
        new PutCommand({
          TableName: tables.names.contests,
          Item: {
            contestId: cf(id),
            platform: 'codeforces',
            phase: 'BEFORE',
            startTimeSeconds: start,
            expiresAt: start + 86_400,
            ...extra,
          },
        }),
      );
    await contest(2051, { dueStart: start });
    await contest(2052, { remindersPaused: 'held' });
    // Set, the same again, a change, a change raced by a cancel, a paused contest, refusals, cancels, list pages.
    await reminders.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 30 });
    await reminders.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 30 });
    await reminders.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 60 });
    raceOnce = true;
    await reminders.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 15 });
    await reminders.setReminder({ contestId: cf(2052), userId: 'alice', minutesBefore: 15 });
    await expect(reminders.setReminder({ contestId: cf(4040), userId: 'alice', minutesBefore: 15 })).rejects.toMatchObject({
      code: 'contest-not-found',
    });
    expect(await reminders.cancelReminder({ contestId: cf(2052), userId: 'alice' })).toEqual({ cancelled: true });
    expect(await reminders.cancelReminder({ contestId: cf(2052), userId: 'alice' })).toEqual({ cancelled: false });
    await reminders.setReminder({ contestId: cf(2052), userId: 'alice', minutesBefore: 15 });
    const first = await reminders.listReminders({ userId: 'alice', limit: 1 });
    expect(first.cursor).toBeDefined();
    await reminders.listReminders({ userId: 'alice', limit: 1, cursor: first.cursor! });

    const roleOf = new Map<string, string>(Object.entries(tables.names).map(([role, name]) => [name, role]));
    const used = new Set(
      calls.map((call) => `${roleOf.get(call.table)}${call.index !== undefined ? `/${call.index}` : ''} ${call.action}`),
    );
    const declared = [
      ...REMINDER_WRITE_PATH_ACTIONS.contests.map((action) => `contests ${action}`),
      ...REMINDER_WRITE_PATH_ACTIONS.reminders.map((action) => `reminders ${action}`),
      ...REMINDER_WRITE_PATH_ACTIONS.remindersByUser.map((action) => `reminders/byUser ${action}`),
    ];
    expect([...used].sort()).toEqual(declared.sort());

    // What the grant puts in a policy, on a role in a stack of its own.
    const stack = new Stack(new App(), 'WritePathGrant');
    const dataTables = new DataTables(stack, 'Tables');
    const role = new iam.Role(stack, 'ApiRole', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    dataTables.grantReminderWritePath(role);
    const resources = Template.fromStack(stack).toJSON().Resources as Record<string, { Type: string; Properties: any }>;
    const statements = Object.values(resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy')
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
    const logicalIdOf = new Map<string, string>(
      (['contests', 'reminders'] as const).map((r) => [r, stack.getLogicalId(dataTables[r].node.defaultChild as never)]),
    );
    const allowsCall = (statement: Statement, call: Call & { index?: string }) => {
      const logicalId = logicalIdOf.get(roleOf.get(call.table)!)!;
      if (call.index === undefined) return allows(statement, call.action, logicalId, call.key);
      const text = JSON.stringify(statement.Resource);
      return (
        statement.Effect === 'Allow' &&
        [statement.Action].flat().includes(call.action) &&
        text.includes(`"${logicalId}"`) &&
        text.includes(`/index/${call.index}"`)
      );
    };
    const refused = calls.filter((call) => !statements.some((statement) => allowsCall(statement, call)));
    expect(refused, JSON.stringify(refused.slice(0, 5))).toEqual([]);
    const granted = new Set(
      statements.flatMap((statement) =>
        [statement.Resource].flat().flatMap((resource) => {
          const text = JSON.stringify(resource);
          const tableRole = [...logicalIdOf].find(([, id]) => text.includes(`"${id}"`))?.[0];
          if (tableRole === undefined) return [];
          const index = /\/index\/([A-Za-z0-9_.-]+)/.exec(text)?.[1];
          return [statement.Action].flat().map((action) => `${tableRole}${index !== undefined ? `/${index}` : ''} ${action}`);
        }),
      ),
    );
    expect([...granted].sort()).toEqual([...used].sort());
    console.info(`[iam] write path: ${calls.length} requests; used = granted: ${[...used].sort().join(', ')}`);
  });
});
