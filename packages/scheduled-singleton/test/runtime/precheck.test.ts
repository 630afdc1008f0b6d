/**
 * The wrapper's `precheck` option: a read-only look before the lease. An idle look ends the run
 * before any DynamoDB request of the package (no lease, no run record, no interval marked done);
 * a look that found work lets the run go on under the lease as usual, and the work receives what
 * it found; a look that throws fails the run (`precheck`), thrown for a scheduled run.
 * aws-sdk-client-mock stands in for DynamoDB and counts every request the package sends.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import { ConditionalCheckFailedException, DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { scheduledSingleton, ScheduledRunFailedError, type JobContext } from '@contest-sync/scheduled-singleton';
import { scheduledTick } from '@contest-sync/scheduled-singleton/testing';

const client = new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'y' } });
// The wrapper builds its document client from `client`: every instance's send is mocked (the
// lease sends its own requests through it as low-level commands).
const mock = mockClient(DynamoDBDocumentClient);
// The class's send, mocked for this file only: the unit files after it in its worker get it back.
afterAll(() => mock.restore());
const env = {
  COORDINATION_TABLE_NAME: 'coordination',
  LEASE_DURATION_SECONDS: '10',
  SCHEDULE_RATE_MINUTES: '1',
  LEASE_KEY: 'lease#deliver#0',
  RUN_RECORD_PREFIX: 'run#deliver#0#',
  POWERTOOLS_METRICS_NAMESPACE: 'Jobs',
  POWERTOOLS_SERVICE_NAME: 'deliver',
};
const context = { getRemainingTimeInMillis: () => 60_000 };
const lines: string[] = [];
const write = (line: string) => void lines.push(line);
const tick = () => scheduledTick(Math.floor(Date.now() / 60_000) * 60_000).event;

beforeEach(() => {
  mock.reset();
  lines.length = 0;
});
afterEach(() => vi.restoreAllMocks());

describe('scheduledSingleton precheck', () => {
  it('an idle look ends the run as succeeded (idle) before any request of the package: no lease, nothing written', async () => {
    const work = vi.fn(async () => 'ran');
    const handler = scheduledSingleton(work, { env, dynamo: client, write, precheck: async () => ({ idle: true, summary: { due: 0 } }) });
    const result = await handler(tick(), context);
    expect(result).toMatchObject({ outcome: 'succeeded', idle: true, due: 0, source: 'schedule' });
    expect(result.fence).toBeUndefined();
    expect(work).not.toHaveBeenCalled();
    expect(mock.calls()).toHaveLength(0);
    // The summary line and the five metrics still go out: RunSucceeded 1 keeps the no-success alarm quiet.
    const summary = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.summary === true);
    expect(summary).toMatchObject({ outcome: 'succeeded', idle: true, due: 0 });
    expect(lines.join('')).toContain('"RunSucceeded":1');
  });

  it('a look that found work goes on to the lease, and the work receives what it found', async () => {
    // The lease is held by another run: the acquire (one UpdateItem) is refused with the holder.
    mock.on(UpdateItemCommand).rejects(
      new ConditionalCheckFailedException({
        message: 'held',
        $metadata: {},
        Item: marshall({ pk: 'lease#deliver#0', holder: 'other-run', fence: 4, expiresAtMs: Date.now() + 5_000 }),
      }),
    );
    const looked: unknown[] = [];
    const handler = scheduledSingleton(
      async (job: JobContext<{ rows: number }>) => {
        looked.push(job.precheck);
        return 'ran';
      },
      { env, dynamo: client, write, precheck: async () => ({ idle: false, value: { rows: 3 } }) },
    );
    const result = await handler(tick(), context);
    expect(result).toMatchObject({ outcome: 'skipped', reason: 'lease-held', holder: 'other-run' });
    expect(mock.commandCalls(UpdateItemCommand)).toHaveLength(1);

    const dry = await handler({ dryRun: true }, context);
    expect(dry).toMatchObject({ outcome: 'succeeded', dryRun: true });
    expect(looked).toEqual([{ rows: 3 }]);
  });

  it('the look gets what the run is and a signal bounded by the run', async () => {
    const seen: unknown[] = [];
    const handler = scheduledSingleton(async () => 'ran', {
      env,
      dynamo: client,
      write,
      consoleOptions: ['shard'],
      precheck: async ({ source, interval, dryRun, options, signal }) => {
        seen.push({ source, interval, dryRun, options, aborted: signal.aborted });
        return { idle: true };
      },
    });
    await handler({ shard: 2 }, context);
    expect(seen).toEqual([{ source: 'console', interval: undefined, dryRun: false, options: { shard: 2 }, aborted: false }]);
  });

  it('a look that throws fails the run with reason precheck, thrown for a scheduled run, returned for the console', async () => {
    const handler = scheduledSingleton(async () => 'ran', {
      env,
      dynamo: client,
      write,
      precheck: async () => {
        throw new Error('query failed');
      },
    });
    const thrown = await handler(tick(), context).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(ScheduledRunFailedError);
    expect((thrown as ScheduledRunFailedError).summary).toMatchObject({
      outcome: 'failed',
      reason: 'precheck',
      error: 'Error: query failed',
    });
    await expect(handler({}, context)).resolves.toMatchObject({ outcome: 'failed', reason: 'precheck' });
    expect(mock.calls()).toHaveLength(0);
  });
});
