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
  /**
   * How long the schedule's events are kept, by the rule's target and again by Lambda (retries and
   * duplicates arrive within twice this): how long the interval ledger remembers an interval.
   */
  maxEventAgeSeconds: 'MAX_EVENT_AGE_SECONDS',
  leaseKey: 'LEASE_KEY',
  runRecordPrefix: 'RUN_RECORD_PREFIX',
  /** The EMF namespace; Powertools' Metrics reads the same variable. */
  metricsNamespace: 'POWERTOOLS_METRICS_NAMESPACE',
  /** The `service` dimension's value; Powertools' Logger and Metrics read the same variable. */
  serviceName: 'POWERTOOLS_SERVICE_NAME',
  /** The outbox table (set only for a job that publishes events: `outbox` in the construct). */
  outboxTable: 'OUTBOX_TABLE_NAME',
  /** The EventBridge `source` of the job's events. */
  eventSource: 'OUTBOX_EVENT_SOURCE',
  /** Days an outbox item is kept (its `ttl`): how long an event id stays written once. */
  outboxRetentionDays: 'OUTBOX_RETENTION_DAYS',
} as const;

/** Environment variables OutboxDelivery sets on the relay function (the stream consumer). */
export const RELAY_ENV = {
  eventBusName: 'EVENT_BUS_NAME',
} as const;

/**
 * An outbox item (one per event, key `pk` = `<source>#<event id>`, TTL `ttl`): written by the job
 * in its fenced transaction, read by the relay from the table's stream (INSERT only) and put on
 * the bus as is. `detail` is the event's JSON text, `eventId` included, sized at commit time.
 */
export const OUTBOX_ITEM = {
  key: 'pk',
  ttl: 'ttl',
  eventId: 'eventId',
  source: 'source',
  detailType: 'detailType',
  detail: 'detail',
  /** Epoch ms of the commit: the event's `time` on the bus. */
  createdAtMs: 'createdAtMs',
  runId: 'runId',
  fence: 'fence',
} as const;

/** Metrics the relay emits (same namespace and `service` dimension as its job's). */
export const RELAY_METRIC = {
  delivered: 'EventsDelivered',
  failed: 'EventsFailed',
  /** Milliseconds from an event's commit to its acceptance by the bus (maximum of the batch). */
  lag: 'DeliveryLag',
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
