/**
 * The bucket gates (docs/design.md, "The bucket gates"), pure: a copy of a contest's gate
 * (`dueStart`) per bucket key of its reminders, so that the claims of one popular round, sent by
 * many delivery jobs at once, share no item. DynamoDB cancels a transaction that touches an item
 * another ongoing transaction holds (TransactionConflict), so claim transactions that all checked
 * the one contest item went one after another, whichever job sent them.
 *
 * The rules:
 *   gateKeyOf   — the gate of a reminder row is the Contests item `gate#<contestKey>`
 *                 (`gate#codeforces:2120#07`): one per bucket key, never a contest id (a
 *                 qualified id has no `#`) nor a reply clock (`clock#<platform>`);
 *   gateChanged — the gates are written exactly when the contest's `dueStart` changes (set,
 *                 moved, removed) or the contest is deleted with one; a write that leaves
 *                 `dueStart` as it was leaves the gates as they are;
 *   gateItems   — written in the same transaction as the contest item (every bucket's, at once):
 *                 a gate holds the contest's `dueStart` with the contest's TTL while the contest
 *                 has one, and does not exist while it has none — so a claim checks its bucket's
 *                 gate (`dueStart = :dueStart`) and commits only while the contest's gate agrees.
 */
import { contestKeys } from '../reminders/table.js';
import type { ContestItem } from './model.js';

/** The prefix of the bucket gates' keys in the Contests table. */
export const GATE_PREFIX = 'gate#';

/** The gate a row under `contestKey` (`<contestId>#<bucket>`) is claimed against. */
export function gateKeyOf(contestKey: string): string {
  return `${GATE_PREFIX}${contestKey}`;
}

/** Every bucket gate of a contest, bucket 0 first. */
export function gateKeys(contestId: string): string[] {
  return contestKeys(contestId).map(gateKeyOf);
}

/** A bucket gate as stored: the contest's `dueStart`, expiring with the contest. */
export type BucketGateItem = {
  contestId: string;
  dueStart: number;
  expiresAt: number;
};

/** Whether a write of `after` over `before` (undefined: absent, or deleted) changes the contest's gate. */
export function gateChanged(before: Pick<ContestItem, 'dueStart'> | undefined, after: Pick<ContestItem, 'dueStart'> | undefined): boolean {
  return before?.dueStart !== after?.dueStart;
}

/**
 * The gates of a contest as `contest` leaves them: a put of each bucket's gate when it has a
 * `dueStart`, a delete of each when it has none (or is deleted: `contestId` alone).
 */
export function gateItems(
  contest: Pick<ContestItem, 'contestId' | 'dueStart' | 'expiresAt'> | string,
): { put: BucketGateItem[] } | { delete: string[] } {
  if (typeof contest === 'string') return { delete: gateKeys(contest) };
  const { contestId, dueStart, expiresAt } = contest;
  if (dueStart === undefined) return { delete: gateKeys(contestId) };
  return { put: gateKeys(contestId).map((key) => ({ contestId: key, dueStart, expiresAt })) };
}
