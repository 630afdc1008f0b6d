/**
 * What the Reminders table offers the write path (docs/tables.md, "The reminder write path"): the
 * `byUser` index that listReminders reads, and the attributes it projects (exactly what a
 * ReminderView is made of, plus `expiresAt` to leave out rows past their TTL). No imports: the CDK
 * app loads it (lib/constructs/data-tables.ts builds the index from it).
 */

/** GSI on Reminders: partition `userId` (String), sort `contestId` (Number). */
export const REMINDERS_BY_USER_INDEX = 'byUser';

/** The non-key attributes `byUser` projects (the keys `contestId` and `userId` always are). */
export const BY_USER_PROJECTION = ['minutesBefore', 'remindAt', 'dueAt', 'paused', 'notifiedStart', 'notifiedAt', 'expiresAt'] as const;
