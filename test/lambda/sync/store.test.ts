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
import { REMINDER_BUCKETS, contestKeyOf, contestKeys } from '../../../lambda/reminders/table.js';
import { cf } from '../../support/ids.js';

const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const mock = mockClient(doc);
const store = new DynamoContestStore(doc, { contests: 'contests', reminders: 'reminders' });

beforeEach(() => mock.reset());

describe('DynamoContestStore', () => {
  it('turns the judgement into actions: a contest put or deleted whole, the reply clock, a conditional reminder update (never a delete)', () => {
    expect(store.contestActions({ put: { contestId: cf(3) } as never, events: [] })).toEqual([
      { Put: { TableName: 'contests', Item: { contestId: cf(3) } } },
    ]);
    expect(store.contestActions({ delete: cf(4) })).toEqual([{ Delete: { TableName: 'contests', Key: { contestId: cf(4) } } }]);
    expect(
      store.clockAction('codeforces', { replyMadeAt: 1_900_000_000, withdrawn: {}, shards: { dueShards: 2 } }, '2026-11-29T14:00:00.000Z'),
    ).toEqual({
      Put: {
        TableName: 'contests',
        Item: { contestId: 'clock#codeforces', replyMadeAt: 1_900_000_000, updatedAt: '2026-11-29T14:00:00.000Z', dueShards: 2 },
      },
    });
    const update = store.reminderAction({
      contestId: cf(1),
      contestKey: contestKeyOf(cf(1), 'u'),
      userId: 'u',
      minutesBefore: 5,
      set: { paused: 'vanished' },
      remove: ['dueAt'],
    });
    expect(update.Update).toMatchObject({
      TableName: 'reminders',
      Key: { contestKey: contestKeyOf(cf(1), 'u'), userId: 'u' },
      UpdateExpression: 'SET #paused = :paused REMOVE #dueAt',
      ConditionExpression:
        'attribute_exists(userId) AND minutesBefore = :mb AND attribute_not_exists(intent) AND attribute_not_exists(notifiedStart)',
    });
    const actions = [
      ...store.contestActions({
        put: { contestId: cf(3), dueStart: 1_900_003_600, expiresAt: 1_901_000_000 } as never,
        events: [],
        gateChanged: true,
      }),
      ...store.contestActions({ delete: cf(4), gateChanged: true }),
      update,
    ];
    expect(store.contestsIn(actions)).toEqual({ contestsPut: [cf(3)], contestsDeleted: [cf(4)] });
  });

  it("writes a contest's bucket gates with it when its gate changes: each bucket's put with the dueStart, or deleted without one", () => {
    const put = { contestId: cf(3), dueStart: 1_900_003_600, expiresAt: 1_901_000_000 } as never;
    const moved = store.contestActions({ put, events: [], gateChanged: true });
    expect(moved).toHaveLength(1 + REMINDER_BUCKETS);
    expect(moved[0]).toEqual({ Put: { TableName: 'contests', Item: put } });
    expect(moved.slice(1).map((a) => a.Put?.Item)).toEqual(
      contestKeys(cf(3)).map((key) => ({ contestId: `gate#${key}`, dueStart: 1_900_003_600, expiresAt: 1_901_000_000 })),
    );
    const paused = store.contestActions({ put: { contestId: cf(3), expiresAt: 1_901_000_000 } as never, events: [], gateChanged: true });
    expect(paused.slice(1).map((a) => a.Delete)).toEqual(
      contestKeys(cf(3)).map((key) => ({ TableName: 'contests', Key: { contestId: `gate#${key}` } })),
    );
    const deleted = store.contestActions({ delete: cf(4), gateChanged: true });
    expect(deleted.slice(1).map((a) => a.Delete?.Key)).toEqual(contestKeys(cf(4)).map((key) => ({ contestId: `gate#${key}` })));
    // A write that leaves the gate as it was leaves the gates alone.
    expect(store.contestActions({ put, events: [] })).toHaveLength(1);
  });

  it("retries a read that meets throttling or a 500 past the SDK's own attempts, then reads", async () => {
    const throttled = new DynamoContestStore(doc, { contests: 'contests', reminders: 'reminders' }, { sleep: async () => undefined });
    mock
      .on(ScanCommand)
      .rejectsOnce(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } }))
      .rejectsOnce(Object.assign(new Error('Internal error'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } }))
      .resolves({ Items: [{ contestId: 1 }] });
    expect(await throttled.scanContests('codeforces')).toEqual([{ contestId: 1 }]);
    expect(mock.commandCalls(ScanCommand)).toHaveLength(3);
  });

  it.each([
    ['a scan', () => store.scanContests('codeforces'), ScanCommand, /could not scan the contests: AccessDeniedException/],
    [
      'a reminder query',
      () => store.remindersOf(cf(7)),
      QueryCommand,
      /could not read the reminders of contest codeforces:7: AccessDeniedException/,
    ],
    ['a sweep', () => store.retiredRows(3, 'codeforces'), QueryCommand, /could not read byDue partition 3: AccessDeniedException/],
  ] as const)('reports %s that fails as a StoreError: phase store', async (_name, read, command, message) => {
    mock.on(command).rejects(Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' }));
    const failure = await read().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StoreError);
    expect(String(failure)).toMatch(message);
    expect(failurePhase(failure)).toBe('store');
  });

  it("scans one platform's contests and its reply clock, strongly consistent", async () => {
    mock.on(ScanCommand).resolves({ Items: [] });
    await store.scanContests('atcoder');
    expect(mock.commandCalls(ScanCommand)[0]!.args[0].input).toMatchObject({
      ConsistentRead: true,
      FilterExpression: 'platform = :platform OR contestId = :clock',
      ExpressionAttributeValues: { ':platform': 'atcoder', ':clock': 'clock#atcoder' },
    });
  });

  it("reads a contest's reminders with one strongly consistent Query per bucket key, each to its last page", async () => {
    mock.on(QueryCommand).callsFake((input: { ExpressionAttributeValues: { ':key': string }; ExclusiveStartKey?: unknown }) => {
      const key = input.ExpressionAttributeValues[':key'];
      // Bucket 03 has two pages.
      if (key.endsWith('#03') && input.ExclusiveStartKey === undefined)
        return { Items: [{ contestKey: key, userId: 'p1' }], LastEvaluatedKey: { contestKey: key, userId: 'p1' } };
      return { Items: [{ contestKey: key, userId: `last-${key.slice(-2)}` }] };
    });
    const rows = await store.remindersOf(cf(7));
    const queries = mock.commandCalls(QueryCommand).map((call) => call.args[0].input);
    expect(queries).toHaveLength(17);
    expect(queries.every((q) => q.ConsistentRead === true && q.KeyConditionExpression === 'contestKey = :key')).toBe(true);
    expect(new Set(queries.map((q) => q.ExpressionAttributeValues?.[':key']))).toEqual(new Set(contestKeys(cf(7))));
    expect(rows).toHaveLength(17);
  });

  it("sweeps a retired byDue partition for its own platform's rows, every page, keys only", async () => {
    mock
      .on(QueryCommand)
      .resolvesOnce({ Items: [{ contestKey: 'codeforces:7#01', userId: 'a', dueShard: 3 }], LastEvaluatedKey: { x: 1 } })
      .resolves({ Items: [{ contestKey: 'codeforces:7#09', userId: 'b', dueShard: 3 }, { userId: 'no key' }] });
    expect(await store.retiredRows(3, 'codeforces')).toEqual([
      { contestKey: 'codeforces:7#01', userId: 'a', dueShard: 3 },
      { contestKey: 'codeforces:7#09', userId: 'b', dueShard: 3 },
    ]);
    expect(mock.commandCalls(QueryCommand)[0]!.args[0].input).toMatchObject({
      IndexName: 'byDue',
      KeyConditionExpression: 'dueShard = :shard',
      FilterExpression: 'begins_with(contestId, :platform)',
      ExpressionAttributeValues: { ':shard': 3, ':platform': 'codeforces:' },
    });
  });
});
