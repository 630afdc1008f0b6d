/**
 * DynamoDB clients for the benchmarks, all pointed at the counting proxy: a per-client count of
 * HTTP attempts (to attribute requests to one invocation; the proxy's total is the reference),
 * and consumed capacity collected with ReturnConsumedCapacity: 'TOTAL'.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from './dynamodb-local.js';

/** Operations that accept ReturnConsumedCapacity. */
const CAPACITY_OPERATIONS = new Set([
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'BatchGetItem',
  'BatchWriteItem',
  'TransactGetItems',
  'TransactWriteItems',
]);
const READ_OPERATIONS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems']);

export interface Capacity {
  /** Read capacity units consumed (ReadCapacityUnits, or CapacityUnits of a read operation). */
  read: number;
  /** Write capacity units consumed (WriteCapacityUnits, or CapacityUnits of a write operation). */
  write: number;
  total: number;
  /** Capacity units by operation (the CapacityUnits DynamoDB reported). */
  byOperation: Record<string, number>;
}

interface ConsumedCapacityShape {
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
}

export interface BenchClient {
  client: DynamoDBClient;
  /** HTTP attempts this client sent (retries included), by operation. */
  attempts: Map<string, number>;
  attemptsTotal(): number;
  capacity: Capacity;
  reset(): void;
}

/**
 * A v3 client for `endpoint` (the proxy) with dummy credentials. `maxAttempts` and timeouts match
 * the handler's own client (lambda/sync/handler.ts).
 */
export function benchClient(endpoint: string, options: { trackCapacity?: boolean } = {}): BenchClient {
  const client = new DynamoDBClient({
    endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    maxAttempts: 3,
    requestHandler: { connectionTimeout: 2_000, requestTimeout: 5_000 },
  });
  const attempts = new Map<string, number>();
  const capacity: Capacity = { read: 0, write: 0, total: 0, byOperation: {} };
  const operationOf = (commandName: unknown) => String(commandName ?? 'unknown').replace(/Command$/, '');

  // The deserialize step runs once per HTTP attempt (the retry middleware sits above it).
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = operationOf(context.commandName);
      attempts.set(name, (attempts.get(name) ?? 0) + 1);
      return next(args);
    },
    { step: 'deserialize', name: 'benchCountAttempts' },
  );

  if (options.trackCapacity === true) {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const name = operationOf(context.commandName);
        if (!CAPACITY_OPERATIONS.has(name)) return next(args);
        (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
        const result = await next(args);
        addConsumed(capacity, name, (result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity);
        return result;
      },
      { step: 'initialize', name: 'benchConsumedCapacity' },
    );
  }

  return {
    client,
    attempts,
    attemptsTotal: () => [...attempts.values()].reduce((sum, n) => sum + n, 0),
    capacity,
    reset: () => {
      attempts.clear();
      capacity.read = 0;
      capacity.write = 0;
      capacity.total = 0;
      capacity.byOperation = {};
    },
  };
}

/** Adds one response's ConsumedCapacity (an object, or an array per table for transactions). */
export function addConsumed(into: Capacity, operation: string, consumed: unknown): void {
  const list = (Array.isArray(consumed) ? consumed : consumed === undefined ? [] : [consumed]) as ConsumedCapacityShape[];
  for (const entry of list) {
    const units = entry.CapacityUnits ?? 0;
    let read = entry.ReadCapacityUnits;
    let write = entry.WriteCapacityUnits;
    if (read === undefined && write === undefined) {
      if (READ_OPERATIONS.has(operation)) read = units;
      else write = units;
    }
    into.read += read ?? 0;
    into.write += write ?? 0;
    into.total += units;
    into.byOperation[operation] = (into.byOperation[operation] ?? 0) + units;
  }
}
