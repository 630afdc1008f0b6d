/**
 * The real handler in this process, wired to a test's DynamoDB Local tables and Codeforces
 * stand-in, with a request counter on the DynamoDB client and the handler's stdout (JSON logs
 * and EMF) captured per invocation.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createHandler, type HandlerOptions } from '../../lambda/sync/handler.js';
import type { RunSummary } from '../../lambda/sync/summary.js';
import { benchClient } from '../../local/counting-client.js';
import type { TestTables } from './tables.js';

export interface CountingClient {
  client: DynamoDBClient;
  /** DynamoDB operations sent, by name (e.g. TransactWriteItems). */
  counts: Map<string, number>;
  total(): number;
  reset(): void;
}

/** The benchmark's counting client: DynamoDB requests on the wire (retries included), by operation. */
export function countingClient(endpoint: string): CountingClient {
  const counted = benchClient(endpoint);
  return { client: counted.client, counts: counted.attempts, total: counted.attemptsTotal, reset: counted.reset };
}

export interface Invoked {
  summary?: RunSummary;
  error?: Error & { summary?: RunSummary };
  /** Everything the handler printed: JSON log lines and EMF documents. */
  lines: Record<string, unknown>[];
}

/**
 * Runs `fn` while collecting what it writes to stdout and stderr (Powertools writes JSON logs
 * and EMF there; ERROR-level lines go to stderr, as in Lambda where both reach CloudWatch).
 */
export async function captureStdout<T>(fn: () => Promise<T>): Promise<{ value?: T; error?: unknown; lines: Record<string, unknown>[] }> {
  const streams = [process.stdout, process.stderr];
  const originals = streams.map((stream) => stream.write);
  let text = '';
  for (const stream of streams) {
    stream.write = (chunk: string | Uint8Array) => {
      text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
      return true;
    };
  }
  let value: T | undefined;
  let error: unknown;
  try {
    value = await fn();
  } catch (caught) {
    error = caught;
  } finally {
    streams.forEach((stream, i) => {
      stream.write = originals[i] as typeof stream.write;
    });
  }
  const lines = text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { ...(value !== undefined ? { value } : {}), ...(error !== undefined ? { error } : {}), lines };
}

export function fakeContext(remainingMs: number) {
  const deadline = Date.now() + remainingMs;
  return {
    awsRequestId: 'c0ffee00-0000-4000-8000-000000000000',
    functionName: 'ContestSync-test',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:ContestSync-test',
    memoryLimitInMB: '256',
    logGroupName: '/aws/lambda/ContestSync-test',
    logStreamName: 'test',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
}

export function localHandler(
  tables: TestTables,
  codeforcesUrl: string,
  options: { leaseSeconds?: number; env?: Record<string, string> } & Omit<HandlerOptions, 'env' | 'dynamo'> = {},
) {
  const counting = countingClient(tables.endpoint);
  const { leaseSeconds, env, ...rest } = options;
  const handler = createHandler({
    env: {
      ...tables.env,
      CODEFORCES_API_URL: codeforcesUrl,
      LEASE_DURATION_SECONDS: String(leaseSeconds ?? 10),
      POWERTOOLS_LOG_LEVEL: 'DEBUG',
      ...env,
    },
    dynamo: counting.client,
    ...rest,
  });
  return {
    requests: counting,
    async invoke(event: unknown, remainingMs = 60_000, context: Record<string, unknown> = {}): Promise<Invoked> {
      const { value, error, lines } = await captureStdout(() => handler(event, { ...fakeContext(remainingMs), ...context }));
      const summary = value ?? (error as { summary?: RunSummary } | undefined)?.summary;
      return {
        ...(summary !== undefined ? { summary } : {}),
        ...(error !== undefined ? { error: error as Error & { summary?: RunSummary } } : {}),
        lines,
      };
    },
  };
}
