/**
 * Fenced writes and their error paths that no real engine produces on demand: transaction
 * conflicts, throttling, a refused lease check, a refused condition of a data action.
 * aws-sdk-client-mock stands in for DynamoDB here; the happy paths run against DynamoDB Local in
 * test/integration. The actions are the contest store's, as the real job sends them.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { FencedWriteError, LeaseLostError } from '../../../packages/scheduled-singleton/src/runtime/errors.js';
import { DynamoFencedWriter, type FencedWriterOptions } from '../../../packages/scheduled-singleton/src/runtime/fenced-writer.js';
import type { TransactAction, Turn } from '../../../packages/scheduled-singleton/src/runtime/ports.js';
import { DynamoContestStore, type StoreChanges } from '../../../lambda/store/dynamo-store.js';

const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const mock = mockClient(doc);
const tables = { contests: 'contests', reminders: 'reminders' };
const contestStore = new DynamoContestStore(doc, tables);
/** The writer with the contest store's actions: `apply(changes, fence, signal)`. */
function writerFor(options: Partial<FencedWriterOptions> = {}) {
  const writer = new DynamoFencedWriter(doc, { now: Date.now, ...options });
  return {
    apply: (c: StoreChanges, fence: (last: boolean) => TransactAction, signal?: AbortSignal) =>
      writer.commit(contestStore.actionsFor(c, '2026-11-29T14:00:00.000Z'), fence, signal),
  };
}
const fence = (): TransactAction => ({
  ConditionCheck: {
    TableName: 'coordination',
    Key: { pk: 'lease#contest-sync' },
    ConditionExpression: 'holder = :runId AND fence = :fence AND expiresAtMs > :now',
    ExpressionAttributeValues: { ':runId': 'run-1', ':fence': 3, ':now': 1 },
  },
});

function contest(contestId: number) {
  return {
    contestId,
    platform: 'codeforces' as const,
    name: `Round ${contestId}`,
    type: 'CF',
    phase: 'BEFORE',
    startTimeSeconds: 1_900_000_000,
    durationSeconds: 7200,
    url: `https://codeforces.com/contest/${contestId}`,
    updatedAt: '2026-11-29T14:00:00.000Z',
    expiresAt: 1_900_612_000,
  };
}

function changes(overrides: Partial<StoreChanges> = {}): StoreChanges {
  return { reminderUpdates: [], contestPuts: [], contestDeletes: [], ...overrides };
}

function cancelled(...codes: string[]) {
  return new TransactionCanceledException({
    message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${codes.join(', ')}]`,
    $metadata: {},
    CancellationReasons: codes.map((Code) => ({ Code })),
  });
}

beforeEach(() => mock.reset());

describe('DynamoFencedWriter.commit', () => {
  it('runs each transaction, its contention retries included, in one turn, its lease action built there', async () => {
    mock.on(TransactWriteCommand).rejectsOnce(cancelled('None', 'TransactionConflict')).resolves({});
    const writer = new DynamoFencedWriter(doc, { now: Date.now, sleep: async () => undefined, random: () => 0 });
    let inTurn = false;
    const turns: number[] = [];
    const turn: Turn = async (transaction) => {
      turns.push(mock.commandCalls(TransactWriteCommand).length);
      inTurn = true;
      try {
        return await transaction();
      } finally {
        inTurn = false;
      }
    };
    const builtInTurn: boolean[] = [];
    const actions = Array.from({ length: 150 }, (_, i) => ({ Put: { TableName: 'data', Item: { pk: `item-${i}` } } }));
    const fenceInTurn = () => {
      builtInTurn.push(inTurn);
      return fence();
    };
    expect(await writer.commit(actions, fenceInTurn, undefined, [], turn)).toEqual({ transactions: 2 });
    // Two transactions, one turn each: the first was sent twice (a conflict, retried) in its one turn.
    expect(turns).toEqual([0, 2]);
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(3);
    expect(builtInTurn).toEqual([true, true, true]);
  });

  it('sends at most 99 writes per transaction, each led by the lease check, reminders before contests', async () => {
    mock.on(TransactWriteCommand).resolves({});
    const store = writerFor();
    const counts = await store.apply(
      changes({
        reminderUpdates: [
          { contestId: 1, userId: 'u', minutesBefore: 5, set: { paused: 'vanished' }, remove: ['dueAt', 'dueShard', 'dueStart'] },
        ],
        contestPuts: Array.from({ length: 200 }, (_, i) => contest(i + 1)),
        contestDeletes: [999],
      }),
      fence,
    );
    const calls = mock.commandCalls(TransactWriteCommand);
    expect(calls.map((call) => call.args[0].input.TransactItems?.length)).toEqual([100, 100, 5]);
    for (const call of calls) expect(call.args[0].input.TransactItems?.[0]).toHaveProperty('ConditionCheck');
    expect(calls[0]?.args[0].input.TransactItems?.[1]).toHaveProperty('Update.TableName', 'reminders');
    expect(calls[2]?.args[0].input.TransactItems?.[4]).toEqual({ Delete: { TableName: 'contests', Key: { contestId: 999 } } });
    expect(counts).toEqual({ transactions: 3 });
  });

  it('writes nothing and sends nothing when there is nothing to change', async () => {
    const store = writerFor();
    expect((await store.apply(changes(), fence)).transactions).toBe(0);
    expect(mock.calls()).toHaveLength(0);
  });

  it('retries a transaction that conflicted with a concurrent heartbeat on the lease item', async () => {
    mock.on(TransactWriteCommand).rejectsOnce(cancelled('TransactionConflict', 'None')).resolves({});
    const store = writerFor();
    await store.apply(changes({ contestPuts: [contest(1)] }), fence);
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(2);
  });

  it.each([
    ['TransactionConflictException', 400],
    ['ProvisionedThroughputExceededException', 400],
    ['InternalServerError', 500],
  ])('retries a transaction answered %s, with a fresh lease check and injected backoff', async (name, status) => {
    mock
      .on(TransactWriteCommand)
      .rejectsOnce(Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } }))
      .resolves({});
    const waits: number[] = [];
    const store = writerFor({ sleep: async (ms) => void waits.push(ms), random: () => 0.5 });
    let checks = 0;
    await store.apply(changes({ contestPuts: [contest(1)] }), () => {
      checks += 1;
      return fence();
    });
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(2);
    expect(checks).toBe(2);
    expect(waits).toEqual([50]);
  });

  it("tells the fence which transaction is the run's last (where the interval is marked done)", async () => {
    mock.on(TransactWriteCommand).resolves({});
    const lasts: boolean[] = [];
    await writerFor().apply(changes({ contestPuts: Array.from({ length: 150 }, (_, i) => contest(i + 1)) }), (last) => {
      lasts.push(last);
      return fence();
    });
    expect(lasts).toEqual([false, true]);
  });

  it('gives up on persistent throttling with a FencedWriteError that names the reasons', async () => {
    mock.on(TransactWriteCommand).rejects(cancelled('None', 'ThrottlingError'));
    const store = writerFor({ sleep: async () => undefined });
    const failure = store.apply(changes({ contestPuts: [contest(1)] }), fence);
    await expect(failure).rejects.toThrow(FencedWriteError);
    await expect(failure).rejects.toThrow(/\[None, ThrottlingError\]/);
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(5);
  });

  it('turns a refused lease check into LeaseLostError and stops writing', async () => {
    mock.on(TransactWriteCommand).rejects(cancelled('ConditionalCheckFailed', 'None'));
    const store = writerFor();
    const failure = store.apply(changes({ contestPuts: Array.from({ length: 150 }, (_, i) => contest(i + 1)) }), fence);
    await expect(failure).rejects.toBeInstanceOf(LeaseLostError);
    await expect(failure).rejects.toMatchObject({ runId: 'run-1', fence: 3 });
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(1); // the second chunk is never sent
  });

  it('names the write whose own condition was refused (a reminder the app changed meanwhile)', async () => {
    mock.on(TransactWriteCommand).rejects(cancelled('None', 'ConditionalCheckFailed'));
    const store = writerFor();
    const move = { contestId: 7, userId: 'alice', minutesBefore: 30, set: { remindAt: 100 }, remove: [] };
    await expect(store.apply(changes({ reminderUpdates: [move] }), fence)).rejects.toThrow(
      /refused by its condition \(Update reminders \{"contestId":7,"userId":"alice"\}\)/,
    );
  });

  it('carries every data action refused by its own condition, as sent, so that a job can drop them and retry the rest', async () => {
    mock.on(TransactWriteCommand).rejects(cancelled('None', 'ConditionalCheckFailed', 'None', 'ConditionalCheckFailed'));
    const claims: TransactAction[] = ['alice', 'bob', 'carol'].map((userId) => ({
      Update: {
        TableName: 'reminders',
        Key: { contestId: 7, userId },
        UpdateExpression: 'REMOVE dueAt',
        ConditionExpression: 'attribute_exists(dueAt)',
      },
    }));
    const writer = new DynamoFencedWriter(doc, { now: Date.now });
    const failure = await writer.commit(claims, fence).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(FencedWriteError);
    expect((failure as FencedWriteError).refused).toEqual([claims[0], claims[2]]);
    expect((failure as FencedWriteError).refused[0]).toBe(claims[0]);
    expect((failure as Error).message).toMatch(/and 1 more/);
  });

  it('refuses nothing by name when the failure was not a condition', async () => {
    mock.on(TransactWriteCommand).rejects(cancelled('None', 'ValidationError'));
    const failure = await writerFor()
      .apply(changes({ contestPuts: [contest(1)] }), fence)
      .catch((error: unknown) => error);
    expect((failure as FencedWriteError).refused).toEqual([]);
  });

  it('does not send once the run was aborted', async () => {
    const store = writerFor();
    const controller = new AbortController();
    controller.abort(new LeaseLostError('lease lost: taken over', 'run-1', 3));
    await expect(store.apply(changes({ contestPuts: [contest(1)] }), fence, controller.signal)).rejects.toBeInstanceOf(LeaseLostError);
    expect(mock.calls()).toHaveLength(0);
  });

  it("updates reminders under a condition that keeps app edits and deletions and a notifier's send", async () => {
    mock.on(TransactWriteCommand).resolves({});
    const store = writerFor();
    await store.apply(
      changes({
        reminderUpdates: [
          {
            contestId: 7,
            userId: 'alice',
            minutesBefore: 30,
            set: { remindAt: 100, dueAt: 100, dueShard: 0, dueStart: 1900 },
            remove: ['paused'],
          },
          {
            contestId: 7,
            userId: 'bob',
            minutesBefore: 10,
            notifiedStart: 1800,
            set: { paused: 'notified' },
            remove: ['dueAt', 'dueShard', 'dueStart'],
          },
        ],
      }),
      fence,
    );
    const items = mock.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems;
    expect(items?.[1]).toEqual({
      Update: {
        TableName: 'reminders',
        Key: { contestId: 7, userId: 'alice' },
        UpdateExpression: 'SET #remindAt = :remindAt, #dueAt = :dueAt, #dueShard = :dueShard, #dueStart = :dueStart REMOVE #paused',
        ConditionExpression: 'attribute_exists(userId) AND minutesBefore = :mb AND attribute_not_exists(notifiedStart)',
        ExpressionAttributeNames: {
          '#remindAt': 'remindAt',
          '#dueAt': 'dueAt',
          '#dueShard': 'dueShard',
          '#dueStart': 'dueStart',
          '#paused': 'paused',
        },
        ExpressionAttributeValues: { ':remindAt': 100, ':dueAt': 100, ':dueShard': 0, ':dueStart': 1900, ':mb': 30 },
      },
    });
    expect(items?.[2]?.Update).toMatchObject({
      UpdateExpression: 'SET #paused = :paused REMOVE #dueAt, #dueShard, #dueStart',
      ConditionExpression: 'attribute_exists(userId) AND minutesBefore = :mb AND notifiedStart = :ns',
      ExpressionAttributeValues: { ':paused': 'notified', ':mb': 10, ':ns': 1800 },
    });
  });
});
