/**
 * The DynamoDB proxy against DynamoDB Local, through the real SDK: each AWS answer it can inject is
 * parsed by the SDK into the error the function sees (name, status, cancellation reasons), the
 * function's contention classifier recognises it, and the SDK's own retries behave as on AWS.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { CreateTableCommand, DeleteTableCommand, DynamoDBClient, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/dynamodb-local.js';
import { leaseOperation, scriptedFaults, startDynamoProxy, transactionLocks, type DynamoProxy } from '../../local/dynamo-proxy.js';
import { contentionOf, cancellationCodes } from '@contest-sync/scheduled-singleton';

const table = `proxy-${randomBytes(3).toString('hex')}`;
let admin: DynamoDBClient;
let proxy: DynamoProxy;
const clients: DynamoDBClient[] = [];

function docThrough(endpoint: string, maxAttempts: number): DynamoDBDocumentClient {
  const client = new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, maxAttempts });
  clients.push(client);
  return DynamoDBDocumentClient.from(client);
}

const failure = async (promise: Promise<unknown>): Promise<Error & { $metadata?: { httpStatusCode?: number } }> => {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the request to fail');
};

beforeAll(async () => {
  admin = new DynamoDBClient({ endpoint: inject('dynamoEndpoint'), region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  await admin.send(
    new CreateTableCommand({
      TableName: table,
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  await waitUntilTableExists({ client: admin, maxWaitTime: 30 }, { TableName: table });
});
afterAll(async () => {
  await admin.send(new DeleteTableCommand({ TableName: table })).catch(() => undefined);
  admin.destroy();
});
afterEach(async () => {
  for (const client of clients.splice(0)) client.destroy();
  await proxy?.close();
});

describe('DynamoDB proxy', () => {
  it('forwards and counts requests by operation', async () => {
    proxy = await startDynamoProxy(inject('dynamoEndpoint'));
    const doc = docThrough(proxy.endpoint, 1);
    await doc.send(new PutCommand({ TableName: table, Item: { pk: 'plain', n: 1 } }));
    const out = await doc.send(new GetCommand({ TableName: table, Key: { pk: 'plain' }, ConsistentRead: true }));
    expect(out.Item).toEqual({ pk: 'plain', n: 1 });
    expect(Object.fromEntries(proxy.counts)).toEqual({ PutItem: 1, GetItem: 1 });
    expect(proxy.injected()).toEqual({});
  });

  it('answers TransactionConflictException to a plain write of an item an in-flight transaction holds', async () => {
    proxy = await startDynamoProxy(inject('dynamoEndpoint'));
    proxy.setTransactionHold(() => 600);
    const holder = docThrough(proxy.endpoint, 3);
    const other = docThrough(proxy.endpoint, 3);
    const transaction = holder.send(
      new TransactWriteCommand({
        TransactItems: [
          { Update: { TableName: table, Key: { pk: 'held' }, UpdateExpression: 'SET v = :v', ExpressionAttributeValues: { ':v': 'tx' } } },
        ],
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    const conflict = await failure(
      other.send(
        new UpdateCommand({
          TableName: table,
          Key: { pk: 'held' },
          UpdateExpression: 'SET w = :w',
          ExpressionAttributeValues: { ':w': 1 },
        }),
      ),
    );
    expect(conflict.name).toBe('TransactionConflictException');
    expect(conflict.message).toBe('Transaction is ongoing for the item');
    expect(conflict.$metadata?.httpStatusCode).toBe(400);
    expect(contentionOf(conflict)).toBe('TransactionConflictException');
    // Not retried by the SDK (maxAttempts 3): one UpdateItem on the wire.
    expect(proxy.counts.get('UpdateItem')).toBe(1);
    // Another key is free; another transaction on the held key is cancelled with TransactionConflict.
    await other.send(new PutCommand({ TableName: table, Item: { pk: 'free' } }));
    const cancelled = await failure(
      other.send(
        new TransactWriteCommand({
          TransactItems: [{ Put: { TableName: table, Item: { pk: 'free2' } } }, { Delete: { TableName: table, Key: { pk: 'held' } } }],
        }),
      ),
    );
    expect(cancelled.name).toBe('TransactionCanceledException');
    expect(cancellationCodes(cancelled)).toEqual(['None', 'TransactionConflict']);
    expect(contentionOf(cancelled)).toBe('TransactionConflict');
    await transaction;
    // Once the transaction committed, the write goes through.
    proxy.setTransactionHold(undefined);
    await other.send(
      new UpdateCommand({ TableName: table, Key: { pk: 'held' }, UpdateExpression: 'SET w = :w', ExpressionAttributeValues: { ':w': 2 } }),
    );
    const item = await other.send(new GetCommand({ TableName: table, Key: { pk: 'held' }, ConsistentRead: true }));
    expect(item.Item).toEqual({ pk: 'held', v: 'tx', w: 2 });
    expect(proxy.injected()).toEqual({ conflict: { UpdateItem: 1, TransactWriteItems: 1 } });
  });

  it('shares transaction locks between proxies (one per client, as in the chaos runner)', async () => {
    const locks = transactionLocks({ [table]: ['pk'] });
    proxy = await startDynamoProxy(inject('dynamoEndpoint'), { locks });
    const second = await startDynamoProxy(inject('dynamoEndpoint'), { locks });
    try {
      proxy.setTransactionHold(() => 500);
      const transaction = docThrough(proxy.endpoint, 1).send(
        new TransactWriteCommand({ TransactItems: [{ Put: { TableName: table, Item: { pk: 'shared', v: 1 } } }] }),
      );
      await new Promise((resolve) => setTimeout(resolve, 150));
      const conflict = await failure(
        docThrough(second.endpoint, 1).send(new PutCommand({ TableName: table, Item: { pk: 'shared', v: 2 } })),
      );
      expect(conflict.name).toBe('TransactionConflictException');
      await transaction;
      expect(second.injected()).toEqual({ conflict: { PutItem: 1 } });
      expect(locks.held.size).toBe(0);
    } finally {
      await second.close();
    }
  });

  it('injects throttling as AWS answers it; the SDK retries it (maxAttempts) and the classifier sees it', async () => {
    proxy = await startDynamoProxy(inject('dynamoEndpoint'));
    const isPut = (r: { operation: string }) => r.operation === 'PutItem';
    proxy.setFaults(
      scriptedFaults([
        { fault: 'throughput-exceeded', match: isPut, nth: [1] },
        { fault: 'throttling', match: isPut, nth: [2] },
      ]),
    );
    const once = docThrough(proxy.endpoint, 1);
    const exceeded = await failure(once.send(new PutCommand({ TableName: table, Item: { pk: 't' } })));
    expect(exceeded.name).toBe('ProvisionedThroughputExceededException');
    expect(exceeded.$metadata?.httpStatusCode).toBe(400);
    expect(contentionOf(exceeded)).toBe('ProvisionedThroughputExceededException');
    const throttled = await failure(once.send(new PutCommand({ TableName: table, Item: { pk: 't' } })));
    expect(throttled.name).toBe('ThrottlingException');
    expect(contentionOf(throttled)).toBe('ThrottlingException');
    // Two more throttles, then the SDK's third attempt passes.
    proxy.reset();
    proxy.setFaults(scriptedFaults([{ fault: 'throttling', match: isPut, nth: [1, 2] }]));
    await docThrough(proxy.endpoint, 3).send(new PutCommand({ TableName: table, Item: { pk: 't', ok: true } }));
    expect(proxy.counts.get('PutItem')).toBe(3);
    expect(proxy.injected()).toEqual({ throttling: { PutItem: 2 } });
  });

  it('injects HTTP 500 InternalServerError', async () => {
    proxy = await startDynamoProxy(inject('dynamoEndpoint'));
    proxy.setFaults(scriptedFaults([{ fault: 'internal-error', match: (r) => r.operation === 'GetItem', nth: [1] }]));
    const error = await failure(docThrough(proxy.endpoint, 1).send(new GetCommand({ TableName: table, Key: { pk: 'x' } })));
    expect(error.name).toBe('InternalServerError');
    expect(error.$metadata?.httpStatusCode).toBe(500);
    expect(contentionOf(error)).toBe('InternalServerError');
    expect(proxy.injected()).toEqual({ 'internal-error': { GetItem: 1 } });
  });

  it('drops the connection after DynamoDB applied the write: the client sees a network error, the write landed', async () => {
    proxy = await startDynamoProxy(inject('dynamoEndpoint'));
    proxy.setFaults(scriptedFaults([{ fault: 'drop-after-apply', match: (r) => r.operation === 'PutItem', nth: [1, 2] }]));
    const dropped = await failure(docThrough(proxy.endpoint, 1).send(new PutCommand({ TableName: table, Item: { pk: 'dropped', v: 1 } })));
    expect(dropped.$metadata?.httpStatusCode).toBeUndefined();
    const landed = await DynamoDBDocumentClient.from(admin).send(
      new GetCommand({ TableName: table, Key: { pk: 'dropped' }, ConsistentRead: true }),
    );
    expect(landed.Item).toEqual({ pk: 'dropped', v: 1 });
    // The SDK retries a dropped connection: a conditional create then meets its own first write.
    const retried = await failure(
      docThrough(proxy.endpoint, 3).send(
        new PutCommand({ TableName: table, Item: { pk: 'dropped-once', v: 1 }, ConditionExpression: 'attribute_not_exists(pk)' }),
      ),
    );
    expect(retried.name).toBe('ConditionalCheckFailedException');
    expect(proxy.counts.get('PutItem')).toBe(3);
    expect(proxy.injected()).toEqual({ 'drop-after-apply': { PutItem: 2 } });
  });

  it('runs an after-apply hook once the write landed and before the client has the answer', async () => {
    proxy = await startDynamoProxy(inject('dynamoEndpoint'));
    const seen: { operation: string; status: number; stored: unknown }[] = [];
    let answered = false;
    proxy.setAfterApply(async (request, reply) => {
      // The write is in DynamoDB Local already; the client is still waiting.
      const stored = await DynamoDBDocumentClient.from(admin).send(
        new GetCommand({ TableName: table, Key: { pk: 'hooked' }, ConsistentRead: true }),
      );
      seen.push({ operation: request.operation, status: reply.status, stored: stored.Item, ...(answered ? { late: true } : {}) });
    });
    await docThrough(proxy.endpoint, 1).send(new PutCommand({ TableName: table, Item: { pk: 'hooked', v: 7 } }));
    answered = true;
    expect(seen).toEqual([{ operation: 'PutItem', status: 200, stored: { pk: 'hooked', v: 7 } }]);
  });

  it('tells lease operations apart from the body', () => {
    const update = (expression: string, pk = 'lease#contest-sync') => ({
      operation: 'UpdateItem',
      n: 1,
      body: { Key: { pk: { S: pk } }, UpdateExpression: expression },
    });
    expect(leaseOperation(update('SET holder = :runId ADD fence :one'))).toBe('acquire');
    expect(leaseOperation(update('SET expiresAtMs = :exp, renewedAtMs = :now'))).toBe('renew');
    expect(leaseOperation(update('SET expiresAtMs = :now REMOVE holder'))).toBe('release');
    expect(leaseOperation(update('SET x = :x', 'run#1'))).toBeUndefined();
    expect(leaseOperation({ operation: 'GetItem', n: 1, body: {} })).toBeUndefined();
  });
});
