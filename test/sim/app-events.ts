/**
 * What the simulated app receives (docs/simulation.md, "How the app receives reminders"): the
 * outbox table's DynamoDB stream, read from DynamoDB Local; the product's relay (`relayBatch` of
 * the package) turning its records into PutEvents entries; a bus at virtual time that wraps each
 * entry in a new envelope, delivers it to the app's rule at least once and unordered; and the
 * app's consumer, which dedupes with Powertools idempotency on `detail.eventId` (docs/events.md,
 * "A consumer that dedupes") before it tells the user.
 *
 * Every hop is at least once, as in AWS: the relay is invoked again with a batch it already
 * delivered (an answer lost after PutEvents went through: the events go out again with new
 * envelope ids), PutEvents refuses entries (the relay re-sends them), the bus delivers an event
 * twice (the same envelope) and late (a target retried), so events overtake each other. All
 * draws come from the run's seed; times are the virtual clock's.
 */
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { relayBatch, type PutEventsAnswer, type RelayEntry, type StreamRecordLike } from '@contest-sync/scheduled-singleton/relay';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/dynamodb-local.js';
import type { BusEvent } from '../../local/bus-standin.js';
import { matches, type Pattern } from '../../local/event-pattern.js';
import type { MappingConfig } from '../../local/stream-poller.js';
import { createTableFromResource } from '../../local/tables.js';

/** The at-least-once behaviour of each hop (probabilities per batch, entry or delivery). */
export interface EventPathSettings {
  /** Lambda invokes the relay again with a batch it delivered (its answer lost): every event of it re-sent, new envelope ids. */
  relayRepeat: number;
  /** PutEvents refuses an entry (`ThrottlingException` in `FailedEntryCount`): the relay re-sends it. */
  entryFailure: number;
  /** EventBridge delivers an event to the target twice (the same envelope), 1 s – 10 min apart. */
  busDuplicate: number;
  /** A delivery is late: the target was throttled and EventBridge retried it 30 s – 5 min later. */
  lateDelivery: number;
}

export const DEFAULT_EVENT_PATH: EventPathSettings = { relayRepeat: 0.05, entryFailure: 0.02, busDuplicate: 0.05, lateDelivery: 0.1 };

/** The app's subscription (docs/events.md, "Subscribing"): its reminders, and the contest changes. */
export const APP_RULE: Pattern = { source: ['contest-sync.reminders', 'contest-sync.contests'] };

/** An event as EventBridge delivers it to a target (the bus stand-in's shape), with our `detail.eventId`. */
export type DeliveredEvent = BusEvent & { detail: { eventId: string } };

export interface EventPathFigures {
  /** Stream reads (each: DescribeStream, and per shard GetShardIterator and GetRecords). */
  streamReads: number;
  streamRecords: number;
  /** Records the mapping's filter dropped (not INSERT). */
  filtered: number;
  relayInvocations: number;
  /** Relay invocations repeated after they had delivered (duplicates with new envelope ids). */
  relayRepeats: number;
  /** Entries refused by PutEvents and re-sent by the relay. */
  entriesRefused: number;
  /** Batches retried from a `batchItemFailures` record; records given up (the dead-letter queue). */
  batchRetries: number;
  givenUp: number;
  /** Entries the bus accepted (envelopes). */
  accepted: number;
  /** Deliveries to the app's rule's target, duplicates included; of them duplicated and late. */
  deliveries: number;
  busDuplicates: number;
  lateDeliveries: number;
  /** Deliveries the consumer handled (its side effect ran) and the ones it recognised as seen. */
  handled: number;
  deduped: number;
  /** Largest commit-to-receipt delay of a handled event (s). */
  maxLagSeconds: number;
}

/**
 * The outbox table's stream, read on demand (not polled in real time: the simulation's clock is
 * virtual). Each read takes every record after the last one read, shard by shard in the order
 * DescribeStream lists them (parents before children), as Lambda's poller would.
 */
export class OutboxStream {
  private readonly last = new Map<string, string>();
  private readonly done = new Set<string>();

  private constructor(
    private readonly streams: DynamoDBStreamsClient,
    private readonly arn: string,
  ) {}

  static async open(endpoint: string, dynamo: DynamoDBClient, tableName: string): Promise<OutboxStream> {
    const table = await dynamo.send(new DescribeTableCommand({ TableName: tableName }));
    const arn = table.Table?.LatestStreamArn;
    if (arn === undefined) throw new Error(`table ${tableName} has no stream (the template's outbox must have one)`);
    return new OutboxStream(new DynamoDBStreamsClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS }), arn);
  }

  async read(): Promise<StreamRecord[]> {
    const records: StreamRecord[] = [];
    let ExclusiveStartShardId: string | undefined;
    do {
      const description = await this.streams.send(new DescribeStreamCommand({ StreamArn: this.arn, ExclusiveStartShardId }));
      for (const shard of description.StreamDescription?.Shards ?? []) {
        const id = shard.ShardId!;
        if (this.done.has(id)) continue;
        const after = this.last.get(id);
        let iterator = (
          await this.streams.send(
            new GetShardIteratorCommand({
              StreamArn: this.arn,
              ShardId: id,
              ...(after === undefined
                ? { ShardIteratorType: 'TRIM_HORIZON' }
                : { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: after }),
            }),
          )
        ).ShardIterator;
        while (iterator !== undefined) {
          const page = await this.streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 1000 }));
          const got = page.Records ?? [];
          records.push(...got);
          const newest = got.at(-1)?.dynamodb?.SequenceNumber;
          if (newest !== undefined) this.last.set(id, newest);
          iterator = page.NextShardIterator;
          if (iterator === undefined && shard.SequenceNumberRange?.EndingSequenceNumber !== undefined) this.done.add(id);
          if (got.length === 0) break;
        }
      }
      ExclusiveStartShardId = description.StreamDescription?.LastEvaluatedShardId;
    } while (ExclusiveStartShardId !== undefined);
    return records;
  }

  close(): void {
    this.streams.destroy();
  }
}

/** A pending delivery of the bus to the app's target, at a virtual moment. */
interface Pending {
  atMs: number;
  order: number;
  event: DeliveredEvent;
  committedAtMs: number;
}

export interface EventPathOptions {
  endpoint: string;
  dynamo: DynamoDBClient;
  outboxTable: string;
  /** The outbox stream's event source mapping, from the template (filter, batch size, retries). */
  mapping: MappingConfig;
  eventBusName: string;
  /** A table name for the consumer's idempotency records. */
  idempotencyTable: string;
  /** The attribute the consumer dedupes on: `detail.eventId` (docs/events.md), or the envelope `id` (a broken app). */
  dedupeKey: 'detail.eventId' | 'id';
  settings: EventPathSettings;
  random: () => number;
  nowMs: () => number;
  /** The user is told: the consumer's side effect, once per dedupe key. */
  notify: (event: DeliveredEvent, receivedAtMs: number) => void;
}

export interface EventPath {
  /** Reads the stream and relays what is new to the bus (deliveries are queued at virtual times). */
  relay(): Promise<void>;
  /** Delivers to the app every queued event due at or before `untilMs`, in the order of their delivery times. */
  deliverUntil(untilMs: number): Promise<void>;
  readonly figures: EventPathFigures;
  close(): void;
}

/** Powertools' record layout (key `id`, TTL `expiration`), as examples/events-consumer/stack.ts declares it. */
const IDEMPOTENCY_TABLE = {
  KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
  AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
  TimeToLiveSpecification: { AttributeName: 'expiration', Enabled: true },
};

export async function startEventPath(options: EventPathOptions): Promise<EventPath> {
  const { settings, random } = options;
  const stream = await OutboxStream.open(options.endpoint, options.dynamo, options.outboxTable);
  await createTableFromResource(options.dynamo, options.idempotencyTable, IDEMPOTENCY_TABLE);
  const figures: EventPathFigures = {
    streamReads: 0,
    streamRecords: 0,
    filtered: 0,
    relayInvocations: 0,
    relayRepeats: 0,
    entriesRefused: 0,
    batchRetries: 0,
    givenUp: 0,
    accepted: 0,
    deliveries: 0,
    busDuplicates: 0,
    lateDeliveries: 0,
    handled: 0,
    deduped: 0,
    maxLagSeconds: 0,
  };
  const pending: Pending[] = [];
  let order = 0;
  const envelopeId = (): string => {
    const hex = (n: number) =>
      Math.floor(random() * 16 ** n)
        .toString(16)
        .padStart(n, '0');
    return `${hex(8)}-${hex(4)}-4${hex(3)}-${hex(4)}-${hex(12)}`;
  };
  const queue = (event: DeliveredEvent, atMs: number, committedAtMs: number) => {
    figures.deliveries += 1;
    pending.push({ atMs, order: (order += 1), event, committedAtMs });
  };

  // ---- the bus: PutEvents as the relay calls it ----
  const putEvents = async (entries: RelayEntry[]): Promise<PutEventsAnswer> => {
    const now = options.nowMs();
    const results = entries.map((entry) => {
      if (random() < settings.entryFailure) {
        figures.entriesRefused += 1;
        return { ErrorCode: 'ThrottlingException', ErrorMessage: 'Rate exceeded' };
      }
      const event: DeliveredEvent = {
        version: '0',
        id: envelopeId(),
        'detail-type': entry.DetailType,
        source: entry.Source,
        account: '000000000000',
        time: entry.Time.toISOString().replace(/\.\d{3}Z$/, 'Z'),
        region: LOCAL_REGION,
        resources: [],
        detail: JSON.parse(entry.Detail) as DeliveredEvent['detail'],
      };
      figures.accepted += 1;
      if (matches(APP_RULE, event)) {
        // Seconds normally; a throttled target is retried later, and a second delivery may follow.
        let at = now + 1_000 + Math.floor(random() * 4_000);
        if (random() < settings.lateDelivery) {
          figures.lateDeliveries += 1;
          at += 30_000 + Math.floor(random() * 270_000);
        }
        queue(event, at, entry.Time.getTime());
        if (random() < settings.busDuplicate) {
          figures.busDuplicates += 1;
          queue(event, at + 1_000 + Math.floor(random() * 599_000), entry.Time.getTime());
        }
      }
      return { EventId: event.id };
    });
    return { FailedEntryCount: results.filter((r) => 'ErrorCode' in r).length, Entries: results };
  };
  const relayDeps = { putEvents, eventBusName: options.eventBusName, now: options.nowMs, sleep: async () => undefined };

  // ---- the stream's event source mapping: filter, batches, retries from the failed record ----
  const invoke = async (batch: StreamRecordLike[]): Promise<void> => {
    let rest = batch;
    for (let attempt = 0; rest.length > 0; attempt += 1) {
      figures.relayInvocations += 1;
      const outcome = await relayBatch(rest, relayDeps);
      const failed = outcome.batchItemFailures[0]?.itemIdentifier;
      const from = failed === undefined ? -1 : rest.findIndex((r) => r.dynamodb?.SequenceNumber === failed);
      if (from === -1) {
        if (random() < settings.relayRepeat) {
          // Lambda did not get the answer (a timeout after PutEvents went through): the batch again.
          figures.relayRepeats += 1;
          figures.relayInvocations += 1;
          await relayBatch(rest, relayDeps);
        }
        return;
      }
      rest = rest.slice(from);
      const retries = options.mapping.maxRetryAttempts < 0 ? Infinity : options.mapping.maxRetryAttempts;
      if (attempt >= retries) {
        figures.givenUp += rest.length;
        return;
      }
      figures.batchRetries += 1;
    }
  };

  // ---- the app's consumer (docs/events.md): Powertools idempotency on the dedupe key ----
  const persistenceStore = new DynamoDBPersistenceLayer({ tableName: options.idempotencyTable, awsSdkV3Client: options.dynamo });
  const config = new IdempotencyConfig({
    eventKeyJmesPath: options.dedupeKey,
    expiresAfterSeconds: 48 * 3600,
    throwOnNoIdempotencyKey: true,
  });
  let receivedAtMs = 0;
  const consume = makeIdempotent(
    async (event: DeliveredEvent, _context: unknown) => {
      figures.handled += 1;
      options.notify(event, receivedAtMs);
      return { notified: event.detail.eventId };
    },
    { persistenceStore, config },
  );
  const context = { getRemainingTimeInMillis: () => 30_000, functionName: 'sim-app-consumer', awsRequestId: 'sim' };

  return {
    figures,
    async relay() {
      figures.streamReads += 1;
      const records = (await stream.read()) as StreamRecordLike[];
      figures.streamRecords += records.length;
      const kept = records.filter(
        (record) => options.mapping.filters.length === 0 || options.mapping.filters.some((filter) => matches(filter, record)),
      );
      figures.filtered += records.length - kept.length;
      for (let i = 0; i < kept.length; i += options.mapping.batchSize) await invoke(kept.slice(i, i + options.mapping.batchSize));
    },
    async deliverUntil(untilMs: number) {
      pending.sort((a, b) => a.atMs - b.atMs || a.order - b.order);
      while (pending.length > 0 && pending[0]!.atMs <= untilMs) {
        const next = pending.shift()!;
        receivedAtMs = next.atMs;
        const before = figures.handled;
        await consume(next.event, context);
        if (figures.handled === before) figures.deduped += 1;
        else figures.maxLagSeconds = Math.max(figures.maxLagSeconds, Math.round((next.atMs - next.committedAtMs) / 1000));
      }
    },
    close() {
      stream.close();
    },
  };
}
