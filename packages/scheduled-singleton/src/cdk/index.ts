/**
 * The CDK part of @contest-sync/scheduled-singleton: the ScheduledSingletonJob construct, what it
 * acknowledges to cdk-nag, and the contract it shares with the runtime part. Imports aws-cdk-lib
 * and constructs only (no AWS SDK).
 */
export {
  ASYNC_MAX_EVENT_AGE,
  ASYNC_RETRY_ATTEMPTS,
  COORDINATION_ACTIONS,
  JOB_LIMITS,
  ScheduledSingletonJob,
  createCoordinationTable,
  rateMinutes,
  type JobAlarm,
  type JobMetrics,
  type JobOutbox,
  type ScheduledSingletonJobProps,
} from './scheduled-singleton-job.js';
export { BUNDLING, ESM_REQUIRE_BANNER, LOCK_FILES, findProject, serviceMetric } from './function-parts.js';
export {
  acknowledgeCustomResourceProviderNagFindings,
  acknowledgeEmailSubscription,
  acknowledgeJobNagFindings,
  type NagJobParts,
} from './acknowledge.js';
export {
  OutboxDelivery,
  eventSchemaContent,
  relayEntry,
  type DetailSchema,
  type OutboxAlarm,
  type OutboxDeliveryProps,
} from './outbox-delivery.js';
export { ConsoleTestEvents, TEST_EVENT_REGISTRY, testEventSchemaContent, type ConsoleTestEventsProps } from './console-test-events.js';
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
export { leaseTiming, minimumFunctionTimeoutMs, type LeaseTiming } from '../runtime/timing.js';
/** The errors the construct throws at synth (every one a ScheduledSingletonError). */
export {
  ConsoleTestEventsError,
  LeaseConfigError,
  OutboxDeliveryError,
  ScheduledSingletonError,
  ScheduledSingletonJobError,
} from '../runtime/errors.js';
