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
import { DEFAULT_PLAN_SETTINGS } from './contests/plan.js';
import { METRICS_NAMESPACE, SERVICE_NAME } from './contract.js';
import { describe } from './dynamo-errors.js';
import { EventValidationError, parseEvent, type Invocation } from './events.js';
import { DynamoLease } from './lease/dynamo-lease.js';
import { leaseTiming, type LeaseTiming } from './lease/timing.js';
import { logSummary, recordMetrics } from './observe.js';
import { DynamoContestStore } from './store/dynamo-store.js';
import type { RunSummary } from './summary.js';
import { runSync, type SyncDeps } from './sync.js';

/** Thrown by scheduled runs that failed, so that Lambda retries them; carries the summary. */
export class SyncFailedError extends Error {
  override readonly name = 'SyncFailedError';
  constructor(readonly summary: RunSummary) {
    super(`sync ${summary.runId} failed in phase ${summary.reason ?? 'unknown'}: ${summary.error ?? 'no detail'}`);
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
      new DynamoDBClient({ maxAttempts: 3, requestHandler: { connectionTimeout: 2_000, requestTimeout: 5_000 } });
    const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
    const lease = new DynamoLease({ doc, table: config.tables.coordination, timing, now });
    const store = new DynamoContestStore(
      doc,
      { contests: config.tables.contests, reminders: config.tables.reminders },
      { now, onCommit: (info) => logger.debug('committed', { ...info }) },
    );
    const deps: SyncDeps = {
      lease,
      store,
      now,
      timing,
      planSettings: { ...DEFAULT_PLAN_SETTINGS, finishedRetentionSeconds: config.finishedRetentionDays * 24 * 3600 },
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
  const failedWithoutSummary = (phase: 'event' | 'config' | 'internal', error: unknown, startedAt: number): void => {
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
        invocation = parseEvent(event, runtime.config.scheduleRateMinutes);
      } catch (error) {
        failedWithoutSummary(error instanceof EventValidationError ? 'event' : 'config', error, startedAt);
        throw error;
      }
      if (invocation.source === 'console' && invokedThroughVersion(context.invokedFunctionArn)) {
        invocation = { ...invocation, source: 'deploy' };
      }
      logger.appendKeys({ source: invocation.source, ...(invocation.interval !== undefined ? { interval: invocation.interval } : {}) });
      let summary: RunSummary;
      try {
        summary = await runSync(invocation, runtime.deps, {
          runId,
          remainingMs: () => context.getRemainingTimeInMillis(),
        });
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

/**
 * The deploy-time `triggers.Trigger` invokes the function's published version (a qualified ARN
 * ending in `:<number>`); the console and EventBridge invoke `$LATEST` through the unqualified ARN.
 */
export function invokedThroughVersion(invokedFunctionArn: string | undefined): boolean {
  return invokedFunctionArn !== undefined && /:function:[^:]+:\d+$/.test(invokedFunctionArn);
}

export const handler = createHandler();
