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

  const build = (): Runtime => {
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
    const deps: SyncDeps = {
      lease,
      writer,
      store,
      now,
      timing,
      planSettings: {
        ...DEFAULT_PLAN_SETTINGS,
        finishedRetentionSeconds: config.finishedRetentionDays * 24 * 3600,
        missingSyncsBeforeDelete: config.missingSyncsBeforeDelete,
        acceptHeldAfterReplies: config.acceptHeldAfterReplies,
        // A reminder moved earlier into the next period could fire before the next sync undoes it.
        nearSeconds: config.scheduleRateMinutes * 60 + 600,
        ...options.planSettings,
      },
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
    return { config, deps };
  };

  /** The one summary line (and metrics) of an invocation that failed before or outside runSync. */
  const failedWithoutSummary = (phase: FailurePhase, error: unknown, startedAt: number): void => {
    const durationMs = now() - startedAt;
    recordMetrics(metrics, { outcome: 'failed', durationMs });
    logger.error('failed', { summary: true, outcome: 'failed', phase, error: describe(error), durationMs });
  };

  return async (event, context) => {
    const runId = newRunId();
    const startedAt = now();
    if (context.awsRequestId !== undefined) logger.addContext(context as Context);
    logger.appendKeys({ runId });
    try {
      let invocation: Invocation;
      try {
        runtime ??= build();
        refuseShortTimeout(runtime.deps.timing, context.getRemainingTimeInMillis());
        invocation = parseEvent(event, { periodMinutes: runtime.config.scheduleRateMinutes, nowMs: now() });
      } catch (error) {
        failedWithoutSummary(failurePhase(error) === 'event' ? 'event' : 'config', error, startedAt);
        throw error;
      }
      if (invocation.source === 'console' && invokedThroughVersion(context.invokedFunctionArn)) {
        invocation = { ...invocation, source: 'deploy' };
      }
      logger.appendKeys({ source: invocation.source, ...(invocation.interval !== undefined ? { interval: invocation.interval } : {}) });
      let summary: RunSummary;
      try {
        summary = withBoundedError(
          await runSync(invocation, runtime.deps, {
            runId,
            remainingMs: () => context.getRemainingTimeInMillis(),
          }),
        );
      } catch (error) {
        // runSync reports every expected failure in its summary; this is a bug. Still say so once.
        failedWithoutSummary('internal', error, startedAt);
        throw error;
      }
      logSummary(logger, summary);
      recordMetrics(metrics, summary);
      if (summary.outcome === 'failed' && invocation.source === 'schedule') throw new SyncFailedError(summary);
      return summary;
    } finally {
      metrics.publishStoredMetrics();
      logger.resetKeys();
    }
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

/**
 * The deploy-time `triggers.Trigger` invokes the function's published version (a qualified ARN
 * ending in `:<number>`); the console and EventBridge invoke `$LATEST` through the unqualified ARN.
 */
export function invokedThroughVersion(invokedFunctionArn: string | undefined): boolean {
  return invokedFunctionArn !== undefined && /:function:[^:]+:\d+$/.test(invokedFunctionArn);
}

export const handler = createHandler();
