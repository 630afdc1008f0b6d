/** Lease error paths that DynamoDB Local does not produce on demand (see test/integration/lease.test.ts for the rest). */
import { beforeEach, describe, expect, it } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoLease } from '../../../lambda/lease/dynamo-lease.js';
import { LeaseUnavailableError } from '../../../lambda/lease/errors.js';
import { leaseTiming } from '../../../lambda/lease/timing.js';

const doc = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const mock = mockClient(doc);
const lease = new DynamoLease({ doc, table: 'coordination', timing: leaseTiming(10), now: () => 5_000 });
const held = { runId: 'run-1', fence: 3, expiresAtMs: 15_000, doneIntervals: new Set<string>() };

beforeEach(() => mock.reset());

describe('DynamoLease', () => {
  it('reports an unreachable or throttled DynamoDB as LeaseUnavailableError, not as a held lease', async () => {
    mock.on(UpdateCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'ProvisionedThroughputExceededException' }));
    const failure = lease.acquire('run-1', 'schedule', '2026-11-29T14:00:00Z');
    await expect(failure).rejects.toBeInstanceOf(LeaseUnavailableError);
    await expect(failure).rejects.toThrow(/could not acquire the lease: ProvisionedThroughputExceededException: Rate exceeded/);
  });

  it('lets an unknown renew outcome surface as is (the heartbeat retries it)', async () => {
    mock.on(UpdateCommand).rejects(Object.assign(new Error('socket hang up'), { name: 'TimeoutError' }));
    await expect(lease.renew(held)).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  it('releases with the run record in one transaction, conditional on holder and fence', async () => {
    mock.on(TransactWriteCommand).resolves({});
    expect(await lease.release(held, { doneInterval: '2026-11-29T14:00:00Z', runRecord: { pk: 'run#2026-11-29T14:00:00Z' } })).toBe(true);
    const items = mock.commandCalls(TransactWriteCommand)[0]?.args[0].input.TransactItems;
    expect(items?.[0]?.Update).toMatchObject({
      ConditionExpression: 'holder = :runId AND fence = :fence',
      UpdateExpression: 'SET expiresAtMs = :now, releasedAtMs = :now, doneIntervals = :done REMOVE holder',
    });
    expect(items?.[1]?.Put).toMatchObject({ TableName: 'coordination', Item: { pk: 'run#2026-11-29T14:00:00Z' } });
  });

  it('answers false, not an error, when the release finds the lease taken over', async () => {
    mock.on(TransactWriteCommand).rejects(
      new TransactionCanceledException({ message: 'cancelled', $metadata: {}, CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'None' }] }),
    );
    expect(await lease.release(held, { runRecord: { pk: 'run#x' } })).toBe(false);
  });
});
