/**
 * The wrapper's one DynamoDB client: without a `dynamo` option it builds one, with the package's
 * time budget (DYNAMO_CLIENT_SETTINGS: the stop margin is derived from it), and hands that same
 * client to the lease, the fenced writes and the job's `configure`: no second client per container.
 */
import { describe, expect, it, vi } from 'vitest';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DYNAMO_CLIENT_SETTINGS, scheduledSingleton } from '@contest-sync/scheduled-singleton';
import { dryRun, jobEnv } from '@contest-sync/scheduled-singleton/testing';

const built = vi.hoisted(() => [] as unknown[]);
vi.mock('@aws-sdk/client-dynamodb', async (original) => {
  const sdk = await original<typeof import('@aws-sdk/client-dynamodb')>();
  class CountedClient extends sdk.DynamoDBClient {
    constructor(...args: ConstructorParameters<typeof sdk.DynamoDBClient>) {
      super(...args);
      built.push(this);
    }
  }
  return { ...sdk, DynamoDBClient: CountedClient };
});

describe('the wrapper’s DynamoDB client', () => {
  it('is built once per container, with the time budget, and is the one configure receives', async () => {
    const received: DynamoDBClient[] = [];
    const handler = scheduledSingleton(async () => undefined, {
      env: { ...jobEnv(), AWS_REGION: 'us-east-1' },
      write: () => undefined,
      configure: (_env, { dynamo }) => void received.push(dynamo),
    });
    // A dry run takes no lease: no request, but the container's parts are built as for any run.
    await handler(dryRun().event, dryRun().context);
    await handler(dryRun().event, dryRun().context);
    expect(built).toHaveLength(1);
    expect(received).toEqual([built[0]]);
    const client = received[0]!;
    expect(await client.config.maxAttempts()).toBe(DYNAMO_CLIENT_SETTINGS.maxAttempts);
    expect(client).toBeInstanceOf(DynamoDBClient);
  });
});
