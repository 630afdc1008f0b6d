/**
 * Invocations as Lambda delivers them to a ScheduledSingletonJob's function: the event and the part
 * of the Lambda context the wrapper reads. The deploy-time run and a console run send the same `{}`;
 * the context tells them apart (the deploy-time trigger invokes a published version).
 */
import { JOB_ENV } from '../contract.js';
import type { LambdaContextLike } from '../runtime/singleton.js';

/** An event and its context, as one invocation receives them. */
export interface TestInvocation {
  readonly event: unknown;
  readonly context: LambdaContextLike;
}

export interface LambdaContextOptions {
  /**
   * Time left when the invocation starts.
   * @default 120_000: the construct's default timeout
   */
  remainingMs?: number;
  /** @default 'job' */
  functionName?: string;
  /**
   * A published version (`'7'`): what the deploy-time trigger invokes.
   * @default none: `$LATEST`, through the unqualified ARN
   */
  version?: string;
  /**
   * The clock `getRemainingTimeInMillis` counts down by.
   * @default Date.now
   */
  now?: () => number;
}

/** A Lambda context whose remaining time counts down from when it is created. */
export function lambdaContext(options: LambdaContextOptions = {}): LambdaContextLike {
  const now = options.now ?? Date.now;
  const endsAt = now() + (options.remainingMs ?? 120_000);
  const name = options.functionName ?? 'job';
  const arn = `arn:aws:lambda:us-east-1:123456789012:function:${name}${options.version === undefined ? '' : `:${options.version}`}`;
  return {
    getRemainingTimeInMillis: () => Math.max(0, endsAt - now()),
    invokedFunctionArn: arn,
    awsRequestId: `request-${Math.random().toString(36).slice(2, 10)}`,
  };
}

/** The EventBridge Scheduled Event of a tick at `time` (default now): `source: 'schedule'`, its interval. */
export function scheduledTick(time: string | number | Date = Date.now(), context: LambdaContextOptions = {}): TestInvocation {
  const iso = new Date(time).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    event: {
      version: '0',
      id: `tick-${iso}`,
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      account: '123456789012',
      time: iso,
      region: 'us-east-1',
      resources: ['arn:aws:events:us-east-1:123456789012:rule/job-schedule'],
      detail: {},
    },
    context: lambdaContext(context),
  };
}

/** The deploy-time run: `{}` on a published version; `source: 'deploy'`, no interval. */
export function deployRun(context: LambdaContextOptions = {}): TestInvocation {
  return { event: {}, context: lambdaContext({ version: '1', ...context }) };
}

/**
 * A console run: `payload` (default `{}`: `source: 'console'`, no interval; `{ interval }` runs
 * that interval, deduplicated; `{ interval, force: true }` again; plus the job's consoleOptions).
 */
export function consoleRun(payload: Record<string, unknown> = {}, context: LambdaContextOptions = {}): TestInvocation {
  return { event: payload, context: lambdaContext(context) };
}

/** A console dry run: the work without the lease, `commit` refuses. */
export function dryRun(payload: Record<string, unknown> = {}, context: LambdaContextOptions = {}): TestInvocation {
  return consoleRun({ ...payload, dryRun: true }, context);
}

export interface JobEnvOptions {
  /** @default 5 */
  periodMinutes?: number;
  /** @default 30 */
  leaseSeconds?: number;
  /** @default 'lease#job' */
  leaseKey?: string;
  /** @default 'run#job#' */
  runRecordPrefix?: string;
  /** The coordination table. @default 'coordination' */
  table?: string;
  /** The metrics namespace. @default 'Jobs' */
  namespace?: string;
  /** How long the schedule's events are kept (the construct's `maxEventAge`). @default 7200 */
  maxEventAgeSeconds?: number;
  /** The `service` dimension and the log lines' service. @default 'job' */
  service?: string;
  /**
   * The job publishes events under this source (an outbox named `outbox`: MemoryCoordination.events()).
   * @default none: no outbox
   */
  eventSource?: string;
}

/** The variables ScheduledSingletonJob sets on the function (JOB_ENV), for a test. */
export function jobEnv(options: JobEnvOptions = {}): Record<string, string> {
  return {
    [JOB_ENV.coordinationTable]: options.table ?? 'coordination',
    [JOB_ENV.leaseDurationSeconds]: String(options.leaseSeconds ?? 30),
    [JOB_ENV.scheduleRateMinutes]: String(options.periodMinutes ?? 5),
    [JOB_ENV.maxEventAgeSeconds]: String(options.maxEventAgeSeconds ?? 7200),
    [JOB_ENV.leaseKey]: options.leaseKey ?? 'lease#job',
    [JOB_ENV.runRecordPrefix]: options.runRecordPrefix ?? 'run#job#',
    [JOB_ENV.metricsNamespace]: options.namespace ?? 'Jobs',
    [JOB_ENV.serviceName]: options.service ?? 'job',
    ...(options.eventSource !== undefined ? { [JOB_ENV.outboxTable]: 'outbox', [JOB_ENV.eventSource]: options.eventSource } : {}),
  };
}
