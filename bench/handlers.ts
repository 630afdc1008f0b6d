/**
 * The real handler (createHandler from lambda/handler.ts) as the benchmarks run it in-process:
 * its own DynamoDB client on the proxy, logs silenced but the `lease acquired` moment recorded,
 * EMF output disabled (POWERTOOLS_METRICS_DISABLED) so that stdout stays the report.
 */
import { performance } from 'node:perf_hooks';
import { Logger } from '@aws-lambda-powertools/logger';
import type { LogItemExtraInput, LogItemMessage } from '@aws-lambda-powertools/logger/types';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { createHandler, type Handler } from '../lambda/handler.js';
import { METRICS_NAMESPACE, SERVICE_NAME } from '../lambda/contract.js';
import type { RunSummary } from '../lambda/summary.js';
import { benchClient, type BenchClient } from '../local/counting-client.js';

/** A silent logger that remembers when the handler logged `lease acquired` (performance.now()). */
class DecisionLogger extends Logger {
  acquiredAt: number | undefined;

  override debug(input: LogItemMessage, ...extra: LogItemExtraInput): void {
    if (input === 'lease acquired') this.acquiredAt ??= performance.now();
    super.debug(input, ...extra);
  }
}

export interface BenchHandler {
  handler: Handler;
  dynamo: BenchClient;
  logger: DecisionLogger;
}

export function benchHandler(options: { endpoint: string; env: Record<string, string>; trackCapacity?: boolean }): BenchHandler {
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  const dynamo = benchClient(options.endpoint, { trackCapacity: options.trackCapacity ?? false });
  const logger = new DecisionLogger({ serviceName: SERVICE_NAME, logLevel: 'SILENT' });
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: SERVICE_NAME, logger });
  const handler = createHandler({
    env: { AWS_REGION: 'us-east-1', ...options.env },
    dynamo: dynamo.client,
    logger,
    metrics,
  });
  return { handler, dynamo, logger };
}

export function lambdaContext(remainingMs = 60_000) {
  const deadline = Date.now() + remainingMs;
  return {
    awsRequestId: '00000000-0000-4000-8000-00000000bench',
    functionName: 'ContestSync-bench',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
}

/** Invokes and returns the summary, whether returned or carried by the thrown SyncFailedError. */
export async function invoke(handler: Handler, event: unknown): Promise<RunSummary> {
  try {
    return await handler(event, lambdaContext());
  } catch (error) {
    const summary = (error as { summary?: RunSummary }).summary;
    if (summary !== undefined) return summary;
    throw error;
  }
}
