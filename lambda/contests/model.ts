/** Items of the Contests and Reminders tables: the data contract the app reads (DESIGN.md). */

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
