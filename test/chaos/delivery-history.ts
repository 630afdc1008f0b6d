/**
 * The delivery part of a trial's history, from the DynamoDB wire (taps.ts records), for the
 * delivery checker (delivery-checker.ts):
 *
 * - what made each reminder due or not due, and at which start: the seed, the syncs' reminder
 *   updates (`SET #dueAt = :dueAt ...` / `REMOVE #dueAt ...`, from the syncs' recorder), and the
 *   claims themselves (a claim takes the row out of the index);
 * - the delivery job's claim transactions (from the delivery workers' recorder): the lease check
 *   that fences them, each claim (`SET notifiedAt = :now, notifiedStart = :start ...` with the due
 *   time and start it is conditional on) and each `ReminderDue` outbox put, with its run and fence;
 * - the delivery lease's grants (acquisitions), as storeOps reads them.
 *
 * Each write has the window in which it landed and whether it did (`ok`), did not (`refused`) or
 * may have (`unknown`). A TransactWriteItems retried with the same ClientRequestToken after it
 * succeeded landed once, at its first success.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { ReminderRow } from './dataset.js';
import { storeOps, type OpOutcome, type TableNames } from './history.js';
import type { WireRecord } from './taps.js';

type Json = Record<string, unknown>;

/** `contestId/userId` (the contest by its qualified id). */
export const reminderKey = (contestId: unknown, userId: unknown): string => `${String(contestId)}/${String(userId)}`;
/** The same of a table key `{contestKey, userId}`: the contest is the bucket key without its bucket (`…#07`). */
export const reminderKeyOf = (key: Json): string => reminderKey(String(key.contestKey).replace(/#\d{2}$/, ''), key.userId);

/** A reminder's due state after a write: due at (dueAt, dueStart), or not due. */
export type DueState = { dueAt: number; dueStart: number } | undefined;

export interface DueWrite {
  key: string;
  by: 'seed' | 'sync' | 'claim' | 'app';
  forwardedAtMs: number;
  repliedAtMs: number;
  outcome: OpOutcome;
  /** The row's due state after it. */
  due: DueState;
}

export interface ClaimRecord {
  key: string;
  contestId: string;
  userId: string;
  /** The due time and start the claim is conditional on. */
  dueAt: number;
  dueStart: number;
  /** The claim's `:now` (epoch s). */
  nowSeconds: number;
  /** The user's intent the claim is conditional on (absent: a row written before intents). */
  intent?: string;
}

/** What the app did through the write path: an intent set (the whole row put) or a cancel (the row deleted). */
export interface AppWrite {
  key: string;
  kind: 'set' | 'cancel';
  /** With `set`: the intent stamped. */
  intent?: string;
  forwardedAtMs: number;
  repliedAtMs: number;
  outcome: OpOutcome;
}

export interface EventRecord {
  eventId: string;
  key: string;
  contestId: string;
  userId: string;
  startTimeSeconds: number;
  dueAt: number;
  runId?: string;
  fence?: number;
}

export interface ClaimTransaction {
  forwardedAtMs: number;
  repliedAtMs: number;
  outcome: OpOutcome;
  /** The delivery lease's ConditionCheck (absent: the transaction was not fenced). */
  check?: { runId: string; fence: number };
  claims: ClaimRecord[];
  events: EventRecord[];
}

export interface LeaseGrant {
  runId: string;
  fence: number;
  forwardedAtMs: number;
  repliedAtMs: number;
}

export interface DeliveryTables extends TableNames {
  outbox: string;
}

const values = (raw: unknown): Json =>
  raw === undefined || raw === null ? {} : (unmarshall(raw as Record<string, AttributeValue>) as Json);

function outcomeOf(record: WireRecord): OpOutcome {
  if (record.status === 200) return 'ok';
  if (record.status >= 400 && record.status < 500) return 'refused';
  return 'unknown';
}

/** The wire's TransactWriteItems, each once (a retry of a committed token is not a new write). */
function transactions(records: readonly WireRecord[]): { record: WireRecord; items: Json[] }[] {
  const committed = new Set<string>();
  const out: { record: WireRecord; items: Json[] }[] = [];
  for (const record of records) {
    const body = record.request as Json | undefined;
    if (record.operation !== 'TransactWriteItems' || body === undefined) continue;
    const token = typeof body.ClientRequestToken === 'string' ? body.ClientRequestToken : undefined;
    if (token !== undefined) {
      if (committed.has(token)) continue;
      if (record.status === 200) committed.add(token);
    }
    out.push({ record, items: (Array.isArray(body.TransactItems) ? body.TransactItems : []) as Json[] });
  }
  return out;
}

/** The seed's due states, as if written before everything. */
export function seededDue(reminders: readonly ReminderRow[]): DueWrite[] {
  return reminders.map((r) => ({
    key: reminderKey(r.contestId, r.userId),
    by: 'seed',
    forwardedAtMs: 0,
    repliedAtMs: 0,
    outcome: 'ok',
    due: r.dueAt !== undefined && r.dueStart !== undefined ? { dueAt: r.dueAt, dueStart: r.dueStart } : undefined,
  }));
}

/**
 * The syncs' reminder updates that change a row's due state (lambda/sync/store.ts,
 * `reminderAction`): `SET #dueAt = :dueAt` (due; the start is `dueAt + 60 × minutesBefore`, as the
 * firing rule computes it) or `REMOVE ... #dueAt` (not due). Updates that leave dueAt alone are not
 * due-state changes.
 */
export function syncDueWrites(records: readonly WireRecord[], tables: TableNames): DueWrite[] {
  const writes: DueWrite[] = [];
  for (const { record, items } of transactions(records)) {
    for (const item of items) {
      const update = item.Update as Json | undefined;
      if (update === undefined || update.TableName !== tables.reminders) continue;
      const key = values(update.Key);
      const v = values(update.ExpressionAttributeValues);
      const expression = String(update.UpdateExpression ?? '');
      const landing = {
        key: reminderKeyOf(key),
        by: 'sync' as const,
        forwardedAtMs: record.forwardedAtMs,
        repliedAtMs: record.repliedAtMs,
        outcome: outcomeOf(record),
      };
      if (typeof v[':dueAt'] === 'number') {
        const dueStart = typeof v[':dueStart'] === 'number' ? v[':dueStart'] : v[':dueAt'] + 60 * Number(v[':mb']);
        writes.push({ ...landing, due: { dueAt: v[':dueAt'], dueStart } });
      } else if (/REMOVE .*#dueAt\b/.test(expression)) {
        writes.push({ ...landing, due: undefined });
      }
    }
  }
  return writes;
}

const isClaim = (update: Json, tables: TableNames): boolean =>
  update.TableName === tables.reminders && String(update.UpdateExpression ?? '').includes('notifiedStart = :start');

/** The delivery job's transactions that claim rows or write events (its releases and others are left out). */
export function claimTransactions(records: readonly WireRecord[], tables: DeliveryTables, leaseKey: string): ClaimTransaction[] {
  const out: ClaimTransaction[] = [];
  for (const { record, items } of transactions(records)) {
    const txn: ClaimTransaction = {
      forwardedAtMs: record.forwardedAtMs,
      repliedAtMs: record.repliedAtMs,
      outcome: outcomeOf(record),
      claims: [],
      events: [],
    };
    for (const item of items) {
      const [kind, action] = (Object.entries(item)[0] ?? []) as [string, Json | undefined];
      if (action === undefined) continue;
      if (kind === 'ConditionCheck' && action.TableName === tables.coordination && values(action.Key).pk === leaseKey) {
        const v = values(action.ExpressionAttributeValues);
        txn.check = { runId: String(v[':runId']), fence: Number(v[':fence']) };
      } else if (kind === 'Update' && isClaim(action, tables)) {
        const key = values(action.Key);
        const v = values(action.ExpressionAttributeValues);
        txn.claims.push({
          key: reminderKeyOf(key),
          contestId: String(key.contestKey).replace(/#\d{2}$/, ''),
          userId: String(key.userId),
          dueAt: Number(v[':seen']),
          dueStart: Number(v[':start']),
          nowSeconds: Number(v[':now']),
          ...(typeof v[':intent'] === 'string' ? { intent: v[':intent'] } : {}),
        });
      } else if (kind === 'Put' && action.TableName === tables.outbox) {
        txn.events.push(eventOf(values(action.Item)));
      }
    }
    if (txn.claims.length > 0 || txn.events.length > 0) out.push(txn);
  }
  return out.sort((a, b) => a.repliedAtMs - b.repliedAtMs);
}

/** A ReminderDue outbox item (as put, or as scanned from the outbox table at the end). */
export function eventOf(item: Json): EventRecord {
  let detail: Json = {};
  try {
    detail = JSON.parse(String(item.detail ?? '{}')) as Json;
  } catch {
    // an unreadable detail names no reminder: the checker reports it as an event without a claim
  }
  return {
    eventId: String(item.eventId),
    key: reminderKey(detail.contestId, detail.userId),
    contestId: String(detail.contestId),
    userId: String(detail.userId),
    startTimeSeconds: Number(detail.startTimeSeconds),
    dueAt: Number(detail.dueAt),
    ...(typeof item.runId === 'string' ? { runId: item.runId } : {}),
    ...(typeof item.fence === 'number' ? { fence: item.fence } : {}),
  };
}

/**
 * The app's writes through the write path (lambda/reminders/client.ts), from its own recorder: a
 * set is a TransactWriteItems whose Put writes the whole row (due at its dueAt and dueStart, or
 * not due), a cancel a DeleteItem of the row.
 */
export function appWrites(records: readonly WireRecord[], tables: TableNames): AppWrite[] {
  const writes: AppWrite[] = [];
  for (const { record, items } of transactions(records)) {
    for (const item of items) {
      const put = item.Put as Json | undefined;
      if (put === undefined || put.TableName !== tables.reminders) continue;
      const row = values(put.Item);
      writes.push({
        key: reminderKey(row.contestId, row.userId),
        kind: 'set',
        ...(typeof row.intent === 'string' ? { intent: row.intent } : {}),
        forwardedAtMs: record.forwardedAtMs,
        repliedAtMs: record.repliedAtMs,
        outcome: outcomeOf(record),
      });
    }
  }
  for (const record of records) {
    const body = record.request as Json | undefined;
    if (record.operation !== 'DeleteItem' || body?.TableName !== tables.reminders) continue;
    const key = values(body.Key);
    const base = { forwardedAtMs: record.forwardedAtMs, repliedAtMs: record.repliedAtMs, outcome: outcomeOf(record) };
    writes.push({ key: reminderKeyOf(key), kind: 'cancel', ...base });
  }
  return writes.sort((a, b) => a.forwardedAtMs - b.forwardedAtMs);
}

/** The app's writes as due-state writes: a set leaves the row due as its Put says, a cancel leaves none. */
export function appDueWrites(records: readonly WireRecord[], tables: TableNames): DueWrite[] {
  const out: DueWrite[] = [];
  for (const { record, items } of transactions(records)) {
    for (const item of items) {
      const put = item.Put as Json | undefined;
      if (put === undefined || put.TableName !== tables.reminders) continue;
      const row = values(put.Item);
      const due =
        typeof row.dueAt === 'number' && typeof row.dueStart === 'number' ? { dueAt: row.dueAt, dueStart: row.dueStart } : undefined;
      const landing = { forwardedAtMs: record.forwardedAtMs, repliedAtMs: record.repliedAtMs, outcome: outcomeOf(record) };
      out.push({ key: reminderKey(row.contestId, row.userId), by: 'app', ...landing, due });
    }
  }
  for (const write of appWrites(records, tables))
    if (write.kind === 'cancel') {
      const { key, forwardedAtMs, repliedAtMs, outcome } = write;
      out.push({ key, by: 'app', forwardedAtMs, repliedAtMs, outcome, due: undefined });
    }
  return out;
}

/** The claims as due-state writes (a committed claim takes the row out of the index). */
export function claimDueWrites(txns: readonly ClaimTransaction[]): DueWrite[] {
  return txns.flatMap((txn) =>
    txn.claims.map((claim): DueWrite => ({
      key: claim.key,
      by: 'claim',
      forwardedAtMs: txn.forwardedAtMs,
      repliedAtMs: txn.repliedAtMs,
      outcome: txn.outcome,
      due: undefined,
    })),
  );
}

/** The delivery lease's grants (successful acquisitions with the fence the store gave). */
export function leaseGrants(records: readonly WireRecord[], tables: TableNames, leaseKey: string): LeaseGrant[] {
  return storeOps(records, tables, leaseKey).flatMap((op) =>
    op.kind === 'acquire' && op.outcome === 'ok' && op.fence !== undefined
      ? [{ runId: op.runId, fence: op.fence, forwardedAtMs: op.forwardedAtMs, repliedAtMs: op.repliedAtMs }]
      : [],
  );
}
