/** The result the handler returns (and the console shows): docs/design.md "Invocations". */

import type { FailurePhase } from './phases.js';

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
  /** 1 when the reply was stale (made before the newest one applied): nothing of it was applied. */
  repliesStale: number;
  codeforcesAttempts: number;
  codeforcesLatencyMs: number;
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
  contestId: number;
  /** `start-in-past`, `finish`, `phase`, `drop`, `reschedule`, `earlier` (lambda/contests/judge.ts). */
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
    write: { contestId: number; name: string; startTimeSeconds: number; phase: string }[];
    writeTotal: number;
    cancel: number[];
    cancelTotal: number;
    /** Missing from the reply: marked vanished (or still missing), reminders kept (the first 50). */
    vanish: number[];
    vanishTotal: number;
    moveReminders: number;
    pauseReminders: number;
    dueReminders: number;
    /** The contest events it would have published (the first 50, and their total). */
    events: { detailType: string; contestId: number }[];
    eventsTotal: number;
  };
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
    repliesStale: 0,
    codeforcesAttempts: 0,
    codeforcesLatencyMs: 0,
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
