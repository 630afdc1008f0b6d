/**
 * Names shared by the function, the stack and the tests. The stack sets these environment
 * variables and builds alarms on these metric names; the function reads and emits them.
 * Keep this file free of runtime dependencies: the CDK app imports it too. The names the
 * job construct sets and its alarms read are the package's contract (JOB_ENV, METRIC), not restated.
 */
import { JOB_ENV, METRIC as JOB_METRIC } from '@contest-sync/scheduled-singleton/contract';

export const ENV = {
  contestsTable: 'CONTESTS_TABLE_NAME',
  remindersTable: 'REMINDERS_TABLE_NAME',
  coordinationTable: JOB_ENV.coordinationTable,
  codeforcesApiUrl: 'CODEFORCES_API_URL',
  leaseDurationSeconds: JOB_ENV.leaseDurationSeconds,
  finishedRetentionDays: 'FINISHED_RETENTION_DAYS',
  scheduleRateMinutes: JOB_ENV.scheduleRateMinutes,
  missingSyncsBeforeDelete: 'MISSING_SYNCS_BEFORE_DELETE',
  acceptHeldAfterReplies: 'ACCEPT_HELD_AFTER_REPLIES',
  /** Partitions of the Reminders `byDue` index: a due row's `dueShard` is its bucket mod `DUE_SHARDS` (docs/delivery.md). */
  dueShards: 'DUE_SHARDS',
  /**
   * The previous release's tables (numeric keys), set by the stack of the release that copies them
   * (docs/runbook.md, "Upgrading to qualified keys"): where they are named, the upgrade's gate applies.
   */
  legacyContestsTable: 'LEGACY_CONTESTS_TABLE_NAME',
  legacyRemindersTable: 'LEGACY_REMINDERS_TABLE_NAME',
} as const;

export const DEFAULTS = {
  codeforcesApiUrl: 'https://codeforces.com/api',
  leaseDurationSeconds: 30,
  finishedRetentionDays: 7,
  scheduleRateMinutes: 60,
  missingSyncsBeforeDelete: 3,
  acceptHeldAfterReplies: 3,
  dueShards: 1,
} as const;

/**
 * The most `byDue` shards a stack may run (context `contestSync:dueShards`): as many as a
 * contest's reminders have bucket keys (lambda/reminders/table.ts, REMINDER_BUCKETS), so one
 * round spreads over every job; the sync sweeps the shards above a lowered setting up to this
 * bound (docs/delivery.md, "Scaling past one function").
 */
export const MAX_DUE_SHARDS = 16;

/** Powertools service name and EMF namespace. */
export const SERVICE_NAME = 'contest-sync';
export const METRICS_NAMESPACE = 'ContestSync';

/**
 * EMF metric names: only what an alarm or a dashboard widget reads. Each is one CloudWatch custom
 * metric series (dimension `service` only), billed per series per month, so every count of a run
 * (contests fetched/written/..., reminders, the source's attempts, heartbeats) lives in the summary
 * log line instead, where Logs Insights charts it for free of metric charges.
 */
export const METRIC = JOB_METRIC;

/** Most distinct metric series (name + dimensions) the function may emit (a test enforces it). */
export const METRIC_SERIES_BUDGET = 8;

/** The single lease item of the job in the Coordination table. */
export const LEASE_PK = 'lease#contest-sync';
/** Prefix of the per-run records kept in the Coordination table. */
export const RUN_PK_PREFIX = 'run#';

/**
 * The job environment the stack sets (ScheduledSingletonJob), with the values it sets: the
 * handler reads them under whatever the environment gives, so a local or test run needs only the
 * table names.
 */
export const JOB_DEFAULTS: Readonly<Record<string, string>> = {
  [JOB_ENV.leaseKey]: LEASE_PK,
  [JOB_ENV.runRecordPrefix]: RUN_PK_PREFIX,
  [JOB_ENV.serviceName]: SERVICE_NAME,
  [JOB_ENV.metricsNamespace]: METRICS_NAMESPACE,
  [JOB_ENV.leaseDurationSeconds]: String(DEFAULTS.leaseDurationSeconds),
  [JOB_ENV.scheduleRateMinutes]: String(DEFAULTS.scheduleRateMinutes),
};

/** The EventBridge `source` of each job's events (one source per job: its outbox grant is scoped to it). docs/events.md. */
export const EVENT_SOURCES = { contests: 'contest-sync.contests', reminders: 'contest-sync.reminders' } as const;
