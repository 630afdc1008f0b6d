/**
 * Items of the Contests and Reminders tables (docs/tables.md), and what a source gives the model
 * (lambda/sources/source.ts): platform-neutral contests, keyed by their platform-qualified id
 * (`codeforces:2120`, a string), and the date of the reply. What a platform's entry means is its
 * source folder's; the model judges these and never parses an id.
 */

export type { ListedContest, Phase, ReplyDating, SourceReply } from '../sources/source.js';
import type { ListedContest } from '../sources/source.js';

export interface ContestItem extends ListedContest {
  /** ISO-8601 time of the sync that last wrote the item (not compared when diffing). */
  updatedAt: string;
  /** TTL, epoch seconds: the contest's end plus the retention of finished contests. */
  expiresAt: number;
  /**
   * Vanished marker (docs/design.md, "Vanished contests"): set when the contest was missing from a
   * valid reply, epoch seconds of the first miss. The app does not show a contest that has it as
   * upcoming. Removed if the contest is listed again (even with an entry that cannot be believed).
   */
  vanishedAt?: number;
  /** With `vanishedAt`: how many consecutive successful syncs missed it. */
  missingSyncs?: number;
  /**
   * Why the contest's reminders are not due at `startTimeSeconds` (docs/design.md, "The firing
   * rule"): absent while they are. The app reads it: while present, it writes a new reminder
   * without `dueAt` (the sync makes it due when the pause ends).
   */
  remindersPaused?: PauseReason;
  /**
   * The start the contest's reminders may fire at now (the firing rule's gate); absent while they
   * may not. Delivery claims a reminder only while its `dueStart` is this (docs/tables.md).
   */
  dueStart?: number;
  /**
   * The start that two consecutive replies agreed on (or the first listing, or an operator), and
   * that a reply showed before it began: the only start besides a later one that a reminder may be
   * due at. 0: none yet. Absent only on items written before the firing rule (read as the start).
   * The app does not read it.
   */
  confirmedStart?: number;
  /**
   * A start other than `confirmedStart` that a reply showed ahead and that awaits confirmation (a
   * postponement lands at once): kept while replies that cannot refute it come between (held
   * changes, misses, starts no reply showed ahead, a lie accepted after converging), so that a
   * reply listing it again confirms it and lands at once, like the undo. The app does not read it.
   */
  awaitedStart?: number;
  /**
   * Starts that were confirmed before another confirmed start replaced them, newest last (at most
   * `CONFIRMED_BEFORE_KEPT`): starts replies showed ahead. A reply listing one again is the truth's
   * return (a later lie confirmed in between): it is confirmed at once, even once it has begun.
   * The app does not read it.
   */
  confirmedBefore?: number[];
  /**
   * What the latest replies said of the contest when it differs from what is stored or awaits a
   * second reply (docs/design.md, "A reply is evidence"). The app does not read it.
   */
  pending?: Pending;
  /**
   * What the sync last published of the contest (docs/events.md, "Contest events"): the start it
   * announced, `withdrawn`, or `none` (nothing yet). The app does not read it.
   */
  published?: Published;
  /**
   * How many contest events the sync has published of the contest (absent: none). The next event
   * is number `publishedSeq + 1`: its id and its `detail.sequence` (docs/events.md). The app does
   * not read it.
   */
  publishedSeq?: number;
}

/** A contest's last published state: its start (announced, rescheduled or back), `withdrawn`, or `none`. */
export type Published = number | 'withdrawn' | 'none';

/**
 * Why a reminder is not due (the `paused` attribute of a reminder; `remindersPaused` of a contest):
 * - `held`: the latest reply reported a change that is held (a withdrawal, a finish, a postponement);
 * - `vanished`: missing from the latest reply, or deleted after its misses;
 * - `finished`: finished at a start other than the confirmed one;
 * - `started`: the latest reply lists a start no reply showed before it began (indistinguishable
 *   from a lie): it is no evidence for any start;
 * - `expired`: left unfinished past its TTL;
 * - `unconfirmed` (contests only): due at a start other than the listed one, awaiting a reply;
 * - `notified` (reminders only): already sent for the start it would be due at.
 */
export type PauseReason = 'held' | 'vanished' | 'finished' | 'started' | 'expired' | 'unconfirmed' | 'notified';

export interface Pending {
  /** Held: nothing of the change is shown. Otherwise the change is shown and awaits a second reply. */
  held: boolean;
  /** Why it is held (with `held`), or what awaits confirmation. */
  kind?: string;
  /** What the replies said (the evidence key, which phase progress does not change): `listed@<start>` or `missing`. */
  said: string;
  /** How many consecutive replies said it. */
  replies: number;
  /** Epoch seconds of the first of those replies. */
  since: number;
}

export interface ReminderItem {
  /** The contest's platform-qualified id. */
  contestId: string;
  /**
   * The row's partition key: `<contestId>#<bucket>` (lambda/reminders/table.ts, `contestKeyOf`), so
   * that one round's rows spread over REMINDER_BUCKETS partition keys (docs/design.md, "Tables").
   */
  contestKey?: string;
  userId: string;
  minutesBefore: number;
  /**
   * The user's intent, stamped by the write path on every set that changes it (lambda/reminders/):
   * what the ReminderDue event's id names. Absent on a row written before intents.
   */
  intent?: string;
  /** Epoch seconds: startTimeSeconds − 60 × minutesBefore (kept true by the sync). */
  remindAt: number;
  /** Present only while the reminder may fire: the notifier sends it once `dueAt <= now`. */
  dueAt?: number;
  /** With `dueAt`: the row's bucket mod dueShards (the `byDue` index's partition: docs/tables.md). */
  dueShard?: number;
  /** With `dueAt`: the contest start it was computed for. */
  dueStart?: number;
  /** Without `dueAt`: why (PauseReason). */
  paused?: string;
  /** Set by the notifier when it sends: when, and for which start. */
  notifiedAt?: number;
  notifiedStart?: number;
  /**
   * Every start it was sent for before `notifiedStart` (kept by the sync, which copies
   * `notifiedStart` in when it makes the reminder due again): never due again at any of them.
   */
  sentStarts?: Set<number>;
  /** TTL, epoch seconds: the contest's own `expiresAt`. */
  expiresAt?: number;
}

/**
 * The sync's own item in the Contests table, one per source (`clock#<platform>`; `#` never occurs
 * in a qualified id, and the item has no `platform`, so it is never in the app's index): the time
 * the newest applied reply was made (docs/design.md, "Stale replies").
 */
export const REPLY_CLOCK_PREFIX = 'clock#';
export type ReplyClockId = `clock#${string}`;
export const replyClockId = (platform: string): ReplyClockId => `${REPLY_CLOCK_PREFIX}${platform}`;
export const isReplyClockId = (contestId: unknown): contestId is ReplyClockId =>
  typeof contestId === 'string' && contestId.startsWith(REPLY_CLOCK_PREFIX);

export interface ReplyClockItem {
  contestId: ReplyClockId;
  /** Epoch seconds: when the source made the newest reply a sync applied. */
  replyMadeAt: number;
  updatedAt: string;
  /**
   * Contests deleted after a start was published (qualified contest id → since when missing, the
   * start published, whether the withdrawal was told, name, url): told withdrawn later, published
   * back if listed again (docs/events.md, "Contest events"). Bounded: contests/events.ts prunes it.
   */
  withdrawn?: Record<string, unknown>;
  /**
   * The `byDue` setting (DUE_SHARDS) the sync last ran with and ensured no row was left above, and
   * (`retiredDueShards`) the setting before it when that was higher: the shards from `dueShards` up
   * to it are swept once more (docs/delivery.md, "Changing the setting"). Absent on a clock written
   * before it was kept: any shard may hold rows.
   */
  dueShards?: number;
  retiredDueShards?: number;
}

/** The fields that make two versions of a contest different (updatedAt is bookkeeping). */
export const COMPARED_FIELDS = [
  'platform',
  'platformId',
  'name',
  'type',
  'phase',
  'startTimeSeconds',
  'durationSeconds',
  'url',
  'expiresAt',
] as const satisfies readonly (keyof ContestItem)[];
