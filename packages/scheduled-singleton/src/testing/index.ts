/**
 * `@contest-sync/scheduled-singleton/testing`: test a job without DynamoDB (`testJob`, the
 * in-memory lease and writer), run it on DynamoDB Local with the tables of its synthesized template
 * (`localJob`), and the invocations Lambda delivers (a scheduled tick, the deploy-time run, a
 * console run, a dry run). Imports the AWS SDK only (DynamoDB Local is reached over HTTP).
 */
export {
  MemoryCoordination,
  MemoryFencedWriter,
  MemoryLease,
  type MemoryLeaseItem,
  type MemoryLeaseOptions,
  type MemoryTransaction,
} from './memory.js';
export {
  consoleRun,
  deployRun,
  dryRun,
  jobEnv,
  lambdaContext,
  scheduledTick,
  type JobEnvOptions,
  type LambdaContextOptions,
  type TestInvocation,
} from './fixtures.js';
export { localJob, testJob, type JobUnderTest, type LocalJob, type LocalJobOptions, type TestJobOptions, type TestRun } from './harness.js';
/** The base of every error the package throws (the in-memory lease throws LeaseLostError, LeaseUnavailableError). */
export { ScheduledSingletonError } from '../runtime/errors.js';
