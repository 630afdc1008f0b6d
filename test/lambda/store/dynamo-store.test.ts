/**
 * The contest store: the order of the write actions a sync's changes become, and read errors
 * reported as StoreError (the `store` phase wherever they happen). The fenced commit of these
 * actions is tested in reminder-moves.test.ts.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { failurePhase } from '../../../lambda/phases.js';
import { DynamoContestStore, StoreError } from '../../../lambda/store/dynamo-store.js';

const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const mock = mockClient(doc);
const store = new DynamoContestStore(doc, { contests: 'contests', reminders: 'reminders' });

beforeEach(() => mock.reset());

describe('DynamoContestStore', () => {
  it('orders actions so that a run stopped half-way is redone: reminders first, then contests written, then deleted, then the reply clock', () => {
    const actions = store.actionsFor(
      {
        reminderUpdates: [{ contestId: 2, userId: 'v', minutesBefore: 5, set: { remindAt: 10 }, remove: [] }],
        contestPuts: [{ contestId: 3 } as never],
        contestDeletes: [4],
        replyMadeAt: 1_900_000_000,
      },
      '2026-11-29T14:00:00.000Z',
    );
    expect(actions.map((a) => Object.keys(a)[0])).toEqual(['Update', 'Put', 'Delete', 'Put']);
    expect(actions[2]).toEqual({ Delete: { TableName: 'contests', Key: { contestId: 4 } } });
    expect(actions[3]).toEqual({
      Put: { TableName: 'contests', Item: { contestId: 0, replyMadeAt: 1_900_000_000, updatedAt: '2026-11-29T14:00:00.000Z' } },
    });
    expect(store.contestsIn(actions.slice(0, 3))).toEqual({ contestsPut: [3], contestsDeleted: [4] });
  });

  it('never deletes a reminder, and records the reply clock alone too', () => {
    expect(store.actionsFor({ reminderUpdates: [], contestPuts: [], contestDeletes: [], replyMadeAt: 5 }, 'x')).toEqual([
      { Put: { TableName: 'contests', Item: { contestId: 0, replyMadeAt: 5, updatedAt: 'x' } } },
    ]);
    const actions = store.actionsFor(
      {
        reminderUpdates: [{ contestId: 1, userId: 'u', minutesBefore: 5, set: { paused: 'vanished' }, remove: ['dueAt'] }],
        contestPuts: [],
        contestDeletes: [1],
      },
      'x',
    );
    expect(actions.filter((a) => a.Delete?.TableName === 'reminders')).toEqual([]);
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
