/**
 * What a sync must change, decided from the fetched list, the stored items and the time alone (no
 * I/O), by the model of what a reply may change (docs/design.md, "A reply is evidence"; the rules
 * are in judge.ts): which contests to write, which changes to hold, which contests vanished (marked,
 * then after a grace period cancelled), and which reminders follow (deleted, or moved; the
 * irreversible part only once consecutive replies agree).
 */
import type { CodeforcesContest } from '../codeforces/schema.js';
import {
  evidenceOf,
  implausibility,
  isMassChange,
  massKindOf,
  nextEvidence,
  type HeldKind,
  type JudgeSettings,
  type MassKind,
} from './judge.js';
import { COMPARED_FIELDS, contestUrl, type ContestItem, type Pending, type ReminderItem } from './model.js';

export interface PlanSettings extends JudgeSettings {
  /** How long finished contests stay stored (their TTL is end + this). */
  finishedRetentionSeconds: number;
  /**
   * A stored unfinished contest missing from a valid reply is marked vanished, and deleted with its
   * reminders only when it has been missing from this many consecutive successful syncs.
   */
  missingSyncsBeforeDelete: number;
  /**
   * A reminder moved earlier to within this many seconds from now could fire before the next sync
   * can undo the move: such a move waits for the next reply to confirm it. One schedule period
   * plus skew.
   */
  nearSeconds: number;
}

export const DEFAULT_PLAN_SETTINGS: PlanSettings = {
  finishedRetentionSeconds: 7 * 24 * 3600,
  missingSyncsBeforeDelete: 3,
  plausibility: true,
  massMinCount: 3,
  massMaxShare: 0.5,
  acceptHeldAfterReplies: 3,
  nearSeconds: 3600 + 600,
};

/** A change not acted on (or, in `accepted`, acted on now after being held). */
export interface HeldChange {
  contestId: number;
  kind: HeldKind;
  /** Epoch seconds of the first reply that said it. */
  since: number;
  /** Consecutive replies that said it, this one included. */
  replies: number;
}

export interface ContestPlan {
  /** New or changed contests, written as listed (restored ones included). */
  upserts: ContestItem[];
  /** Stored contests rewritten only for their evidence (`pending`); the app sees no change. */
  bookkeeping: ContestItem[];
  unchanged: number;
  /** Stored unfinished contests missing from the list: marked vanished (or still missing), reminders kept. */
  vanished: ContestItem[];
  /** Vanished contests that came back (listed, even if their entry was invalid). */
  restored: number[];
  /** Contests missing from `missingSyncsBeforeDelete` consecutive syncs: deleted with their reminders. */
  cancelled: number[];
  /** Contests whose reminders are deleted: finished (confirmed) or cancelled. */
  reminderDeletes: number[];
  /** Contests whose reminders follow a new start; `confirmed`: the irreversible moves too. */
  reminderMoves: { contestId: number; startTimeSeconds: number; confirmed: boolean }[];
  /** Changes held by this reply: the stored contest is kept as it is. */
  held: HeldChange[];
  /** Held changes acted on now: repeated by enough consecutive replies, or accepted by an operator. */
  accepted: HeldChange[];
}

export function toItem(contest: CodeforcesContest, settings: Pick<PlanSettings, 'finishedRetentionSeconds'>, updatedAt: string): ContestItem {
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

/** A stored contest missing from the reply (`listed` undefined) or listed with valid fields. */
interface Proposal {
  stored: ContestItem;
  listed: ContestItem | undefined;
  /** Implausible on its own. */
  kind?: HeldKind;
  /** Part of a possible mass change of this kind. */
  mass?: MassKind;
}

function without<K extends keyof ContestItem>(item: ContestItem, ...keys: K[]): ContestItem {
  const copy = { ...item };
  for (const key of keys) delete copy[key];
  return copy;
}

/**
 * @param fetched valid, scheduled contests from the API
 * @param listedIds ids of every entry the API listed (valid or not): an entry that failed
 *   validation is not a cancellation, and it breaks a run of misses
 * @param stored every item in the Contests table
 * @param lastSyncMs when the last successful sync ran (default: now, which judges strictest)
 * @param acceptHeld an operator accepts every held change now
 */
export function planContests(input: {
  fetched: readonly CodeforcesContest[];
  listedIds: ReadonlySet<number>;
  stored: readonly ContestItem[];
  nowMs: number;
  lastSyncMs?: number;
  acceptHeld?: boolean;
  settings?: PlanSettings;
}): ContestPlan {
  const settings = input.settings ?? DEFAULT_PLAN_SETTINGS;
  const nowSeconds = Math.floor(input.nowMs / 1000);
  const lastSyncSeconds = Math.floor(Math.min(input.lastSyncMs ?? input.nowMs, input.nowMs) / 1000);
  const updatedAt = new Date(input.nowMs).toISOString();
  const stored = new Map(input.stored.map((item) => [item.contestId, item]));
  const plan: ContestPlan = {
    upserts: [],
    bookkeeping: [],
    unchanged: 0,
    vanished: [],
    restored: [],
    cancelled: [],
    reminderDeletes: [],
    reminderMoves: [],
    held: [],
    accepted: [],
  };
  const keep = (item: ContestItem, pending?: Pending) => {
    plan.bookkeeping.push({ ...without(item, 'pending'), ...(pending !== undefined ? { pending } : {}), updatedAt });
  };

  // One entry per id (the last listed wins): two writes of one item cannot share a transaction.
  const fetched = new Map(input.fetched.map((contest) => [contest.id, contest]));
  const proposals: Proposal[] = [];
  for (const contest of fetched.values()) {
    const before = stored.get(contest.id);
    const item = toItem(contest, settings, updatedAt);
    // Past its TTL: finished long ago, or left unfinished for years (Codeforces keeps some in
    // PENDING_SYSTEM_TEST forever). Not stored if not stored yet: it would expire at once and be
    // inserted again after every TTL deletion. A stored finished one still gets its final phase
    // (its reminders go); a stored unfinished one is left as it is until its TTL removes it.
    const expired = item.expiresAt <= nowSeconds;
    if (expired && before === undefined) continue;
    if (expired && contest.phase !== 'FINISHED') {
      plan.unchanged += 1;
      continue;
    }
    // A contest the app has never seen has no reminders: written as listed.
    if (before === undefined) plan.upserts.push(item);
    else proposals.push({ stored: before, listed: item });
  }
  for (const item of input.stored) {
    if (fetched.has(item.contestId)) continue;
    if (input.listedIds.has(item.contestId)) {
      // Listed with an entry that cannot be believed: it exists, so it is no miss (a run of misses
      // is broken) and a vanished one is back, as stored; but nothing in the entry is acted on.
      if (item.vanishedAt !== undefined) {
        plan.restored.push(item.contestId);
        keep(without(item, 'vanishedAt', 'missingSyncs'));
      } else if (item.pending?.said === 'missing') keep(item);
      else plan.unchanged += 1;
      continue;
    }
    // Finished contests leave the list only by Codeforces' own clean-up; TTL removes them here.
    if (item.phase === 'FINISHED') plan.unchanged += 1;
    else proposals.push({ stored: item, listed: undefined });
  }

  // Judge each change alone, then each kind of change across the reply.
  const upcoming = input.stored.filter((item) => item.phase !== 'FINISHED' && item.vanishedAt === undefined);
  const upcomingIds = new Set(upcoming.map(({ contestId }) => contestId));
  const massCount: Record<MassKind, number> = { drop: 0, reschedule: 0, earlier: 0 };
  for (const proposal of proposals) {
    const { stored: before, listed } = proposal;
    if (listed !== undefined && sameContest(before, listed)) continue;
    if (listed !== undefined) {
      const kind = implausibility(before, listed, nowSeconds, lastSyncSeconds);
      if (kind !== undefined) {
        proposal.kind = kind;
        continue;
      }
    }
    if (!upcomingIds.has(before.contestId)) continue;
    proposal.mass = massKindOf(before, listed);
    if (proposal.mass !== undefined) massCount[proposal.mass] += 1;
  }
  const massive = (kind: MassKind | undefined) => kind !== undefined && isMassChange(massCount[kind], upcoming.length, settings);

  for (const proposal of proposals) {
    const { stored: before, listed } = proposal;
    if (listed !== undefined && sameContest(before, listed) && before.vanishedAt === undefined) {
      confirmOrForget(before, listed);
      continue;
    }
    // In its grace period and still missing: one more miss.
    if (listed === undefined && before.vanishedAt !== undefined) {
      missedAgain(before, (before.missingSyncs ?? 1) + 1, before.vanishedAt);
      continue;
    }
    const evidence = nextEvidence(before.pending, evidenceOf(listed), nowSeconds);
    // Held evidence that this reply repeats stays held until it converges, whatever the rest of
    // the reply looks like now (the share of a mass change moves as contests come and go).
    const stillHeld = before.pending?.held === true && evidence.replies > 1 ? (before.pending.kind as HeldKind) : undefined;
    const holdKind = settings.plausibility ? (proposal.kind ?? (massive(proposal.mass) ? proposal.mass : stillHeld)) : undefined;
    // An operator's acceptance stands for the confirmation a second reply would give.
    let confirmedByOperator = false;
    if (holdKind !== undefined) {
      const change: HeldChange = { contestId: before.contestId, kind: holdKind, since: evidence.since, replies: evidence.replies };
      const converged = evidence.replies >= settings.acceptHeldAfterReplies;
      if (!converged && input.acceptHeld !== true) {
        plan.held.push(change);
        keep(before, { held: true, kind: holdKind, ...evidence });
        continue;
      }
      confirmedByOperator = !converged;
      plan.accepted.push(change);
    }
    if (listed === undefined) missedAgain(before, evidence.replies, evidence.since);
    else write(before, listed, evidence, confirmedByOperator);
  }
  return plan;

  /** The reply agrees with what is stored: a change awaiting confirmation is confirmed, held evidence is forgotten. */
  function confirmOrForget(before: ContestItem, listed: ContestItem): void {
    const pending = before.pending;
    if (pending === undefined) {
      plan.unchanged += 1;
      return;
    }
    const said = evidenceOf(listed);
    if (!pending.held && pending.said === said) {
      if (before.phase === 'FINISHED') plan.reminderDeletes.push(before.contestId);
      else plan.reminderMoves.push({ contestId: before.contestId, startTimeSeconds: before.startTimeSeconds, confirmed: true });
      keep(before);
      return;
    }
    // Held evidence stopped: what is stored stands. A change written before the hold may still
    // await its confirmation, so the stored state itself is confirmed by the next reply.
    keep(before, pending.held ? { held: false, kind: 'confirm', said, replies: 1, since: nowSeconds } : undefined);
  }

  /** Missing from `misses` consecutive replies since `since`: marked vanished, or cancelled. */
  function missedAgain(before: ContestItem, misses: number, since: number): void {
    if (misses >= settings.missingSyncsBeforeDelete) {
      plan.cancelled.push(before.contestId);
      plan.reminderDeletes.push(before.contestId);
      return;
    }
    plan.vanished.push({ ...without(before, 'pending'), vanishedAt: since, missingSyncs: misses, updatedAt });
  }

  /** Write the listed version; the irreversible part of its change waits for a second reply. */
  function write(before: ContestItem, listed: ContestItem, evidence: Pick<Pending, 'said' | 'replies' | 'since'>, confirmedByOperator: boolean): void {
    const confirmed = evidence.replies >= 2 || confirmedByOperator;
    const finishing = listed.phase === 'FINISHED' && before.phase !== 'FINISHED';
    const moved = listed.startTimeSeconds !== before.startTimeSeconds;
    // A stored change awaiting confirmation is confirmed by a reply that keeps its start, even if
    // the phase moved on meanwhile (a contest rescheduled, then running).
    const confirmsStored = before.pending?.held === false && !moved;
    if (listed.phase === 'FINISHED') {
      if (finishing ? confirmed : confirmsStored) plan.reminderDeletes.push(before.contestId);
    } else if (moved || confirmsStored) {
      plan.reminderMoves.push({ contestId: before.contestId, startTimeSeconds: listed.startTimeSeconds, confirmed: moved ? confirmed : true });
    }
    const awaiting = (finishing || moved) && !confirmed;
    plan.upserts.push(awaiting ? { ...listed, pending: { held: false, kind: finishing ? 'finish' : 'reschedule', ...evidence } } : listed);
    if (before.vanishedAt !== undefined) plan.restored.push(before.contestId);
  }
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

/**
 * How far a run may move reminders. Unconfirmed (the new start is one reply's word), only what the
 * next sync can undo: a reminder moved later, or earlier but not into the next `nearSeconds`. A
 * reminder that already fired, or one that would become due before the next sync, waits for the
 * next reply to confirm the start.
 */
export interface MovePolicy {
  confirmed: boolean;
  nearSeconds: number;
}

/** Reminders of a rescheduled contest whose remindAt no longer matches the new start. */
export function planReminderMoves(
  reminders: readonly ReminderItem[],
  startTimeSeconds: number,
  nowMs: number,
  policy: MovePolicy = { confirmed: true, nearSeconds: 0 },
): ReminderMove[] {
  const nowSeconds = Math.floor(nowMs / 1000);
  const moves: ReminderMove[] = [];
  for (const reminder of reminders) {
    // A reminder the app wrote without a usable minutesBefore cannot be moved; leave it alone
    // rather than fail every sync on it.
    if (!Number.isFinite(reminder.minutesBefore)) continue;
    const remindAt = startTimeSeconds - 60 * reminder.minutesBefore;
    if (reminder.remindAt === remindAt) continue;
    if (!policy.confirmed) {
      if (reminder.notifiedAt !== undefined) continue;
      if (remindAt < reminder.remindAt && remindAt <= nowSeconds + policy.nearSeconds) continue;
    }
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
 * was under way. `contest` is the contest as this run leaves it (undefined: deleted). A change still
 * awaiting confirmation (`pending`) is rechecked only as far as an unconfirmed change may act.
 */
export function planRecheck(
  contestId: number,
  contest: Pick<ContestItem, 'phase' | 'startTimeSeconds' | 'vanishedAt' | 'pending'> | undefined,
  reminders: readonly ReminderItem[],
  nowMs: number,
  nearSeconds = DEFAULT_PLAN_SETTINGS.nearSeconds,
): { deletes: { contestId: number; userId: string }[]; moves: ReminderMove[] } {
  const confirmed = contest?.pending === undefined;
  if (contest === undefined || (contest.phase === 'FINISHED' && confirmed)) {
    return { deletes: reminders.map(({ userId }) => ({ contestId, userId })), moves: [] };
  }
  // A vanished contest keeps its reminders until it is confirmed gone; a finishing one until confirmed.
  if (contest.vanishedAt !== undefined || contest.phase === 'FINISHED') return { deletes: [], moves: [] };
  return { deletes: [], moves: planReminderMoves(reminders, contest.startTimeSeconds, nowMs, { confirmed, nearSeconds }) };
}
