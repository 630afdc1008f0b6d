/**
 * An app's consumer of the events (docs/events.md): EventBridge delivers at least once, and a
 * change re-sent by the relay arrives with a new envelope `id`, so the consumer dedupes on
 * `detail.eventId` with Powertools idempotency (a DynamoDB table, records kept 7 days: longer
 * than any redelivery, a redrive included: ./windows.ts). Its side effect here: one row in the
 * app's in-app inbox per event.
 */
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { DEDUPE_SECONDS } from './windows.js';

/** How long an eventId is remembered: 7 days (./windows.ts). */
export { DEDUPE_SECONDS };

export interface AppEvent {
  id: string;
  source: string;
  'detail-type': string;
  time: string;
  detail: { eventId: string } & Record<string, unknown>;
}

export function consumer(options: { idempotencyTable: string; inboxTable: string; client?: DynamoDBClient }) {
  const client = options.client ?? new DynamoDBClient({});
  const doc = DynamoDBDocumentClient.from(client);
  const persistenceStore = new DynamoDBPersistenceLayer({ tableName: options.idempotencyTable, awsSdkV3Client: client });
  const config = new IdempotencyConfig({
    eventKeyJmesPath: 'detail.eventId',
    expiresAfterSeconds: DEDUPE_SECONDS,
    throwOnNoIdempotencyKey: true,
  });
  return makeIdempotent(
    async (event: AppEvent, _context: unknown) => {
      // The side effect, once per eventId: the user's in-app notification.
      const Item = {
        pk: event.detail.eventId,
        sk: randomUUID(),
        type: event['detail-type'],
        source: event.source,
        at: event.time,
        detail: event.detail,
      };
      await doc.send(new PutCommand({ TableName: options.inboxTable, Item }));
      return { notified: event.detail.eventId };
    },
    { persistenceStore, config },
  );
}

export const handler = consumer({
  idempotencyTable: process.env.IDEMPOTENCY_TABLE_NAME ?? '',
  inboxTable: process.env.INBOX_TABLE_NAME ?? '',
});
