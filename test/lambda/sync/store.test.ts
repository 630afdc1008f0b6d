/**
 * The contest store: the write actions a sync's judgement becomes (their order is the act step's:
 * test/lambda/sync/act.test.ts), and read errors reported as StoreError (the `store` phase
 * wherever they happen).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { failurePhase } from '../../../lambda/sync/phases.js';
import { DynamoContestStore, StoreError } from '../../../lambda/sync/store.js';

const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const mock = mockClient(doc);
const store = new DynamoContestStore(doc, { contests: 'contests', reminders: 'reminders' });

beforeEach(() => mock.reset());

describe('DynamoContestStore', () => {
  it('turns the judgement into actions: a contest put or deleted whole, the reply clock, a conditional reminder update (never a delete)', () => {
    expect(store.contestAction({ put: { contestId: 3 } as never, events: [] })).toEqual({
      Put: { TableName: 'contests', Item: { contestId: 3 } },
    });
    expect(store.contestAction({ delete: 4 })).toEqual({ Delete: { TableName: 'contests', Key: { contestId: 4 } } });
    expect(store.clockAction({ replyMadeAt: 1_900_000_000, withdrawn: {} }, '2026-11-29T14:00:00.000Z')).toEqual({
      Put: { TableName: 'contests', Item: { contestId: 0, replyMadeAt: 1_900_000_000, updatedAt: '2026-11-29T14:00:00.000Z' } },
    });
    const update = store.reminderAction({ contestId: 1, userId: 'u', minutesBefore: 5, set: { paused: 'vanished' }, remove: ['dueAt'] });
    expect(update.Update).toMatchObject({
      TableName: 'reminders',
      Key: { contestId: 1, userId: 'u' },
      UpdateExpression: 'SET #paused = :paused REMOVE #dueAt',
      ConditionExpression:
        'attribute_exists(userId) AND minutesBefore = :mb AND attribute_not_exists(intent) AND attribute_not_exists(notifiedStart)',
    });
    const actions = [store.contestAction({ put: { contestId: 3 } as never, events: [] }), store.contestAction({ delete: 4 }), update];
    expect(store.contestsIn(actions)).toEqual({ contestsPut: [3], contestsDeleted: [4] });
  });

  it("retries a read that meets throttling or a 500 past the SDK's own attempts, then reads", async () => {
    const throttled = new DynamoContestStore(doc, { contests: 'contests', reminders: 'reminders' }, { sleep: async () => undefined });
    mock
      .on(ScanCommand)
      .rejectsOnce(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } }))
      .rejectsOnce(Object.assign(new Error('Internal error'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } }))
      .resolves({ Items: [{ contestId: 1 }] });
    expect(await throttled.scanContests()).toEqual([{ contestId: 1 }]);
    expect(mock.commandCalls(ScanCommand)).toHaveLength(3);
  });

  it.each([
    ['a scan', () => store.scanContests(), ScanCommand, /could not scan the contests: AccessDeniedException/],
    ['a reminder query', () => store.remindersOf(7), QueryCommand, /could not read the reminders of contest 7: AccessDeniedException/],
  ] as const)('reports %s that fails as a StoreError: phase store', async (_name, read, command, message) => {
    mock.on(command).rejects(Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' }));
    const failure = await read().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StoreError);
    expect(String(failure)).toMatch(message);
    expect(failurePhase(failure)).toBe('store');
  });
});
