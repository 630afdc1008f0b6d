/**
 * What a sync must change, decided from the fetched list and the stored items alone (no I/O):
 * which contests to write, which vanished (marked, then after a grace period cancelled), which
 * finished or moved (their reminders follow), which reminders to check again, and whether the
 * reply is too suspicious to act on.
 */
import type { CodeforcesContest } from '../codeforces/schema.js';
import { COMPARED_FIELDS, contestUrl, type ContestItem, type ReminderItem } from './model.js';

export interface PlanSettings {
  /** How long finished contests stay stored (their TTL is end + this). */
  finishedRetentionSeconds: number;
  /** Refuse a reply that would cancel more than this share of stored unfinished contests... */
  maxCancelShare: number;
  /** ...once it would cancel at least this many (small lists move by one or two). */
  minCancelsToJudge: number;
  /**
   * A stored unfinished contest missing from a valid reply is marked vanished at once, and deleted
   * with its reminders only when it has been missing from this many consecutive successful syncs.
   */
  missingSyncsBeforeDelete: number;
}

export const DEFAULT_PLAN_SETTINGS: PlanSettings = {
  finishedRetentionSeconds: 7 * 24 * 3600,
  maxCancelShare: 0.5,
  minCancelsToJudge: 3,
  missingSyncsBeforeDelete: 3,
};

export interface ContestPlan {
  /** New or changed contests, as they must be stored. */
  upserts: ContestItem[];
  unchanged: number;
  /** Stored contests whose start moved: their reminders' remindAt must follow. */
  rescheduled: { contestId: number; startTimeSeconds: number }[];
  /** Contests that are (now) finished: their reminders are deleted. */
  finished: number[];
  /** Stored unfinished contests missing from the list: marked vanished (or still missing), reminders kept. */
  vanished: ContestItem[];
  /** Vanished contests that came back: written again without the marker (counted in upserts too). */
  restored: number[];
  /** Contests missing from `missingSyncsBeforeDelete` consecutive syncs: deleted with their reminders. */
  cancelled: number[];
}

export class SuspiciousReplyError extends Error {
  override readonly name = 'SuspiciousReplyError';
}

export function toItem(contest: CodeforcesContest, settings: PlanSettings, updatedAt: string): ContestItem {
  return {
    contestId: contest.id,
    platform: 'codeforces',
    name: contest.name,
    type: contest.type,
    phase: contest.phase,
    startTimeSeconds: contest.startTimeSeconds,
    durationSeconds: contest.durationSeconds,
    url: contestUrl(contest.id),
    updatedAt,
    expiresAt: contest.startTimeSeconds + contest.durationSeconds + settings.finishedRetentionSeconds,
  };
}

export function sameContest(a: ContestItem, b: ContestItem): boolean {
  return COMPARED_FIELDS.every((field) => a[field] === b[field]);
}

/**
 * @param fetched valid, scheduled contests from the API
 * @param listedIds ids of every entry the API listed (valid or not): an entry that failed
 *   validation is not a cancellation
 * @param stored every item in the Contests table
 */
export function planContests(input: {
  fetched: readonly CodeforcesContest[];
  listedIds: ReadonlySet<number>;
  stored: readonly ContestItem[];
  nowMs: number;
  settings?: PlanSettings;
}): ContestPlan {
  const settings = input.settings ?? DEFAULT_PLAN_SETTINGS;
  const nowSeconds = Math.floor(input.nowMs / 1000);
  const updatedAt = new Date(input.nowMs).toISOString();
  const stored = new Map(input.stored.map((item) => [item.contestId, item]));

  const plan: ContestPlan = { upserts: [], unchanged: 0, rescheduled: [], finished: [], vanished: [], restored: [], cancelled: [] };
  // One entry per id (the last listed wins): two writes of one item cannot share a transaction.
  const fetched = new Map(input.fetched.map((contest) => [contest.id, contest]));
  for (const contest of fetched.values()) {
    const before = stored.get(contest.id);
    const item = toItem(contest, settings, updatedAt);
    const isFinished = contest.phase === 'FINISHED';
    // Past its TTL: finished long ago, or left unfinished for years (Codeforces keeps some in
    // PENDING_SYSTEM_TEST forever). Not stored if not stored yet: it would expire at once and be
    // inserted again after every TTL deletion. A stored finished one still gets its final phase
    // (its reminders go); a stored unfinished one is left as it is until its TTL removes it.
    const expired = item.expiresAt <= nowSeconds;
    if (expired && before === undefined) continue;
    if (expired && !isFinished) {
      plan.unchanged += 1;
      continue;
    }

    const wasVanished = before?.vanishedAt !== undefined;
    if (before !== undefined && !wasVanished && sameContest(before, item)) {
      plan.unchanged += 1;
      continue;
    }
    plan.upserts.push(item);
    if (wasVanished) plan.restored.push(contest.id);
    if (isFinished && before?.phase !== 'FINISHED') plan.finished.push(contest.id);
    if (!isFinished && before !== undefined && before.startTimeSeconds !== item.startTimeSeconds) {
      plan.rescheduled.push({ contestId: contest.id, startTimeSeconds: item.startTimeSeconds });
    }
  }

  const unfinishedStored = input.stored.filter((item) => item.phase !== 'FINISHED');
  const missing = unfinishedStored.filter((item) => !input.listedIds.has(item.contestId));
  // The guard judges one reply: what it newly drops among the contests not already marked. Contests
  // already in their grace period do not count again, or a list that loses one contest an hour
  // would trip the guard within a few syncs, and a refused sync never advances the grace period.
  const present = unfinishedStored.filter((item) => item.vanishedAt === undefined);
  const newlyMissing = missing.filter((item) => item.vanishedAt === undefined);
  const share = present.length === 0 ? 0 : newlyMissing.length / present.length;
  if (newlyMissing.length >= settings.minCancelsToJudge && share > settings.maxCancelShare) {
    throw new SuspiciousReplyError(
      `refusing a reply that would cancel ${newlyMissing.length} of ${present.length} stored upcoming contests ` +
        `(more than ${Math.round(settings.maxCancelShare * 100)}%); nothing was written`,
    );
  }
  for (const item of missing) {
    const missingSyncs = (item.vanishedAt === undefined ? 0 : (item.missingSyncs ?? 1)) + 1;
    if (missingSyncs >= settings.missingSyncsBeforeDelete) {
      plan.cancelled.push(item.contestId);
    } else {
      plan.vanished.push({ ...item, vanishedAt: item.vanishedAt ?? nowSeconds, missingSyncs, updatedAt });
    }
  }
  return plan;
}

export interface ReminderMove {
  contestId: number;
  userId: string;
  minutesBefore: number;
  /** The remindAt the sync read; the write is conditional on minutesBefore still matching. */
  remindAt: number;
  /** True when the new time is still ahead: a notification sent for the old time is cleared. */
  clearNotified: boolean;
}

/** Reminders of a rescheduled contest whose remindAt no longer matches the new start. */
export function planReminderMoves(
  reminders: readonly ReminderItem[],
  startTimeSeconds: number,
  nowMs: number,
): ReminderMove[] {
  const nowSeconds = Math.floor(nowMs / 1000);
  const moves: ReminderMove[] = [];
  for (const reminder of reminders) {
    // A reminder the app wrote without a usable minutesBefore cannot be moved; leave it alone
    // rather than fail every sync on it.
    if (!Number.isFinite(reminder.minutesBefore)) continue;
    const remindAt = startTimeSeconds - 60 * reminder.minutesBefore;
    if (reminder.remindAt === remindAt) continue;
    moves.push({
      contestId: reminder.contestId,
      userId: reminder.userId,
      minutesBefore: reminder.minutesBefore,
      remindAt,
      clearNotified: reminder.notifiedAt !== undefined && remindAt > nowSeconds,
    });
  }
  return moves;
}

/**
 * Reminders of a contest that an earlier run changed, checked again: the app may have written one
 * for the old start time, or for a contest that was finishing or being cancelled, while that run
 * was under way. `contest` is the contest as this run leaves it (undefined: deleted).
 */
export function planRecheck(
  contestId: number,
  contest: Pick<ContestItem, 'phase' | 'startTimeSeconds' | 'vanishedAt'> | undefined,
  reminders: readonly ReminderItem[],
  nowMs: number,
): { deletes: { contestId: number; userId: string }[]; moves: ReminderMove[] } {
  if (contest === undefined || contest.phase === 'FINISHED') {
    return { deletes: reminders.map(({ userId }) => ({ contestId, userId })), moves: [] };
  }
  // A vanished contest keeps its reminders until it is confirmed gone.
  if (contest.vanishedAt !== undefined) return { deletes: [], moves: [] };
  return { deletes: [], moves: planReminderMoves(reminders, contest.startTimeSeconds, nowMs) };
}
