/**
 * The contest store's reminder moves as the fenced writer sends them: each under a condition that
 * keeps the app's edits and deletions and a notifier's send (moved here from the package's
 * fenced-writer test, which now commits generic actions: these conditions are the product's).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoFencedWriter, type TransactAction } from '@contest-sync/scheduled-singleton';
import type { ReminderUpdate } from '../../../lambda/contests/reminders.js';
import { DynamoContestStore } from '../../../lambda/sync/store.js';
import { contestKeyOf } from '../../../lambda/reminders/table.js';
import { cf } from '../../support/ids.js';

const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const mock = mockClient(doc);
const contestStore = new DynamoContestStore(doc, { contests: 'contests', reminders: 'reminders' });
const writer = new DynamoFencedWriter(doc, { now: Date.now });
/** The store's reminder moves, committed by the package's writer. */
const store = {
  apply: (updates: readonly ReminderUpdate[], fence: (last: boolean) => TransactAction) =>
    writer.commit(
      updates.map((update) => contestStore.reminderAction(update)),
      fence,
    ),
};
const fence = (): TransactAction => ({
  ConditionCheck: {
    TableName: 'coordination',
    Key: { pk: 'lease#contest-sync' },
    ConditionExpression: 'holder = :runId AND fence = :fence AND expiresAtMs > :now',
    ExpressionAttributeValues: { ':runId': 'run-1', ':fence': 3, ':now': 1 },
  },
});
beforeEach(() => mock.reset());

describe('the contest store through the fenced writer', () => {
  it("updates reminders under a condition that keeps app edits and deletions and a notifier's send", async () => {
    mock.on(TransactWriteCommand).resolves({});
    await store.apply(
      [
        {
          contestId: cf(7),
          contestKey: contestKeyOf(cf(7), 'alice'),
          userId: 'alice',
          minutesBefore: 30,
          set: { remindAt: 100, dueAt: 100, dueShard: 0, dueStart: 1900 },
          remove: ['paused'],
        },
        {
          contestId: cf(7),
          contestKey: contestKeyOf(cf(7), 'bob'),
          userId: 'bob',
          minutesBefore: 10,
          notifiedStart: 1800,
          set: { paused: 'notified' },
          remove: ['dueAt', 'dueShard', 'dueStart'],
        },
      ],
      fence,
    );
    const items = mock.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems;
    expect(items?.[1]).toEqual({
      Update: {
        TableName: 'reminders',
        Key: { contestKey: contestKeyOf(cf(7), 'alice'), userId: 'alice' },
        UpdateExpression: 'SET #remindAt = :remindAt, #dueAt = :dueAt, #dueShard = :dueShard, #dueStart = :dueStart REMOVE #paused',
        ConditionExpression:
          'attribute_exists(userId) AND minutesBefore = :mb AND attribute_not_exists(intent) AND attribute_not_exists(notifiedStart)',
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
      ConditionExpression: 'attribute_exists(userId) AND minutesBefore = :mb AND attribute_not_exists(intent) AND notifiedStart = :ns',
      ExpressionAttributeValues: { ':paused': 'notified', ':mb': 10, ':ns': 1800 },
    });
  });
});
