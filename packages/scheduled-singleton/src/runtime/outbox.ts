/**
 * The outbox's record logic, apart from any I/O: what makes an event deliverable, how big its
 * EventBridge entry is, and the outbox item (a conditional Put) each event becomes in the job's
 * fenced transaction. Every event of a commit is checked before anything is written: one that
 * EventBridge or DynamoDB would refuse fails the commit with an OutboxEventError naming it, so
 * that nothing is half-written and nothing undeliverable reaches the stream. See the package
 * README, "Side effects".
 */
import { OUTBOX_ITEM } from '../contract.js';
import type { OutboxEvent, TransactAction } from './ports.js';
import { OutboxEventError } from './errors.js';
import { utf8Bytes } from './text.js';

/** EventBridge's limit on one PutEvents entry (and on a whole request). */
export const MAX_EVENT_ENTRY_BYTES = 256 * 1024;
/** An event id's bound: it is part of a DynamoDB key (2 KB) and of every consumer's dedupe key. */
export const MAX_EVENT_ID_BYTES = 256;
/** EventBridge's limits on `DetailType` and `Source`. */
export const MAX_DETAIL_TYPE_CHARS = 128;
export const MAX_SOURCE_CHARS = 256;
/** `Time` counts 14 bytes in EventBridge's entry size when present (the relay always sets it). */
const TIME_BYTES = 14;
/** Default days an outbox item is kept: the window in which an id is written once. */
export const DEFAULT_OUTBOX_RETENTION_DAYS = 7;

/** Where a job's events go: set by ScheduledSingletonJob's `outbox` (JOB_ENV). */
export interface OutboxSettings {
  table: string;
  /** The EventBridge `source` of every event of the job. */
  source: string;
  /** How long an outbox item is kept (its `ttl`), in days. */
  retentionDays: number;
}

/** The outbox key of an event: `<source>#<id>` (the job's grant is scoped to `<source>#*`). */
export function outboxKey(source: string, id: string): string {
  return `${source}#${id}`;
}

/** EventBridge's size of an entry: Time (14), Source, DetailType and Detail in UTF-8 bytes. */
export function entryBytes(entry: { source: string; detailType: string; detail: string }): number {
  return TIME_BYTES + utf8Bytes(entry.source) + utf8Bytes(entry.detailType) + utf8Bytes(entry.detail);
}

// Control characters make ids unreadable in logs and keys; EventBridge refuses them in names.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A usable EventBridge `source` for a job's events, or an OutboxEventError naming the problem. */
export function validateSource(source: string): string {
  if (typeof source !== 'string' || source === '' || source.length > MAX_SOURCE_CHARS || CONTROL.test(source)) {
    throw new OutboxEventError(`event source must be 1-${MAX_SOURCE_CHARS} printable characters, got ${JSON.stringify(source)}`);
  }
  if (source.startsWith('aws.'))
    throw new OutboxEventError(`event source ${source} is reserved: EventBridge refuses sources that start with "aws."`);
  return source;
}

/** The event's `detail` as the bus carries it (JSON text, `eventId` first), or an OutboxEventError. */
export function detailText(event: OutboxEvent): string {
  const { id, detail } = event;
  if (detail === null || typeof detail !== 'object' || Object.prototype.toString.call(detail) !== '[object Object]') {
    throw new OutboxEventError(`event ${id}: detail must be a JSON object`, id);
  }
  const own = (detail as Record<string, unknown>)[OUTBOX_ITEM.eventId];
  if (own !== undefined && own !== id) {
    throw new OutboxEventError(`event ${id}: detail.eventId is set by the package to the event id, got ${JSON.stringify(own)}`, id);
  }
  try {
    return JSON.stringify({ [OUTBOX_ITEM.eventId]: id, ...detail });
  } catch (error) {
    throw new OutboxEventError(`event ${id}: detail is not JSON (${(error as Error).message})`, id);
  }
}

/** Checks one event: id, detail-type and the size of the entry it becomes. Returns its detail text. */
export function validateEvent(event: OutboxEvent, source: string): string {
  const id = event?.id;
  if (typeof id !== 'string' || id === '' || utf8Bytes(id) > MAX_EVENT_ID_BYTES || CONTROL.test(id)) {
    throw new OutboxEventError(`event id must be 1-${MAX_EVENT_ID_BYTES} bytes of printable text, got ${JSON.stringify(id)}`);
  }
  const type = event.detailType;
  if (typeof type !== 'string' || type === '' || type.length > MAX_DETAIL_TYPE_CHARS || CONTROL.test(type)) {
    throw new OutboxEventError(
      `event ${id}: detailType must be 1-${MAX_DETAIL_TYPE_CHARS} printable characters, got ${JSON.stringify(type)}`,
      id,
    );
  }
  const detail = detailText(event);
  const bytes = entryBytes({ source, detailType: type, detail });
  if (bytes > MAX_EVENT_ENTRY_BYTES) {
    throw new OutboxEventError(
      `event ${id}: its EventBridge entry would be ${bytes} bytes, above the ${MAX_EVENT_ENTRY_BYTES}-byte limit`,
      id,
    );
  }
  return detail;
}

export interface OutboxWriteContext {
  runId: string;
  fence: number;
  nowMs: number;
}

/**
 * The outbox puts of a commit's events, each conditional on its key not existing (written once).
 * Checks every event first (OutboxEventError), and refuses two events with one id in one commit.
 */
export function outboxPuts(events: readonly OutboxEvent[], settings: OutboxSettings, context: OutboxWriteContext): TransactAction[] {
  const source = validateSource(settings.source);
  const seen = new Set<string>();
  const items = events.map((event) => {
    const detail = validateEvent(event, source);
    if (seen.has(event.id)) throw new OutboxEventError(`event ${event.id} appears twice in one commit: one change, one event`, event.id);
    seen.add(event.id);
    return {
      [OUTBOX_ITEM.key]: outboxKey(source, event.id),
      [OUTBOX_ITEM.eventId]: event.id,
      [OUTBOX_ITEM.source]: source,
      [OUTBOX_ITEM.detailType]: event.detailType,
      [OUTBOX_ITEM.detail]: detail,
      [OUTBOX_ITEM.createdAtMs]: context.nowMs,
      [OUTBOX_ITEM.runId]: context.runId,
      [OUTBOX_ITEM.fence]: context.fence,
      [OUTBOX_ITEM.ttl]: Math.ceil(context.nowMs / 1000) + Math.round(settings.retentionDays * 86_400),
    };
  });
  return items.map((Item) => ({
    Put: {
      TableName: settings.table,
      Item,
      ConditionExpression: 'attribute_not_exists(#pk)',
      ExpressionAttributeNames: { '#pk': OUTBOX_ITEM.key },
    },
  }));
}
