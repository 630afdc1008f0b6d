/**
 * The Lambda entry. Parses the event (schedule, deploy-time trigger or console), runs one sync
 * under the lease, logs one summary line, flushes EMF metrics on every path, and returns the
 * summary. A scheduled run that failed throws, so Lambda's async retries and the on-failure
 * destination apply; a deploy-time or console run returns its failure instead, so a Codeforces
 * outage never rolls back a deployment.
 */
import { randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import type { Dispatcher } from 'undici';
import { fetchContests } from './codeforces/client.js';
import { ConfigError, readConfig, type Config } from './config.js';
import { DEFAULT_PLAN_SETTINGS, type PlanSettings } from './contests/plan.js';
import { ENV, LEASE_PK, METRICS_NAMESPACE, SERVICE_NAME } from './contract.js';
import { parseEvent, type Invocation } from './events.js';
import { logSummary, recordMetrics } from './observe.js';
import { failurePhase, type FailurePhase } from './phases.js';
import {
  DYNAMO_CLIENT_SETTINGS,
  DynamoFencedWriter,
  DynamoLease,
  LeaseConfigError,
  bound,
  describe,
  invokedThroughVersion,
  leaseTiming,
  validateTiming,
  ledgerRetentionMs,
  type LeaseTiming,
} from './single-execution/index.js';
import { DynamoContestStore } from './store/dynamo-store.js';
import type { RunSummary } from './summary.js';
import { runSync, type SyncDeps } from './sync.js';

/** Thrown by scheduled runs that failed, so that Lambda retries them; carries the summary. */
export class SyncFailedError extends Error {
  override readonly name = 'SyncFailedError';
  constructor(readonly summary: RunSummary) {
    super(bound(`sync ${summary.runId} failed in phase ${summary.reason ?? 'unknown'}: ${summary.error ?? 'no detail'}`));
  }
}

export interface HandlerOptions {
  env?: NodeJS.ProcessEnv;
  now?: () => number;
  newRunId?: () => string;
  dynamo?: DynamoDBClient;
  dispatcher?: Dispatcher;
  logger?: Logger;
  metrics?: Metrics;
  /** Overrides of the plan settings the configuration gives (the simulated year's broken variants). */
  planSettings?: Partial<PlanSettings>;
}

interface Runtime {
  config: Config;
  deps: SyncDeps;
}

export type Handler = (event: unknown, context: Pick<Context, 'getRemainingTimeInMillis'> & Partial<Context>) => Promise<RunSummary>;

export function createHandler(options: HandlerOptions = {}): Handler {
  const logger = options.logger ?? new Logger({ serviceName: SERVICE_NAME });
  const metrics = options.metrics ?? new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME });
  const now = options.now ?? Date.now;
  const newRunId = options.newRunId ?? randomUUID;
  let runtime: Runtime | undefined;
  const runtimeOnce = (): Runtime => (runtime ??= buildRuntime(options, logger, now));

  return async (event, context) => {
    const runId = newRunId();
    const observe: Observe = { logger, metrics, now, startedAt: now() };
    if (context.awsRequestId !== undefined) logger.addContext(context as Context);
    logger.appendKeys({ runId });
    try {
      const { invocation, deps } = parse(event, context, runtimeOnce, observe);
      logger.appendKeys({ source: invocation.source, ...(invocation.interval !== undefined ? { interval: invocation.interval } : {}) });
      const summary = await run(invocation, deps, { runId, remainingMs: () => context.getRemainingTimeInMillis() }, observe);
      return report(summary, invocation, observe);
    } finally {
      metrics.publishStoredMetrics();
      logger.resetKeys();
    }
  };
}

/** What the steps of an invocation report through. */
interface Observe {
  logger: Logger;
  metrics: Metrics;
  now: () => number;
  startedAt: number;
}

/** parse: the configuration (once per container), the function timeout, and the event. Throws what it refuses. */
function parse(
  event: unknown,
  context: Parameters<Handler>[1],
  runtimeOnce: () => Runtime,
  observe: Observe,
): { invocation: Invocation; deps: SyncDeps } {
  try {
    const { config, deps } = runtimeOnce();
    refuseShortTimeout(deps.timing, context.getRemainingTimeInMillis());
    const invocation = parseEvent(event, { periodMinutes: config.scheduleRateMinutes, nowMs: observe.now() });
    // The deploy-time trigger sends `{}` like the console, through a published version.
    if (invocation.source === 'console' && invokedThroughVersion(context.invokedFunctionArn))
      return { invocation: { ...invocation, source: 'deploy' }, deps };
    return { invocation, deps };
  } catch (error) {
    failedWithoutSummary(failurePhase(error) === 'event' ? 'event' : 'config', error, observe);
    throw error;
  }
}

/** run: one sync under the lease; its summary (every expected failure is in it). */
async function run(
  invocation: Invocation,
  deps: SyncDeps,
  context: { runId: string; remainingMs: () => number },
  observe: Observe,
): Promise<RunSummary> {
  try {
    return withBoundedError(await runSync(invocation, deps, context));
  } catch (error) {
    // runSync reports every expected failure in its summary; this is a bug. Still say so once.
    failedWithoutSummary('internal', error, observe);
    throw error;
  }
}

/** report: the summary line and the metrics; a failed scheduled run throws, so that Lambda retries it. */
function report(summary: RunSummary, invocation: Invocation, observe: Observe): RunSummary {
  logSummary(observe.logger, summary);
  recordMetrics(observe.metrics, summary);
  if (summary.outcome === 'failed' && invocation.source === 'schedule') throw new SyncFailedError(summary);
  return summary;
}

/** The one summary line (and metrics) of an invocation that failed before or outside runSync. */
function failedWithoutSummary(phase: FailurePhase, error: unknown, observe: Observe): void {
  const durationMs = observe.now() - observe.startedAt;
  recordMetrics(observe.metrics, { outcome: 'failed', durationMs });
  observe.logger.error('failed', { summary: true, outcome: 'failed', phase, error: describe(error), durationMs });
}

/** The configuration and the sync's dependencies, built once per container. */
function buildRuntime(options: HandlerOptions, logger: Logger, now: () => number): Runtime {
  const config = readConfig(options.env ?? process.env);
  let timing: LeaseTiming;
  try {
    timing = leaseTiming(config.leaseDurationSeconds);
  } catch (error) {
    throw new ConfigError(`invalid configuration: LEASE_DURATION_SECONDS: ${(error as Error).message}`);
  }
  const client =
    options.dynamo ??
    new DynamoDBClient({
      maxAttempts: DYNAMO_CLIENT_SETTINGS.maxAttempts,
      requestHandler: {
        connectionTimeout: DYNAMO_CLIENT_SETTINGS.connectionTimeoutMs,
        requestTimeout: DYNAMO_CLIENT_SETTINGS.requestTimeoutMs,
      },
    });
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  return { config, deps: syncDeps(config, timing, doc, options, logger, now) };
}

/** The lease, the store, the fenced writer and the Codeforces client of a sync. */
function syncDeps(
  config: Config,
  timing: LeaseTiming,
  doc: DynamoDBDocumentClient,
  options: HandlerOptions,
  logger: Logger,
  now: () => number,
): SyncDeps {
  const lease = new DynamoLease({
    doc,
    table: config.tables.coordination,
    key: LEASE_PK,
    timing,
    now,
    ledgerRetentionMs: ledgerRetentionMs(config.scheduleRateMinutes),
    onContention: (operation, reason, attempt) => logger.warn('DynamoDB contention; retrying', { operation, reason, attempt }),
  });
  const store = new DynamoContestStore(
    doc,
    { contests: config.tables.contests, reminders: config.tables.reminders },
    { onContention: (reason, attempt) => logger.warn('DynamoDB contention; retrying', { operation: 'read', reason, attempt }) },
  );
  const writer = new DynamoFencedWriter(doc, {
    now,
    onCommit: ({ sentAtMs, committedAtMs, actions }) =>
      logger.debug('committed', { sentAtMs, committedAtMs, actions: actions.length, ...store.contestsIn(actions) }),
    onContention: (reason, attempt) => logger.warn('DynamoDB contention; retrying', { operation: 'commit', reason, attempt }),
  });
  return {
    lease,
    writer,
    store,
    now,
    timing,
    planSettings: planSettingsOf(config, options),
    ...(config.outbox !== undefined ? { outbox: config.outbox } : {}),
    fetchContests: ({ signal, deadline }) =>
      fetchContests({
        baseUrl: config.codeforcesApiUrl,
        signal,
        deadline,
        now,
        ...(options.dispatcher !== undefined ? { dispatcher: options.dispatcher } : {}),
      }),
    log: {
      info: (message, extra) => logger.info(message, extra ?? {}),
      warn: (message, extra) => logger.warn(message, extra ?? {}),
    },
    onAcquired: (held) => {
      logger.appendKeys({ fence: held.fence });
      logger.debug('lease acquired', { acquiredAtMs: now(), expiresAt: new Date(held.expiresAtMs).toISOString() });
    },
    onHeartbeat: (renewed) => logger.debug('lease renewed', { expiresAt: new Date(renewed.expiresAtMs).toISOString() }),
  };
}

/** The contest model's settings: the configuration's, then the options' overrides. */
function planSettingsOf(config: Config, options: HandlerOptions): PlanSettings {
  return {
    ...DEFAULT_PLAN_SETTINGS,
    finishedRetentionSeconds: config.finishedRetentionDays * 24 * 3600,
    missingSyncsBeforeDelete: config.missingSyncsBeforeDelete,
    acceptHeldAfterReplies: config.acceptHeldAfterReplies,
    // No current evidence: reminders due before the next sync could see a change are paused.
    doubtSeconds: config.scheduleRateMinutes * 60 + 600,
    ...options.planSettings,
  };
}

/** The summary with its `error` at most 1 KB, whatever composed it (the result, the log line, the thrown error). */
function withBoundedError(summary: RunSummary): RunSummary {
  return summary.error === undefined ? summary : { ...summary, error: bound(summary.error) };
}

/**
 * A lease setting that the function's timeout cannot honour is refused at the start of the
 * invocation (the stack refuses it at synth too): the run could not keep its stop margin.
 */
function refuseShortTimeout(timing: LeaseTiming, remainingMs: number): void {
  try {
    validateTiming(timing, remainingMs);
  } catch (error) {
    if (error instanceof LeaseConfigError) {
      throw new ConfigError(`invalid configuration: ${ENV.leaseDurationSeconds} with this function timeout: ${error.message}`);
    }
    throw error;
  }
}

/** The deploy-time trigger's published version, told apart as the package's wrapper does. */
export { invokedThroughVersion };

export const handler = createHandler();
