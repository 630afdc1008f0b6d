/**
 * The event source mapping's stand-in on DynamoDB Local's stream: started on an empty outbox
 * table, it keeps polling and hands over the records written later, INSERTs only (the
 * template's filter).
 */
import { randomBytes } from 'node:crypto';
import { DeleteCommand, DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, inject, it } from 'vitest';
import { localDynamoClient } from '../../local/dynamodb-local.js';
import { byAge, checkStreamMapping, mappingFromTemplate, startStreamPoller, type LambdaStreamRecord } from '../../local/stream-poller.js';
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

describe('the mapping as Lambda takes it', () => {
  const base = {
    batchSize: 100,
    maxRetryAttempts: 5,
    bisect: true,
    reportBatchItemFailures: true,
    filters: [],
    maxRecordAgeSeconds: 86_400,
  };

  it('is the template’s, within what CreateEventSourceMapping accepts', () => {
    const template = synthesizedTemplate() as never;
    const outboxId = tableDefinitionsFromTemplate(template).find((d) => d.role === 'outbox')!.logicalId;
    expect(mappingFromTemplate(template, outboxId).config).toEqual({ ...base, filters: [{ eventName: ['INSERT'] }] });
  });

  it.each([
    [{ batchSize: 10_001 }, 1, /BatchSize/],
    [{ maxRetryAttempts: 10_001 }, 1, /MaximumRetryAttempts/],
    [{ maxRecordAgeSeconds: 59 }, 1, /MaximumRecordAgeInSeconds/],
    [{}, 2, /ParallelizationFactor/],
  ])('refuses %j with ParallelizationFactor %i', (change, parallelization, message) => {
    expect(() => checkStreamMapping({ ...base, ...change }, parallelization)).toThrow(message);
    expect(() => checkStreamMapping(base, 1)).not.toThrow();
  });

  it('gives up records older than MaximumRecordAgeInSeconds, hands over the rest', () => {
    const at = (seconds: number) =>
      ({
        eventSource: 'aws:dynamodb',
        awsRegion: 'us-east-1',
        eventSourceARN: 'arn',
        dynamodb: { ApproximateCreationDateTime: seconds },
      }) as LambdaStreamRecord;
    const [old, young] = [at(1_000), at(90_000)];
    expect(byAge([old, young], 86_400, 100_000)).toEqual({ batch: [young], old: [old] });
    expect(byAge([old, young], -1, 100_000)).toEqual({ batch: [old, young], old: [] });
  });
});
