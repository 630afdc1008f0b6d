/**
 * The pure decisions of reminder delivery (docs/delivery.md): which rows the byDue index returned
 * are deliverable now, what the ReminderDue event of one says and what its id is, and how claims
 * are packed into fenced transactions. No I/O: lambda/delivery/dynamo-due.ts reads and writes.
 *
 * The rules, one function each:
 *   validRow       — a row the app wrote is believed only if every attribute the claim and the
 *                    event need is present and sane (`invalid` with the reason otherwise: skipped,
 *                    counted, never claimed);
 *   contestAgrees  — THE RULE (docs/delivery.md, "The rule"): a row may be claimed only if its
 *                    `dueStart` equals its contest's `dueStart`. Checked here on what was read
 *                    (a row that fails it is deferred, never claimed) and again where it counts,
 *                    in the claim's transaction: one ConditionCheck of the contest's gate per
 *                    bucket key in it (claimCheck, on the bucket gate: contests/bucket-gates.ts);
 *   reminderDueId  — the event id names the user's intent and the start: (contest, userId,
 *                    intent, dueStart), or (contest, userId, dueStart) for a row written before
 *                    intents, the contest named by its `idSeed` (a Codeforces contest by its
 *                    number, as before ids were qualified); a retry, a duplicate run or a second
 *                    job cannot make a second event for one intent and start, and a reminder set
 *                    again is a new event;
 *   deliverable    — an event the outbox would refuse (above EventBridge's entry limit) is
 *                    skipped before the claim, with the package's own check (validateEvent);
 *   packClaims     — claims grouped by bucket key (the claims of one key share its gate's
 *                    check), at most MAX_DATA_ACTIONS actions (2 per claim, 1 per bucket key) and
 *                    TRANSACTION_BYTE_BUDGET bytes per transaction.
 */
import { createHash } from 'node:crypto';
import { OutboxEventError, utf8Bytes, validateEvent } from '@contest-sync/scheduled-singleton';
import { idSeed, parseQualifiedId, platformIdOf } from '../sources/ids.js';
import { contestKeyOf } from '../reminders/table.js';
import { gateKeyOf } from '../contests/bucket-gates.js';

export const REMINDER_DUE = 'ReminderDue';

/**
 * Actions of a claim transaction besides the lease's ConditionCheck, which takes one of
 * DynamoDB's 100 (the package packs at most 99 data actions per transaction).
 */
export const MAX_DATA_ACTIONS = 99;
/**
 * Claims per transaction: each is two actions (the row's conditional Update and its outbox Put),
 * and its gate's ConditionCheck (the rule) one more, shared by the claims under one bucket key:
 * one key's 49 claims are 49 × 2 + 1 = 99 actions, plus the lease's check = 100. Claims under
 * several keys fit fewer (2 × claims + keys ≤ 99: packClaims counts).
 */
export const MAX_CLAIMS_PER_TRANSACTION = 49;
/**
 * DynamoDB caps a transaction at 4 MB of items, and the package packs its transactions below
 * 3.75 MB of action text: claims and gate checks are packed below 2 MB as claimBytes and
 * GATE_CHECK_BYTES count them, so a batch always goes out as one transaction.
 */
export const TRANSACTION_BYTE_BUDGET = 2 * 1024 * 1024;
/**
 * What a gate's ConditionCheck counts in a transaction's 4 MB: the item it checks, bounded high.
 * A bucket gate is its key (a qualified id of at most 128 bytes and its prefix and bucket), a
 * `dueStart` and an `expiresAt`: under 200 B; 1 KB leaves room, and 49 checks (one per claim at
 * most) then take at most 49 KB of the 2 MB budget.
 */
export const GATE_CHECK_BYTES = 1024;
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
  /** The write path stamps a 22-character id (docs/tables.md, `intent`); anything longer is not one. */
  maxIntentChars: 64,
} as const;

/** A row of the byDue index, as DynamoDB returned it (the app wrote it: nothing is trusted). */
export type RawRow = Record<string, unknown>;

/** A row that passed validation: what the claim and the event need. */
export interface DueRow {
  /** The contest's qualified id. */
  contestId: string;
  /** The row's partition key as read (`<contestId>#<bucket>`): what the claim updates. */
  contestKey: string;
  userId: string;
  minutesBefore: number;
  /** The due time the claim is conditional on (epoch s). */
  dueAt: number;
  /** The contest start the due time was computed for (epoch s). */
  dueStart: number;
  /** The user's intent the row was set with (absent: a row written before intents). */
  intent?: string;
  /** Estimated stored size of the row (bytes), for the transaction's 4 MB. */
  bytes: number;
}

export type InvalidReason =
  | 'contestId'
  | 'contestKey'
  | 'userId'
  | 'minutesBefore'
  | 'dueAt'
  | 'dueStart'
  | 'intent'
  | 'notifiedStart'
  | 'already-notified'
  | 'too-large';

/**
 * Why a valid row is not delivered now (it stays due; the sync puts it right):
 *   contest-missing — no contest item, or one without the name and URL the event needs;
 *   contest-paused  — the contest has no `dueStart`: none of its reminders may fire now (a held
 *                     change, vanished, finished elsewhere, started, expired, or an item the sync
 *                     has not written since the upgrade);
 *   contest-moved   — the contest's `dueStart` is not the row's: the row is due at a start its
 *                     contest does not have now;
 *   evidence-stale  — the sync has applied no fresh reply for over 70 minutes.
 */
export type DeferReason = 'contest-missing' | 'contest-paused' | 'contest-moved' | 'evidence-stale';

/**
 * How old the sync's newest applied reply may be when a reminder is sent: one hourly interval plus
 * ten minutes. Older, the evidence behind every `dueAt` is in doubt (Codeforces down, replies
 * stale): a contest may have moved since and no reply could show it. When in doubt, delay: the
 * pass sends nothing until a sync applies a fresh reply (docs/tables.md, "The notifier").
 * It stays beside the rule (contestAgrees): the rule compares the row with the contest's
 * `dueStart`, which is only as fresh as the sync's last reply; when no sync runs at all, nothing
 * else notices that the contest item itself may be stale.
 */
export const FRESH_EVIDENCE_SECONDS = 70 * 60;

/** evidenceFresh: the reply clock of the contest's source (Contests item `clock#<platform>`) shows a reply applied recently enough. */
export function evidenceFresh(clock: Record<string, unknown> | undefined, nowSeconds: number): boolean {
  const madeAt = clock?.replyMadeAt;
  return isInteger(madeAt) && nowSeconds - madeAt <= FRESH_EVIDENCE_SECONDS;
}

/** What delivery needs of a contest (Contests table): the rule's `dueStart`, the event's name and URL. */
export interface ContestView {
  contestId: string;
  platform: string;
  name: string;
  url: string;
  /** The start at which the contest's reminders may fire now (the sync's gate); absent: none may. */
  dueStart?: number;
}

/** The detail of a ReminderDue event (docs/events.md); `eventId` is added by the outbox. */
export type ReminderDueDetail = {
  /** The platform-qualified contest id, `codeforces:2120`. */
  contestId: string;
  /** Deprecated: the same as `contestId`, for consumers of the release before ids were qualified. */
  contest: string;
  platform: string;
  /** The platform's own id of the contest, as text. */
  platformId: string;
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

/**
 * validRow: every attribute the claim and the event need, present and sane. A row the app wrote
 * with a missing or absurd attribute is skipped with its reason (never claimed: the claim would
 * mark it sent). A row already notified for its start (the sync should not have made it due) is
 * refused too: at most once per start time. These checks stay beside the rule (contestAgrees): the
 * rule compares two starts and says nothing of the row's own lead time, user id, intent or due
 * time, nor of whether it was sent already.
 */
export function validRow(
  raw: RawRow,
): { ok: true; row: DueRow } | { ok: false; reason: InvalidReason; key?: { contestId: unknown; userId: unknown } } {
  const key = { contestId: raw.contestId, userId: raw.userId };
  const { contestId, contestKey, userId, minutesBefore, dueAt, dueStart, intent, notifiedStart } = raw;
  if (parseQualifiedId(contestId) === undefined) return { ok: false, reason: 'contestId', key };
  if (typeof userId !== 'string' || userId.length === 0 || utf8Bytes(userId) > ROW_LIMITS.maxUserIdBytes)
    return { ok: false, reason: 'userId', key };
  // The key the row is under must be the one its contest and user name: the claim updates it.
  if (typeof contestKey !== 'string' || contestKey !== contestKeyOf(contestId as string, userId))
    return { ok: false, reason: 'contestKey', key };
  if (!isInteger(minutesBefore) || minutesBefore < 0 || minutesBefore > ROW_LIMITS.maxMinutesBefore)
    return { ok: false, reason: 'minutesBefore', key };
  if (!isInteger(dueStart) || !inEpochRange(dueStart)) return { ok: false, reason: 'dueStart', key };
  // Due no earlier than the lead time allows and no later than the start plus a day.
  if (!isInteger(dueAt) || dueAt < dueStart - 60 * ROW_LIMITS.maxMinutesBefore || dueAt > dueStart + 24 * 3600)
    return { ok: false, reason: 'dueAt', key };
  // The user's intent (absent on a row written before intents: the legacy id, the legacy claim).
  if (intent !== undefined && (typeof intent !== 'string' || intent.length === 0 || intent.length > ROW_LIMITS.maxIntentChars))
    return { ok: false, reason: 'intent', key };
  if (notifiedStart !== undefined && !isInteger(notifiedStart)) return { ok: false, reason: 'notifiedStart', key };
  if (notifiedStart === dueStart) return { ok: false, reason: 'already-notified', key };
  // Every start it was sent for before (kept by the sync): never again at one of them.
  const sent = raw.sentStarts;
  if ((sent instanceof Set || Array.isArray(sent)) && [...(sent as Iterable<unknown>)].includes(dueStart))
    return { ok: false, reason: 'already-notified', key };
  return {
    ok: true,
    row: {
      contestId: contestId as string,
      contestKey,
      userId,
      minutesBefore,
      dueAt,
      dueStart,
      ...(intent !== undefined ? { intent } : {}),
      bytes: itemBytes(raw),
    },
  };
}

/**
 * contestAgrees — THE RULE (docs/delivery.md, "The rule"): a reminder row may be claimed only if
 * its `dueStart` equals its contest's `dueStart`, the start at which the sync says the contest's
 * reminders may fire now. A contest without `dueStart` lets none fire (paused, vanished, started,
 * or not yet written by a sync that sets it); one with another `dueStart` has moved, and the row
 * is due at a start the contest does not have. Either way the row waits, unclaimed and still
 * due, for the sync to put it right: a wrong pause costs lateness, a wrong notification cannot be
 * taken back. This is the check on what was read; the claim's transaction checks it again on the
 * contest as it is when the claim commits (claimCheck), so no write landing in between can make
 * a reminder fire for a start its contest does not have.
 */
export function contestAgrees(
  row: Pick<DueRow, 'dueStart'>,
  contest: ContestView | undefined,
): { ok: true } | { ok: false; reason: DeferReason } {
  if (contest === undefined) return { ok: false, reason: 'contest-missing' };
  if (contest.dueStart === undefined) return { ok: false, reason: 'contest-paused' };
  if (contest.dueStart !== row.dueStart) return { ok: false, reason: 'contest-moved' };
  return { ok: true };
}

/**
 * A contest item as read, or undefined when it lacks what an event needs (then its rows wait). A
 * `dueStart` that is not a whole number is no gate: read as absent (none of its reminders fire).
 */
export function contestView(item: Record<string, unknown> | undefined): ContestView | undefined {
  if (item === undefined) return undefined;
  const { contestId, name, url, dueStart } = item;
  const id = parseQualifiedId(contestId);
  if (id === undefined || typeof name !== 'string' || typeof url !== 'string') return undefined;
  return { contestId: id.contestId, platform: id.platform, name, url, ...(isInteger(dueStart) ? { dueStart } : {}) };
}

/**
 * The ConditionCheck a claim transaction carries for each bucket key in it (THE RULE, at commit
 * time): the key's gate (the contest's `dueStart`, copied per bucket by the sync in the contest's
 * own transaction) is still the one the claims were read against. Claims under one key share it
 * (a transaction holds at most one action per item); claims of one round sent by many delivery
 * jobs check different gates, so their transactions never conflict on one item.
 */
export function claimCheck(contestsTable: string, contestKey: string, dueStart: number) {
  return {
    ConditionCheck: {
      TableName: contestsTable,
      Key: { contestId: gateKeyOf(contestKey) },
      ConditionExpression: 'dueStart = :dueStart',
      ExpressionAttributeValues: { ':dueStart': dueStart },
    },
  };
}

/**
 * reminderDueId: the event id names the user's intent and the start (docs/events.md): the same
 * intent and start always give the same id, whoever computes it, and a new start or a new intent
 * (the reminder set again, its lead time changed) a new one. A row without `intent` (written
 * before intents) keeps the id it always had, of (contest, userId, dueStart), so an upgrade
 * never re-sends what was sent. The contest is named by its `idSeed` (lambda/sources/ids.ts): a
 * Codeforces contest by its number, as before ids were qualified, so no id changes with the keys.
 * Hashed, so that a long user id cannot make an oversized key.
 */
export function reminderDueId(contestId: string, userId: string, intent: string | undefined, dueStart: number): string {
  const seed = idSeed(contestId);
  const named = intent === undefined ? [seed, userId, dueStart] : [seed, userId, intent, dueStart];
  const digest = createHash('sha256').update(JSON.stringify(named)).digest('hex');
  return `reminder-due:${digest.slice(0, 32)}`;
}

export function reminderDueEvent(row: DueRow, contest: ContestView): ReminderDueEvent {
  return {
    id: reminderDueId(row.contestId, row.userId, row.intent, row.dueStart),
    detailType: REMINDER_DUE,
    detail: {
      contestId: row.contestId,
      contest: row.contestId,
      platform: contest.platform,
      platformId: platformIdOf(row.contestId),
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

/** A claim ready to be packed: its bucket key (the gate it checks) and its bytes in the transaction. */
export interface Packable {
  contestKey: string;
  bytes: number;
}

/**
 * packClaims: the claims in transactions, grouped by bucket key (in the order each key first
 * appears, each key's claims in their order) so that the claims under one key share its gate's
 * ConditionCheck. A transaction holds at most `maxClaims` claims, at most MAX_DATA_ACTIONS actions
 * (2 per claim, 1 per key in it) and at most `budget` bytes (the claims' bytes and
 * GATE_CHECK_BYTES per key); a key's claims that do not fit go on in the next one, which checks
 * that gate again. A claim larger than the budget alone cannot happen (rows are at most 400 KB,
 * events at most 256 KB) and still gets a transaction of its own.
 */
export function packClaims<C extends Packable>(
  claims: readonly C[],
  maxClaims: number = MAX_CLAIMS_PER_TRANSACTION,
  budget = TRANSACTION_BYTE_BUDGET,
): C[][] {
  if (!Number.isInteger(maxClaims) || maxClaims < 1 || maxClaims > MAX_CLAIMS_PER_TRANSACTION) {
    throw new RangeError(`claims per transaction must be 1 to ${MAX_CLAIMS_PER_TRANSACTION}, got ${maxClaims}`);
  }
  const byKey = new Map<string, C[]>();
  for (const claim of claims) {
    const group = byKey.get(claim.contestKey);
    if (group === undefined) byKey.set(claim.contestKey, [claim]);
    else group.push(claim);
  }
  const batches: C[][] = [];
  let current: C[] = [];
  let keys = new Set<string>();
  let actions = 0;
  let bytes = 0;
  for (const group of byKey.values()) {
    for (const claim of group) {
      const fits = () => {
        const newKey = !keys.has(claim.contestKey);
        return (
          current.length < maxClaims &&
          actions + 2 + (newKey ? 1 : 0) <= MAX_DATA_ACTIONS &&
          bytes + claim.bytes + (newKey ? GATE_CHECK_BYTES : 0) <= budget
        );
      };
      if (current.length > 0 && !fits()) {
        batches.push(current);
        current = [];
        keys = new Set();
        actions = 0;
        bytes = 0;
      }
      if (!keys.has(claim.contestKey)) {
        keys.add(claim.contestKey);
        actions += 1;
        bytes += GATE_CHECK_BYTES;
      }
      current.push(claim);
      actions += 2;
      bytes += claim.bytes;
    }
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/** The distinct bucket keys of a batch of claims: one gate ConditionCheck each. */
export function gatesOf(claims: readonly Pick<Packable, 'contestKey'>[]): number {
  return new Set(claims.map((claim) => claim.contestKey)).size;
}
