/**
 * The runtime part of @contest-sync/scheduled-singleton: single execution for scheduled jobs on
 * Lambda + DynamoDB (one run per interval, never two at once, and a run that lost its lease writes
 * nothing), and the handler wrapper `scheduledSingleton` built on it. See the package README
 * for what it guarantees, the item layout, the timing rules and the failure modes.
 */
export { MAX_RELEASE_WRITES, runExclusively, runUnfenced } from './run.js';
export { packInOrder } from './batches.js';
export type { ExclusiveDeps, ExclusiveOptions, ExclusiveOutcome, ExclusiveRun, Settled } from './run.js';
export type {
  AcquireRefusal,
  AcquireResult,
  CommitOptions,
  CommitResult,
  FenceExtras,
  FencedWriterPort,
  HeldLease,
  InvocationSource,
  LeasePort,
  OutboxEvent,
  ReleaseOptions,
  RunRecord,
  Sleep,
  TransactAction,
  Turn,
  WorkContext,
  WriterResult,
} from './ports.js';
export {
  DEFAULT_OUTBOX_RETENTION_DAYS,
  MAX_DETAIL_TYPE_CHARS,
  MAX_EVENT_ENTRY_BYTES,
  MAX_EVENT_ID_BYTES,
  MAX_SOURCE_CHARS,
  detailText,
  entryBytes,
  outboxKey,
  outboxPuts,
  validateEvent,
  validateSource,
  type OutboxSettings,
  type OutboxWriteContext,
} from './outbox.js';
export { DynamoLease, type LeaseStoreOptions } from './dynamo-lease.js';
export {
  DynamoFencedWriter,
  MAX_TRANSACTION_ACTIONS,
  MAX_TRANSACTION_BYTES,
  MAX_WRITES_PER_TRANSACTION,
  TRANSACTION_BYTE_BUDGET,
  actionBytes,
  type CommitInfo,
  type FencedWriterOptions,
} from './fenced-writer.js';
export {
  leaseTiming,
  minimumFunctionTimeoutMs,
  validateTiming,
  type LeaseTiming,
  type LeaseTimingOptions,
  MIN_LEASE_DURATION_SECONDS,
} from './timing.js';
export { DEFAULT_MAX_EVENT_AGE_MS, ledgerRetentionMs, ledgerSlots, slotOf, type LedgerForms } from './ledger.js';
export { itemSizeBytes } from './item-size.js';
export { DYNAMO_CLIENT_SETTINGS, worstCallMs } from './client-budget.js';
/** Every error the runtime throws: one base class, ScheduledSingletonError, to catch them all. */
export {
  ContentionError,
  EventValidationError,
  FencedWriteError,
  JobConfigError,
  LeaseConfigError,
  LeaseLostError,
  LeaseUnavailableError,
  OutboxEventError,
  RunDeadlineError,
  ScheduledRunFailedError,
  ScheduledSingletonError,
  UnfencedWriteError,
} from './errors.js';
export {
  COMMIT_CONTENTION_BUDGET,
  LEASE_CONTENTION_BUDGET,
  contentionOf,
  realSleep,
  retryContention,
  retryOptions,
  type ContentionBudget,
  type RetrySettings,
} from './retry.js';
export { bound, MAX_TEXT_BYTES, utf8Bytes } from './text.js';
export { cancellationCodes, describe, isCancelledAt } from './aws-errors.js';
export { scheduledSingleton, outboxSettings, budgetedDynamoClient } from './singleton.js';
export type {
  ConfigureParts,
  FailedRun,
  FailureNaming,
  JobContext,
  LambdaContextLike,
  Precheck,
  PrecheckContext,
  RunOutcome,
  RunResult,
  ScheduledSingletonHandler,
  ScheduledSingletonOptions,
} from './singleton.js';
export {
  booleanOption,
  intervalOf,
  invokedThroughVersion,
  MAX_SCHEDULE_SKEW_MS,
  parseInvocation,
  type ConsoleOptionCheck,
  type ConsoleOptions,
  type Invocation,
  type ParseOptions,
} from './invocation.js';
export { emfLine, jsonLogger, metricValues, writeStdout, type JobLogger, type LogLevel, type RunMetrics, type Write } from './report.js';
export {
  JOB_ENV,
  METRIC,
  METRIC_UNIT,
  OUTBOX_ITEM,
  RELAY_ENV,
  RELAY_METRIC,
  SERVICE_DIMENSION,
  type JobEnvNames,
  type MetricName,
} from '../contract.js';
export { dynamoCoordination, type CoordinationConfig, type CoordinationPorts, type CoordinationStore } from './coordination.js';
