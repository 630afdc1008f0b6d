/** Items of the Contests and Reminders tables: the data contract the app reads (docs/design.md, "Tables"). */

export type Phase = 'BEFORE' | 'CODING' | 'PENDING_SYSTEM_TEST' | 'SYSTEM_TEST' | 'FINISHED';

export interface ContestItem {
  contestId: number;
  platform: 'codeforces';
  name: string;
  type: string;
  phase: string;
  startTimeSeconds: number;
  durationSeconds: number;
  url: string;
  /** ISO-8601 time of the sync that last wrote the item (not compared when diffing). */
  updatedAt: string;
  /** TTL, epoch seconds: the contest's end plus the retention of finished contests. */
  expiresAt: number;
  /**
   * Vanished marker (docs/design.md, "Vanished contests"): set when the contest was missing from a
   * valid reply, epoch seconds of the first miss. The app does not show a contest that has it as
   * upcoming. Removed if the contest comes back; the contest is deleted with its reminders once it
   * has been missing from `missingSyncsBeforeDelete` consecutive successful syncs.
   */
  vanishedAt?: number;
  /** With `vanishedAt`: how many consecutive successful syncs missed it. */
  missingSyncs?: number;
  /**
   * A change the replies reported that is not fully acted on yet (docs/design.md, "A reply is
   * evidence"): held (the item is kept as stored), or acted on with its irreversible part
   * (deleting reminders, clearing `notifiedAt`, moving a reminder into the near past) waiting for
   * the next reply to confirm it. The app does not read it.
   */
  pending?: Pending;
}

export interface Pending {
  /** Held: nothing of the change is acted on. Otherwise the change is written and awaits confirmation. */
  held: boolean;
  /** Why it is held (with `held`). */
  kind?: string;
  /** What the replies said: the listed phase, start and duration, or `missing`. */
  said: string;
  /** How many consecutive replies said it. */
  replies: number;
  /** Epoch seconds of the first of those replies. */
  since: number;
}

export interface ReminderItem {
  contestId: number;
  userId: string;
  minutesBefore: number;
  /** Epoch seconds: startTimeSeconds − 60 × minutesBefore. */
  remindAt: number;
  notifiedAt?: number;
}

/** The fields that make two versions of a contest different (updatedAt is bookkeeping). */
export const COMPARED_FIELDS = [
  'platform',
  'name',
  'type',
  'phase',
  'startTimeSeconds',
  'durationSeconds',
  'url',
  'expiresAt',
] as const satisfies readonly (keyof ContestItem)[];

export function contestUrl(contestId: number): string {
  return `https://codeforces.com/contest/${contestId}`;
}
