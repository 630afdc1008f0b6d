/**
 * The reminder write path's decisions, pure (docs/tables.md, "The reminder write path"): from the
 * contest item and the reminder row as read, what a set does — nothing (the same intent is
 * stored), the whole new row and the conditions its transaction commits under, or a typed
 * refusal — and what a caller is shown of a row (ReminderView). No I/O: lambda/reminders/client.ts
 * reads, writes and retries.
 *
 * A reminder's identity is the user's intent (`intent`, a random id stamped here): a new row, a new
 * lead time, or a set after a cancel is a new intent, written as a whole new row without the
 * previous intent's bookkeeping (`notifiedAt`, `notifiedStart`, `sentStarts`, `paused`), so it is
 * sent once for itself even if the previous intent was sent; the ReminderDue event id names the
 * intent, so a consumer's dedupe on `detail.eventId` does not swallow it. The same lead time again
 * is the same intent: nothing is written.
 */
import { notifiedStartOf } from '../contests/reminders.js';
import { parseQualifiedId, platformOf } from '../sources/ids.js';
import { ContestNotFoundError, ContestStartedError, type ReminderError } from './errors.js';
import type { SetInput } from './input.js';
import { contestKeyOf, dueShardOf } from './table.js';

/** What a caller is shown of a reminder. Internal attributes (the intent, the due bookkeeping) are not. */
export interface ReminderView {
  /** The platform-qualified id: `codeforces:2120`. */
  contestId: string;
  minutesBefore: number;
  /** Epoch seconds: the contest's start − 60 × minutesBefore (kept true by the sync). */
  remindAt: number;
  /**
   * `scheduled`: it will be sent when due; `paused`: not now (its contest's start is in doubt, or
   * it vanished, or the contest's reminders are not yet due anywhere); `sent`: sent for the start
   * its contest has (a later move of the start makes it `scheduled` again).
   */
  state: 'scheduled' | 'paused' | 'sent';
  /** With `sent`: the start (epoch seconds) it was sent for. */
  sentStart?: number;
}

/** What the write path reads of a contest item (the rest is the sync's). */
export interface ContestState {
  contestId: string;
  startTimeSeconds: number;
  expiresAt: number;
  phase: string;
  /** The start its reminders may fire at now (the sync's gate); absent while they may not. */
  dueStart?: number;
  /** Why its reminders may not fire now (the sync's reason; shown on a row as `paused`). */
  remindersPaused?: string;
  vanishedAt?: number;
}

/** The attributes of a contest item the write path reads (its GetItem projection). */
export const CONTEST_ATTRIBUTES = [
  'contestId',
  'platform',
  'startTimeSeconds',
  'expiresAt',
  'phase',
  'dueStart',
  'remindersPaused',
  'vanishedAt',
] as const;

const isInteger = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value);

/**
 * The contest as read, or undefined when there is none the app could set a reminder on: no item,
 * not a contest of the platform its id names (a source's reply clock has no platform), or an item
 * without a usable start or TTL.
 */
export function contestStateOf(item: Record<string, unknown> | undefined): ContestState | undefined {
  if (item === undefined || parseQualifiedId(item.contestId) === undefined) return undefined;
  const { contestId, platform, startTimeSeconds, expiresAt, phase, dueStart, remindersPaused, vanishedAt } = item;
  if (platform !== platformOf(contestId as string)) return undefined;
  if (!isInteger(startTimeSeconds) || !isInteger(expiresAt) || typeof phase !== 'string') return undefined;
  return {
    contestId: contestId as string,
    startTimeSeconds,
    expiresAt,
    phase,
    ...(isInteger(dueStart) ? { dueStart } : {}),
    ...(typeof remindersPaused === 'string' ? { remindersPaused } : {}),
    ...(vanishedAt !== undefined ? { vanishedAt: Number(vanishedAt) } : {}),
  };
}

/** A reminder row as the write path writes it (docs/tables.md, Reminders). */
export type ReminderRow = {
  /** The partition key: `<contestId>#<bucket>` (lambda/reminders/table.ts). */
  contestKey: string;
  contestId: string;
  userId: string;
  minutesBefore: number;
  /** The user's intent: a random id, new on every set that changes it. */
  intent: string;
  remindAt: number;
  expiresAt: number;
  /** With the contest's `dueStart`: due then, on the byDue index. */
  dueAt?: number;
  dueStart?: number;
  dueShard?: number;
  /** Without it: why not (the contest's `remindersPaused`). */
  paused?: string;
};

/**
 * The row as read, which the Put is conditioned on: none (`attribute_not_exists(userId)`), one
 * with an intent (`intent = :intent`), or one written before intents existed (still without one,
 * and with the lead time read).
 */
export type RowCondition = { kind: 'absent' } | { kind: 'intent'; intent: string } | { kind: 'legacy'; minutesBefore: unknown };

export type SetDecision =
  /** The stored row already holds this intent: nothing is written. `ours`: it was stamped by this very call (an earlier attempt landed). */
  | { kind: 'unchanged'; view: ReminderView; ours: boolean }
  /** One transaction: the contest as read (ConditionCheck) and the whole new row (Put, conditioned on the row as read). */
  | { kind: 'write'; row: ReminderRow; contest: ContestState; rowCondition: RowCondition; view: ReminderView }
  | { kind: 'refused'; error: ReminderError };

export interface SetContext {
  input: SetInput;
  /** The contest item as read (strongly consistent), or undefined. */
  contest: Record<string, unknown> | undefined;
  /** The reminder row as read (strongly consistent), or undefined. */
  row: Record<string, unknown> | undefined;
  nowSeconds: number;
  /** The intent this call stamps if it changes the user's intent (one per call, kept across its retries). */
  intent: string;
  dueShards: number;
}

/**
 * decideSet: what a set does.
 * 1. A stored row with the same lead time (and not past its TTL) is the same intent, whatever its
 *    contest does now: nothing is written (a retried or duplicated set changes nothing twice). A
 *    row written before intents existed counts as an intent.
 * 2. Otherwise the contest must be stored, not vanished (contest-not-found), and not started: its
 *    phase BEFORE and its start after now (contest-started).
 * 3. The new row: `minutesBefore`, the new `intent`, `remindAt = start − 60 × minutesBefore`,
 *    `expiresAt` = the contest's; if the contest has `dueStart`, `dueAt = dueStart − 60 ×
 *    minutesBefore`, `dueStart`, `dueShard` = the row's bucket mod dueShards (due then, even if that is
 *    already past: it is sent at once); otherwise `paused` = the contest's `remindersPaused` (the
 *    sync makes it due when the contest's reminders may fire again).
 */
export function decideSet(context: SetContext): SetDecision {
  const { input, row, nowSeconds, intent, dueShards } = context;
  if (row !== undefined) {
    const view = viewOf(row);
    const live = !isInteger(row.expiresAt) || row.expiresAt > nowSeconds;
    if (view !== undefined && live && view.minutesBefore === input.minutesBefore) {
      return { kind: 'unchanged', view, ours: row.intent === intent };
    }
  }
  const contest = contestStateOf(context.contest);
  if (contest === undefined || contest.contestId !== input.contestId || contest.vanishedAt !== undefined) {
    return { kind: 'refused', error: new ContestNotFoundError(input.contestId) };
  }
  if (contest.phase !== 'BEFORE' || nowSeconds >= contest.startTimeSeconds) {
    return { kind: 'refused', error: new ContestStartedError(input.contestId, contest.startTimeSeconds) };
  }
  const lead = 60 * input.minutesBefore;
  const next: ReminderRow = {
    contestKey: contestKeyOf(input.contestId, input.userId),
    contestId: input.contestId,
    userId: input.userId,
    minutesBefore: input.minutesBefore,
    intent,
    remindAt: contest.startTimeSeconds - lead,
    expiresAt: contest.expiresAt,
    ...(contest.dueStart !== undefined
      ? { dueAt: contest.dueStart - lead, dueStart: contest.dueStart, dueShard: dueShardOf(input.userId, dueShards) }
      : contest.remindersPaused !== undefined
        ? { paused: contest.remindersPaused }
        : {}),
  };
  return { kind: 'write', row: next, contest, rowCondition: rowConditionOf(row), view: viewOf(next)! };
}

export function rowConditionOf(row: Record<string, unknown> | undefined): RowCondition {
  if (row === undefined) return { kind: 'absent' };
  if (typeof row.intent === 'string') return { kind: 'intent', intent: row.intent };
  return { kind: 'legacy', minutesBefore: row.minutesBefore };
}

/**
 * viewOf: what a caller is shown of a row, or undefined for a row that cannot be shown (written by
 * hand without a usable lead time or time). `sent`: not due and paused as `notified` (the
 * delivery's claim; the sync keeps it while its contest's start is one it was sent for), or, on a
 * row from before that attribute, notified and not paused for another reason.
 */
export function viewOf(row: Record<string, unknown>): ReminderView | undefined {
  const { contestId, minutesBefore, remindAt, dueAt, paused } = row;
  if (typeof contestId !== 'string' || !isInteger(minutesBefore) || !isInteger(remindAt)) return undefined;
  const notifiedAt = isInteger(row.notifiedAt) ? row.notifiedAt : undefined;
  const notifiedStart = isInteger(row.notifiedStart) ? row.notifiedStart : undefined;
  const sentStart = notifiedStartOf({
    contestId,
    userId: '',
    minutesBefore,
    remindAt,
    ...(notifiedAt !== undefined ? { notifiedAt } : {}),
    ...(notifiedStart !== undefined ? { notifiedStart } : {}),
  });
  const base = { contestId, minutesBefore, remindAt };
  if (dueAt !== undefined) return { ...base, state: 'scheduled' };
  if (sentStart !== undefined && (paused === 'notified' || paused === undefined)) return { ...base, state: 'sent', sentStart };
  return { ...base, state: 'paused' };
}

/** Whether a row is past its TTL (DynamoDB deletes expired items days late): such a row is not listed. */
export function expired(row: Record<string, unknown>, nowSeconds: number): boolean {
  return isInteger(row.expiresAt) && row.expiresAt <= nowSeconds;
}
