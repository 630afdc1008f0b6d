/**
 * A small HTTP proxy in front of DynamoDB Local that counts requests on the wire by operation
 * (the `X-Amz-Target` header), can delay them, and can answer what AWS returns and DynamoDB Local
 * never does. The benchmarks count with it (requests are the figure that carries over to AWS); the
 * chaos runner and the contention tests inject latency and AWS faults with it.
 *
 * AWS behaviour it reproduces:
 *
 * - **Transaction conflicts.** The item keys of every `TransactWriteItems` are locked from the moment
 *   it is forwarded until DynamoDB Local has answered, optionally after a hold (`transactionHold`)
 *   that stands for a transaction DynamoDB takes a while to commit. Meanwhile a plain `PutItem`,
 *   `UpdateItem` or `DeleteItem` on a locked key gets HTTP 400 `TransactionConflictException`, and
 *   another `TransactWriteItems` touching one gets `TransactionCanceledException` with reason
 *   `TransactionConflict`. Locks can be shared by several proxies in front of one DynamoDB
 *   (`locks`), as the chaos runner's per-worker proxies are.
 * - **Injected faults** chosen per request by a policy (`faults`): throttling
 *   (`ProvisionedThroughputExceededException`, `ThrottlingException`, HTTP 400), HTTP 500
 *   `InternalServerError`, a conflict, and a connection dropped after DynamoDB Local applied the
 *   request (forwarded and answered, then the client socket is destroyed without a reply).
 *
 * The SDK retries throttling, 500s and dropped connections itself (maxAttempts); it never retries
 * a TransactionConflictException. Every injected answer is counted by kind and operation.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What the proxy can answer instead of DynamoDB Local. */
export type ProxyFault = 'conflict' | 'throughput-exceeded' | 'throttling' | 'internal-error' | 'drop-after-apply';

export const PROXY_FAULTS: readonly ProxyFault[] = ['conflict', 'throughput-exceeded', 'throttling', 'internal-error', 'drop-after-apply'];

/** One request as the fault policy sees it. */
export interface ProxyRequest {
  /** X-Amz-Target suffix, e.g. `UpdateItem`. */
  operation: string;
  /** The parsed JSON body (undefined if it was not JSON). */
  body: Record<string, unknown> | undefined;
  /** 1-based count of this operation through this proxy. */
  n: number;
  /** It writes an item an in-flight transaction holds: it conflicts whatever the policy says. */
  locked?: boolean;
}

/** Decides the fault of one request (undefined: forward it untouched). */
export type FaultPolicy = (request: ProxyRequest) => ProxyFault | undefined;

/** See DynamoProxy.setBeforeForward. */
export type BeforeForward = (request: ProxyRequest) => Promise<void>;

/** See DynamoProxy.setAfterApply. */
export type AfterApply = (request: ProxyRequest, reply: { status: number; body: Buffer }) => void | Promise<void>;

/** Item keys held by in-flight transactions; share one between proxies in front of one DynamoDB. */
export interface TransactionLocks {
  /** Reference counts by `table␟key`. */
  readonly held: Map<string, number>;
  /** Key attribute names by table, learned from every request that names a `Key`, or given. */
  readonly keySchemas: Map<string, readonly string[]>;
}

export function transactionLocks(keySchemas: Record<string, readonly string[]> = {}): TransactionLocks {
  return { held: new Map(), keySchemas: new Map(Object.entries(keySchemas)) };
}

export interface DynamoProxy {
  /** Point AWS_ENDPOINT_URL_DYNAMODB here. */
  readonly endpoint: string;
  /** Requests received so far, by operation (e.g. `UpdateItem`). */
  readonly counts: Map<string, number>;
  total(): number;
  /** Clears the request counts and the injected-fault counts. */
  reset(): void;
  /** Delay for each request (ms) before it reaches DynamoDB, e.g. `() => Math.random() * 200`; default none. */
  setDelay(delay: ((operation: string) => number) | undefined): void;
  /** Fault of each request; default none. */
  setFaults(policy: FaultPolicy | undefined): void;
  /** How long a `TransactWriteItems` holds its items locked before DynamoDB Local commits it (ms); default 0. */
  setTransactionHold(hold: ((request: ProxyRequest) => number) | undefined): void;
  /**
   * Called with a request and DynamoDB Local's reply once DynamoDB Local has applied it, before the
   * reply goes back to the client, and awaited: to act at that exact point, e.g. kill or freeze the
   * client right after its write landed, or change an item between a read and what the client
   * does with what it read. Default none.
   */
  setAfterApply(hook: AfterApply | undefined): void;
  /**
   * Called with a request before it reaches DynamoDB Local (after its delay, before any lock or
   * fault), and awaited: to act between two requests of a client, e.g. write what another writer
   * writes between a read and the transaction that follows it, while no transaction holds an item.
   * Default none.
   */
  setBeforeForward(hook: BeforeForward | undefined): void;
  /** Injected answers so far: `fault → operation → count`. */
  injected(): Partial<Record<ProxyFault, Record<string, number>>>;
  readonly locks: TransactionLocks;
  close(): Promise<void>;
}

const AWS_JSON = 'application/x-amz-json-1.0';
const PREFIX = 'com.amazonaws.dynamodb.v20120810#';
const PLAIN_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem']);
const CONFLICT_MESSAGE = 'Transaction is ongoing for the item';

/** The status and body AWS answers for each refusing fault. */
const ANSWERS: Record<Exclude<ProxyFault, 'drop-after-apply'>, { status: number; type: string; message: string }> = {
  conflict: { status: 400, type: `${PREFIX}TransactionConflictException`, message: CONFLICT_MESSAGE },
  'throughput-exceeded': {
    status: 400,
    type: `${PREFIX}ProvisionedThroughputExceededException`,
    message:
      'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.',
  },
  throttling: {
    status: 400,
    type: 'com.amazon.coral.availability#ThrottlingException',
    message: 'Rate of requests exceeds the allowed throughput.',
  },
  'internal-error': { status: 500, type: `${PREFIX}InternalServerError`, message: 'Internal server error' },
};

type Json = Record<string, unknown>;
const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `{attribute: AttributeValue}` restricted to `names`, in a canonical string. */
function keyString(table: string, attributes: Json, names: readonly string[]): string | undefined {
  const parts: string[] = [];
  for (const name of [...names].sort()) {
    if (attributes[name] === undefined) return undefined;
    parts.push(`${name}=${JSON.stringify(attributes[name])}`);
  }
  return `${table}\u241f${parts.join('&')}`;
}

/** The item keys a request writes (one per action of a transaction), learning key schemas on the way. */
function writtenKeys(operation: string, body: Json | undefined, locks: TransactionLocks): string[] {
  if (body === undefined) return [];
  const actions: Json[] =
    operation === 'TransactWriteItems'
      ? (Array.isArray(body.TransactItems) ? body.TransactItems : []).flatMap((item) =>
          isJson(item) ? Object.values(item).filter(isJson) : [],
        )
      : PLAIN_WRITES.has(operation)
        ? [body]
        : [];
  for (const action of actions) {
    if (typeof action.TableName === 'string' && isJson(action.Key) && !locks.keySchemas.has(action.TableName)) {
      locks.keySchemas.set(action.TableName, Object.keys(action.Key));
    }
  }
  return actions.flatMap((action) => {
    const table = action.TableName;
    if (typeof table !== 'string') return [];
    const names = locks.keySchemas.get(table);
    const source = isJson(action.Key) ? action.Key : isJson(action.Item) ? action.Item : undefined;
    if (source === undefined) return [];
    const key = keyString(table, source, names ?? Object.keys(source));
    return key === undefined ? [] : [key];
  });
}

/** The whole body of a request (rejects if the client goes away first). */
export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
    req.on('aborted', () => reject(new Error('client aborted')));
  });
}

const wait = (ms: number) => (ms > 0 ? new Promise<void>((resolve) => setTimeout(resolve, ms)) : Promise.resolve());

export async function startDynamoProxy(target: string, options: { port?: number; locks?: TransactionLocks } = {}): Promise<DynamoProxy> {
  const upstream = new URL(target);
  const counts = new Map<string, number>();
  const injected = new Map<ProxyFault, Map<string, number>>();
  const locks = options.locks ?? transactionLocks();
  let delay: ((operation: string) => number) | undefined;
  let policy: FaultPolicy | undefined;
  let hold: ((request: ProxyRequest) => number) | undefined;
  let afterApply: AfterApply | undefined;
  let beforeForward: BeforeForward | undefined;
  const sockets = new Set<Socket>();

  const note = (fault: ProxyFault, operation: string): void => {
    const byOperation = injected.get(fault) ?? new Map<string, number>();
    byOperation.set(operation, (byOperation.get(operation) ?? 0) + 1);
    injected.set(fault, byOperation);
  };
  const answer = (res: ServerResponse, status: number, body: Json): void => {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': AWS_JSON, 'x-amzn-requestid': `proxy-${Date.now()}` });
    res.end(JSON.stringify(body));
  };

  /** Forwards to DynamoDB Local; resolves with its complete reply (or rejects on a network error). */
  const forward = (req: IncomingMessage, body: Buffer) =>
    new Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }>((resolve, reject) => {
      const out = httpRequest(
        { hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
        (reply) => {
          const chunks: Buffer[] = [];
          reply.on('data', (chunk: Buffer) => chunks.push(chunk));
          reply.on('end', () => resolve({ status: reply.statusCode ?? 502, headers: reply.headers, body: Buffer.concat(chunks) }));
          reply.on('error', reject);
        },
      );
      out.on('error', reject);
      out.end(body);
    });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const operation =
      String(req.headers['x-amz-target'] ?? 'unknown')
        .split('.')
        .pop() ?? 'unknown';
    const n = (counts.get(operation) ?? 0) + 1;
    counts.set(operation, n);
    const raw = await readBody(req);
    let body: Json | undefined;
    try {
      const parsed: unknown = JSON.parse(raw.toString('utf8'));
      body = isJson(parsed) ? parsed : undefined;
    } catch {
      body = undefined;
    }
    const request: ProxyRequest = { operation, body, n };
    await wait(delay?.(operation) ?? 0);
    await beforeForward?.(request);

    // Decided when the request reaches "DynamoDB": after its network delay.
    const keys = writtenKeys(operation, body, locks);
    const locked = keys.map((key) => (locks.held.get(key) ?? 0) > 0);
    request.locked = locked.some(Boolean);
    const fault = policy?.(request);
    if (fault !== undefined && fault !== 'drop-after-apply') {
      note(fault, operation);
      const { status, type, message } = ANSWERS[fault];
      answer(res, status, { __type: type, message });
      return;
    }
    if (request.locked) {
      note('conflict', operation);
      if (operation === 'TransactWriteItems') {
        const codes = locked.map((isLocked) => (isLocked ? 'TransactionConflict' : 'None'));
        answer(res, 400, {
          __type: `${PREFIX}TransactionCanceledException`,
          Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${codes.join(', ')}]`,
          CancellationReasons: codes.map((Code) => (Code === 'None' ? { Code } : { Code, Message: CONFLICT_MESSAGE })),
        });
      } else {
        answer(res, 400, { __type: ANSWERS.conflict.type, message: CONFLICT_MESSAGE });
      }
      return;
    }

    const transaction = operation === 'TransactWriteItems';
    if (transaction) for (const key of keys) locks.held.set(key, (locks.held.get(key) ?? 0) + 1);
    try {
      if (transaction) await wait(hold?.(request) ?? 0);
      const reply = await forward(req, raw);
      await afterApply?.(request, reply);
      if (fault === 'drop-after-apply') {
        note(fault, operation);
        req.socket.destroy();
        return;
      }
      if (res.destroyed) return;
      res.writeHead(reply.status, reply.headers);
      res.end(reply.body);
    } finally {
      if (transaction) {
        for (const key of keys) {
          const left = (locks.held.get(key) ?? 1) - 1;
          if (left > 0) locks.held.set(key, left);
          else locks.held.delete(key);
        }
      }
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.destroyed) return;
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`proxy error: ${error instanceof Error ? error.message : String(error)}`);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    counts,
    total: () => [...counts.values()].reduce((sum, n) => sum + n, 0),
    reset: () => {
      counts.clear();
      injected.clear();
    },
    setDelay: (next) => {
      delay = next;
    },
    setFaults: (next) => {
      policy = next;
    },
    setTransactionHold: (next) => {
      hold = next;
    },
    setAfterApply: (next) => {
      afterApply = next;
    },
    setBeforeForward: (next) => {
      beforeForward = next;
    },
    injected: () => Object.fromEntries([...injected].map(([fault, byOperation]) => [fault, Object.fromEntries(byOperation)])),
    locks,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A scripted policy: the n-th matching request (1-based, counted per script entry) gets the fault.
 * `match` narrows by operation and body (e.g. only the lease renewals).
 */
export function scriptedFaults(
  script: readonly { fault: ProxyFault; match: (request: ProxyRequest) => boolean; nth: readonly number[] }[],
): FaultPolicy {
  const seen = script.map(() => 0);
  return (request) => {
    let chosen: ProxyFault | undefined;
    script.forEach((entry, i) => {
      if (!entry.match(request)) return;
      seen[i] = (seen[i] ?? 0) + 1;
      if (chosen === undefined && entry.nth.includes(seen[i])) chosen = entry.fault;
    });
    return chosen;
  };
}

/** What a lease UpdateItem does, from its body: `acquire` (ADD fence), `release` (REMOVE holder) or `renew`. */
export function leaseOperation(request: ProxyRequest, leaseKey = 'lease#contest-sync'): 'acquire' | 'renew' | 'release' | undefined {
  if (request.operation !== 'UpdateItem' || request.body === undefined) return undefined;
  const key = request.body.Key as { pk?: { S?: string } } | undefined;
  if (key?.pk?.S !== leaseKey) return undefined;
  const expression = String(request.body.UpdateExpression ?? '');
  if (expression.includes('ADD fence')) return 'acquire';
  if (expression.includes('REMOVE holder')) return 'release';
  return 'renew';
}
