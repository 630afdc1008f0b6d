/**
 * The result the handler returns (and the console shows): docs/design.md "Invocations". Its
 * counts and lists are computed once, from what the sync did (`Synced`), never assigned along the way.
 */
import type { HeldChange } from '../contests/plan.js';
import type { ReminderUpdate } from '../contests/reminders.js';
import type { MigrationProgress } from '../migration/migrate.js';
import type { FailurePhase } from './phases.js';
import type { Synced } from './sync.js';

export type { FailurePhase };
export type Outcome = 'succeeded' | 'skipped' | 'failed';
export type SkipReason = 'lease-held' | 'already-done';

export interface RunCounts {
  contestsFetched: number;
  contestsInvalid: number;
  contestsWritten: number;
  contestsUnchanged: number;
  contestsRemoved: number;
  /** Reminders whose remindAt followed a new start. */
  remindersMoved: number;
  /** Reminders made due (dueAt set or moved) by the firing rule. */
  remindersDue: number;
  /** Reminders paused (dueAt removed): the sync never deletes a reminder. */
  remindersPaused: number;
  /** Reminder updates refused because the row changed after it was read (claimed, changed by the app): dropped, redone by the next run. */
  remindersRaced: number;
  /** Due reminders moved out of byDue partitions a lowered DUE_SHARDS retired (docs/delivery.md). */
  remindersResharded: number;
  /** 1 when the reply was stale (made before the newest one applied): nothing of it was applied. */
  repliesStale: number;
  /** HTTP attempts the source's fetch made (a failed fetch: all it made). Named `codeforcesAttempts` before there were several sources. */
  sourceAttempts: number;
  /** The source's fetch, retries included, in ms. Named `codeforcesLatencyMs` before there were several sources. */
  sourceLatencyMs: number;
  heartbeats: number;
  transactions: number;
  /** Stored contests missing from the reply, marked vanished (reminders kept). */
  contestsVanished: number;
  /** Vanished contests that came back. */
  contestsRestored: number;
  /** Contests whose reminders were checked again because the previous run changed them. */
  contestsRechecked: number;
  /** Changes not acted on: implausible, or part of a mass change (docs/design.md, "A reply is evidence"). */
  contestsHeld: number;
  /** Held changes acted on now: repeated by enough consecutive replies, or accepted by an operator. */
  contestsAccepted: number;
  /** Contest events (announced, rescheduled, withdrawn, back) this run wrote to its outbox. */
  eventsPublished: number;
  /** Contest events found already written (an earlier attempt of the same change): not written again. */
  eventsDuplicate: number;
}

/** A held (or accepted) change as the result and the run record name it. */
export interface HeldChangeView {
  contestId: string;
  /** `start-in-past`, `finish`, `phase`, `drop`, `reschedule`, `earlier`, `suspect-move`, `move` (lambda/contests/evidence.ts). */
  kind: string;
  /** ISO time of the first reply that said it. */
  since: string;
  /** Consecutive replies that said it. */
  replies: number;
}

export interface RunSummary {
  outcome: Outcome;
  /** Why a run skipped (`lease-held`, `already-done`) or failed (its phase). */
  reason?: SkipReason | FailurePhase;
  runId: string;
  source: 'schedule' | 'console' | 'deploy';
  interval?: string;
  fence?: number;
  /** `lease-held`: who holds the lease and until when (ISO time). */
  holder?: string;
  holderExpiresAt?: string;
  /** `lease-held` without a holder read: the DynamoDB contention that outlasted the retry budget. */
  detail?: string;
  /** `failed`: what went wrong, in words. */
  error?: string;
  dryRun?: boolean;
  /** Changes this run held (the first 50; `counts.contestsHeld` has the total). */
  held?: HeldChangeView[];
  /** A stale reply (never applied): when it was made, and when the newest applied one was (ISO times). */
  stale?: { madeAt: string; newestApplied: string };
  /** Held changes this run acted on (the first 50; `counts.contestsAccepted` has the total). */
  accepted?: HeldChangeView[];
  /** `dryRun`: what the run would have changed (the first 50 writes and cancellations, and totals). */
  changes?: {
    write: { contestId: string; name: string; startTimeSeconds: number; phase: string }[];
    writeTotal: number;
    cancel: string[];
    cancelTotal: number;
    /** Missing from the reply: marked vanished (or still missing), reminders kept (the first 50). */
    vanish: string[];
    vanishTotal: number;
    moveReminders: number;
    pauseReminders: number;
    dueReminders: number;
    /** The contest events it would have published (the first 50, and their total). */
    events: { detailType: string; contestId: string }[];
    eventsTotal: number;
  };
  /**
   * A run during the upgrade to qualified keys (docs/runbook.md): what the copy did (this run's
   * counts and the upgrade's), or, for a dry run, that the copy is not done (nothing was synced).
   */
  migration?: MigrationProgress | { state: 'copying'; dryRun: true };
  counts: RunCounts;
  durationMs: number;
}

export function emptyCounts(): RunCounts {
  return {
    contestsFetched: 0,
    contestsInvalid: 0,
    contestsWritten: 0,
    contestsUnchanged: 0,
    contestsRemoved: 0,
    remindersMoved: 0,
    remindersDue: 0,
    remindersPaused: 0,
    remindersRaced: 0,
    remindersResharded: 0,
    repliesStale: 0,
    sourceAttempts: 0,
    sourceLatencyMs: 0,
    heartbeats: 0,
    transactions: 0,
    contestsVanished: 0,
    contestsRestored: 0,
    contestsRechecked: 0,
    contestsHeld: 0,
    contestsAccepted: 0,
    eventsPublished: 0,
    eventsDuplicate: 0,
  };
}

/**
 * The counts of a sync, from what it did (a failed one: as far as it got; a dry run wrote nothing:
 * what it would write is in its `changes`).
 */
export function countsOf(synced: Partial<Synced> & { dryRun?: boolean }, heartbeats = 0): RunCounts {
  const { evidence, judgement, acted } = synced;
  const plan = judgement?.plan;
  const wrote = synced.dryRun !== true;
  return {
    ...emptyCounts(),
    ...(evidence !== undefined
      ? {
          contestsFetched: evidence.reply.contests.length,
          contestsInvalid: evidence.reply.invalid,
          sourceAttempts: evidence.reply.attempts,
          sourceLatencyMs: evidence.reply.latencyMs,
        }
      : {}),
    ...(plan !== undefined
      ? {
          contestsWritten: wrote ? plan.upserts.length : 0,
          contestsUnchanged: plan.unchanged,
          contestsRemoved: wrote ? plan.cancelled.length : 0,
          contestsVanished: plan.vanished.length,
          contestsRestored: plan.restored.length,
          contestsHeld: plan.held.length,
          contestsAccepted: plan.accepted.length,
        }
      : {}),
    ...(judgement !== undefined
      ? { repliesStale: judgement.verdict?.stale === true ? 1 : 0, contestsRechecked: judgement.rechecked.length }
      : {}),
    ...(acted !== undefined
      ? { ...reminderCounts(acted.reminderUpdates), remindersRaced: acted.raced, remindersResharded: acted.resharded }
      : {}),
    ...(acted !== undefined
      ? { transactions: acted.transactions, eventsPublished: acted.eventsPublished, eventsDuplicate: acted.eventsDuplicate }
      : {}),
    heartbeats,
  };
}

function reminderCounts(updates: readonly ReminderUpdate[]): Pick<RunCounts, 'remindersMoved' | 'remindersDue' | 'remindersPaused'> {
  const moved = updates.filter((u) => u.set.remindAt !== undefined).length;
  const due = updates.filter((u) => u.set.dueAt !== undefined).length;
  const paused = updates.filter((u) => u.set.dueAt === undefined && u.set.paused !== undefined).length;
  return { remindersMoved: moved, remindersDue: due, remindersPaused: paused };
}

/** The summary, the result and the run record list at most this many held and accepted changes. */
export const HELD_LISTED = 50;

/** The stale reply, held and accepted changes as the result, the summary line and the run record name them (only when there are any). */
export function judgedOf({ judgement }: Partial<Synced>): Pick<RunSummary, 'held' | 'accepted' | 'stale'> {
  const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
  const verdict = judgement?.verdict;
  if (verdict?.stale === true) return { stale: { madeAt: iso(verdict.madeAt), newestApplied: iso(verdict.newestApplied) } };
  const plan = judgement?.plan;
  if (plan === undefined) return {};
  const listed = (changes: readonly HeldChange[]) =>
    changes.slice(0, HELD_LISTED).map(({ contestId, kind, since, replies }) => ({ contestId, kind, since: iso(since), replies }));
  return {
    ...(plan.held.length > 0 ? { held: listed(plan.held) } : {}),
    ...(plan.accepted.length > 0 ? { accepted: listed(plan.accepted) } : {}),
  };
}

/** A dry run lists at most this many writes and cancellations (plus their totals): the result stays small. */
export const DRY_RUN_LISTED = 50;

/** What a dry run would have changed, bounded. */
export function changesOf({ judgement, acted }: Synced): NonNullable<RunSummary['changes']> {
  const plan = judgement.plan;
  const updates = acted.reminderUpdates;
  const events = [...judgement.contests.flatMap((write) => ('put' in write ? write.events : [])), ...(judgement.clock?.events ?? [])];
  return {
    write: (plan?.upserts ?? [])
      .slice(0, DRY_RUN_LISTED)
      .map(({ contestId, name, startTimeSeconds, phase }) => ({ contestId, name, startTimeSeconds, phase })),
    writeTotal: plan?.upserts.length ?? 0,
    cancel: (plan?.cancelled ?? []).slice(0, DRY_RUN_LISTED),
    cancelTotal: plan?.cancelled.length ?? 0,
    vanish: (plan?.vanished ?? []).slice(0, DRY_RUN_LISTED).map(({ contestId }) => contestId),
    vanishTotal: plan?.vanished.length ?? 0,
    moveReminders: reminderCounts(updates).remindersMoved,
    pauseReminders: reminderCounts(updates).remindersPaused,
    dueReminders: reminderCounts(updates).remindersDue,
    events: events.slice(0, DRY_RUN_LISTED).map(({ detailType, detail }) => ({ detailType, contestId: String(detail.contestId) })),
    eventsTotal: events.length,
  };
}
