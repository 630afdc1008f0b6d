/** The result the handler returns (and the console shows): DESIGN.md "Invocations". */

export type Outcome = 'succeeded' | 'skipped' | 'failed';
export type SkipReason = 'lease-held' | 'already-done';
export type FailurePhase = 'event' | 'lease' | 'codeforces' | 'store' | 'lease-lost';

export interface RunCounts {
  contestsFetched: number;
  contestsInvalid: number;
  contestsWritten: number;
  contestsUnchanged: number;
  contestsRemoved: number;
  remindersMoved: number;
  remindersDeleted: number;
  codeforcesAttempts: number;
  codeforcesLatencyMs: number;
  heartbeats: number;
  transactions: number;
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
  /** `failed`: what went wrong, in words. */
  error?: string;
  dryRun?: boolean;
  /** `dryRun`: what the run would have changed (the first 50 writes and cancellations, and totals). */
  changes?: {
    write: { contestId: number; name: string; startTimeSeconds: number; phase: string }[];
    writeTotal: number;
    cancel: number[];
    cancelTotal: number;
    moveReminders: number;
    deleteReminders: number;
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
    remindersDeleted: 0,
    codeforcesAttempts: 0,
    codeforcesLatencyMs: 0,
    heartbeats: 0,
    transactions: 0,
  };
}
