/**
 * The write path's I/O on a mocked DynamoDB (aws-sdk-client-mock): the requests it sends (strongly
 * consistent reads, one transaction with the contest's ConditionCheck and the row's conditioned
 * Put, a Delete, the byUser Query with a start key rebuilt from the caller's user id), and its
 * bounded retries: a refused condition is read again at once, contention waits, anything else is
 * rethrown, and a spent budget is a typed conflict. (DynamoDB Local rarely shows contention; the
 * behaviour on a real table is in test/integration/reminders.test.ts.)
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { createReminderClient, randomIntent, type ReminderDeps } from '../../../lambda/reminders/client.js';
import { encodeCursor } from '../../../lambda/reminders/input.js';
import { InvalidInputError, ReminderConflictError } from '../../../lambda/reminders/errors.js';
import { contestKeyOf } from '../../../lambda/reminders/table.js';

const CF = (id: number) => `codeforces:${id}`;

const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const mock = mockClient(doc);
const tables = { contests: 'Contests', reminders: 'Reminders' };
const START = 1_900_000_000;
const NOW_MS = (START - 86_400) * 1000;
const contest = {
  contestId: CF(2051),
  platform: 'codeforces',
  phase: 'BEFORE',
  startTimeSeconds: START,
  expiresAt: START + 86_400,
  dueStart: START,
};

let sleeps: number[];
let intents: number;
const client = (overrides: Partial<ReminderDeps> = {}) =>
  createReminderClient({
    dynamo: doc,
    tables,
    now: () => NOW_MS,
    newIntent: () => `intent-${++intents}`,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
    ...overrides,
  });
const cancelled = (...codes: string[]) =>
  new TransactionCanceledException({
    message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${codes.join(', ')}]`,
    $metadata: {},
    CancellationReasons: codes.map((Code) => ({ Code })),
  });
const awsError = (name: string, status = 400) => Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });

beforeEach(() => {
  mock.reset();
  sleeps = [];
  intents = 0;
  mock.on(GetCommand, { TableName: tables.contests }).resolves({ Item: contest });
  mock.on(GetCommand, { TableName: tables.reminders }).resolves({});
});

describe('setReminder', () => {
  it('reads both items strongly consistent, then commits the ConditionCheck on the contest as read and the Put conditioned on no row', async () => {
    mock.on(TransactWriteCommand).resolves({});
    const result = await client().setReminder({ contestId: CF(2051), userId: 'alice', minutesBefore: 30 });
    expect(result).toEqual({
      changed: true,
      reminder: { contestId: CF(2051), minutesBefore: 30, remindAt: START - 1800, state: 'scheduled' },
    });
    const reads = mock.commandCalls(GetCommand).map((call) => call.args[0].input);
    expect(reads.map((read) => [read.TableName, read.ConsistentRead])).toEqual([
      ['Contests', true],
      ['Reminders', true],
    ]);
    expect(reads[0]!.Key).toEqual({ contestId: CF(2051) });
    expect(reads[1]!.Key).toEqual({ contestKey: contestKeyOf(CF(2051), 'alice'), userId: 'alice' });
    const [transaction] = mock.commandCalls(TransactWriteCommand).map((call) => call.args[0].input);
    expect(transaction).toEqual({
      TransactItems: [
        {
          ConditionCheck: {
            TableName: 'Contests',
            Key: { contestId: CF(2051) },
            ConditionExpression:
              '#start = :start AND #expires = :expires AND #phase = :phase AND attribute_not_exists(#vanished) AND #dueStart = :dueStart AND attribute_not_exists(#paused)',
            ExpressionAttributeNames: {
              '#start': 'startTimeSeconds',
              '#expires': 'expiresAt',
              '#phase': 'phase',
              '#vanished': 'vanishedAt',
              '#dueStart': 'dueStart',
              '#paused': 'remindersPaused',
            },
            ExpressionAttributeValues: { ':start': START, ':expires': START + 86_400, ':phase': 'BEFORE', ':dueStart': START },
          },
        },
        {
          Put: {
            TableName: 'Reminders',
            Item: {
              contestKey: contestKeyOf(CF(2051), 'alice'),
              contestId: CF(2051),
              userId: 'alice',
              minutesBefore: 30,
              intent: 'intent-1',
              remindAt: START - 1800,
              expiresAt: START + 86_400,
              dueAt: START - 1800,
              dueStart: START,
              dueShard: 0,
            },
            ConditionExpression: 'attribute_not_exists(#userId)',
            ExpressionAttributeNames: { '#userId': 'userId' },
          },
        },
      ],
    } satisfies TransactWriteCommandInput);
  });

  it('conditions a change on the intent read, and a paused contest on its pause', async () => {
    mock.on(GetCommand, { TableName: tables.contests }).resolves({ Item: { ...contest, dueStart: undefined, remindersPaused: 'held' } });
    mock.on(GetCommand, { TableName: tables.reminders }).resolves({
      Item: { contestId: CF(2051), userId: 'alice', minutesBefore: 60, intent: 'old', remindAt: START - 3600, paused: 'held' },
    });
    mock.on(TransactWriteCommand).resolves({});
    expect((await client().setReminder({ contestId: CF(2051), userId: 'alice', minutesBefore: 30 })).reminder.state).toBe('paused');
    const [transaction] = mock.commandCalls(TransactWriteCommand).map((call) => call.args[0].input);
    expect(transaction!.TransactItems![0]!.ConditionCheck!.ConditionExpression).toContain(
      'attribute_not_exists(#dueStart) AND #paused = :paused',
    );
    expect(transaction!.TransactItems![0]!.ConditionCheck!.ExpressionAttributeValues).toMatchObject({ ':paused': 'held' });
    expect(transaction!.TransactItems![1]!.Put).toMatchObject({
      Item: { intent: 'intent-1', paused: 'held' },
      ConditionExpression: '#intent = :readIntent',
      ExpressionAttributeValues: { ':readIntent': 'old' },
    });
  });

  it('sends no write when the same intent is stored', async () => {
    mock.on(GetCommand, { TableName: tables.reminders }).resolves({
      Item: { contestId: CF(2051), userId: 'alice', minutesBefore: 30, intent: 'old', remindAt: START - 1800, dueAt: START - 1800 },
    });
    expect(await client().setReminder({ contestId: CF(2051), userId: 'alice', minutesBefore: 30 })).toMatchObject({ changed: false });
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(0);
  });

  it('a refused condition: reads again at once and decides again, with the one intent of the call', async () => {
    mock.on(TransactWriteCommand).rejectsOnce(cancelled('ConditionalCheckFailed', 'None')).resolves({});
    mock
      .on(GetCommand, { TableName: tables.contests })
      .resolvesOnce({ Item: contest })
      .resolves({ Item: { ...contest, startTimeSeconds: START + 3600, dueStart: START + 3600 } });
    const result = await client().setReminder({ contestId: CF(2051), userId: 'alice', minutesBefore: 30 });
    expect(result.reminder.remindAt).toBe(START + 3600 - 1800);
    expect(mock.commandCalls(GetCommand)).toHaveLength(4);
    const puts = mock.commandCalls(TransactWriteCommand).map((call) => call.args[0].input.TransactItems![1]!.Put!.Item);
    expect(puts.map((item) => [item!.intent, item!.dueAt])).toEqual([
      ['intent-1', START - 1800],
      ['intent-1', START + 3600 - 1800],
    ]);
    expect(intents).toBe(1);
    expect(sleeps).toEqual([]);
  });

  it('an earlier attempt that landed (the row read back carries the call’s intent) is reported as changed', async () => {
    mock.on(TransactWriteCommand).rejects(cancelled('None', 'TransactionConflict'));
    mock
      .on(GetCommand, { TableName: tables.reminders })
      .resolvesOnce({})
      .resolves({
        Item: { contestId: CF(2051), userId: 'alice', minutesBefore: 30, intent: 'intent-1', remindAt: START - 1800, dueAt: 1 },
      });
    expect(await client().setReminder({ contestId: CF(2051), userId: 'alice', minutesBefore: 30 })).toMatchObject({ changed: true });
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });

  it('contention (a transaction conflict, throttling, a 5xx) waits with jitter and tries again, within the budget', async () => {
    mock
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled('None', 'TransactionConflict'))
      .rejectsOnce(awsError('ThrottlingException'))
      .rejectsOnce(awsError('InternalServerError', 500))
      .resolves({});
    expect((await client().setReminder({ contestId: CF(2051), userId: 'alice', minutesBefore: 30 })).changed).toBe(true);
    expect(sleeps).toEqual([50, 100, 200]);
  });

  it('gives up after the budget with a typed conflict naming why, the last error as cause', async () => {
    mock.on(TransactWriteCommand).rejects(cancelled('None', 'TransactionConflict'));
    const contended = await client()
      .setReminder({ contestId: CF(2051), userId: 'alice', minutesBefore: 30 })
      .catch((error: unknown) => error);
    expect(contended).toBeInstanceOf(ReminderConflictError);
    expect(contended).toMatchObject({ code: 'conflict', attempts: 5 });
    expect((contended as Error).message).toContain('TransactionConflict');
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(5);
    expect(sleeps).toHaveLength(4);

    mock.on(TransactWriteCommand).rejects(cancelled('ConditionalCheckFailed', 'None'));
    const moving = await client({ retry: { attempts: 3, baseMs: 10, capMs: 10 } })
      .setReminder({ contestId: CF(2051), userId: 'alice', minutesBefore: 30 })
      .catch((error: unknown) => error);
    expect(moving).toMatchObject({ code: 'conflict', attempts: 3, reason: 'the contest or the reminder changed meanwhile' });
    expect((moving as Error).cause).toBeInstanceOf(TransactionCanceledException);
  });

  it('rethrows what is neither a refused condition nor contention, at once', async () => {
    mock.on(TransactWriteCommand).rejects(awsError('ValidationException'));
    await expect(client().setReminder({ contestId: CF(2051), userId: 'alice', minutesBefore: 30 })).rejects.toMatchObject({
      name: 'ValidationException',
    });
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });

  it('refuses bad input before any request', async () => {
    await expect(client().setReminder({ contestId: CF(2051), userId: '', minutesBefore: 30 })).rejects.toBeInstanceOf(InvalidInputError);
    expect(mock.calls()).toHaveLength(0);
  });

  it('stamps a 128-bit base64url intent by default, a new one per call', async () => {
    mock.on(TransactWriteCommand).resolves({});
    await client({ newIntent: undefined }).setReminder({ contestId: CF(2051), userId: 'alice', minutesBefore: 30 });
    await client({ newIntent: undefined }).setReminder({ contestId: CF(2051), userId: 'bob', minutesBefore: 30 });
    const stamped = mock
      .commandCalls(TransactWriteCommand)
      .map((call) => call.args[0].input.TransactItems![1]!.Put!.Item!.intent as string);
    for (const intent of stamped) {
      expect(intent).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(Buffer.from(intent, 'base64url')).toHaveLength(16);
    }
    expect(new Set(stamped).size).toBe(2);
    expect(randomIntent()).not.toBe(randomIntent());
  });
});

describe('cancelReminder', () => {
  it('deletes the row and says whether there was one; retries contention', async () => {
    mock
      .on(DeleteCommand)
      .rejectsOnce(awsError('TransactionConflictException'))
      .resolvesOnce({ Attributes: { contestId: CF(2051) } })
      .resolves({});
    expect(await client().cancelReminder({ contestId: CF(2051), userId: 'alice' })).toEqual({ cancelled: true });
    expect(await client().cancelReminder({ contestId: CF(2051), userId: 'alice' })).toEqual({ cancelled: false });
    expect(mock.commandCalls(DeleteCommand).map((call) => call.args[0].input)[0]).toEqual({
      TableName: 'Reminders',
      Key: { contestKey: contestKeyOf(CF(2051), 'alice'), userId: 'alice' },
      ReturnValues: 'ALL_OLD',
    });
    expect(sleeps).toHaveLength(1);
  });
});

describe('listReminders', () => {
  it('queries byUser on the caller’s partition, rebuilds the start key from the cursor, leaves out expired rows', async () => {
    mock.on(QueryCommand).resolves({
      Items: [
        { contestId: CF(2051), userId: 'alice', minutesBefore: 30, remindAt: START - 1800, dueAt: START - 1800, expiresAt: START + 86_400 },
        { contestId: CF(2052), userId: 'alice', minutesBefore: 30, remindAt: START - 1800, expiresAt: NOW_MS / 1000 - 1 },
        { contestId: CF(2053), userId: 'alice', minutesBefore: 'x' },
      ],
      LastEvaluatedKey: { userId: 'alice', contestId: CF(2053), contestKey: contestKeyOf(CF(2053), 'alice') },
    });
    const page = await client().listReminders({ userId: 'alice', limit: 3, cursor: encodeCursor('alice', CF(2050)) });
    expect(page.reminders.map((r) => r.contestId)).toEqual([CF(2051)]);
    expect(page.cursor).toBe(encodeCursor('alice', CF(2053)));
    expect(mock.commandCalls(QueryCommand)[0]!.args[0].input).toEqual({
      TableName: 'Reminders',
      IndexName: 'byUser',
      KeyConditionExpression: 'userId = :userId',
      ExpressionAttributeValues: { ':userId': 'alice' },
      Limit: 3,
      // The index's start key: its own keys and the table's, the bucket key rebuilt from the caller's user id.
      ExclusiveStartKey: { userId: 'alice', contestId: CF(2050), contestKey: contestKeyOf(CF(2050), 'alice') },
    });
    mock.on(QueryCommand).resolves({ Items: [] });
    expect(await client().listReminders({ userId: 'alice' })).toEqual({ reminders: [] });
    expect(mock.commandCalls(QueryCommand)[1]!.args[0].input.Limit).toBe(50);
  });

  it('refuses another user’s cursor before any request', async () => {
    await expect(client().listReminders({ userId: 'bob', cursor: encodeCursor('alice', CF(2050)) })).rejects.toMatchObject({
      code: 'invalid-input',
      fields: ['cursor'],
    });
    expect(mock.calls()).toHaveLength(0);
  });
});
