/**
 * The Reminders table's keys and what it offers the write path (docs/tables.md): one round's rows
 * spread over REMINDER_BUCKETS partition keys (`contestKey` = `<contestId>#<bucket>`, the bucket
 * derived from the user), the `byUser` index that listReminders reads, and the attributes it
 * projects (exactly what a ReminderView is made of, plus `expiresAt` to leave out rows past their
 * TTL). Only node:crypto: the CDK app loads it (lib/constructs/data-tables.ts builds the indexes).
 */
import { createHash } from 'node:crypto';

/**
 * How many partition keys one contest's reminders are spread over (docs/design.md, "Tables"). A
 * product constant, not a setting: changing it would move every row to another key.
 */
export const REMINDER_BUCKETS = 16;

/** A user's bucket: the first byte of SHA-256 of the user id, mod REMINDER_BUCKETS (the same for every contest). */
export function bucketOf(userId: string): number {
  return createHash('sha256').update(userId, 'utf8').digest()[0]! % REMINDER_BUCKETS;
}

/** A bucket as its key writes it: two decimal digits, `00` to `15`. */
const bucketText = (bucket: number): string => String(bucket).padStart(2, '0');

/** The partition key of a user's reminder of a contest: `codeforces:2120#07`. */
export function contestKeyOf(contestId: string, userId: string): string {
  return `${contestId}#${bucketText(bucketOf(userId))}`;
}

/** Every partition key a contest's reminders may be under, bucket 0 first. */
export function contestKeys(contestId: string): string[] {
  return Array.from({ length: REMINDER_BUCKETS }, (_, bucket) => `${contestId}#${bucketText(bucket)}`);
}

/** The primary key of a user's reminder of a contest. */
export function reminderKey(contestId: string, userId: string): { contestKey: string; userId: string } {
  return { contestKey: contestKeyOf(contestId, userId), userId };
}

/** The row's `byDue` partition under a setting of `dueShards`: its bucket mod the setting, so one round spreads over every delivery job. */
export function dueShardOf(userId: string, dueShards: number): number {
  return bucketOf(userId) % dueShards;
}

/** GSI on Reminders: partition `userId` (String), sort `contestId` (String, qualified). */
export const REMINDERS_BY_USER_INDEX = 'byUser';

/** The non-key attributes `byUser` projects (the keys `contestId`, `userId` and `contestKey` always are). */
export const BY_USER_PROJECTION = ['minutesBefore', 'remindAt', 'dueAt', 'paused', 'notifiedStart', 'notifiedAt', 'expiresAt'] as const;
