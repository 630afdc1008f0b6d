/**
 * The outbox relay's batch logic (packages/scheduled-singleton/src/relay/relay.ts) with PutEvents
 * injected: request limits, partial failures re-sent without the entries that went through, the
 * checkpoint at the first record still failed, and records that are no outbox item.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { outboxPuts } from '@contest-sync/scheduled-singleton';
import {
  outboxRelay,
  relayBatch,
  type PutEventsAnswer,
  type RelayEntry,
  type StreamRecordLike,
} from '@contest-sync/scheduled-singleton/relay';

const NOW = Date.UTC(2026, 11, 1, 10, 0, 0);
const settings = { table: 'outbox', source: 'heartbeat', retentionDays: 7 };

/** The stream record of the outbox item an event becomes (as DynamoDB's stream carries it). */
function record(sequence: number, detail: Record<string, unknown> = {}, eventName = 'INSERT'): StreamRecordLike {
  const [put] = outboxPuts([{ id: `beat#${sequence}`, detailType: 'Beat', detail: { n: sequence, ...detail } }], settings, {
    runId: 'r',
    fence: 1,
    nowMs: NOW - 2_000,
  });
  return { eventID: `e${sequence}`, eventName, dynamodb: { SequenceNumber: String(1000 + sequence), NewImage: marshall(put!.Put!.Item) } };
}

/** A PutEvents stand-in: records every request; `fail(entry, call)` names an ErrorCode for an entry. */
function bus(fail: (entry: RelayEntry, call: number) => string | undefined = () => undefined) {
  const calls: RelayEntry[][] = [];
  const putEvents = async (entries: RelayEntry[]): Promise<PutEventsAnswer> => {
    calls.push(entries);
    const results = entries.map((entry) => {
      const code = fail(entry, calls.length);
      return code === undefined ? { EventId: `id-${calls.length}` } : { ErrorCode: code, ErrorMessage: 'try later' };
    });
    return { FailedEntryCount: results.filter((r) => 'ErrorCode' in r).length, Entries: results };
  };
  return { calls, putEvents };
}

const deps = (putEvents: (entries: RelayEntry[]) => Promise<PutEventsAnswer>) => ({
  putEvents,
  eventBusName: 'bus',
  now: () => NOW,
  sleep: async () => undefined,
});
const ns = (entries: RelayEntry[]) => entries.map((entry) => (JSON.parse(entry.Detail) as { n: number }).n);

describe('relayBatch', () => {
  it('puts every INSERT on the bus as written (source, detail-type, detail with eventId, commit time), 10 entries a request', async () => {
    const { calls, putEvents } = bus();
    const records = [...Array.from({ length: 23 }, (_, i) => record(i + 1)), record(99, {}, 'REMOVE')];
    const outcome = await relayBatch(records, deps(putEvents));
    expect(outcome).toMatchObject({ delivered: 23, failed: 0, ignored: 1, resent: 0, maxLagMs: 2_000, batchItemFailures: [] });
    expect(calls.map((c) => c.length)).toEqual([10, 10, 3]);
    expect(calls[0]![0]).toEqual({
      Source: 'heartbeat',
      DetailType: 'Beat',
      Detail: JSON.stringify({ eventId: 'beat#1', n: 1 }),
      EventBusName: 'bus',
      Time: new Date(NOW - 2_000),
    });
  });

  it('keeps each request within 256 KB', async () => {
    const { calls, putEvents } = bus();
    const big = 'x'.repeat(100 * 1024);
    await relayBatch([record(1, { big }), record(2, { big }), record(3, { big })], deps(putEvents));
    expect(calls.map(ns)).toEqual([[1, 2], [3]]);
  });

  it('re-sends only the entries that failed (FailedEntryCount), never the ones that went through', async () => {
    const { calls, putEvents } = bus((entry, call) =>
      call === 1 && [2, 4].includes((JSON.parse(entry.Detail) as { n: number }).n) ? 'ThrottlingException' : undefined,
    );
    const outcome = await relayBatch(
      [1, 2, 3, 4, 5].map((n) => record(n)),
      deps(putEvents),
    );
    expect(calls.map(ns)).toEqual([
      [1, 2, 3, 4, 5],
      [2, 4],
    ]);
    expect(outcome).toMatchObject({ delivered: 5, failed: 0, resent: 2, batchItemFailures: [] });
  });

  it('checkpoints at the first entry still failed: the records before it are done, nothing after it is sent', async () => {
    const { calls, putEvents } = bus((entry) => ((JSON.parse(entry.Detail) as { n: number }).n === 13 ? 'InternalFailure' : undefined));
    const outcome = await relayBatch(
      Array.from({ length: 25 }, (_, i) => record(i + 1)),
      deps(putEvents),
    );
    // Request 1 (1-10) went through; request 2 (11-20): 13 failed three times; 21-25 never sent.
    expect(calls.map(ns)).toEqual([[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [11, 12, 13, 14, 15, 16, 17, 18, 19, 20], [13], [13]]);
    expect(outcome).toMatchObject({ delivered: 12, failed: 13, batchItemFailures: [{ itemIdentifier: '1013' }] });
    expect(outcome.error).toMatch(/InternalFailure/);
  });

  it('retries a request PutEvents refused whole, and one answered with failures but no per-entry results', async () => {
    let call = 0;
    const putEvents = async (entries: RelayEntry[]): Promise<PutEventsAnswer> => {
      call += 1;
      if (call === 1) throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
      if (call === 2) return { FailedEntryCount: entries.length };
      return { FailedEntryCount: 0, Entries: entries.map(() => ({ EventId: 'x' })) };
    };
    expect(await relayBatch([record(1), record(2)], { ...deps(putEvents), attempts: 3 })).toMatchObject({
      delivered: 2,
      batchItemFailures: [],
    });
    expect(call).toBe(3);
  });

  it('stops at a record that is no outbox item (for Lambda to bisect and dead-letter), delivering those before it', async () => {
    const { calls, putEvents } = bus();
    const poison: StreamRecordLike = {
      eventName: 'INSERT',
      dynamodb: { SequenceNumber: '1003', NewImage: marshall({ pk: 'x#y', source: 'heartbeat' }) },
    };
    const outcome = await relayBatch([record(1), record(2), poison, record(4)], deps(putEvents));
    expect(calls.map(ns)).toEqual([[1, 2]]);
    expect(outcome).toMatchObject({ delivered: 2, failed: 2, batchItemFailures: [{ itemIdentifier: '1003' }] });
    expect(outcome.error).toMatch(/outbox item without detailType/);
  });
});

describe('outboxRelay (the handler)', () => {
  it('logs one summary line and one EMF line per batch, and returns the checkpoint', async () => {
    const lines: string[] = [];
    const { putEvents } = bus((entry) => ((JSON.parse(entry.Detail) as { n: number }).n === 2 ? 'InternalFailure' : undefined));
    const handler = outboxRelay({
      putEvents,
      env: { EVENT_BUS_NAME: 'bus', POWERTOOLS_SERVICE_NAME: 'svc', POWERTOOLS_METRICS_NAMESPACE: 'Ns' },
      now: () => NOW,
      sleep: async () => undefined,
      write: (line) => lines.push(line),
    });
    expect(await handler({ Records: [record(1), record(2), record(3)] })).toEqual({ batchItemFailures: [{ itemIdentifier: '1002' }] });
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed.find((l) => l.summary === true)).toMatchObject({
      level: 'ERROR',
      message: 'delivered in part',
      delivered: 1,
      failed: 2,
      retryFrom: '1002',
    });
    expect(parsed.find((l) => '_aws' in l)).toMatchObject({ service: 'svc', EventsDelivered: 1, EventsFailed: 2, DeliveryLag: 2_000 });
  });

  it('throws without its bus name, so the batch is retried until the stack is fixed', async () => {
    await expect(outboxRelay({ putEvents: bus().putEvents, env: {}, write: () => undefined })({ Records: [record(1)] })).rejects.toThrow(
      /EVENT_BUS_NAME is not set/,
    );
  });
});
