/**
 * The event source mapping's stand-in on DynamoDB Local's stream: started on an empty outbox
 * table, it keeps polling and hands over the records written later, INSERTs only (the
 * template's filter).
 */
import { randomBytes } from 'node:crypto';
import { DeleteCommand, DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import { localDynamoClient } from '../../local/dynamodb-local.js';
import { mappingFromTemplate, startStreamPoller, type LambdaStreamRecord } from '../../local/stream-poller.js';
import { createTablesFromTemplate, tableDefinitionsFromTemplate } from '../../local/tables.js';
import { synthesizedTemplate } from '../support/tables.js';

describe('the stream poller', () => {
  it('started before the first record, delivers what is written afterwards (and no REMOVE)', async () => {
    const endpoint = inject('dynamoEndpoint');
    const dynamo = localDynamoClient(endpoint);
    const template = synthesizedTemplate() as never;
    const names = await createTablesFromTemplate(dynamo, template, `poll-${randomBytes(3).toString('hex')}`);
    const outboxId = tableDefinitionsFromTemplate(template).find((d) => d.role === 'outbox')!.logicalId;
    const seen: LambdaStreamRecord[] = [];
    const poller = await startStreamPoller({
      endpoint,
      dynamo,
      tableName: names.outbox!,
      config: mappingFromTemplate(template, outboxId).config,
      invoke: async (records) => {
        seen.push(...records);
        return { batchItemFailures: [] };
      },
      pollMs: 50,
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const doc = DynamoDBDocumentClient.from(dynamo);
      await doc.send(new PutCommand({ TableName: names.outbox!, Item: { pk: 'test#1', eventId: '1' } }));
      await doc.send(new DeleteCommand({ TableName: names.outbox!, Key: { pk: 'test#1' } }));
      for (let i = 0; i < 100 && seen.length === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
      await poller.drained(300, 10_000);
    } finally {
      await poller.stop();
    }
    expect(seen.map((record) => record.eventName)).toEqual(['INSERT']);
  });
});
