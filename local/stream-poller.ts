/**
 * A local Lambda event source mapping for a DynamoDB stream (Lambda's poller does not run here;
 * DynamoDB Local serves DynamoDB Streams on its own endpoint). It reads the table's stream with
 * `@aws-sdk/client-dynamodb-streams` from TRIM_HORIZON, shard by shard, and invokes a function
 * with batches shaped as Lambda's DynamoDB event, behaving as the synthesized
 * `AWS::Lambda::EventSourceMapping` says (mappingFromTemplate), by AWS's documentation:
 *
 *   - AWS Lambda Developer Guide — Using AWS Lambda with Amazon DynamoDB (and its "Handling
 *     errors", "Partial batch responses" and "Event filtering" pages)
 *     https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html
 *     FilterCriteria: records that match no filter are dropped (checkpointed, never invoked);
 *     ReportBatchItemFailures: a returned `batchItemFailures` checkpoints before the lowest of
 *     them, and the batch is retried from there (an identifier that names no record of the batch
 *     fails the whole batch); MaximumRetryAttempts and BisectBatchOnFunctionError: a failing batch
 *     (thrown, or a partial failure) is split in two and retried, finitely; what still fails is
 *     given up to `onFailure` (the on-failure destination: shard, sequence range), and the shard
 *     moves on; MaximumRecordAgeInSeconds: a record older than that when its batch is handed over
 *     is given up the same way.
 *   - AWS Lambda API Reference — CreateEventSourceMapping
 *     https://docs.aws.amazon.com/lambda/latest/api/API_CreateEventSourceMapping.html
 *     BatchSize 1 to 10,000 (default 100 for DynamoDB streams), MaximumRetryAttempts -1 (until the
 *     record expires) to 10,000, MaximumRecordAgeInSeconds -1 or 60 to 604,800: a template outside
 *     them is refused here as Lambda refuses it.
 * One batch per shard at a time, in stream order: a ParallelizationFactor above 1 is refused (not served here).
 */
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from './dynamodb-local.js';
import { matches, type Pattern } from './event-pattern.js';

export interface MappingConfig {
  batchSize: number;
  maxRetryAttempts: number;
  bisect: boolean;
  reportBatchItemFailures: boolean;
  filters: Pattern[];
  /** Records older than this (seconds) are given up; -1: never (until the stream drops them). */
  maxRecordAgeSeconds?: number;
}

/** CreateEventSourceMapping's documented ranges for a stream source; a mapping outside them is refused as Lambda refuses it. */
export function checkStreamMapping(config: MappingConfig, parallelization = 1): void {
  const within = (value: number, low: number, high: number) => Number.isInteger(value) && value >= low && value <= high;
  const problems = [
    within(config.batchSize, 1, 10_000) ? undefined : `BatchSize ${config.batchSize} (1 to 10,000)`,
    config.maxRetryAttempts === -1 || within(config.maxRetryAttempts, 0, 10_000)
      ? undefined
      : `MaximumRetryAttempts ${config.maxRetryAttempts} (-1, or 0 to 10,000)`,
    config.maxRecordAgeSeconds === undefined || config.maxRecordAgeSeconds === -1 || within(config.maxRecordAgeSeconds, 60, 604_800)
      ? undefined
      : `MaximumRecordAgeInSeconds ${config.maxRecordAgeSeconds} (-1, or 60 to 604,800)`,
    parallelization === 1 ? undefined : `ParallelizationFactor ${parallelization} (the stand-in reads a shard with one batch at a time)`,
  ].filter((p): p is string => p !== undefined);
  if (problems.length > 0) throw new Error(`the event source mapping is refused: ${problems.join('; ')}`);
}

interface CfnResource {
  Type: string;
  Properties?: Record<string, any>;
}

/** The event source mapping on `tableLogicalId`'s stream in a synthesized template, and its function's logical id. */
export function mappingFromTemplate(
  template: { Resources: Record<string, CfnResource> },
  tableLogicalId: string,
): { config: MappingConfig; functionLogicalId: string } {
  const found = Object.values(template.Resources).find(
    (r) => r.Type === 'AWS::Lambda::EventSourceMapping' && r.Properties?.EventSourceArn?.['Fn::GetAtt']?.[0] === tableLogicalId,
  );
  if (found === undefined) throw new Error(`no event source mapping reads the stream of ${tableLogicalId}`);
  const p = found.Properties!;
  const fn = p.FunctionName as { Ref?: string } | string;
  const config: MappingConfig = {
    batchSize: Number(p.BatchSize ?? 100),
    maxRetryAttempts: Number(p.MaximumRetryAttempts ?? -1),
    bisect: p.BisectBatchOnFunctionError === true,
    reportBatchItemFailures: ((p.FunctionResponseTypes as string[] | undefined) ?? []).includes('ReportBatchItemFailures'),
    filters: ((p.FilterCriteria?.Filters as { Pattern: string }[] | undefined) ?? []).map((f) => JSON.parse(f.Pattern) as Pattern),
    maxRecordAgeSeconds: Number(p.MaximumRecordAgeInSeconds ?? -1),
  };
  checkStreamMapping(config, Number(p.ParallelizationFactor ?? 1));
  return { functionLogicalId: typeof fn === 'string' ? fn : (fn.Ref ?? ''), config };
}

/** A stream record in the shape Lambda passes to a function. */
export interface LambdaStreamRecord {
  eventID?: string;
  eventName?: string;
  eventVersion?: string;
  eventSource: 'aws:dynamodb';
  awsRegion: string;
  eventSourceARN: string;
  dynamodb: Record<string, unknown> & { SequenceNumber?: string };
}

export type Invoke = (records: LambdaStreamRecord[]) => Promise<{ batchItemFailures?: { itemIdentifier: string }[] } | undefined>;

export interface GivenUp {
  shardId: string;
  startSequenceNumber: string;
  endSequenceNumber: string;
  batchSize: number;
  reason: string;
}

export interface StreamPoller {
  /** Invocations made, and records handed over in them (a record retried counts again). */
  readonly stats: { invocations: number; records: number; filtered: number; retries: number; bisections: number };
  readonly givenUp: GivenUp[];
  /** Resolves once every shard has been read to its end and nothing was invoked for `quietMs`. */
  drained(quietMs?: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

function toLambda(record: StreamRecord, arn: string): LambdaStreamRecord {
  const data = record.dynamodb ?? {};
  const created = data.ApproximateCreationDateTime;
  return {
    ...(record.eventID !== undefined ? { eventID: record.eventID } : {}),
    ...(record.eventName !== undefined ? { eventName: record.eventName } : {}),
    eventVersion: record.eventVersion ?? '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: LOCAL_REGION,
    eventSourceARN: arn,
    dynamodb: { ...data, ...(created instanceof Date ? { ApproximateCreationDateTime: Math.floor(created.getTime() / 1000) } : {}) },
  };
}

/** What the on-failure destination is sent of records given up: their shard and sequence range. */
function givenUpOf(shardId: string, batch: LambdaStreamRecord[], reason: string): GivenUp {
  const [first, last] = [batch[0]?.dynamodb.SequenceNumber ?? '', batch.at(-1)?.dynamodb.SequenceNumber ?? ''];
  return { shardId, startSequenceNumber: first, endSequenceNumber: last, batchSize: batch.length, reason };
}

/** The records of a batch young enough to be handed over, and those older than `maxAgeSeconds` (-1: none is too old). */
export function byAge(
  records: LambdaStreamRecord[],
  maxAgeSeconds: number,
  nowSeconds: number,
): { batch: LambdaStreamRecord[]; old: LambdaStreamRecord[] } {
  if (maxAgeSeconds < 0) return { batch: records, old: [] };
  const tooOld = (r: LambdaStreamRecord) => Number(r.dynamodb.ApproximateCreationDateTime ?? Infinity) < nowSeconds - maxAgeSeconds;
  return { batch: records.filter((r) => !tooOld(r)), old: records.filter(tooOld) };
}

export async function startStreamPoller(options: {
  endpoint: string;
  dynamo: DynamoDBClient;
  tableName: string;
  config: MappingConfig;
  invoke: Invoke;
  onFailure?: (given: GivenUp) => void;
  pollMs?: number;
}): Promise<StreamPoller> {
  const { config, invoke } = options;
  const streams = new DynamoDBStreamsClient({ endpoint: options.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  const table = await options.dynamo.send(new DescribeTableCommand({ TableName: options.tableName }));
  const arn = table.Table?.LatestStreamArn;
  if (arn === undefined) throw new Error(`table ${options.tableName} has no stream`);
  const stats = { invocations: 0, records: 0, filtered: 0, retries: 0, bisections: 0 };
  const givenUp: GivenUp[] = [];
  let stopped = false;
  let lastActivity = Date.now();
  const caughtUp = new Map<string, boolean>();
  const started = new Set<string>();
  const loops: Promise<void>[] = [];
  const pollMs = options.pollMs ?? 100;

  const giveUp = (shardId: string, batch: LambdaStreamRecord[], reason: string) => {
    const given = givenUpOf(shardId, batch, reason);
    givenUp.push(given);
    options.onFailure?.(given);
  };

  /** One batch, with its retries and bisection; returns when it is done or given up. */
  const handleBatch = async (shardId: string, whole: LambdaStreamRecord[], attempt = 0): Promise<void> => {
    const { batch, old } = byAge(whole, config.maxRecordAgeSeconds ?? -1, Date.now() / 1000);
    if (old.length > 0) giveUp(shardId, old, 'record older than MaximumRecordAgeInSeconds');
    if (batch.length === 0) return;
    stats.invocations += 1;
    stats.records += batch.length;
    lastActivity = Date.now();
    let failedFrom = -1;
    let reason = '';
    try {
      const result = await invoke(batch);
      const failures = config.reportBatchItemFailures ? (result?.batchItemFailures ?? []) : [];
      if (failures.length > 0) {
        const ids = new Set(failures.map((f) => f.itemIdentifier));
        failedFrom = batch.findIndex((r) => ids.has(r.dynamodb.SequenceNumber ?? ''));
        // An identifier that names no record of the batch fails the whole batch, as Lambda does.
        if (failedFrom === -1) failedFrom = 0;
        reason = 'partial batch failure';
      }
    } catch (error) {
      failedFrom = 0;
      reason = `function error: ${String((error as Error)?.message ?? error)}`;
    }
    if (failedFrom === -1) return;
    const rest = batch.slice(failedFrom);
    const retries = config.maxRetryAttempts < 0 ? Number.POSITIVE_INFINITY : config.maxRetryAttempts;
    if (attempt >= retries) {
      giveUp(shardId, rest, reason);
      return;
    }
    stats.retries += 1;
    if (config.bisect && rest.length > 1) {
      stats.bisections += 1;
      const half = Math.ceil(rest.length / 2);
      await handleBatch(shardId, rest.slice(0, half), attempt + 1);
      await handleBatch(shardId, rest.slice(half), attempt + 1);
      return;
    }
    await handleBatch(shardId, rest, attempt + 1);
  };

  const oldest = async (shardId: string) =>
    (await streams.send(new GetShardIteratorCommand({ StreamArn: arn, ShardId: shardId, ShardIteratorType: 'TRIM_HORIZON' })))
      .ShardIterator;
  const readShard = async (shardId: string) => {
    let iterator = await oldest(shardId);
    let last: string | undefined;
    const buffer: LambdaStreamRecord[] = [];
    while (!stopped && iterator !== undefined) {
      let page;
      try {
        page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
      } catch (error) {
        // DynamoDB Local answers reads of a shard with no record yet (or an iterator past its
        // 15 minutes) so: read again after the last record handed over (Lambda's checkpoint), or
        // from the oldest if none was.
        const name = (error as Error).name;
        if (name !== 'TrimmedDataAccessException' && name !== 'ExpiredIteratorException') throw error;
        await new Promise((resolve) => setTimeout(resolve, pollMs));
        iterator =
          last === undefined
            ? await oldest(shardId)
            : (
                await streams.send(
                  new GetShardIteratorCommand({
                    StreamArn: arn,
                    ShardId: shardId,
                    ShardIteratorType: 'AFTER_SEQUENCE_NUMBER',
                    SequenceNumber: last,
                  }),
                )
              ).ShardIterator;
        continue;
      }
      iterator = page.NextShardIterator;
      for (const record of page.Records ?? []) {
        last = record.dynamodb?.SequenceNumber ?? last;
        const shaped = toLambda(record, arn);
        if (config.filters.length > 0 && !config.filters.some((filter) => matches(filter, shaped))) {
          stats.filtered += 1;
          continue;
        }
        buffer.push(shaped);
      }
      while (buffer.length > 0 && !stopped) await handleBatch(shardId, buffer.splice(0, config.batchSize));
      const empty = (page.Records ?? []).length === 0;
      caughtUp.set(shardId, empty || iterator === undefined);
      if (empty && iterator !== undefined) await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
    caughtUp.set(shardId, true);
  };

  /** Starts a reader for every shard not read yet (new shards appear as DynamoDB rolls them over). */
  const discover = async () => {
    const description = await streams.send(new DescribeStreamCommand({ StreamArn: arn }));
    for (const shard of description.StreamDescription?.Shards ?? []) {
      const id = shard.ShardId!;
      if (started.has(id)) continue;
      // A child shard is read after its parent, in order.
      if (shard.ParentShardId !== undefined && started.has(shard.ParentShardId) && caughtUp.get(shard.ParentShardId) !== true) continue;
      started.add(id);
      caughtUp.set(id, false);
      loops.push(readShard(id));
    }
  };
  await discover();
  const discovery = (async () => {
    while (!stopped) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      if (!stopped) await discover();
    }
  })();

  return {
    stats,
    givenUp,
    async drained(quietMs = 1_000, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const allCaughtUp = [...caughtUp.values()].every(Boolean);
        if (allCaughtUp && Date.now() - lastActivity >= quietMs) return;
        if (Date.now() > deadline) throw new Error(`stream not drained within ${timeoutMs} ms (${JSON.stringify(stats)})`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async stop() {
      stopped = true;
      await Promise.allSettled([...loops, discovery]);
      streams.destroy();
    },
  };
}
