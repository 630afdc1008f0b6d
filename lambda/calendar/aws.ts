/**
 * The calendar's AWS adapters: the FIFO feed queue (batches of ten, a fresh deduplication id per
 * message: every rebuild asked for is done) and the users of a contest (the Reminders table's
 * bucket keys of the contest, keys only). I/O only.
 */
import { randomUUID } from 'node:crypto';
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { QueueMessage } from './feeds.js';
import { contestKeys } from '../reminders/table.js';

const BATCH = 10;

export function sqsSender(sqs: SQSClient, queueUrl: string): (messages: QueueMessage[]) => Promise<void> {
  return async (messages) => {
    for (let at = 0; at < messages.length; at += BATCH) {
      const entries = messages.slice(at, at + BATCH).map((message, index) => ({
        Id: String(index),
        MessageBody: message.body,
        MessageGroupId: message.group,
        MessageDeduplicationId: randomUUID(),
      }));
      const answer = await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
      const failed = answer.Failed ?? [];
      if (failed.length > 0)
        throw new Error(`the feed queue refused ${failed.length} of ${entries.length} messages (${failed[0]!.Code ?? 'unknown'})`);
    }
  };
}

/**
 * The users with a reminder on a contest, a page (at most 1,000) at a time: one Query per bucket
 * key of the contest (lambda/reminders/table.ts), in turn.
 */
export function reminderUsers(doc: DynamoDBDocumentClient, remindersTable: string): (contestId: string) => AsyncIterable<string[]> {
  return async function* usersOf(contestId) {
    for (const key of contestKeys(contestId)) {
      let start: Record<string, unknown> | undefined;
      do {
        const answer = await doc.send(
          new QueryCommand({
            TableName: remindersTable,
            KeyConditionExpression: 'contestKey = :k',
            ExpressionAttributeValues: { ':k': key },
            ProjectionExpression: 'userId',
            Limit: 1000,
            ...(start === undefined ? {} : { ExclusiveStartKey: start }),
          }),
        );
        const users = (answer.Items ?? []).flatMap((item) => (typeof item.userId === 'string' ? [item.userId] : []));
        if (users.length > 0) yield users;
        start = answer.LastEvaluatedKey;
      } while (start !== undefined);
    }
  };
}
