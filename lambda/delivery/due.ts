/**
 * The pure decisions of reminder delivery (docs/delivery.md): which rows the byDue index returned
 * are deliverable now, what the ReminderDue event of one says and what its id is, and how claims
 * are packed into fenced transactions. No I/O: lambda/delivery/dynamo-due.ts reads and writes.
 *
 * The rules, one function each:
 *   validRow       — a row the app wrote is believed only if every attribute the event needs is
 *                    present and sane (`invalid` with the reason otherwise: skipped, counted, never
 *                    claimed);
 *   contestAgrees  — the firing rule is the sync's (the row is due because every piece of evidence
 *                    said so when the sync wrote it); delivery only refuses what it can see is
 *                    not so now: a contest that is gone or marked vanished (the sync's next
 *                    write pauses the row), and one without the name and URL the event needs;
 *   reminderDueId  — the event id is a function of (contestId, userId, dueStart) only, so a retry,
 *                    a duplicate run or a second job cannot make a second event for one start;
 *   deliverable    — an event the outbox would refuse (above EventBridge's entry limit) is
 *                    skipped before the claim, with the package's own check (validateEvent);
 *   packClaims     — at most MAX_CLAIMS_PER_TRANSACTION claims and TRANSACTION_BYTE_BUDGET bytes
 *                    per transaction.
 */
import { createHash } from 'node:crypto';
import { OutboxEventError, packInOrder, validateEvent } from '@contest-sync/scheduled-singleton';

export const REMINDER_DUE = 'ReminderDue';

/**
 * Claims per transaction: each is two actions (the row's conditional Update and its outbox Put),
 * and the lease's ConditionCheck takes one of DynamoDB's 100: 49 × 2 + 1 = 99.
 */
export const MAX_CLAIMS_PER_TRANSACTION = 49;
/**
 * DynamoDB caps a transaction at 4 MB of items, and the package packs its transactions below
 * 3.75 MB of action text: claims are packed below 2 MB as claimBytes counts them, so a batch
 * always goes out as one transaction.
 */
export const TRANSACTION_BYTE_BUDGET = 2 * 1024 * 1024;
/** What an outbox item adds to its event's bytes (keys, type, timestamps, TTL): an upper estimate. */
export const OUTBOX_ITEM_OVERHEAD_BYTES = 512;

/** Bounds of a believable row (the app writes them; docs/delivery.md, "Bad rows"). */
export const ROW_LIMITS = {
  /** DynamoDB's sort key limit is 1024 bytes; an id longer than this is not an app's user id. */
  maxUserIdBytes: 1024,
  /** A week before the start. */
  maxMinutesBefore: 7 * 24 * 60,
  /** Epoch seconds of 2000-01-01 and 2100-01-01: the contest model's bounds of a start. */
  minEpochSeconds: 946_684_800,
  maxEpochSeconds: 4_102_444_800,
  maxContestId: 2 ** 31 - 1,
} as const;

/** A row of the byDue index, as DynamoDB returned it (the app wrote it: nothing is trusted). */
export type RawRow = Record<string, unknown>;

/** A row that passed validation: what the claim and the event need. */
export interface DueRow {
  contestId: number;
  userId: string;
  minutesBefore: number;
  /** The due time the claim is conditional on (epoch s). */
  dueAt: number;
  /** The contest start the due time was computed for (epoch s). */
  dueStart: number;
  /** Estimated stored size of the row (bytes), for the transaction's 4 MB. */
  bytes: number;
}

export type InvalidReason =
  'contestId' | 'userId' | 'minutesBefore' | 'dueAt' | 'dueStart' | 'notifiedStart' | 'already-notified' | 'too-large';

/** Why a valid row is not delivered now: the stored contest does not agree (the sync will put it right). */
export type DeferReason = 'contest-missing' | 'contest-vanished' | 'evidence-stale';

/**
 * How old the sync's newest applied reply may be when a reminder is sent: one hourly interval plus
 * ten minutes. Older, the evidence behind every `dueAt` is in doubt (Codeforces down, replies
 * stale): a contest may have moved since and no reply could show it. When in doubt, delay: the
 * pass sends nothing until a sync applies a fresh reply (docs/tables.md, "The notifier").
 */
export const FRESH_EVIDENCE_SECONDS = 70 * 60;

/** evidenceFresh: the sync's reply clock (Contests item 0) shows a reply applied recently enough. */
export function evidenceFresh(clock: Record<string, unknown> | undefined, nowSeconds: number): boolean {
  const madeAt = clock?.replyMadeAt;
  return isInteger(madeAt) && nowSeconds - madeAt <= FRESH_EVIDENCE_SECONDS;
}

/** What delivery needs of a contest (Contests table). */
export interface ContestView {
  contestId: number;
  name: string;
  url: string;
  startTimeSeconds: number;
  durationSeconds: number;
  vanishedAt?: number;
  remindersPaused?: string;
}

/** The detail of a ReminderDue event (docs/events.md); `eventId` is added by the outbox. */
export type ReminderDueDetail = {
  contestId: number;
  userId: string;
  minutesBefore: number;
  startTimeSeconds: number;
  /** ISO time of the start, for people reading events. */
  startTime: string;
  name: string;
  url: string;
  /** The due time it was sent for (epoch s). */
  dueAt: number;
};

export interface ReminderDueEvent {
  id: string;
  detailType: typeof REMINDER_DUE;
  detail: ReminderDueDetail;
}

const isInteger = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value);
const inEpochRange = (value: number) => value >= ROW_LIMITS.minEpochSeconds && value <= ROW_LIMITS.maxEpochSeconds;

export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * validRow: every attribute the claim and the event need, present and sane. A row the app wrote
 * with a missing or absurd attribute is skipped with its reason (never claimed: the claim would
 * mark it sent). A row already notified for its start (the sync should not have made it due) is
 * refused too: at most once per start time.
 */
export function validRow(
  raw: RawRow,
): { ok: true; row: DueRow } | { ok: false; reason: InvalidReason; key?: { contestId: unknown; userId: unknown } } {
  const key = { contestId: raw.contestId, userId: raw.userId };
  const { contestId, userId, minutesBefore, dueAt, dueStart, notifiedStart } = raw;
  if (!isInteger(contestId) || contestId <= 0 || contestId > ROW_LIMITS.maxContestId) return { ok: false, reason: 'contestId', key };
  if (typeof userId !== 'string' || userId.length === 0 || utf8Bytes(userId) > ROW_LIMITS.maxUserIdBytes)
    return { ok: false, reason: 'userId', key };
  if (!isInteger(minutesBefore) || minutesBefore < 0 || minutesBefore > ROW_LIMITS.maxMinutesBefore)
    return { ok: false, reason: 'minutesBefore', key };
  if (!isInteger(dueStart) || !inEpochRange(dueStart)) return { ok: false, reason: 'dueStart', key };
  // Due no earlier than the lead time allows and no later than the start plus a day.
  if (!isInteger(dueAt) || dueAt < dueStart - 60 * ROW_LIMITS.maxMinutesBefore || dueAt > dueStart + 24 * 3600)
    return { ok: false, reason: 'dueAt', key };
  if (notifiedStart !== undefined && !isInteger(notifiedStart)) return { ok: false, reason: 'notifiedStart', key };
  if (notifiedStart === dueStart) return { ok: false, reason: 'already-notified', key };
  // Every start it was sent for before (kept by the sync): never again at one of them.
  const sent = raw.sentStarts;
  if ((sent instanceof Set || Array.isArray(sent)) && [...(sent as Iterable<unknown>)].includes(dueStart))
    return { ok: false, reason: 'already-notified', key };
  return { ok: true, row: { contestId, userId, minutesBefore, dueAt, dueStart, bytes: itemBytes(raw) } };
}

/**
 * contestAgrees: when, and at which start, a reminder fires is the sync's firing rule
 * (docs/tables.md): `dueAt` and `dueStart` say it, and the claim is conditional on both. Delivery
 * does not judge the evidence again (a second copy of the rule would drift from the first; a
 * contest may rightly show another start while its reminders are due at the confirmed one). It
 * refuses only what contradicts the rule as it stands now: a contest that is gone (no name or URL
 * for the event) or marked vanished, whose reminders the sync is pausing. Such a row waits,
 * unclaimed and still due, for the sync to put it right: a wrong pause costs lateness, a wrong
 * notification cannot be taken back.
 */
export function contestAgrees(contest: ContestView | undefined): { ok: true } | { ok: false; reason: DeferReason } {
  if (contest === undefined) return { ok: false, reason: 'contest-missing' };
  if (contest.vanishedAt !== undefined) return { ok: false, reason: 'contest-vanished' };
  return { ok: true };
}

/** A contest item as read, or undefined when it lacks what an event needs (then its rows wait). */
export function contestView(item: Record<string, unknown> | undefined): ContestView | undefined {
  if (item === undefined) return undefined;
  const { contestId, name, url, startTimeSeconds, durationSeconds, vanishedAt, remindersPaused } = item;
  if (!isInteger(contestId) || typeof name !== 'string' || typeof url !== 'string') return undefined;
  if (!isInteger(startTimeSeconds) || !isInteger(durationSeconds)) return undefined;
  return {
    contestId,
    name,
    url,
    startTimeSeconds,
    durationSeconds,
    ...(vanishedAt !== undefined ? { vanishedAt: Number(vanishedAt) } : {}),
    ...(remindersPaused !== undefined ? { remindersPaused: typeof remindersPaused === 'string' ? remindersPaused : 'set' } : {}),
  };
}

/**
 * reminderDueId: the same reminder and start always give the same id (and a new start a new one),
 * whoever computes it; hashed, so that a long user id cannot make an oversized key.
 */
export function reminderDueId(contestId: number, userId: string, dueStart: number): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([contestId, userId, dueStart]))
    .digest('hex');
  return `reminder-due:${digest.slice(0, 32)}`;
}

export function reminderDueEvent(row: DueRow, contest: ContestView): ReminderDueEvent {
  return {
    id: reminderDueId(row.contestId, row.userId, row.dueStart),
    detailType: REMINDER_DUE,
    detail: {
      contestId: row.contestId,
      userId: row.userId,
      minutesBefore: row.minutesBefore,
      startTimeSeconds: row.dueStart,
      startTime: new Date(row.dueStart * 1000).toISOString(),
      name: contest.name,
      url: contest.url,
      dueAt: row.dueAt,
    },
  };
}

/**
 * deliverable: the outbox would accept the event (the package's check: EventBridge's 256 KB entry
 * with the `eventId` it adds, id and detail-type bounds). Returns the bytes of its detail text, or
 * undefined when it would be refused: the row is then skipped (`too-large`), never claimed.
 */
export function deliverable(event: ReminderDueEvent, source: string): number | undefined {
  try {
    return utf8Bytes(validateEvent(event, source));
  } catch (error) {
    if (error instanceof OutboxEventError) return undefined;
    throw error;
  }
}

/**
 * The bytes a claim adds to its transaction, counted high so that the package never splits a
 * batch (a claim and its event must share one transaction): the row after the update, the Update
 * action's text, and the outbox item with its detail counted twice (JSON-escaped in the action).
 */
export function claimBytes(row: DueRow, detailBytes: number): number {
  return row.bytes + 512 + 2 * detailBytes + OUTBOX_ITEM_OVERHEAD_BYTES;
}

/** A DynamoDB item's size as DynamoDB counts it, closely enough for a budget (names + values). */
export function itemBytes(item: Record<string, unknown>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) bytes += utf8Bytes(name) + valueBytes(value);
  return bytes;
}

function valueBytes(value: unknown): number {
  if (typeof value === 'string') return utf8Bytes(value);
  if (typeof value === 'number' || typeof value === 'bigint') return 21;
  if (typeof value === 'boolean' || value === null || value === undefined) return 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...(value as Set<unknown>)].reduce<number>((sum, v) => sum + valueBytes(v), 3);
  if (Array.isArray(value)) return value.reduce<number>((sum, v) => sum + 1 + valueBytes(v), 3);
  if (typeof value === 'object') return 3 + itemBytes(value as Record<string, unknown>) + Object.keys(value).length;
  return 0;
}

/** A claim ready to be packed: its bytes in the transaction (the row after the update, and its outbox item). */
export interface Packable {
  bytes: number;
}

/**
 * packClaims: consecutive groups of at most `maxClaims` claims whose bytes stay within `budget`
 * (one transaction each). A claim larger than the budget alone cannot happen (rows are at most
 * 400 KB, events at most 256 KB) and still gets a transaction of its own.
 */
export function packClaims<C extends Packable>(
  claims: readonly C[],
  maxClaims: number = MAX_CLAIMS_PER_TRANSACTION,
  budget = TRANSACTION_BYTE_BUDGET,
): C[][] {
  if (!Number.isInteger(maxClaims) || maxClaims < 1 || maxClaims > MAX_CLAIMS_PER_TRANSACTION) {
    throw new RangeError(`claims per transaction must be 1 to ${MAX_CLAIMS_PER_TRANSACTION}, got ${maxClaims}`);
  }
  return packInOrder(claims, { maxCount: maxClaims, maxBytes: budget }, (claim) => claim.bytes);
}

/** Shards of the byDue index: a row's shard is `contestId mod dueShards` (docs/tables.md). */
export function dueShardOf(contestId: number, dueShards: number): number {
  return ((contestId % dueShards) + dueShards) % dueShards;
}
