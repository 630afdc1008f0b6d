/**
 * The keys of the upgrade (docs/runbook.md, "Upgrading to qualified keys"): the marker item in
 * Coordination, and the new tables' keys of a copied row. Pure.
 */
import { createHash } from 'node:crypto';

/** The marker item's partition key in the Coordination table. */
export const MIGRATION_MARKER_PK = 'migration#qualified-keys';

/** The reply clock of a source in the new Contests table: `clock#<platform>` (`#` never occurs in a qualified id). */
export const clockKey = (platform: string): string => `clock#${platform}`;

/** Partition keys a contest's reminders spread over in the new Reminders table. */
export const REMINDER_BUCKETS = 16;

/** The bucket of a user's reminders: the first byte of SHA-256(userId) mod REMINDER_BUCKETS. */
export function bucketOf(userId: string): number {
  return createHash('sha256').update(userId).digest()[0]! % REMINDER_BUCKETS;
}

/** The new Reminders table's partition key: `<contestId>#<bucket>`, the bucket two digits. */
export const contestKeyOf = (contestId: string, bucket: number): string => `${contestId}#${String(bucket).padStart(2, '0')}`;
