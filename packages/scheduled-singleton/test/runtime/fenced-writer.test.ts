/**
 * Fenced writes and their error paths that no real engine produces on demand: transaction
 * conflicts, throttling, a refused lease check, a refused condition of a data action.
 * aws-sdk-client-mock stands in for DynamoDB here; the happy paths run against DynamoDB Local in
 * dynamo-lease.local.test.ts and lease-contract.local.test.ts.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import {
  DynamoFencedWriter,
  FencedWriteError,
  LeaseLostError,
  type FencedWriterOptions,
  type TransactAction,
  type Turn,
} from '@contest-sync/scheduled-singleton';

const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const mock = mockClient(doc);
/** The writer: `apply(actions, fence, signal)`. */
function writerFor(options: Partial<FencedWriterOptions> = {}) {
  const writer = new DynamoFencedWriter(doc, { now: Date.now, ...options });
  return {
    apply: (actions: readonly TransactAction[], fence: (last: boolean) => TransactAction, signal?: AbortSignal) =>
      writer.commit(actions, fence, signal),
  };
}
const fence = (): TransactAction => ({
  ConditionCheck: {
    TableName: 'coordination',
    Key: { pk: 'lease#job' },
    ConditionExpression: 'holder = :runId AND fence = :fence AND expiresAtMs > :now',
    ExpressionAttributeValues: { ':runId': 'run-1', ':fence': 3, ':now': 1 },
  },
});

/** A whole-item put of the job's data (idempotent, as the writer expects). */
function put(id: number): TransactAction {
  return { Put: { TableName: 'items', Item: { pk: `item#${id}`, value: id } } };
}
const puts = (count: number) => Array.from({ length: count }, (_, i) => put(i + 1));

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

  it('sends at most 99 writes per transaction, each led by the lease check, in the order given', async () => {
    mock.on(TransactWriteCommand).resolves({});
    const update: TransactAction = {
      Update: { TableName: 'other', Key: { pk: 'u' }, UpdateExpression: 'SET paused = :p', ExpressionAttributeValues: { ':p': true } },
    };
    const remove: TransactAction = { Delete: { TableName: 'items', Key: { pk: 'item#999' } } };
    const counts = await writerFor().apply([update, ...puts(200), remove], fence);
    const calls = mock.commandCalls(TransactWriteCommand);
    expect(calls.map((call) => call.args[0].input.TransactItems?.length)).toEqual([100, 100, 5]);
    for (const call of calls) expect(call.args[0].input.TransactItems?.[0]).toHaveProperty('ConditionCheck');
    expect(calls[0]?.args[0].input.TransactItems?.[1]).toHaveProperty('Update.TableName', 'other');
    expect(calls[2]?.args[0].input.TransactItems?.[4]).toEqual(remove);
    expect(counts).toEqual({ transactions: 3 });
  });

  it('writes nothing and sends nothing when there is nothing to change', async () => {
    const store = writerFor();
    expect((await store.apply([], fence)).transactions).toBe(0);
    expect(mock.calls()).toHaveLength(0);
  });

  it('retries a transaction that conflicted with a concurrent heartbeat on the lease item', async () => {
    mock.on(TransactWriteCommand).rejectsOnce(cancelled('TransactionConflict', 'None')).resolves({});
    const store = writerFor();
    await store.apply([put(1)], fence);
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
    await store.apply([put(1)], () => {
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
    await writerFor().apply(puts(150), (last) => {
      lasts.push(last);
      return fence();
    });
    expect(lasts).toEqual([false, true]);
  });

  it('gives up on persistent throttling with a FencedWriteError that names the reasons', async () => {
    mock.on(TransactWriteCommand).rejects(cancelled('None', 'ThrottlingError'));
    const store = writerFor({ sleep: async () => undefined });
    const failure = store.apply([put(1)], fence);
    await expect(failure).rejects.toThrow(FencedWriteError);
    await expect(failure).rejects.toThrow(/\[None, ThrottlingError\]/);
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(5);
  });

  it('turns a refused lease check into LeaseLostError and stops writing', async () => {
    mock.on(TransactWriteCommand).rejects(cancelled('ConditionalCheckFailed', 'None'));
    const store = writerFor();
    const failure = store.apply(puts(150), fence);
    await expect(failure).rejects.toBeInstanceOf(LeaseLostError);
    await expect(failure).rejects.toMatchObject({ runId: 'run-1', fence: 3 });
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(1); // the second chunk is never sent
  });

  it('names the write whose own condition was refused (an item changed meanwhile)', async () => {
    mock.on(TransactWriteCommand).rejects(cancelled('None', 'ConditionalCheckFailed'));
    const move: TransactAction = {
      Update: {
        TableName: 'reminders',
        Key: { contestId: 7, userId: 'alice' },
        UpdateExpression: 'SET remindAt = :r',
        ConditionExpression: 'minutesBefore = :mb',
        ExpressionAttributeValues: { ':r': 100, ':mb': 30 },
      },
    };
    await expect(writerFor().apply([move], fence)).rejects.toThrow(
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
      .apply([put(1)], fence)
      .catch((error: unknown) => error);
    expect((failure as FencedWriteError).refused).toEqual([]);
  });

  it('does not send once the run was aborted', async () => {
    const store = writerFor();
    const controller = new AbortController();
    controller.abort(new LeaseLostError('lease lost: taken over', 'run-1', 3));
    await expect(store.apply([put(1)], fence, controller.signal)).rejects.toBeInstanceOf(LeaseLostError);
    expect(mock.calls()).toHaveLength(0);
  });
});
