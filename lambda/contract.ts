/**
 * Names shared by the function, the stack and the tests. The stack sets these environment
 * variables and builds alarms on these metric names; the function reads and emits them.
 * Keep this file free of runtime dependencies: the CDK app imports it too.
 */

export const ENV = {
  contestsTable: 'CONTESTS_TABLE_NAME',
  remindersTable: 'REMINDERS_TABLE_NAME',
  coordinationTable: 'COORDINATION_TABLE_NAME',
  codeforcesApiUrl: 'CODEFORCES_API_URL',
  leaseDurationSeconds: 'LEASE_DURATION_SECONDS',
  finishedRetentionDays: 'FINISHED_RETENTION_DAYS',
  scheduleRateMinutes: 'SCHEDULE_RATE_MINUTES',
  missingSyncsBeforeDelete: 'MISSING_SYNCS_BEFORE_DELETE',
} as const;

export const DEFAULTS = {
  codeforcesApiUrl: 'https://codeforces.com/api',
  leaseDurationSeconds: 30,
  finishedRetentionDays: 7,
  scheduleRateMinutes: 60,
  missingSyncsBeforeDelete: 3,
} as const;

/** Powertools service name and EMF namespace. */
export const SERVICE_NAME = 'contest-sync';
export const METRICS_NAMESPACE = 'ContestSync';

/** EMF metric names (all carry the Powertools default dimension `service`). */
export const METRIC = {
  runSucceeded: 'RunSucceeded',
  runFailed: 'RunFailed',
  runSkipped: 'RunSkipped',
  skippedLeaseHeld: 'SkippedLeaseHeld',
  skippedAlreadyDone: 'SkippedAlreadyDone',
  eventRejected: 'EventRejected',
  duration: 'Duration',
  contestsFetched: 'ContestsFetched',
  contestsInvalid: 'ContestsInvalid',
  contestsWritten: 'ContestsWritten',
  contestsUnchanged: 'ContestsUnchanged',
  contestsRemoved: 'ContestsRemoved',
  remindersMoved: 'RemindersMoved',
  remindersDeleted: 'RemindersDeleted',
  codeforcesLatency: 'CodeforcesLatency',
  codeforcesAttempts: 'CodeforcesAttempts',
  heartbeats: 'Heartbeats',
  leaseLost: 'LeaseLost',
} as const;

/** The single lease item of the job in the Coordination table. */
export const LEASE_PK = 'lease#contest-sync';
/** Prefix of the per-run records kept in the Coordination table. */
export const RUN_PK_PREFIX = 'run#';
