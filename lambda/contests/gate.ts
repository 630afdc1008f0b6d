/**
 * The gate (docs/design.md, "The firing rule: when in doubt, delay"), pure: whether a contest's
 * reminders may fire, and at which start — written on every contest item as `dueStart`, and
 * checked by delivery's claim.
 */
import type { ContestItem, PauseReason } from './model.js';
import { confirmedStartOf, shownAhead, startOfEvidence } from './evidence.js';

/** Whether a contest's reminders may fire, and at which start. */
export type Gate = { due: true; start: number } | { due: false; reason: PauseReason };

/**
 * A reminder is due only when every current piece of evidence says so:
 * - deleted, vanished, or the latest reply reports a change that is held (a drop, a finish, a
 *   postponement, a move into the past): paused;
 * - finished at its confirmed start:
 *   due there (a reminder that never fired, say after a pause, fires late); otherwise paused;
 * - left unfinished past its TTL: paused;
 * - listed at a start no reply showed ahead (a contest "started minutes ago", a start moved into the
 *   past and shown after converging): paused (`started`), whatever the confirmed start
 *   (`listedStartCounts`);
 * - otherwise due at the later of the confirmed start and the latest reply's start: a move later
 *   lands at once, a move earlier only once confirmed (then it is the confirmed start), the undo of
 *   an unconfirmed change at once (the confirmed start is the later one again), never earlier than
 *   a start a reply showed ahead that awaits its second reply (`awaitedStart`).
 */
export function gateOf(contest: ContestItem | undefined, nowSeconds: number, firingRule = true): Gate {
  if (contest === undefined || contest.vanishedAt !== undefined) return { due: false, reason: 'vanished' };
  // The broken variant: due at whatever the contest shows, as a notifier reading remindAt would.
  if (!firingRule)
    return contest.phase === 'FINISHED' ? { due: false, reason: 'finished' } : { due: true, start: contest.startTimeSeconds };
  // Any held change is doubt: a withdrawal, a finish, a move (later or earlier, or into the past).
  if (contest.pending?.held === true) return { due: false, reason: 'held' };
  if (contest.phase !== 'FINISHED' && contest.expiresAt <= nowSeconds) return { due: false, reason: 'expired' };
  const confirmed = confirmedStartOf(contest);
  const latest = contest.startTimeSeconds;
  if (contest.phase === 'FINISHED')
    return confirmed > 0 && latest === confirmed ? { due: true, start: confirmed } : { due: false, reason: 'finished' };
  if (!listedStartCounts(contest)) return { due: false, reason: 'started' };
  return { due: true, start: Math.max(confirmed, latest, contest.awaitedStart ?? 0) };
}

/**
 * listedStartCounts: the start the latest reply lists is evidence a reminder may follow — the
 * confirmed start, or one a reply showed ahead (its evidence says when). One no reply showed ahead
 * (a contest "started minutes ago", a start moved into the past and shown once the replies that
 * said it converged) is not, and it leaves no current evidence for any other start either: the
 * replies no longer list the confirmed start, and the truth may move unseen behind them (seed 5:
 * a round postponed by a day while a converged lie was shown). When in doubt, delay: the
 * reminders are paused until a reply lists a start that counts again — the confirmed one (the
 * undo lands at once), one awaiting its second reply, or a later one — late, never early.
 */
export function listedStartCounts(contest: ContestItem): boolean {
  const latest = contest.startTimeSeconds;
  if (latest === confirmedStartOf(contest)) return true;
  const pending = contest.pending;
  return pending !== undefined && startOfEvidence(pending.said) === latest && shownAhead(latest, pending.since);
}

/** The contest's `remindersPaused`: absent while its reminders are due at the start it shows. */
export function remindersPausedOf(contest: ContestItem, gate: Gate): PauseReason | undefined {
  if (!gate.due) return gate.reason;
  if (contest.pending?.held === true) return 'held';
  return gate.start === contest.startTimeSeconds ? undefined : 'unconfirmed';
}

/**
 * A contest item with its gate written on it (docs/tables.md, "Contests, for reminders"):
 * `dueStart`, the start its reminders may fire at now (absent while they may not), which delivery's
 * claim checks, and `remindersPaused`, why not. Every contest the sync writes carries them.
 */
export function withGate(contest: ContestItem, nowSeconds: number, firingRule = true): ContestItem {
  const gate = gateOf(contest, nowSeconds, firingRule);
  const paused = remindersPausedOf(contest, gate);
  const { remindersPaused: _paused, dueStart: _dueStart, ...rest } = contest;
  return { ...rest, ...(paused !== undefined ? { remindersPaused: paused } : {}), ...(gate.due ? { dueStart: gate.start } : {}) };
}

export function sameGate(a: Gate, b: Gate): boolean {
  return a.due ? b.due && a.start === b.start : !b.due && a.reason === b.reason;
}

/**
 * When in doubt, delay: while the upstream gives no current evidence (a stale reply, the source
 * failing), the truth may move unseen. The contests whose reminders may fire are the ones doubt
 * follows (reminders.ts, `followContest`: those with reminders due before the next sync could see
 * a change are paused, contest first); the next applied reply ends the pause (`agrees` sees the
 * contest's gate disagree with its evidence, and its reminders follow again).
 */
export function contestsToDoubt(contests: readonly ContestItem[]): ContestItem[] {
  return contests.filter((c) => c.remindersPaused === undefined && c.vanishedAt === undefined);
}
