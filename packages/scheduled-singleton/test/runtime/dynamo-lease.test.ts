/** Lease error paths that DynamoDB Local does not produce on demand (dynamo-lease.local.test.ts has the rest). */
import { beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  TransactionCanceledException,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { DynamoLease, LeaseUnavailableError, leaseTiming, slotOf } from '@contest-sync/scheduled-singleton';
import { encodeTokens, slotToken } from '../../src/runtime/ledger.js';

const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const mock = mockClient(doc);
const waits: number[] = [];
const lease = new DynamoLease({
  doc,
  table: 'coordination',
  key: 'lease#contest-sync',
  timing: leaseTiming(10),
  now: () => 5_000,
  sleep: async (ms) => {
    waits.push(ms);
  },
  random: () => 0.5,
});
const awsError = (name: string, message = name, status = 400) =>
  Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status } });
const held = { runId: 'run-1', fence: 3, expiresAtMs: 15_000, ledger: new Set<number>(), handoff: new Set<string>() };
/** The same lease at a time when the intervals of these cases are recent. */
const NOW = Date.parse('2026-11-29T14:05:00Z');
const recent = new DynamoLease({ doc, table: 'coordination', key: 'lease#contest-sync', timing: leaseTiming(10), now: () => NOW });
const heldNow = { ...held, expiresAtMs: NOW + 10_000, ledger: new Set([slotOf('2026-11-29T13:00:00Z')]) };

beforeEach(() => {
  mock.reset();
  waits.length = 0;
});

describe('DynamoLease', () => {
  it('reports a DynamoDB it cannot use (not contention) as LeaseUnavailableError, not as a held lease', async () => {
    mock.on(UpdateItemCommand).rejects(awsError('AccessDeniedException', 'not authorized to perform: dynamodb:UpdateItem'));
    const failure = lease.acquire('run-1', 'schedule', '2026-11-29T14:00:00Z');
    await expect(failure).rejects.toBeInstanceOf(LeaseUnavailableError);
    await expect(failure).rejects.toThrow(/could not acquire the lease: AccessDeniedException: not authorized/);
    expect(mock.commandCalls(UpdateItemCommand)).toHaveLength(1);
  });

  it.each([
    ['TransactionConflictException', 400],
    ['TransactionInProgressException', 400],
    ['ProvisionedThroughputExceededException', 400],
    ['ThrottlingException', 400],
    ['InternalServerError', 500],
    ['ServiceUnavailable', 503],
  ])('retries %s on acquire with jittered backoff, then acquires', async (name, status) => {
    mock
      .on(UpdateItemCommand)
      .rejectsOnce(awsError(name, name, status))
      .rejectsOnce(awsError(name, name, status))
      .resolves({ Attributes: marshall({ pk: 'lease#contest-sync', fence: 4, holder: 'run-1' }) });
    const result = await lease.acquire('run-1', 'schedule', '2026-11-29T14:00:00Z');
    expect(result).toMatchObject({ acquired: true, lease: { fence: 4 } });
    expect(mock.commandCalls(UpdateItemCommand)).toHaveLength(3);
    expect(waits).toEqual([50, 100]); // full jitter (random 0.5) of 100 ms, 200 ms
  });

  it('a contender whose contention outlasts the budget skips as lease-held (holder unknown), never throws', async () => {
    mock.on(UpdateItemCommand).rejects(awsError('TransactionConflictException', 'Transaction is ongoing for the item'));
    const result = await lease.acquire('run-2', 'schedule', '2026-11-29T14:00:00Z');
    expect(result).toMatchObject({
      acquired: false,
      reason: 'lease-held',
      holder: 'unknown',
      contention: expect.stringMatching(/within 4 attempts \(last: TransactionConflictException\)/),
    });
    expect(mock.commandCalls(UpdateItemCommand)).toHaveLength(4);
    expect(waits).toHaveLength(3);
    expect(Math.max(...waits)).toBeLessThanOrEqual(400);
  });

  it("an acquire retried after a conflict whose first attempt had landed is this run's acquisition", async () => {
    const old = { pk: { S: 'lease#contest-sync' }, holder: { S: 'run-1' }, fence: { N: '6' }, expiresAtMs: { N: '15000' } };
    mock
      .on(UpdateItemCommand)
      .rejectsOnce(awsError('InternalServerError', 'Internal server error', 500))
      .rejectsOnce(new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {}, Item: old }));
    expect(await lease.acquire('run-1', 'schedule', undefined)).toMatchObject({ acquired: true, lease: { fence: 6, expiresAtMs: 15_000 } });
  });

  it('retries a conflicting renewal and keeps the lease', async () => {
    mock.on(UpdateItemCommand).rejectsOnce(awsError('TransactionConflictException')).resolves({});
    const renewed = await lease.renew(held);
    expect(renewed).toMatchObject({ fence: 3, expiresAtMs: 15_000 });
    expect(mock.commandCalls(UpdateItemCommand)).toHaveLength(2);
  });

  it('retries a release cancelled for a transaction conflict', async () => {
    mock
      .on(TransactWriteItemsCommand)
      .rejectsOnce(
        new TransactionCanceledException({
          message: 'cancelled',
          $metadata: {},
          CancellationReasons: [{ Code: 'TransactionConflict' }, { Code: 'None' }],
        }),
      )
      .resolves({});
    expect(await lease.release(held, { runRecord: { pk: 'run#x' } })).toBe(true);
    expect(mock.commandCalls(TransactWriteItemsCommand)).toHaveLength(2);
  });

  it('fences with a ConditionCheck, or an Update that marks the interval done (the compact ledger) and records contests to re-check', () => {
    expect(recent.fenceCheck(heldNow)).toHaveProperty('ConditionCheck');
    const action = recent.fenceCheck(heldNow, { doneInterval: '2026-11-29T14:00:00Z', handoff: ['7', '9'] });
    expect(action.Update).toMatchObject({
      ConditionExpression: 'holder = :runId AND fence = :fence AND expiresAtMs > :now',
      UpdateExpression: 'SET #done = :done, doneAtMs = :now REMOVE ledger ADD handoff :handoff',
      ExpressionAttributeNames: { '#done': 'done' },
      ExpressionAttributeValues: {
        ':done': encodeTokens([slotOf('2026-11-29T13:00:00Z'), slotOf('2026-11-29T14:00:00Z')]),
        ':now': NOW,
        ':handoff': new Set(['7', '9']),
      },
    });
  });

  it('acquires in one UpdateItem that tests both ledger forms for an interval in its window, and neither for an older one', async () => {
    mock.on(UpdateItemCommand).resolves({ Attributes: marshall({ pk: 'lease#contest-sync', fence: 4, holder: 'run-1' }) });
    await recent.acquire('run-1', 'schedule', '2026-11-29T14:00:00Z');
    await recent.acquire('run-2', 'console', '2026-11-28T14:00:00Z');
    const [inWindow, older] = mock.commandCalls(UpdateItemCommand).map((call) => call.args[0].input);
    expect(inWindow).toMatchObject({
      ConditionExpression:
        '(attribute_not_exists(holder) OR expiresAtMs <= :now) AND NOT contains(ledger, :slot) AND (doneAtMs < :stale OR NOT contains(#done, :token))',
      ExpressionAttributeValues: marshall({
        ':slot': slotOf('2026-11-29T14:00:00Z'),
        ':token': slotToken(slotOf('2026-11-29T14:00:00Z')),
        ':stale': NOW - 420 * 60_000,
      }),
      ReturnValues: 'ALL_NEW',
    });
    expect(older?.ConditionExpression).toBe('(attribute_not_exists(holder) OR expiresAtMs <= :now)');
    expect(older?.ExpressionAttributeValues).toMatchObject(marshall({ ':interval': '2026-11-28T14:00:00Z' }));
  });

  it('lets an unknown renew outcome surface as is (the heartbeat retries it)', async () => {
    mock.on(UpdateItemCommand).rejects(Object.assign(new Error('socket hang up'), { name: 'TimeoutError' }));
    await expect(lease.renew(held)).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  it('releases with the run record in one transaction, conditional on holder and fence', async () => {
    mock.on(TransactWriteItemsCommand).resolves({});
    expect(await recent.release(heldNow, { doneInterval: '2026-11-29T14:00:00Z', runRecord: { pk: 'run#2026-11-29T14:00:00Z' } })).toBe(
      true,
    );
    const items = mock.commandCalls(TransactWriteItemsCommand)[0]?.args[0].input.TransactItems;
    expect(items?.[0]?.Update).toMatchObject({
      ConditionExpression: 'holder = :runId AND fence = :fence',
      UpdateExpression: 'SET expiresAtMs = :now, releasedAtMs = :now, #done = :done, doneAtMs = :now REMOVE holder, ledger',
    });
    expect(items?.[1]?.Put).toMatchObject({ TableName: 'coordination', Item: marshall({ pk: 'run#2026-11-29T14:00:00Z' }) });
  });

  it('answers false, not an error, when the release finds the lease taken over', async () => {
    mock.on(TransactWriteItemsCommand).rejects(
      new TransactionCanceledException({
        message: 'cancelled',
        $metadata: {},
        CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'None' }],
      }),
    );
    expect(await lease.release(held, { runRecord: { pk: 'run#x' } })).toBe(false);
  });
});
