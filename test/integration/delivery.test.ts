/**
 * Reminder delivery on DynamoDB Local, tables from the synthesized template: the real handler
 * (createDeliveryHandler on the package's wrapper, lease and fenced outbox). Each due reminder is
 * claimed once with exactly one outbox item, whatever duplicate or concurrent invocations do, a
 * lease lost mid-batch (another run takes it over) or a run that ends between its claims and its
 * release (in-process: the release fails, as if the process died there); a bad row is skipped and
 * never marked sent; an idle minute sends one Query per partition served and takes no lease.
 * The rule (docs/delivery.md): a row due at a start its contest does not have now is not claimed
 * and stays due, also when the contest changes between the read and the claim; the event id names
 * the intent: a reminder set again after it was sent is sent again once, under a new id, and a
 * row written before intents keeps its old id.
 * And every DynamoDB request the job sends is allowed by the delivery role's synthesized policy,
 * which grants nothing the job does not use (DynamoDB Local enforces no IAM).
 */
import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GetCommand, PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createDeliveryHandler } from '../../lambda/delivery/handler.js';
import { reminderDueId } from '../../lambda/delivery/due.js';
import { deliveryLeaseKey } from '../../lambda/delivery/schema.js';
import { EVENT_SOURCES } from '../../lib/contest-sync-stack.js';
import { localDynamoClient } from '../../local/dynamodb-local.js';
import { findDeliveryFunction } from '../../local/template.js';
import { tableDefinitionsFromTemplate } from '../../local/tables.js';
import { synthesizedTemplate, type TestTables } from '../support/tables.js';
import { scheduledEvent } from '../support/processes.js';
import { useWorld } from '../support/world.js';
import { cf } from '../support/ids.js';
import { putContest as putSyncedContest } from '../support/contests.js';
import { deliveryEnv } from '../support/delivery.js';
import { contestKeyOf, reminderKey } from '../../lambda/reminders/table.js';

let tables: TestTables;
useWorld('delivery', (world) => {
  ({ tables } = world);
});

const outboxOf = (t: TestTables) => (t.names as TestTables['names'] & { outbox?: string }).outbox!;
const context = () => ({ getRemainingTimeInMillis: () => 60_000 });

/** A partition key value as the request carries it: native (document client) or marshalled. */
const keyValue = (value: unknown): string | undefined =>
  value === undefined ? undefined : typeof value === 'object' && value !== null ? String(Object.values(value)[0]) : String(value);

interface Call {
  action: string;
  table: string;
  index?: string;
  key?: string;
}

/** Set to lose the answer of the next release (it lands; the package reads the lease back: GetItem). */
const faults = {
  loseNextReleaseAnswer: false,
  /** After this many claim transactions commit, another run takes the lease over (a lost lease mid-batch). */
  stealAfterClaims: undefined as number | undefined,
  /** Every release fails (the run ends between its last claim and its release, as a crash would). */
  failReleases: false,
};
let claimTransactions = 0;

/** Acts after a request of the handler was answered, before the handler sees the answer (a write landing in between). */
type After = (operation: string, input: Record<string, any>) => Promise<void>;

function handler(calls?: Call[], after?: After) {
  const client = localDynamoClient(tables.endpoint);
  if (after !== undefined) {
    client.middlewareStack.add(
      (next, ctx) => async (args) => {
        const result = await next(args);
        await after(String(ctx.commandName).replace(/Command$/, ''), args.input as Record<string, any>);
        return result;
      },
      { step: 'initialize', name: 'afterAnswered' },
    );
  }
  if (calls !== undefined) {
    client.middlewareStack.add(
      (next, ctx) => async (args) => {
        const input = args.input as Record<string, any>;
        const operation = String(ctx.commandName).replace(/Command$/, '');
        if (operation === 'TransactWriteItems') {
          for (const item of input.TransactItems as Record<string, any>[]) {
            const [kind, body] = Object.entries(item)[0] as [string, any];
            const action = { ConditionCheck: 'ConditionCheckItem', Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem' }[kind]!;
            const key = body.Key ?? body.Item;
            calls.push({ action: `dynamodb:${action}`, table: body.TableName, key: keyValue(key.pk ?? key.contestKey ?? key.contestId) });
          }
        } else if (operation === 'BatchGetItem') {
          for (const table of Object.keys(input.RequestItems as object)) calls.push({ action: 'dynamodb:BatchGetItem', table });
        } else {
          const key = keyValue((input.Key ?? input.Item)?.pk);
          calls.push({
            action: `dynamodb:${operation}`,
            table: input.TableName,
            ...(input.IndexName ? { index: input.IndexName } : {}),
            ...(key !== undefined ? { key } : {}),
          });
        }
        // The run record's key as the document client writes it, or marshalled (the lease's own release).
        const releases = ((input.TransactItems ?? []) as { Put?: { Item?: { pk?: unknown } } }[]).some((i) =>
          (keyValue(i.Put?.Item?.pk) ?? '').startsWith('run#'),
        );
        if (releases && faults.failReleases)
          throw Object.assign(new Error('the process died before its release'), { name: 'ValidationException', $fault: 'client' });
        const result = await next(args);
        const claims = ((input.TransactItems ?? []) as { Update?: { TableName?: string } }[]).some(
          (i) => i.Update?.TableName === tables.names.reminders,
        );
        if (claims && faults.stealAfterClaims !== undefined && ++claimTransactions === faults.stealAfterClaims) {
          await tables.doc.send(
            new UpdateCommand({
              TableName: tables.names.coordination,
              Key: { pk: deliveryLeaseKey(0) },
              UpdateExpression: 'SET holder = :other, fence = fence + :one, expiresAtMs = :later',
              ExpressionAttributeValues: { ':other': 'another-run', ':one': 1, ':later': Date.now() + 2_000 },
            }),
          );
        }
        if (releases && faults.loseNextReleaseAnswer) {
          faults.loseNextReleaseAnswer = false;
          throw Object.assign(new Error('socket hang up after the write was applied'), { name: 'TimeoutError' });
        }
        return result;
      },
      { step: 'initialize', name: 'recordCalls' },
    );
  }
  return createDeliveryHandler({
    env: deliveryEnv(tables),
    dynamo: client,
    write: () => undefined,
    newRunId: randomUUID,
  });
}

/** A contest item as the sync writes it, due (its reminders may fire) at `dueStart`, or paused without one (null). */
const contestItem = (start: number, dueStart: number | null = start, id = 2051) => ({
  contestId: cf(id),
  platform: 'codeforces',
  platformId: String(id),
  name: `Codeforces Round ${id}`,
  type: 'CF',
  phase: 'BEFORE',
  startTimeSeconds: start,
  durationSeconds: 7200,
  url: `https://codeforces.com/contest/${id}`,
  updatedAt: new Date().toISOString(),
  expiresAt: start + 86_400,
  ...(dueStart !== null ? { dueStart } : { remindersPaused: 'held' }),
});
/** A contest as the sync writes it: with its bucket gates (the claims check them). */
const putContest = (item: Record<string, unknown>) => putSyncedContest(tables, item);
/** The id of a row written before intents: (contest, user, start), as it always was. */
const legacyId = (contestId: number, userId: string, start: number) =>
  `reminder-due:${createHash('sha256')
    .update(JSON.stringify([contestId, userId, start]))
    .digest('hex')
    .slice(0, 32)}`;

async function seed(count: number, extra: Record<string, unknown>[] = []): Promise<number> {
  const start = Math.floor(Date.now() / 1000) + 1800;
  await putContest(contestItem(start));
  // The sync's reply clock: a reply applied just now (delivery sends only on fresh evidence).
  await tables.doc.send(
    new PutCommand({
      TableName: tables.names.contests,
      Item: { contestId: 'clock#codeforces', replyMadeAt: Math.floor(Date.now() / 1000), updatedAt: new Date().toISOString() },
    }),
  );
  const rows = [
    ...Array.from({ length: count }, (_, i) => ({
      ...reminderKey(cf(2051), `user-${i}`),
      contestId: cf(2051),
      minutesBefore: 60,
      remindAt: start - 3600,
      dueAt: start - 3600,
      dueShard: 0,
      dueStart: start,
    })),
    ...extra.map((row) => ({
      contestId: cf(2051),
      contestKey: contestKeyOf(cf(2051), String(row.userId)),
      dueShard: 0,
      dueStart: start,
      dueAt: start - 3600,
      remindAt: start - 3600,
      ...row,
    })),
  ];
  await Promise.all(rows.map((Item) => tables.doc.send(new PutCommand({ TableName: tables.names.reminders, Item }))));
  return start;
}

const scan = async (table: string) =>
  ((await tables.doc.send(new ScanCommand({ TableName: table }))).Items ?? []) as Record<string, unknown>[];
const minute = () => scheduledEvent(new Date(Math.floor(Date.now() / 60_000) * 60_000).toISOString());

describe('reminder delivery on DynamoDB Local', () => {
  it('claims each due reminder once, with one outbox item, however many invocations run at once or again', async () => {
    const start = await seed(120);
    const handlers = Array.from({ length: 4 }, () => handler());
    const results = await Promise.all(handlers.map((h) => h(minute(), context()).catch((error: { summary?: unknown }) => error.summary)));
    const outcomes = results.map((r) => (r as { outcome: string; reason?: string }).outcome);
    expect(outcomes.filter((o) => o === 'succeeded').length, JSON.stringify(results)).toBeGreaterThanOrEqual(1);
    // Duplicates of the same minute and a console run afterwards: nothing more to send.
    expect(await handlers[0]!(minute(), context())).toMatchObject({ outcome: 'succeeded' });
    expect(await handlers[1]!({}, context())).toMatchObject({ outcome: 'succeeded', idle: true });

    const reminders = await scan(tables.names.reminders);
    expect(reminders.every((r) => r.notifiedStart === start && r.dueAt === undefined && r.dueShard === undefined)).toBe(true);
    const outbox = await scan(outboxOf(tables));
    expect(outbox).toHaveLength(120);
    // Rows written before intents keep the id they always had: (contest, user, start).
    expect(new Set(outbox.map((item) => item.eventId))).toEqual(new Set(reminders.map((r) => legacyId(2051, String(r.userId), start))));
    expect(
      reminders.every((r) => reminderDueId(cf(2051), String(r.userId), undefined, start) === legacyId(2051, String(r.userId), start)),
    ).toBe(true);
    const detail = JSON.parse(String(outbox[0]!.detail)) as Record<string, unknown>;
    expect(detail).toMatchObject({
      contestId: 'codeforces:2051',
      contest: 'codeforces:2051',
      platform: 'codeforces',
      platformId: '2051',
      minutesBefore: 60,
      startTimeSeconds: start,
      name: 'Codeforces Round 2051',
      url: 'https://codeforces.com/contest/2051',
    });
    expect(outbox[0]).toMatchObject({ source: EVENT_SOURCES.reminders, detailType: 'ReminderDue' });
  });

  it('a run that loses its lease mid-batch writes no more; the next run sends the rest; each reminder once', async () => {
    const start = await seed(150);
    faults.stealAfterClaims = 1;
    claimTransactions = 0;
    const first = await handler([])(minute(), context()).catch((error: { summary?: Record<string, unknown> }) => error.summary);
    faults.stealAfterClaims = undefined;
    expect(first).toMatchObject({ outcome: 'failed', reason: 'lease-lost' });
    const claimed = (await scan(tables.names.reminders)).filter((r) => r.notifiedStart === start);
    // The first transaction only: 150 users spread over the 16 bucket keys, each key's gate
    // checked once, so it holds 41 to 49 claims (2 actions each and one check per key in 99).
    expect(claimed.length).toBeGreaterThanOrEqual(41);
    expect(claimed.length).toBeLessThanOrEqual(49);
    expect(await scan(outboxOf(tables))).toHaveLength(claimed.length);
    await new Promise((resolve) => setTimeout(resolve, 2_100)); // the thief's lease lapses
    expect(await handler()({}, context())).toMatchObject({ outcome: 'succeeded', counts: { delivered: 150 - claimed.length } });
    const outbox = await scan(outboxOf(tables));
    expect(outbox).toHaveLength(150);
    expect(new Set(outbox.map((item) => item.eventId)).size).toBe(150);
  });

  it('a run that ends after its claims and before its release delivers nothing twice: the retry finds nothing due', async () => {
    await seed(30);
    faults.failReleases = true;
    const crashed = await handler([])(minute(), context()).catch((error: { summary?: Record<string, unknown> }) => error.summary);
    faults.failReleases = false;
    expect(crashed).toMatchObject({ outcome: 'failed', reason: 'lease' });
    expect(await scan(outboxOf(tables))).toHaveLength(30);
    // Lambda's retry of the same minute, while the lease has not lapsed yet and after it has.
    expect(await handler()(minute(), context())).toMatchObject({ outcome: 'succeeded', idle: true });
    await new Promise((resolve) => setTimeout(resolve, 5_100));
    expect(await handler()(minute(), context())).toMatchObject({ outcome: 'succeeded', idle: true });
    expect(await scan(outboxOf(tables))).toHaveLength(30);
  });

  it('skips and counts bad rows without marking them sent; the rest of the batch is delivered', async () => {
    await seed(3, [
      { userId: 'negative', minutesBefore: -5 },
      { userId: 'no-lead' },
      { userId: 'sent', minutesBefore: 60, notifiedStart: 0 },
    ]);
    const reminders = await scan(tables.names.reminders);
    const sentRow = reminders.find((r) => r.userId === 'sent')!;
    await tables.doc.send(new PutCommand({ TableName: tables.names.reminders, Item: { ...sentRow, notifiedStart: sentRow.dueStart } }));
    const result = await handler()(minute(), context());
    expect(result).toMatchObject({
      outcome: 'succeeded',
      counts: { due: 6, delivered: 3, invalid: 3, invalidReasons: { minutesBefore: 2, 'already-notified': 1 } },
    });
    const after = new Map((await scan(tables.names.reminders)).map((r) => [r.userId, r]));
    for (const bad of ['negative', 'no-lead']) expect(after.get(bad)).toMatchObject({ dueAt: expect.any(Number) });
    expect(after.get('negative')?.notifiedAt).toBeUndefined();
    expect(await scan(outboxOf(tables))).toHaveLength(3);
    // Only bad rows left: the next minute does not take the lease for them.
    const lease = async () =>
      (await tables.doc.send(new GetCommand({ TableName: tables.names.coordination, Key: { pk: deliveryLeaseKey(0) } }))).Item;
    const before = JSON.stringify(await lease());
    expect(await handler()({}, context())).toMatchObject({ outcome: 'succeeded', idle: true, counts: { invalid: 3 } });
    expect(JSON.stringify(await lease())).toBe(before);
  });

  it('the rule: a row due at a start its contest does not have now is not claimed and stays due (moved, or paused)', async () => {
    const oldStart = await seed(4);
    // The sync moved the contest two hours later (and its other rows with it); two rows written
    // by the app in between are still due at the old start; a second contest is paused.
    const newStart = oldStart + 7200;
    await putContest(contestItem(newStart));
    const reminders = await scan(tables.names.reminders);
    for (const r of reminders.slice(0, 2))
      await tables.doc.send(
        new PutCommand({
          TableName: tables.names.reminders,
          Item: { ...r, dueStart: newStart, dueAt: newStart - 3600, remindAt: newStart - 3600 },
        }),
      );
    await putContest(contestItem(oldStart, null, 2052));
    await tables.doc.send(
      new PutCommand({
        TableName: tables.names.reminders,
        Item: {
          ...reminderKey(cf(2052), 'paused'),
          contestId: cf(2052),
          minutesBefore: 60,
          remindAt: oldStart - 3600,
          dueAt: oldStart - 3600,
          dueShard: 0,
          dueStart: oldStart,
        },
      }),
    );
    const result = await handler()(minute(), context());
    expect(result).toMatchObject({
      outcome: 'succeeded',
      counts: { due: 3, delivered: 0, deferred: 3, deferredReasons: { 'contest-moved': 2, 'contest-paused': 1 }, lost: 0 },
    });
    expect(await scan(outboxOf(tables))).toEqual([]);
    const after = await scan(tables.names.reminders);
    const stillDueAtOld = after.filter((r) => r.dueStart === oldStart);
    expect(stillDueAtOld).toHaveLength(3);
    for (const r of stillDueAtOld) expect(r).toMatchObject({ dueAt: oldStart - 3600, dueShard: 0 });
    expect(after.some((r) => r.notifiedStart !== undefined)).toBe(false);
  });

  it('a contest changed between the read and the claim makes its claims lose: nothing is sent, the rows stay due', async () => {
    const start = await seed(5);
    let moved = false;
    // Right after delivery read the contests (the rule held then), the sync moves the contest: a new dueStart.
    const h = handler(undefined, async (operation) => {
      if (moved || operation !== 'BatchGetItem') return;
      moved = true;
      await putContest(contestItem(start + 7200));
    });
    const result = await h(minute(), context());
    expect(moved).toBe(true);
    expect(result).toMatchObject({ outcome: 'succeeded', counts: { due: 5, delivered: 0, lost: 5, deferred: 0, transactions: 0 } });
    expect(await scan(outboxOf(tables))).toEqual([]);
    const rows = await scan(tables.names.reminders);
    expect(rows.every((r) => r.dueStart === start && r.dueAt === start - 3600 && r.notifiedStart === undefined)).toBe(true);
    // Paused instead (the sync removed dueStart): the same.
    await putContest(contestItem(start));
    let paused = false;
    const again = await handler(undefined, async (operation) => {
      if (paused || operation !== 'BatchGetItem') return;
      paused = true;
      await putContest(contestItem(start, null));
    })({}, context());
    expect(again).toMatchObject({ outcome: 'succeeded', counts: { delivered: 0, lost: 5 } });
    expect(await scan(outboxOf(tables))).toEqual([]);
    // The contest due at the start again: the next run sends them, once each.
    await putContest(contestItem(start));
    expect(await handler()({}, context())).toMatchObject({ outcome: 'succeeded', counts: { delivered: 5 } });
    expect(await scan(outboxOf(tables))).toHaveLength(5);
  });

  it('a reminder sent for intent i1, then set again (i2, same start), is sent again once under a new id; duplicates send nothing twice', async () => {
    const start = await seed(0);
    const row = (intent: string) => ({
      ...reminderKey(cf(2051), 'ana'),
      contestId: cf(2051),
      minutesBefore: 60,
      remindAt: start - 3600,
      dueAt: start - 3600,
      dueShard: 0,
      dueStart: start,
      intent,
    });
    await tables.doc.send(new PutCommand({ TableName: tables.names.reminders, Item: row('i1-aaaaaaaaaaaaaaaaaaaa') }));
    expect(await handler()(minute(), context())).toMatchObject({ outcome: 'succeeded', counts: { delivered: 1 } });
    const first = reminderDueId(cf(2051), 'ana', 'i1-aaaaaaaaaaaaaaaaaaaa', start);
    expect((await scan(outboxOf(tables))).map((item) => item.eventId)).toEqual([first]);
    expect(first).not.toBe(legacyId(2051, 'ana', start));

    // The user cancels and sets it again (the write path stamps a new intent and resets the bookkeeping).
    await tables.doc.send(new PutCommand({ TableName: tables.names.reminders, Item: row('i2-bbbbbbbbbbbbbbbbbbbb') }));
    // Three runs at once (console runs: the minute's tick is done), then another: one sends it.
    const handlers = Array.from({ length: 3 }, () => handler());
    const runs = await Promise.all(handlers.map((h) => h({}, context()).catch((error: { summary?: unknown }) => error.summary)));
    const delivered = runs.map((r) => Number((r as { counts?: { delivered?: number } }).counts?.delivered ?? 0));
    expect(delivered.reduce((sum, n) => sum + n, 0)).toBe(1);
    expect(await handlers[0]!({}, context())).toMatchObject({ outcome: 'succeeded', idle: true });
    const second = reminderDueId(cf(2051), 'ana', 'i2-bbbbbbbbbbbbbbbbbbbb', start);
    expect((await scan(outboxOf(tables))).map((item) => item.eventId).sort()).toEqual([first, second].sort());
    expect(await tables.doc.send(new GetCommand({ TableName: tables.names.reminders, Key: reminderKey(cf(2051), 'ana') }))).toMatchObject({
      Item: { intent: 'i2-bbbbbbbbbbbbbbbbbbbb', notifiedStart: start },
    });
  });

  it('the claim is conditional on the intent as read: a row set again between the read and the claim is not sent under the old id', async () => {
    const start = await seed(0);
    const row = (intent: string) => ({
      ...reminderKey(cf(2051), 'bo'),
      contestId: cf(2051),
      minutesBefore: 60,
      remindAt: start - 3600,
      dueAt: start - 3600,
      dueShard: 0,
      dueStart: start,
      intent,
    });
    await tables.doc.send(new PutCommand({ TableName: tables.names.reminders, Item: row('first-intent') }));
    let reset = false;
    // After the Query answered with intent "first-intent", the app sets the reminder again (same lead, same start).
    const raced = await handler(undefined, async (operation, input) => {
      if (reset || operation !== 'Query' || input.IndexName !== 'byDue' || input.ExpressionAttributeValues?.[':shard'] !== 0) return;
      reset = true;
      await tables.doc.send(new PutCommand({ TableName: tables.names.reminders, Item: row('second-intent') }));
    })(minute(), context());
    expect(reset).toBe(true);
    expect(raced).toMatchObject({ outcome: 'succeeded', counts: { delivered: 0, lost: 1 } });
    expect(await scan(outboxOf(tables))).toEqual([]);
    expect(await handler()({}, context())).toMatchObject({ outcome: 'succeeded', counts: { delivered: 1 } });
    expect((await scan(outboxOf(tables))).map((item) => item.eventId)).toEqual([reminderDueId(cf(2051), 'bo', 'second-intent', start)]);
  });

  it('an idle minute sends one Query and takes no lease; every call is allowed by the synthesized policy, which grants only what is used', async () => {
    const calls: Call[] = [];
    const h = handler(calls);
    expect(await h(minute(), context())).toMatchObject({ outcome: 'succeeded', idle: true, counts: { queries: 1 } });
    // The job reads its own partition only: the sync moves rows out of partitions a lowered setting retired.
    expect(calls).toEqual([{ action: 'dynamodb:Query', table: tables.names.reminders, index: 'byDue' }]);
    await seed(60);
    faults.loseNextReleaseAnswer = true; // the release lands, its answer is lost: the read-back (GetItem) decides
    expect(await h({}, context())).toMatchObject({ outcome: 'succeeded', counts: { delivered: 60, transactions: 2 } });
    expect(calls.some((call) => call.action === 'dynamodb:GetItem')).toBe(true);

    const template = synthesizedTemplate() as { Resources: Record<string, { Type: string; Properties: any }> };
    const fn = findDeliveryFunction(template, 0).resource as { Properties: any };
    const roleId = fn.Properties.Role['Fn::GetAtt'][0] as string;
    const statements = Object.values(template.Resources)
      .filter((r) => r.Type === 'AWS::IAM::Policy' && (r.Properties.Roles as { Ref: string }[]).some((role) => role.Ref === roleId))
      .flatMap(
        (r) =>
          r.Properties.PolicyDocument.Statement as {
            Action: string | string[];
            Resource: unknown;
            Condition?: Record<string, Record<string, string[]>>;
          }[],
      )
      .filter((s) => [s.Action].flat().some((a) => a.startsWith('dynamodb:')));
    const definitions = tableDefinitionsFromTemplate(template);
    const logicalIdOfName = new Map(definitions.map((d) => [(tables.names as Record<string, string>)[d.role], d.logicalId]));
    const resourceOf = (call: Call) => {
      const id = logicalIdOfName.get(call.table)!;
      return call.index === undefined
        ? JSON.stringify({ 'Fn::GetAtt': [id, 'Arn'] })
        : JSON.stringify({ 'Fn::Join': ['', [{ 'Fn::GetAtt': [id, 'Arn'] }, `/index/${call.index}`]] });
    };
    const allows = (call: Call) =>
      statements.some((s) => {
        if (![s.Action].flat().includes(call.action) || ![s.Resource].flat().some((r) => JSON.stringify(r) === resourceOf(call)))
          return false;
        const leading = s.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'];
        return (
          leading === undefined ||
          (call.key !== undefined &&
            leading.some((p) => new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`).test(call.key!)))
        );
      });
    const refused = calls.filter((call) => !allows(call));
    expect(refused, JSON.stringify(refused.slice(0, 3))).toEqual([]);
    const used = new Set(calls.map((call) => `${call.action} ${resourceOf(call)}`));
    const granted = new Set(
      statements.flatMap((s) => [s.Action].flat().flatMap((a) => [s.Resource].flat().map((r) => `${a} ${JSON.stringify(r)}`))),
    );
    expect([...used].sort()).toEqual([...granted].sort());
  });
});
