/**
 * The I/O of `npm run redrive` (docs/runbook.md, "Events not delivered"): the outbox items
 * committed in a window (one Scan, filtered on `createdAtMs`), the contests and reminder rows of
 * the ReminderDue items among them (BatchGetItem), and the resend of an item — deleted as read,
 * then put back unchanged, so that the stream carries a new INSERT to the relay. The decisions
 * are ./plan.ts's; nothing is written unless `apply` is set.
 */
import { BatchGetCommand, DeleteCommand, PutCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { OUTBOX_ITEM } from '@contest-sync/scheduled-singleton/contract';
import { planRedrive, readOutboxItem, reminderRefs, verdictOf, reminderOf, type PlanEntry, type ReminderRef } from './plan.js';
import { reminderKey } from '../../lambda/reminders/table.js';

export interface RedriveTables {
  outbox: string;
  contests: string;
  reminders: string;
}

/** The most items one redrive reads: a wider window is refused (narrow it). */
export const MAX_WINDOW_ITEMS = 100_000;
/** BatchGetItem takes at most 100 keys per request. */
const BATCH_GET_KEYS = 100;
const BATCH_GET_ROUNDS = 8;

export class RedriveError extends Error {
  override readonly name = 'RedriveError';
}

/** Every outbox item committed in [fromMs, toMs] (strongly consistent, all pages). */
export async function scanWindow(
  doc: DynamoDBDocumentClient,
  outbox: string,
  fromMs: number,
  toMs: number,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await doc.send(
      new ScanCommand({
        TableName: outbox,
        ConsistentRead: true,
        FilterExpression: '#created BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#created': OUTBOX_ITEM.createdAtMs },
        ExpressionAttributeValues: { ':from': fromMs, ':to': toMs },
        ...(ExclusiveStartKey !== undefined ? { ExclusiveStartKey } : {}),
      }),
    );
    items.push(...((page.Items ?? []) as Record<string, unknown>[]));
    if (items.length > MAX_WINDOW_ITEMS)
      throw new RedriveError(`more than ${MAX_WINDOW_ITEMS} outbox items in the window: narrow it (--from, --to)`);
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey !== undefined);
  return items;
}

type Key = Record<string, unknown>;

/** Reads keys of one table, 100 per request, unprocessed keys again (a few rounds). */
async function batchGet(
  doc: DynamoDBDocumentClient,
  table: string,
  keys: readonly Key[],
  projection: string[],
): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  for (let offset = 0; offset < keys.length; offset += BATCH_GET_KEYS) {
    let pending: Key[] | undefined = keys.slice(offset, offset + BATCH_GET_KEYS);
    for (let round = 1; pending !== undefined && pending.length > 0; round += 1) {
      if (round > BATCH_GET_ROUNDS) throw new RedriveError(`could not read ${pending.length} items of ${table}: still unprocessed`);
      const out = await doc.send(
        new BatchGetCommand({
          RequestItems: {
            [table]: {
              Keys: pending,
              ConsistentRead: true,
              ProjectionExpression: projection.map((_, i) => `#a${i}`).join(', '),
              ExpressionAttributeNames: Object.fromEntries(projection.map((name, i) => [`#a${i}`, name])),
            },
          },
        }),
      );
      found.push(...((out.Responses?.[table] ?? []) as Record<string, unknown>[]));
      pending = out.UnprocessedKeys?.[table]?.Keys as Key[] | undefined;
    }
  }
  return found;
}

/** The contests and reminder rows of the ReminderDue items, as they are now. */
export async function readLookups(
  doc: DynamoDBDocumentClient,
  tables: RedriveTables,
  refs: readonly ReminderRef[],
): Promise<(ref: ReminderRef) => { contest?: Record<string, unknown>; reminder?: Record<string, unknown> }> {
  const contestIds = [...new Set(refs.map((ref) => ref.contestId))];
  const rowKey = (contestId: unknown, userId: unknown) => JSON.stringify([contestId, userId]);
  const rowKeys = [...new Map(refs.map((ref) => [rowKey(ref.contestId, ref.userId), reminderKey(ref.contestId, ref.userId)])).values()];
  const contests = new Map(
    (
      await batchGet(
        doc,
        tables.contests,
        contestIds.map((contestId) => ({ contestId })),
        ['contestId', 'dueStart'],
      )
    ).map((item) => [String(item.contestId), item]),
  );
  const reminders = new Map(
    (await batchGet(doc, tables.reminders, rowKeys, ['contestId', 'userId', 'intent', 'notifiedStart'])).map((item) => [
      rowKey(item.contestId, item.userId),
      item,
    ]),
  );
  return (ref) => {
    const contest = contests.get(ref.contestId);
    const reminder = reminders.get(rowKey(ref.contestId, ref.userId));
    return { ...(contest !== undefined ? { contest } : {}), ...(reminder !== undefined ? { reminder } : {}) };
  };
}

export type ResendOutcome =
  /** Deleted and put back: the stream carries a new INSERT. */
  | 'resent'
  /** The item changed or went since it was read: left alone. */
  | 'changed'
  /** Deleted, and written again by a job before the put (its INSERT delivers it): nothing to put. */
  | 'rewritten';

/**
 * Resends one item: deletes it as read (its id and commit time), then puts it back unchanged,
 * conditional on nothing having written it in between. The outbox has no other way to make its
 * stream carry an item again (an update is a MODIFY, which the relay does not deliver).
 */
export async function resend(doc: DynamoDBDocumentClient, outbox: string, item: Record<string, unknown>): Promise<ResendOutcome> {
  const key = { [OUTBOX_ITEM.key]: item[OUTBOX_ITEM.key] };
  try {
    await doc.send(
      new DeleteCommand({
        TableName: outbox,
        Key: key,
        ConditionExpression: '#id = :id AND #created = :created',
        ExpressionAttributeNames: { '#id': OUTBOX_ITEM.eventId, '#created': OUTBOX_ITEM.createdAtMs },
        ExpressionAttributeValues: { ':id': item[OUTBOX_ITEM.eventId], ':created': item[OUTBOX_ITEM.createdAtMs] },
      }),
    );
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return 'changed';
    throw error;
  }
  try {
    await doc.send(
      new PutCommand({
        TableName: outbox,
        Item: item,
        ConditionExpression: 'attribute_not_exists(#pk)',
        ExpressionAttributeNames: { '#pk': OUTBOX_ITEM.key },
      }),
    );
  } catch (error) {
    if ((error as Error).name === 'ConditionalCheckFailedException') return 'rewritten';
    throw new RedriveError(
      `deleted ${String(item[OUTBOX_ITEM.key])} but could not put it back (${(error as Error).name}): put this item back by hand: ${JSON.stringify(item)}`,
    );
  }
  return 'resent';
}

export interface RedriveOptions {
  doc: DynamoDBDocumentClient;
  tables: RedriveTables;
  fromMs: number;
  toMs: number;
  now: () => number;
  /** Resend what the plan allows; without it, only say what would be resent (a dry run). */
  apply: boolean;
}

export interface RedriveResult {
  plan: PlanEntry[];
  /** With `apply`: what became of each item the plan allowed, by key. */
  outcomes: Map<string, ResendOutcome | 'refused-now'>;
}

/**
 * Reads the window, decides, and (with `apply`) resends. Each resend decides again just before
 * (a start may pass while a long redrive runs): what the rule refuses then is `refused-now`.
 */
export async function redrive(options: RedriveOptions): Promise<RedriveResult> {
  const { doc, tables } = options;
  const items = await scanWindow(doc, tables.outbox, options.fromMs, options.toMs);
  const lookup = await readLookups(doc, tables, reminderRefs(items));
  const plan = planRedrive(items, options.now(), lookup);
  const outcomes = new Map<string, ResendOutcome | 'refused-now'>();
  if (!options.apply) return { plan, outcomes };
  const byKey = new Map(items.map((item) => [item[OUTBOX_ITEM.key], item]));
  for (const entry of plan) {
    if (!entry.verdict.resend) continue;
    const item = byKey.get(entry.pk)!;
    const record = readOutboxItem(item)!;
    const ref = reminderOf(record);
    if (!verdictOf(record, options.now(), ref === undefined ? {} : lookup(ref)).resend) {
      outcomes.set(entry.pk, 'refused-now');
      continue;
    }
    outcomes.set(entry.pk, await resend(doc, tables.outbox, item));
  }
  return { plan, outcomes };
}
