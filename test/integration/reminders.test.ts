/**
 * The reminder write path (lambda/reminders/) on DynamoDB Local, tables from the synthesized
 * template: what a set, a cancel and a list do to the Reminders table and the byUser index, with
 * the contest items written by hand (with and without `dueStart`, as the sync writes them). A set
 * racing the sync's contest write (the contest written between the read and the transaction, by a
 * hook on the client) is decided again on the new contest, never written against the old one; two
 * concurrent sets of one user and contest (both read before either writes, by a barrier on the
 * client) end with one row and one intent; a duplicated set is written once.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { localDynamoClient } from '../../local/dynamodb-local.js';
import {
  ContestNotFoundError,
  ContestStartedError,
  InvalidInputError,
  createReminderClient,
  type ReminderDeps,
} from '../../lambda/reminders/index.js';
import { putContest as putSyncedContest, scanAll } from '../support/contests.js';
import { cf, type TestId } from '../support/ids.js';
import { contestKeyOf, dueShardOf, reminderKey } from '../../lambda/reminders/table.js';
import { createTestTables, type TestTables } from '../support/tables.js';

let tables: TestTables;
beforeEach(async () => {
  tables = await createTestTables('reminders');
});

const NOW_S = Math.floor(Date.now() / 1000);
const START = NOW_S + 2 * 86_400;
const EXPIRES = START + 7200 + 7 * 86_400;

/** A contest item as the sync writes it; `dueStart` only while its reminders may fire. */
const contestItem = (id: TestId, overrides: Record<string, unknown> = {}) => ({
  contestId: cf(id),
  platform: 'codeforces',
  platformId: String(id),
  name: `Codeforces Round ${id}`,
  type: 'CF',
  phase: 'BEFORE',
  startTimeSeconds: START,
  durationSeconds: 7200,
  url: `https://codeforces.com/contest/${id}`,
  updatedAt: new Date().toISOString(),
  expiresAt: EXPIRES,
  confirmedStart: START,
  dueStart: START,
  ...overrides,
});
/** A contest as the sync writes it, with its bucket gates. */
const putContest = (item: Record<string, unknown>) => putSyncedContest(tables, item);
const getRow = async (id: TestId, userId: string) =>
  (await tables.doc.send(new GetCommand({ TableName: tables.names.reminders, Key: reminderKey(cf(id), userId), ConsistentRead: true })))
    .Item;

type Hook = (operation: string, input: Record<string, any>) => Promise<void>;

/** A write path on its own client, with every DynamoDB operation recorded and an optional hook run before each. */
function writePath(options: { hook?: Hook; deps?: Partial<ReminderDeps> } = {}) {
  const client = localDynamoClient(tables.endpoint);
  const operations: string[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const operation = String(context.commandName).replace(/Command$/, '');
      operations.push(operation);
      await options.hook?.(operation, args.input as Record<string, any>);
      return next(args);
    },
    { step: 'initialize', name: 'recordAndHook' },
  );
  const dynamo = DynamoDBDocumentClient.from(client);
  const reminders = createReminderClient({
    dynamo,
    tables: { contests: tables.names.contests, reminders: tables.names.reminders },
    sleep: async () => undefined,
    ...options.deps,
  });
  return { ...reminders, operations, writes: () => operations.filter((op) => op === 'TransactWriteItems' || op === 'DeleteItem') };
}

describe('setReminder', () => {
  it('writes the row due at dueStart − lead on its byDue shard, with an intent; the same lead time again writes nothing', async () => {
    await putContest(contestItem(2051));
    const app = writePath({ deps: { dueShards: 4 } });
    const first = await app.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 30 });
    expect(first).toEqual({
      changed: true,
      reminder: { contestId: cf(2051), minutesBefore: 30, remindAt: START - 1800, state: 'scheduled' },
    });
    const row = await getRow(2051, 'alice');
    expect(row).toEqual({
      contestKey: contestKeyOf(cf(2051), 'alice'),
      contestId: cf(2051),
      userId: 'alice',
      minutesBefore: 30,
      intent: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
      remindAt: START - 1800,
      expiresAt: EXPIRES,
      dueAt: START - 1800,
      dueStart: START,
      dueShard: dueShardOf('alice', 4),
    });
    const due = await tables.doc.send(
      new QueryCommand({
        TableName: tables.names.reminders,
        IndexName: 'byDue',
        KeyConditionExpression: 'dueShard = :s AND dueAt <= :t',
        ExpressionAttributeValues: { ':s': dueShardOf('alice', 4), ':t': START },
      }),
    );
    expect(due.Items?.map((item) => item.userId)).toEqual(['alice']);

    const writesBefore = app.writes().length;
    const again = await app.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 30 });
    expect(again).toEqual({ ...first, changed: false });
    expect(app.writes()).toHaveLength(writesBefore); // not a single write
    expect(await getRow(2051, 'alice')).toEqual(row);
  });

  it('a new lead time after the reminder was sent: a new intent, re-timed, due again, the sent bookkeeping gone', async () => {
    await putContest(contestItem(2051));
    const app = writePath();
    await app.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 60 });
    const { intent: firstIntent } = (await getRow(2051, 'alice'))!;
    // Delivery's claim: sent for START (and once before for an older start the sync kept in sentStarts).
    await tables.doc.send(
      new UpdateCommand({
        TableName: tables.names.reminders,
        Key: reminderKey(cf(2051), 'alice'),
        UpdateExpression: 'SET notifiedAt = :at, notifiedStart = :start, paused = :n, sentStarts = :sent REMOVE dueAt, dueShard, dueStart',
        ExpressionAttributeValues: { ':at': START - 3600, ':start': START, ':n': 'notified', ':sent': new Set([START - 86_400]) },
      }),
    );
    const app2 = writePath();
    expect((await app2.listReminders({ userId: 'alice' })).reminders).toEqual([
      { contestId: cf(2051), minutesBefore: 60, remindAt: START - 3600, state: 'sent', sentStart: START },
    ]);
    // Sent: the same lead time is still the same intent.
    expect((await app2.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 60 })).changed).toBe(false);
    expect(app2.writes()).toHaveLength(0);

    const changed = await app2.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 15 });
    expect(changed).toMatchObject({ changed: true, reminder: { minutesBefore: 15, remindAt: START - 900, state: 'scheduled' } });
    const row = (await getRow(2051, 'alice'))!;
    expect(row).toEqual({
      contestKey: contestKeyOf(cf(2051), 'alice'),
      contestId: cf(2051),
      userId: 'alice',
      minutesBefore: 15,
      intent: expect.any(String),
      remindAt: START - 900,
      expiresAt: EXPIRES,
      dueAt: START - 900,
      dueStart: START,
      dueShard: 0,
    });
    expect(row.intent).not.toBe(firstIntent);
  });

  it('set, cancel, set: the row is deleted, then written anew with a new intent; cancelling nothing is not an error', async () => {
    await putContest(contestItem(2051));
    const app = writePath();
    await app.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 30 });
    const first = (await getRow(2051, 'alice'))!.intent;
    expect(await app.cancelReminder({ contestId: cf(2051), userId: 'alice' })).toEqual({ cancelled: true });
    expect(await getRow(2051, 'alice')).toBeUndefined();
    expect(await app.cancelReminder({ contestId: cf(2051), userId: 'alice' })).toEqual({ cancelled: false });
    expect(await app.cancelReminder({ contestId: cf(9999), userId: 'nobody' })).toEqual({ cancelled: false });
    expect((await app.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 30 })).changed).toBe(true);
    const second = (await getRow(2051, 'alice'))!;
    expect(second).toMatchObject({ minutesBefore: 30, dueAt: START - 1800 });
    expect(second.intent).not.toBe(first);
  });

  it('a contest whose reminders may not fire (no dueStart): written without dueAt, paused as the contest says, not on byDue', async () => {
    await putContest(contestItem(2051, { dueStart: undefined, remindersPaused: 'held' }));
    await putContest(contestItem(2052, { dueStart: undefined })); // written before dueStart existed
    const app = writePath();
    expect((await app.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 30 })).reminder.state).toBe('paused');
    expect((await app.setReminder({ contestId: cf(2052), userId: 'alice', minutesBefore: 30 })).reminder.state).toBe('paused');
    const rows = await scanAll(tables.doc, tables.names.reminders);
    expect(rows.map(({ contestId, paused, dueAt }) => ({ contestId, paused, dueAt }))).toEqual([
      { contestId: cf(2051), paused: 'held', dueAt: undefined },
      { contestId: cf(2052), paused: undefined, dueAt: undefined },
    ]);
    const due = await tables.doc.send(
      new QueryCommand({
        TableName: tables.names.reminders,
        IndexName: 'byDue',
        KeyConditionExpression: 'dueShard = :s',
        ExpressionAttributeValues: { ':s': 0 },
      }),
    );
    expect(due.Items).toEqual([]);
  });

  it('refuses a contest that is missing, vanished or started, and bad input, writing nothing', async () => {
    await putContest(contestItem(2051, { vanishedAt: NOW_S - 60, dueStart: undefined, remindersPaused: 'vanished' }));
    await putContest(contestItem(2052, { startTimeSeconds: NOW_S - 60, phase: 'CODING', dueStart: NOW_S - 60 }));
    await putContest(contestItem(2053, { startTimeSeconds: NOW_S - 60 })); // start passed, phase not yet updated by a sync
    const app = writePath();
    const attempt = (id: number) => app.setReminder({ contestId: cf(id), userId: 'alice', minutesBefore: 30 }).catch((e: unknown) => e);
    expect(await attempt(4040)).toBeInstanceOf(ContestNotFoundError);
    expect(await attempt(2051)).toBeInstanceOf(ContestNotFoundError);
    expect(await attempt(2052)).toBeInstanceOf(ContestStartedError);
    expect(await attempt(2053)).toMatchObject({ code: 'contest-started' });
    expect(await app.setReminder({ contestId: cf(2051), userId: 'a\u0000', minutesBefore: 30 }).catch((e: unknown) => e)).toBeInstanceOf(
      InvalidInputError,
    );
    expect(app.writes()).toEqual([]);
    expect(await scanAll(tables.doc, tables.names.reminders)).toEqual([]);
  });

  it('a row written before intents existed counts as an intent: the same lead time writes nothing, a new one stamps an intent', async () => {
    await putContest(contestItem(2051));
    const legacy = {
      ...reminderKey(cf(2051), 'alice'),
      contestId: cf(2051),
      minutesBefore: 30,
      remindAt: START - 1800,
      dueAt: START - 1800,
      dueShard: 0,
      dueStart: START,
    };
    await tables.doc.send(new PutCommand({ TableName: tables.names.reminders, Item: legacy }));
    const app = writePath();
    expect((await app.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 30 })).changed).toBe(false);
    expect(await getRow(2051, 'alice')).toEqual(legacy);
    expect((await app.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 45 })).changed).toBe(true);
    expect(await getRow(2051, 'alice')).toMatchObject({ minutesBefore: 45, intent: expect.any(String), dueAt: START - 2700 });
  });
});

describe('setReminder racing other writers', () => {
  /** A hook that runs `write` once, just before the first transaction goes out (after the set's reads). */
  const beforeFirstTransaction = (write: () => Promise<unknown>): Hook => {
    let done = false;
    return async (operation) => {
      if (operation !== 'TransactWriteItems' || done) return;
      done = true;
      await write();
    };
  };

  it('the sync moves the contest between the read and the transaction: decided again on the new start, never written for the old one', async () => {
    await putContest(contestItem(2051));
    const app = writePath({
      hook: beforeFirstTransaction(() =>
        putContest(contestItem(2051, { startTimeSeconds: START + 3600, dueStart: START + 3600, confirmedStart: START + 3600 })),
      ),
    });
    const result = await app.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 30 });
    expect(result.reminder).toMatchObject({ remindAt: START + 3600 - 1800, state: 'scheduled' });
    expect(await getRow(2051, 'alice')).toMatchObject({ remindAt: START + 1800, dueAt: START + 1800, dueStart: START + 3600 });
    expect(app.operations).toEqual(['GetItem', 'GetItem', 'TransactWriteItems', 'GetItem', 'GetItem', 'TransactWriteItems']);
  });

  it('the sync pauses the contest between the read and the transaction: the row is written paused, not due', async () => {
    await putContest(contestItem(2051));
    const app = writePath({
      hook: beforeFirstTransaction(() => putContest(contestItem(2051, { dueStart: undefined, remindersPaused: 'held' }))),
    });
    expect((await app.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 30 })).reminder.state).toBe('paused');
    const row = (await getRow(2051, 'alice'))!;
    expect(row.paused).toBe('held');
    expect(row).not.toHaveProperty('dueAt');
  });

  it('the sync ends the pause between the read and the transaction: the row is written due (the sync read the reminders before it existed)', async () => {
    await putContest(contestItem(2051, { dueStart: undefined, remindersPaused: 'held' }));
    const app = writePath({ hook: beforeFirstTransaction(() => putContest(contestItem(2051))) });
    expect((await app.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 30 })).reminder.state).toBe('scheduled');
    const row = (await getRow(2051, 'alice'))!;
    expect(row).toMatchObject({ dueAt: START - 1800, dueStart: START, dueShard: 0 });
    expect(row).not.toHaveProperty('paused');
    // A contest item written before dueStart existed, which the sync's first write after the upgrade gives one.
    await putContest(contestItem(2052, { dueStart: undefined }));
    const upgrade = writePath({ hook: beforeFirstTransaction(() => putContest(contestItem(2052))) });
    expect((await upgrade.setReminder({ contestId: cf(2052), userId: 'alice', minutesBefore: 30 })).reminder.state).toBe('scheduled');
    expect(await getRow(2052, 'alice')).toMatchObject({ dueAt: START - 1800, dueStart: START });
  });

  it('the sync changes only the pause reason between the read and the transaction: the row carries the new reason', async () => {
    await putContest(contestItem(2051, { dueStart: undefined, remindersPaused: 'held' }));
    const app = writePath({
      hook: beforeFirstTransaction(() => putContest(contestItem(2051, { dueStart: undefined, remindersPaused: 'started' }))),
    });
    await app.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 30 });
    expect((await getRow(2051, 'alice'))!.paused).toBe('started');
    expect(app.operations.filter((op) => op === 'TransactWriteItems')).toHaveLength(2);
  });

  it('the sync marks the contest vanished, or deletes it, between the read and the transaction: contest-not-found, nothing written', async () => {
    await putContest(contestItem(2051));
    await putContest(contestItem(2052));
    const vanish = writePath({
      hook: beforeFirstTransaction(() =>
        putContest(contestItem(2051, { dueStart: undefined, remindersPaused: 'vanished', vanishedAt: NOW_S })),
      ),
    });
    expect(await vanish.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 30 }).catch((e: unknown) => e)).toBeInstanceOf(
      ContestNotFoundError,
    );
    const deleted = writePath({
      hook: beforeFirstTransaction(() =>
        tables.doc.send(new DeleteCommand({ TableName: tables.names.contests, Key: { contestId: cf(2052) } })),
      ),
    });
    expect(await deleted.setReminder({ contestId: cf(2052), userId: 'alice', minutesBefore: 30 }).catch((e: unknown) => e)).toBeInstanceOf(
      ContestNotFoundError,
    );
    expect(await scanAll(tables.doc, tables.names.reminders)).toEqual([]);
  });

  it('a cancel between the read and the transaction: the change is written as a new row (never over a row it did not read)', async () => {
    await putContest(contestItem(2051));
    await writePath().setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 60 });
    const app = writePath({
      hook: beforeFirstTransaction(() =>
        tables.doc.send(new DeleteCommand({ TableName: tables.names.reminders, Key: reminderKey(cf(2051), 'alice') })),
      ),
    });
    expect((await app.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 30 })).changed).toBe(true);
    expect(app.operations.filter((op) => op === 'TransactWriteItems')).toHaveLength(2);
    expect(await getRow(2051, 'alice')).toMatchObject({ minutesBefore: 30 });
  });

  it('the budget spent while the contest keeps moving: a typed conflict, nothing written', async () => {
    await putContest(contestItem(2051));
    let moves = 0;
    const app = writePath({
      deps: { retry: { attempts: 3, baseMs: 1, capMs: 1 } },
      hook: async (operation) => {
        if (operation === 'TransactWriteItems')
          await putContest(contestItem(2051, { startTimeSeconds: START + 60 * ++moves, dueStart: START + 60 * moves }));
      },
    });
    expect(await app.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 30 }).catch((e: unknown) => e)).toMatchObject({
      code: 'conflict',
      attempts: 3,
    });
    expect(await getRow(2051, 'alice')).toBeUndefined();
  });
});

describe('concurrent sets of one user and contest', () => {
  /** A hook holding every first transaction until `parties` calls have reached theirs: all of them read before any writes. */
  function barrier(parties: number): () => Hook {
    let waiting = 0;
    let release!: () => void;
    const all = new Promise<void>((resolve) => (release = resolve));
    return () => {
      let first = true;
      return async (operation) => {
        if (operation !== 'TransactWriteItems' || !first) return;
        first = false;
        if (++waiting === parties) release();
        await all;
      };
    };
  }

  it('two different lead times: one wins, the other reads again and writes over it; one row, one intent, the last one', async () => {
    await putContest(contestItem(2051));
    const hookOf = barrier(2);
    const apps = [30, 45].map((minutes) => ({
      minutes,
      app: writePath({ hook: hookOf(), deps: { newIntent: () => `intent-${minutes}` } }),
    }));
    const results = await Promise.all(
      apps.map(({ minutes, app }) => app.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: minutes })),
    );
    expect(results.map((result) => result.changed)).toEqual([true, true]);
    // Both read no row; one Put landed, the other was refused, read the winner's row and wrote over it.
    expect(apps.map(({ app }) => app.writes().length).sort()).toEqual([1, 2]);
    const last = apps.find(({ app }) => app.writes().length === 2)!.minutes;
    expect(await scanAll(tables.doc, tables.names.reminders)).toEqual([
      {
        ...reminderKey(cf(2051), 'alice'),
        contestId: cf(2051),
        minutesBefore: last,
        intent: `intent-${last}`,
        remindAt: START - 60 * last,
        expiresAt: EXPIRES,
        dueAt: START - 60 * last,
        dueStart: START,
        dueShard: 0,
      },
    ]);
  });

  it('a duplicated set (the same request twice at once): written once, the duplicate changes nothing', async () => {
    await putContest(contestItem(2051));
    const hookOf = barrier(2);
    let n = 0;
    const calls = [0, 1].map(() => writePath({ hook: hookOf(), deps: { newIntent: () => `intent-${++n}` } }));
    const results = await Promise.all(calls.map((app) => app.setReminder({ contestId: cf(2051), userId: 'alice', minutesBefore: 30 })));
    expect(results.map((r) => r.changed).sort()).toEqual([false, true]);
    expect(results[0]!.reminder).toEqual(results[1]!.reminder);
    const winner = results.findIndex((r) => r.changed);
    expect(await getRow(2051, 'alice')).toMatchObject({ intent: `intent-${winner + 1}`, minutesBefore: 30 });
    // The loser's second attempt read the winner's row and sent no write.
    expect(calls[1 - winner]!.writes()).toEqual(['TransactWriteItems']);
  });

  it('many concurrent sets and cancels of one reminder end in a state one of them wrote whole', async () => {
    await putContest(contestItem(2051));
    const leads = [5, 10, 15, 20, 25, 30];
    const outcomes = await Promise.allSettled([
      ...leads.map((minutes) =>
        writePath({ deps: { newIntent: () => `intent-${minutes}` } }).setReminder({
          contestId: cf(2051),
          userId: 'alice',
          minutesBefore: minutes,
        }),
      ),
      writePath().cancelReminder({ contestId: cf(2051), userId: 'alice' }),
    ]);
    // Each call either landed or, its budget spent under contention, said so with a typed conflict.
    for (const outcome of outcomes) if (outcome.status === 'rejected') expect(outcome.reason).toMatchObject({ code: 'conflict' });
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled').length).toBeGreaterThan(0);
    const row = await getRow(2051, 'alice');
    if (row !== undefined)
      expect(row).toMatchObject({ intent: `intent-${row.minutesBefore}`, remindAt: START - 60 * (row.minutesBefore as number) });
  });
});

describe('two platforms whose ids collide as numbers', () => {
  it('keeps codeforces:199 and atcoder:199 apart: two contest items, two rows under their own keys, two listed reminders', async () => {
    await putContest(contestItem(199));
    await putContest(
      contestItem('atcoder:199', { platform: 'atcoder', platformId: '199', startTimeSeconds: START + 3600, dueStart: START + 3600 }),
    );
    const app = writePath();
    await app.setReminder({ contestId: cf(199), userId: 'alice', minutesBefore: 10 });
    await app.setReminder({ contestId: 'atcoder:199', userId: 'alice', minutesBefore: 20 });
    expect(await getRow(199, 'alice')).toMatchObject({ contestKey: contestKeyOf(cf(199), 'alice'), dueAt: START - 600 });
    expect(await getRow('atcoder:199', 'alice')).toMatchObject({
      contestKey: contestKeyOf('atcoder:199', 'alice'),
      dueAt: START + 3600 - 1200,
    });
    const listed = await app.listReminders({ userId: 'alice' });
    expect(listed.reminders.map((r) => [r.contestId, r.minutesBefore])).toEqual([
      ['atcoder:199', 20],
      [cf(199), 10],
    ]);
    await app.cancelReminder({ contestId: 'atcoder:199', userId: 'alice' });
    expect(await getRow('atcoder:199', 'alice')).toBeUndefined();
    expect(await getRow(199, 'alice')).toBeDefined();
  });
});

describe('listReminders', () => {
  it('pages a user’s reminders by contest id through an opaque cursor, never another user’s; refuses a cursor it did not give this user', async () => {
    const ids = [2051, 2052, 2053, 2054, 2055];
    for (const id of ids) await putContest(contestItem(id));
    const app = writePath();
    for (const id of ids) await app.setReminder({ contestId: cf(id), userId: 'alice', minutesBefore: 10 });
    await app.setReminder({ contestId: cf(2052), userId: 'bob', minutesBefore: 10 });
    await app.cancelReminder({ contestId: cf(2054), userId: 'alice' });

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await app.listReminders({ userId: 'alice', limit: 2, ...(cursor !== undefined ? { cursor } : {}) });
      expect(page.reminders.length).toBeLessThanOrEqual(2);
      seen.push(...page.reminders.map((r) => r.contestId));
      cursor = page.cursor;
      pages += 1;
    } while (cursor !== undefined && pages < 10);
    expect(seen).toEqual([2051, 2052, 2053, 2055].map(cf));
    expect((await app.listReminders({ userId: 'bob' })).reminders).toEqual([
      { contestId: cf(2052), minutesBefore: 10, remindAt: START - 600, state: 'scheduled' },
    ]);
    expect(await app.listReminders({ userId: 'carol' })).toEqual({ reminders: [] });

    const page = await app.listReminders({ userId: 'alice', limit: 1 });
    expect(page.cursor).toBeDefined();
    for (const bad of [
      { userId: 'bob', cursor: page.cursor },
      { userId: 'alice', cursor: `${page.cursor!.slice(0, -1)}A` },
    ]) {
      expect(await app.listReminders(bad).catch((e: unknown) => e)).toMatchObject({ code: 'invalid-input', fields: ['cursor'] });
    }
  });
});
