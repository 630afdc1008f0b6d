/**
 * The outbox relay: the consumer of the outbox table's DynamoDB stream. Each INSERT record is an
 * outbox item the job committed; the relay puts it on the EventBridge bus as it was sized and
 * written (source, detail-type, the detail text with `eventId`, the commit time as `time`).
 *
 * Stream semantics, one rule each:
 *   - decode    — a record that is no outbox item cannot be delivered: it fails from its
 *                 position, so Lambda's bisection isolates it and the on-failure queue gets it;
 *   - batch     — PutEvents takes 10 entries and 256 KB per request;
 *   - send      — a partial failure (`FailedEntryCount`) re-sends only the entries that failed,
 *                 a few times with backoff, never the ones that went through;
 *   - checkpoint — at the first entry that still failed, the relay stops and reports that record
 *                 (`batchItemFailures`): the records before it are done, it and those after are
 *                 retried by Lambda (finite retries, then the dead-letter queue).
 * Pure of AWS clients: `putEvents` is injected. See the package README ("Side effects").
 */
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { OUTBOX_ITEM } from '../contract.js';
import { entryBytes, MAX_EVENT_ENTRY_BYTES } from '../runtime/outbox.js';
import { describe } from '../runtime/aws-errors.js';
import { OutboxRecordError } from '../runtime/errors.js';
import { packInOrder } from '../runtime/batches.js';
import { realSleep, type Sleep } from '../runtime/retry.js';

/** A DynamoDB stream record as Lambda passes it (and as GetRecords returns it). */
export interface StreamRecordLike {
  eventID?: string;
  eventName?: string;
  dynamodb?: {
    // DynamoDB JSON ({ S: … }, { N: … }); decoded with util-dynamodb.
    NewImage?: Record<string, unknown>;
    SequenceNumber?: string;
  };
}

/** One PutEvents entry. */
export interface RelayEntry {
  Source: string;
  DetailType: string;
  Detail: string;
  EventBusName: string;
  Time: Date;
}

export interface PutEventsAnswer {
  FailedEntryCount?: number;
  Entries?: { EventId?: string; ErrorCode?: string; ErrorMessage?: string }[];
}

export interface RelayDeps {
  putEvents: (entries: RelayEntry[]) => Promise<PutEventsAnswer>;
  eventBusName: string;
  now: () => number;
  /** @default a real timer */
  sleep?: Sleep;
  /**
   * Sends of one request (the first included) before its failed entries fail the batch.
   * @default 3
   */
  attempts?: number;
  /** @default none */
  warn?: (message: string, fields: Record<string, unknown>) => void;
}

export interface RelayOutcome {
  delivered: number;
  /** Records not delivered (retried by Lambda from the first of them). */
  failed: number;
  /** Records that are no INSERT (the event source mapping's filter normally drops them). */
  ignored: number;
  /** Entries that failed once and went through when sent again. */
  resent: number;
  /** Largest commit-to-bus delay of the delivered events (ms). */
  maxLagMs: number;
  batchItemFailures: { itemIdentifier: string }[];
  /** Why the first failed record failed. */
  error?: string;
}

/** PutEvents' per-request limits. */
export const PUT_EVENTS_MAX_ENTRIES = 10;
export const PUT_EVENTS_MAX_BYTES = MAX_EVENT_ENTRY_BYTES;

interface Decoded {
  identifier: string;
  entry: RelayEntry;
  createdAtMs: number;
  bytes: number;
}

/** The entry of one outbox INSERT record, or an OutboxRecordError naming what is wrong. */
export function decodeRecord(record: StreamRecordLike, eventBusName: string): Decoded {
  const identifier = record.dynamodb?.SequenceNumber ?? record.eventID ?? '';
  const image = record.dynamodb?.NewImage;
  if (image === undefined) throw new OutboxRecordError(`record ${identifier} has no new image (the stream must be NEW_IMAGE)`);
  let item: Record<string, unknown>;
  try {
    item = unmarshall(image as Parameters<typeof unmarshall>[0]);
  } catch (error) {
    throw new OutboxRecordError(`record ${identifier}: image not decodable (${describe(error)})`);
  }
  const text = (name: string): string => {
    const value = item[name];
    if (typeof value !== 'string' || value === '') throw new OutboxRecordError(`record ${identifier}: outbox item without ${name}`);
    return value;
  };
  const source = text(OUTBOX_ITEM.source);
  const detailType = text(OUTBOX_ITEM.detailType);
  const detail = text(OUTBOX_ITEM.detail);
  const createdAtMs = Number(item[OUTBOX_ITEM.createdAtMs]);
  if (!Number.isFinite(createdAtMs)) throw new OutboxRecordError(`record ${identifier}: outbox item without ${OUTBOX_ITEM.createdAtMs}`);
  const bytes = entryBytes({ source, detailType, detail });
  if (bytes > MAX_EVENT_ENTRY_BYTES)
    throw new OutboxRecordError(`record ${identifier}: entry of ${bytes} bytes exceeds EventBridge's ${MAX_EVENT_ENTRY_BYTES}`);
  return {
    identifier,
    createdAtMs,
    bytes,
    entry: { Source: source, DetailType: detailType, Detail: detail, EventBusName: eventBusName, Time: new Date(createdAtMs) },
  };
}

/** Consecutive records in PutEvents requests: at most 10 entries and 256 KB each. */
export function requestsOf(decoded: readonly Decoded[]): Decoded[][] {
  return packInOrder(decoded, { maxCount: PUT_EVENTS_MAX_ENTRIES, maxBytes: PUT_EVENTS_MAX_BYTES }, (one) => one.bytes);
}

/**
 * Sends one request; re-sends only the entries that failed, up to `attempts` sends in all.
 * Returns the position (in `request`) of the first entry still failed, or -1, and how many went
 * through on a re-send.
 */
async function sendRequest(request: readonly Decoded[], deps: RelayDeps): Promise<{ firstFailed: number; resent: number; error?: string }> {
  const attempts = deps.attempts ?? 3;
  let pending = request.map((_, position) => position);
  let error: string | undefined;
  let resent = 0;
  for (let attempt = 1; attempt <= attempts && pending.length > 0; attempt += 1) {
    if (attempt > 1) await (deps.sleep ?? realSleep)(100 * 2 ** (attempt - 2));
    const batch = pending;
    try {
      const answer = await deps.putEvents(batch.map((position) => request[position]!.entry));
      const entries = answer.Entries ?? [];
      // An answer without per-entry results but with failures: nothing is known to have gone through.
      if ((answer.FailedEntryCount ?? 0) > 0 && entries.length !== batch.length) {
        error = `PutEvents reported ${answer.FailedEntryCount} failed entries without per-entry results`;
        continue;
      }
      pending = batch.filter((_, index) => entries[index]?.ErrorCode !== undefined);
      if (attempt > 1) resent += batch.length - pending.length;
      const first = entries.find((entry) => entry.ErrorCode !== undefined);
      if (first !== undefined) {
        error = `PutEvents entry failed: ${first.ErrorCode} ${first.ErrorMessage ?? ''}`.trim();
        deps.warn?.('PutEvents entries failed; re-sending them', { failed: pending.length, attempt, error });
      }
    } catch (thrown) {
      error = `PutEvents failed: ${describe(thrown)}`;
      deps.warn?.('PutEvents failed; retrying', { attempt, error });
    }
  }
  return {
    firstFailed: pending.length > 0 ? Math.min(...pending) : -1,
    resent,
    ...(error !== undefined && pending.length > 0 ? { error } : {}),
  };
}

/** Delivers one stream batch; reports the first record not delivered (`batchItemFailures`). */
export async function relayBatch(records: readonly StreamRecordLike[], deps: RelayDeps): Promise<RelayOutcome> {
  const outcome: RelayOutcome = { delivered: 0, failed: 0, ignored: 0, resent: 0, maxLagMs: 0, batchItemFailures: [] };
  const decoded: Decoded[] = [];
  let stopAt: { identifier: string; error: string } | undefined;
  for (const record of records) {
    if (record.eventName !== 'INSERT') {
      outcome.ignored += 1;
      continue;
    }
    try {
      decoded.push(decodeRecord(record, deps.eventBusName));
    } catch (error) {
      // Nothing after it is sent now: Lambda retries from this record, bisecting the batch.
      stopAt = { identifier: record.dynamodb?.SequenceNumber ?? record.eventID ?? '', error: describe(error) };
      break;
    }
  }
  const inserts = records.filter((record) => record.eventName === 'INSERT').length;
  for (const request of requestsOf(decoded)) {
    const sent = await sendRequest(request, deps);
    outcome.resent += sent.resent;
    const through = sent.firstFailed === -1 ? request : request.slice(0, sent.firstFailed);
    outcome.delivered += through.length;
    for (const one of through) outcome.maxLagMs = Math.max(outcome.maxLagMs, deps.now() - one.createdAtMs);
    if (sent.firstFailed !== -1) {
      stopAt = { identifier: request[sent.firstFailed]!.identifier, error: sent.error ?? 'PutEvents entry failed' };
      break;
    }
  }
  if (stopAt !== undefined) {
    outcome.batchItemFailures.push({ itemIdentifier: stopAt.identifier });
    outcome.error = stopAt.error;
  }
  outcome.failed = inserts - outcome.delivered;
  return outcome;
}
