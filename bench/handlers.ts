/**
 * The real handler (createHandler from lambda/sync/handler.ts) as the benchmarks run it in-process:
 * its own DynamoDB client on the proxy, its log and EMF lines kept off stdout (which stays the
 * report) but the `lease acquired` moment recorded.
 */
import { performance } from 'node:perf_hooks';
import { createHandler, type Handler } from '../lambda/sync/handler.js';
import type { RunSummary } from '../lambda/sync/summary.js';
import { benchClient, type BenchClient } from '../local/counting-client.js';

/** Remembers when the handler logged `lease acquired` (performance.now()); prints nothing. */
export interface DecisionLog {
  acquiredAt: number | undefined;
}

export interface BenchHandler {
  handler: Handler;
  dynamo: BenchClient;
  logger: DecisionLog;
}

export function benchHandler(options: { endpoint: string; env: Record<string, string>; trackCapacity?: boolean }): BenchHandler {
  const dynamo = benchClient(options.endpoint, { trackCapacity: options.trackCapacity ?? false });
  const logger: DecisionLog = { acquiredAt: undefined };
  const handler = createHandler({
    env: { AWS_REGION: 'us-east-1', POWERTOOLS_LOG_LEVEL: 'DEBUG', ...options.env },
    dynamo: dynamo.client,
    write: (line) => {
      if (line.includes('"message":"lease acquired"')) logger.acquiredAt ??= performance.now();
    },
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
