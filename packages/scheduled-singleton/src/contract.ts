/**
 * The contract between the construct (ScheduledSingletonJob, the CDK side) and the handler wrapper
 * (scheduledSingleton, the runtime side): the environment the construct sets and the wrapper reads,
 * and the metrics the wrapper emits and the construct's alarms and widgets read. Both sides import
 * these names from here, so they cannot drift. No imports: both sides load it.
 */

/** Environment variables the construct sets on the function (names overridable per job). */
export const JOB_ENV = {
  coordinationTable: 'COORDINATION_TABLE_NAME',
  leaseDurationSeconds: 'LEASE_DURATION_SECONDS',
  scheduleRateMinutes: 'SCHEDULE_RATE_MINUTES',
  leaseKey: 'LEASE_KEY',
  runRecordPrefix: 'RUN_RECORD_PREFIX',
  /** The EMF namespace; Powertools' Metrics reads the same variable. */
  metricsNamespace: 'POWERTOOLS_METRICS_NAMESPACE',
  /** The `service` dimension's value; Powertools' Logger and Metrics read the same variable. */
  serviceName: 'POWERTOOLS_SERVICE_NAME',
} as const;

export type JobEnvNames = { readonly [K in keyof typeof JOB_ENV]: string };

/**
 * The metrics of a run: only what an alarm or a dashboard widget reads (each name is one billed
 * CloudWatch series). Every run emits all five, with 0 for what did not happen, so alarms see a
 * value each run.
 */
export const METRIC = {
  runSucceeded: 'RunSucceeded',
  runFailed: 'RunFailed',
  runSkipped: 'RunSkipped',
  leaseLost: 'LeaseLost',
  duration: 'Duration',
} as const;

export type MetricName = (typeof METRIC)[keyof typeof METRIC];

/** CloudWatch units of the metrics. */
export const METRIC_UNIT: Readonly<Record<MetricName, 'Count' | 'Milliseconds'>> = {
  RunSucceeded: 'Count',
  RunFailed: 'Count',
  RunSkipped: 'Count',
  LeaseLost: 'Count',
  Duration: 'Milliseconds',
};

/** The one dimension every metric carries (Powertools' default dimension). */
export const SERVICE_DIMENSION = 'service';
