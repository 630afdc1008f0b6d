/**
 * Our lease beside two npm DynamoDB lock libraries, on the same DynamoDB Local, through the same
 * counting proxy, in the same run:
 *
 *   ours                               DynamoLease (packages/scheduled-singleton/src/runtime/dynamo-lease.ts),
 *                                      three cycles (CYCLES below): the lock alone, a scheduled interval,
 *                                      and a run's settle
 *   dynamodb-lock-client FailClosed    0.7.3, aws-sdk v2 DocumentClient
 *   dynamodb-lock-client FailOpen      0.7.3, aws-sdk v2 DocumentClient (README settings: lease 10 s, heartbeat 3 s)
 *   @deliveryhero/dynamodb-lock        2.0.0, v3 DynamoDBDocument (defaults: lease 20 s, prolong every 5 s)
 *
 * One cycle = acquire a free lock, then release it (ours: as CYCLES says). Each worker cycles on its own lock key, so
 * nobody waits for anybody: the libraries treat a held lock very differently (ours refuses at
 * once, FailClosed retries after acquirePeriodMs, FailOpen and deliveryhero sleep a whole lease
 * before stealing), so a same-key race would time their sleeps, not their cost. W = 1 and W = 8
 * concurrent workers; the contenders take turns in rotated order, R rounds of K cycles per worker,
 * after a warm-up (WARM_UP cycles of each, one worker: DynamoDB Local's JIT compiles the paths of
 * UpdateItem and of PutItem/DeleteItem before anything is timed; it also leaves FailOpen's lock items
 * in place, as in steady use). Write units and the lease item's size are read afterwards, apart
 * (ReturnConsumedCapacity would add work to the timed requests).
 *
 * The v2 client gets a keep-alive agent (v2 opens a connection per request by default; v3 keeps
 * them alive), so that both SDKs pay the same for connections. Two controls run in the same
 * rotation — a bare PutItem + DeleteItem with each SDK, no lock logic — to tell what the SDK costs
 * from what the lock costs.
 */
import { randomUUID } from 'node:crypto';
import { Agent } from 'node:http';
import { performance } from 'node:perf_hooks';
import { CreateTableCommand, waitUntilTableExists, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocument, DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoProxy } from '../local/dynamo-proxy.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../local/dynamodb-local.js';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { DynamoLease, itemSizeBytes, leaseTiming, ledgerRetentionMs } from '@contest-sync/scheduled-singleton';
import { benchClient } from '../local/counting-client.js';
import { addCounts, ratio, round, sortedCounts, summarize, total } from './stats.js';

interface Contender {
  name: string;
  kind: 'ours' | 'peer' | 'control';
  /** One acquire + release on the worker's own key; throws if either fails. */
  cycle(worker: number): Promise<void>;
  close(): void;
}

/** What each of our cycles does: the same 2 requests as FailClosed's, or what a run's settle sends. */
export const CYCLES = {
  lock: {
    name: 'contest-sync DynamoLease',
    does: "acquire a free lease (UpdateItem: holder, expiry, fence + 1, ALL_NEW), release it (UpdateItem on holder + fence): FailClosed's cycle",
  },
  scheduled: {
    name: 'contest-sync DynamoLease, a scheduled interval',
    does:
      'acquire for the next hourly interval, refusing it if done (the ledger in the condition), release marking it done and ' +
      'recording lastRun: what a sync that wrote nothing asks of the lease item; the ledger at its steady state',
  },
  settled: {
    name: 'contest-sync DynamoLease, as a run settles',
    does: 'the scheduled cycle, its release in one TransactWriteItems with the run record: exactly what runExclusively sends for a run with nothing to write',
  },
} as const;
export type OurCycle = keyof typeof CYCLES;

export interface CycleResult {
  name: string;
  /** What one cycle does (ours). */
  does?: string;
  workers: number;
  cycles: number;
  requestsPerCycle: number;
  requestsByOperation: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface PeerResult extends CycleResult {
  /** Peer p50 / our p50 at the same number of workers. */
  ratioToOurs: number | null;
}

/** One of our cycles at one number of workers, beside FailClosed at the same number. */
export interface OurCycleResult extends CycleResult {
  cycle: OurCycle;
  /** Our p50 / FailClosed's p50 (at or below 1.00: ours is as fast or faster). */
  ratioToFailClosed: number | null;
  /** DynamoDB Local's consumed write units per cycle (measured apart). */
  writeUnitsPerCycle: number;
  /** The lease item's size as DynamoDB counts it, after the cycles. */
  leaseItemBytes: number;
}

export interface PeersResult {
  method: string;
  /** Our lease, W = 1 (and `concurrent`: W = 8). */
  lease: CycleResult & { concurrent: CycleResult };
  /** Each of our cycles (CYCLES) at each number of workers. */
  cycles?: OurCycleResult[];
  peers: PeerResult[];
  /** Bare PutItem + DeleteItem per SDK (no lock logic), same rotation. */
  controls: PeerResult[];
  guarantees: Guarantee[];
}

export const OURS = 'contest-sync DynamoLease';
const FAIL_CLOSED = 'dynamodb-lock-client FailClosed';
const FAIL_OPEN = 'dynamodb-lock-client FailOpen';
const DELIVERYHERO = '@deliveryhero/dynamodb-lock';
const CONTROL_V3 = 'control: bare PutItem + DeleteItem, SDK v3';
const CONTROL_V2 = 'control: bare PutItem + DeleteItem, SDK v2';

// ---------------------------------------------------------------------------------------------
// What each one guarantees, read from its source (node_modules, versions above).
// ---------------------------------------------------------------------------------------------

export interface Guarantee {
  name: string;
  ownerCheckedRelease: string;
  heartbeat: string;
  fencingOfDataWrites: string;
  perIntervalDedupe: string;
  takeoverAfterCrash: string;
  /** What a contender does while another holds the lock (our policy: skip and say so, docs/design.md, lease rule 8). */
  whileHeld: string;
}

export const GUARANTEES: Guarantee[] = [
  {
    name: OURS,
    // lambda/lease/dynamo-lease.ts release(): UpdateItem with RELEASE_CONDITION
    // (lambda/lease/record.ts: `holder = :runId AND fence = :fence`); a refusal returns false.
    ownerCheckedRelease: 'yes: holder + fence condition',
    // lambda/lease/heartbeat.ts Heartbeat.beat(): renew (OWNED_CONDITION) every duration/3; a refused
    // renewal, or none confirmed within 2/3 of the duration, aborts the run's AbortSignal.
    heartbeat: 'yes, every duration/3; lost lease aborts the work',
    // lambda/lease/dynamo-lease.ts fenceCheck() + lambda/sync/store.ts commit(): every data
    // write is a TransactWriteItems whose first action is a ConditionCheck on holder + fence + unexpired.
    fencingOfDataWrites: 'yes: ConditionCheck in every write transaction',
    // lambda/single-execution/record.ts acquireCondition(true): `NOT contains(ledger, :slot)`;
    // release() adds the interval (rememberDone) in the same write.
    perIntervalDedupe: 'yes: the interval ledger in the lease item',
    // record.ts acquireCondition: `expiresAtMs <= :now` — the next contender takes an expired lease
    // in its one write, no waiting; expiry is the last renewal + LEASE_DURATION_SECONDS (default 30 s).
    takeoverAfterCrash: '<= lease duration after the last renewal (30 s default), no wait',
    // dynamo-lease.ts acquire(): the refused UpdateItem returns the old item
    // (ReturnValuesOnConditionCheckFailure: ALL_OLD); explainRefusal() names holder and expiry.
    whileHeld: 'refused at once: 1 request, learns holder + expiry',
  },
  {
    name: FAIL_CLOSED,
    // dynamodb-lock-client/index.js Lock.prototype._releaseFailClosed: DeleteItem with
    // `attribute_exists(pk) and guid = :guid`; refusal → FailedToReleaseLock error.
    ownerCheckedRelease: 'yes: guid condition',
    // index.js FailClosed.prototype.acquireLock builds the Lock without heartbeatPeriodMs.
    heartbeat: 'no',
    // index.js FailClosed: the Lock gets no fencingToken; nothing checks data writes.
    fencingOfDataWrites: 'no (no token)',
    // index.js: acquire is a PutItem with `attribute_not_exists(pk)` only.
    perIntervalDedupe: 'no',
    // README ("fail closed ... requires human intervention"); index.js: acquire only succeeds when
    // the item does not exist, and nothing expires it.
    takeoverAfterCrash: 'never: the item must be deleted by hand',
    // index.js FailClosed "retry acquire lock": on ConditionalCheckFailed, retries after
    // acquirePeriodMs while retryCount (default 1) lasts, then FailedToAcquireLock.
    whileHeld: 'PutItem, retry after acquirePeriodMs (once by default), then error',
  },
  {
    name: FAIL_OPEN,
    // index.js Lock.prototype._releaseFailOpen: PutItem (leaseDurationMs: 1) with `guid = :guid`;
    // a ConditionalCheckFailedException is swallowed (callback()).
    ownerCheckedRelease: 'yes: guid condition (refusal silent)',
    // index.js Lock constructor refreshLock(): PutItem with a new guid, conditioned on the old one,
    // every heartbeatPeriodMs if configured; a failure only emits 'error' and stops heartbeating —
    // the holder's work is not stopped.
    heartbeat: "optional; failure emits 'error', work goes on",
    // index.js "check for existing lock": fencingToken = stored + 1, exposed as lock.fencingToken;
    // the library never checks it against data writes (left to the caller's store).
    fencingOfDataWrites: 'token only (caller must check it)',
    // index.js: the key is the only identity; nothing records what ran.
    perIntervalDedupe: 'no',
    // index.js "check for existing lock": a contender GetItems the lock, sleeps the stored
    // leaseDurationMs (the remaining part only with trustLocalTime), then PutItems conditioned on
    // the guid it read — so takeover is a full lease after the contender looks, however old the lock.
    takeoverAfterCrash: 'a full leaseDurationMs after a contender looks (10 s in README)',
    // index.js FailOpen "acquire existing lock": a failed conditional PutItem (the holder
    // heartbeated) goes back to "check for existing lock" while retryCount (default 1) lasts.
    whileHeld: 'GetItem, sleep a lease, PutItem; again once; then error (~2 leases)',
  },
  {
    name: DELIVERYHERO,
    // @deliveryhero/dynamodb-lock lib/src/data-layer.js deleteLock(): DeleteItem with
    // LOCK_EXIST_AND_RVN_AND_OWNER_NAME_SAME_CONDITION; lock-client.js releaseLock() logs a refusal
    // as a warning and returns normally.
    ownerCheckedRelease: 'yes: recordVersionNumber + owner (refusal silent)',
    // lib/src/lock-client.js startProlongingLease(): UpdateItem every prolongEveryMs (5 s) via
    // data-layer.js updateRecordVersionNumberAndTime(); a failure rejects inside a setTimeout callback
    // (unhandled rejection) — the holder is not told and its work is not stopped.
    heartbeat: 'yes (5 s); failure is an unhandled rejection',
    // recordVersionNumber is a random uuid (lock-client.js generateUUID), not monotonic; nothing
    // checks data writes.
    fencingOfDataWrites: 'no',
    // lock-client.js lock(lockGroup, lockId): nothing records what ran.
    perIntervalDedupe: 'no',
    // lock-client.js tryStealingExistingLock(): sleeps the stored leaseDurationInMs (default 20 s),
    // then stealExistingLock() if the recordVersionNumber did not change; with trustLocalTime,
    // immediately once lastUpdatedTimeInMs + lease has passed.
    takeoverAfterCrash: 'a full leaseDurationInMs after a contender looks (20 s default)',
    // lock-client.js acquireLock() → tryStealingExistingLock() → stealExistingLock() → acquireLock():
    // loops until acquired; maxRetryCount (default none) bounds it.
    whileHeld: 'GetItem, sleep a lease, try to steal; loops until acquired (no limit by default)',
  },
];

// ---------------------------------------------------------------------------------------------
// Contenders
// ---------------------------------------------------------------------------------------------

const HOUR_MS = 3_600_000;
/** Where the virtual clocks of the scheduled cycles start: each cycle is the next hour. */
const VIRTUAL_START_MS = Date.parse('2026-11-30T00:00:00Z');

/** One of our cycles (CYCLES) on `workers` keys of its own, on `client`. */
function ours(
  client: DynamoDBClient,
  table: string,
  workers: number,
  cycle: OurCycle,
  prefix = 'bench#peer',
): Contender & { keys: string[] } {
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  const timing = leaseTiming(30);
  const clocks = Array.from({ length: workers }, () => VIRTUAL_START_MS);
  const keys = Array.from({ length: workers }, (_, i) => `${prefix}#${cycle}#${i}`);
  // The scheduled cycles run on a virtual clock, one hour per cycle, as an hourly job's lease does.
  const now = (worker: number) => (cycle === 'lock' ? Date.now : () => clocks[worker]!);
  const leases = keys.map((key, i) => new DynamoLease({ doc, table, timing, now: now(i), key, ledgerRetentionMs: ledgerRetentionMs(60) }));
  return {
    name: CYCLES[cycle].name,
    kind: 'ours',
    keys,
    async cycle(worker) {
      const lease = leases[worker]!;
      const runId = randomUUID();
      if (cycle === 'lock') {
        const acquired = await lease.acquire(runId, 'manual', undefined);
        if (!acquired.acquired) throw new Error(`${this.name}: acquire refused (${acquired.reason})`);
        if (!(await lease.release(acquired.lease))) throw new Error(`${this.name}: release refused`);
        return;
      }
      clocks[worker]! += HOUR_MS;
      const interval = new Date(Math.floor(clocks[worker]! / HOUR_MS) * HOUR_MS).toISOString().replace('.000Z', 'Z');
      const acquired = await lease.acquire(runId, 'schedule', interval);
      if (!acquired.acquired) throw new Error(`${this.name}: acquire refused (${acquired.reason})`);
      const fence = acquired.lease.fence;
      const lastRun = { runId, outcome: 'succeeded', fence, interval, finishedAtMs: clocks[worker]! };
      const runRecord =
        cycle === 'settled'
          ? { pk: `run#bench#${interval}#${worker}`, runId, fence, source: 'schedule', outcome: 'succeeded', interval }
          : undefined;
      const released = await lease.release(acquired.lease, {
        doneInterval: interval,
        lastRun,
        ...(runRecord !== undefined ? { runRecord } : {}),
      });
      if (!released) throw new Error(`${this.name}: release refused`);
    },
    close: () => undefined,
  };
}

/**
 * Write units per cycle and the lease item's size, for one of our cycles: a few cycles more on a
 * client that asks for ConsumedCapacity (not timed), then the first worker's item read back.
 */
async function writeUnits(endpoint: string, table: string, cycle: OurCycle) {
  const tracking = benchClient(endpoint, { trackCapacity: true });
  const probe = ours(tracking.client, table, 1, cycle, 'bench#units');
  try {
    for (let i = 0; i < 10; i += 1) await probe.cycle(0);
    tracking.reset();
    const cycles = 20;
    for (let i = 0; i < cycles; i += 1) await probe.cycle(0);
    const writeUnitsPerCycle = round(tracking.capacity.write / cycles, 2);
    const out = await tracking.client.send(
      new GetItemCommand({ TableName: table, Key: { pk: { S: probe.keys[0]! } }, ConsistentRead: true }),
    );
    return { writeUnitsPerCycle, leaseItemBytes: out.Item === undefined ? 0 : itemSizeBytes(unmarshall(out.Item)) };
  } finally {
    tracking.client.destroy();
  }
}

type LockClientModule = typeof import('dynamodb-lock-client').default;
type V2DocumentClient = InstanceType<typeof import('aws-sdk/clients/dynamodb.js').DocumentClient>;

function lockClientContender(
  name: string,
  client: { acquireLock: InstanceType<LockClientModule['FailOpen']>['acquireLock'] },
  agent: Agent,
): Contender {
  return {
    name,
    kind: 'peer',
    cycle: (worker) =>
      new Promise<void>((resolve, reject) => {
        client.acquireLock(`${name}#${worker}`, (error, lock) => {
          if (error !== undefined && error !== null) {
            reject(error);
            return;
          }
          lock.on('error', () => undefined); // a failed heartbeat would otherwise throw
          lock.release((releaseError) => (releaseError ? reject(releaseError) : resolve()));
        });
      }),
    close: () => agent.destroy(),
  };
}

async function dynamodbLockClient(endpoint: string, table: string): Promise<Contender[]> {
  process.env.AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE ??= '1';
  const { default: lockClient } = await import('dynamodb-lock-client');
  const { default: DynamoDB } = await import('aws-sdk/clients/dynamodb.js');
  const make = (): { doc: V2DocumentClient; agent: Agent } => {
    const agent = new Agent({ keepAlive: true, maxSockets: 50 });
    const doc = new DynamoDB.DocumentClient({
      endpoint,
      region: LOCAL_REGION,
      credentials: { ...LOCAL_CREDENTIALS },
      maxRetries: 2,
      httpOptions: { agent, connectTimeout: 2_000, timeout: 5_000 },
    });
    return { doc, agent };
  };
  const closed = make();
  const open = make();
  const bare = make();
  return [
    lockClientContender(
      FAIL_CLOSED,
      new lockClient.FailClosed({ dynamodb: closed.doc, lockTable: table, partitionKey: 'lockKey', acquirePeriodMs: 1_000 }),
      closed.agent,
    ),
    lockClientContender(
      FAIL_OPEN,
      new lockClient.FailOpen({
        dynamodb: open.doc,
        lockTable: table,
        partitionKey: 'lockKey',
        leaseDurationMs: 10_000,
        heartbeatPeriodMs: 3_000,
      }),
      open.agent,
    ),
    {
      name: CONTROL_V2,
      kind: 'control',
      async cycle(worker) {
        const Key = { lockKey: `control-v2#${worker}` };
        await bare.doc.put({ TableName: table, Item: { ...Key, owner: 'bench' } }).promise();
        await bare.doc.delete({ TableName: table, Key }).promise();
      },
      close: () => bare.agent.destroy(),
    },
  ];
}

function controlV3(endpoint: string, table: string): Contender {
  const { client } = benchClient(endpoint);
  const doc = DynamoDBDocumentClient.from(client);
  return {
    name: CONTROL_V3,
    kind: 'control',
    async cycle(worker) {
      const Key = { lockKey: `control-v3#${worker}` };
      await doc.send(new PutCommand({ TableName: table, Item: { ...Key, owner: 'bench' } }));
      await doc.send(new DeleteCommand({ TableName: table, Key }));
    },
    close: () => client.destroy(),
  };
}

async function deliveryhero(endpoint: string, table: string): Promise<Contender> {
  const { dynamoDBLockClientFactory } = await import('@deliveryhero/dynamodb-lock');
  const { client } = benchClient(endpoint);
  const locks = dynamoDBLockClientFactory(DynamoDBDocument.from(client), { tableName: table });
  return {
    name: DELIVERYHERO,
    kind: 'peer',
    async cycle(worker) {
      const lock = await locks.lock('bench', `worker-${worker}`);
      await locks.releaseLock(lock);
    },
    close: () => client.destroy(),
  };
}

/** The peers' lock tables, as their READMEs describe them (created directly, not through the proxy). */
async function createPeerTables(admin: DynamoDBClient, prefix: string): Promise<{ lockClient: string; deliveryhero: string }> {
  const names = { lockClient: `${prefix}-lock-client`, deliveryhero: `${prefix}-deliveryhero` };
  await admin.send(
    new CreateTableCommand({
      TableName: names.lockClient,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'lockKey', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'lockKey', KeyType: 'HASH' }],
    }),
  );
  await admin.send(
    new CreateTableCommand({
      TableName: names.deliveryhero,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: 'lockId', AttributeType: 'S' },
        { AttributeName: 'lockGroup', AttributeType: 'S' },
      ],
      KeySchema: [
        { AttributeName: 'lockId', KeyType: 'HASH' },
        { AttributeName: 'lockGroup', KeyType: 'RANGE' },
      ],
    }),
  );
  for (const TableName of Object.values(names)) {
    await waitUntilTableExists({ client: admin, maxWaitTime: 60, minDelay: 1, maxDelay: 2 }, { TableName });
  }
  return names;
}

// ---------------------------------------------------------------------------------------------
// Measurement
// ---------------------------------------------------------------------------------------------

interface Tally {
  samples: number[];
  requests: Record<string, number>;
}

/** W workers at once, each doing `cycles` cycles one after another on its own key. */
async function batch(contender: Contender, workers: number, cycles: number, samples?: number[]): Promise<void> {
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      for (let i = 0; i < cycles; i += 1) {
        const startedAt = performance.now();
        await contender.cycle(worker);
        samples?.push(performance.now() - startedAt);
      }
    }),
  );
}

function toResult(name: string, workers: number, tally: Tally): CycleResult {
  const latency = summarize(tally.samples);
  return {
    name,
    workers,
    cycles: tally.samples.length,
    requestsPerCycle: Math.round((total(tally.requests) / tally.samples.length) * 1000) / 1000,
    requestsByOperation: sortedCounts(tally.requests),
    p50Ms: latency.p50Ms,
    p99Ms: latency.p99Ms,
    maxMs: latency.maxMs,
  };
}

/** Warm-up cycles of each contender, one worker, before anything is timed (DynamoDB Local's JIT). */
const WARM_UP = 200;

export async function runPeers(options: {
  proxy: DynamoProxy;
  admin: DynamoDBClient;
  /** Coordination table from the template (our lease lives there). */
  coordinationTable: string;
  workers: number[];
  rounds: number;
  /** Cycles per worker per round. */
  cyclesPerWorker: (workers: number) => number;
}): Promise<PeersResult> {
  const { proxy } = options;
  const maxWorkers = Math.max(...options.workers);
  const tables = await createPeerTables(options.admin, `bench-peers-${randomUUID().slice(0, 6)}`);
  const { client } = benchClient(proxy.endpoint);
  const ourCycles = (Object.keys(CYCLES) as OurCycle[]).map((cycle) => ({
    cycle,
    contender: ours(client, options.coordinationTable, maxWorkers, cycle),
  }));
  const contenders: Contender[] = [
    ...ourCycles.map(({ contender }) => contender),
    ...(await dynamodbLockClient(proxy.endpoint, tables.lockClient)),
    await deliveryhero(proxy.endpoint, tables.deliveryhero),
    controlV3(proxy.endpoint, tables.lockClient),
  ];
  try {
    for (const contender of contenders) await batch(contender, 1, WARM_UP);
    const results: (CycleResult & { kind: Contender['kind'] })[] = [];
    for (const workers of options.workers) {
      const cycles = options.cyclesPerWorker(workers);
      const tallies = new Map<string, Tally>(contenders.map((c) => [c.name, { samples: [], requests: {} }]));
      for (const contender of contenders) await batch(contender, workers, 5);
      for (let round = 0; round < options.rounds; round += 1) {
        const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]!);
        for (const contender of order) {
          const tally = tallies.get(contender.name)!;
          proxy.reset();
          await batch(contender, workers, cycles, tally.samples);
          addCounts(tally.requests, proxy.counts);
        }
      }
      for (const contender of contenders) {
        results.push({ ...toResult(contender.name, workers, tallies.get(contender.name)!), kind: contender.kind });
      }
    }

    const strip = ({ kind: _kind, ...rest }: CycleResult & { kind: Contender['kind'] }): CycleResult => rest;
    const at = (name: string, workers: number) => strip(results.find((r) => r.name === name && r.workers === workers)!);
    const ourAt = (workers: number) => at(CYCLES.lock.name, workers);
    const compared = (kind: Contender['kind']) =>
      results.filter((r) => r.kind === kind).map((r) => ({ ...strip(r), ratioToOurs: ratio(r.p50Ms, ourAt(r.workers).p50Ms) }));
    const cycleResults: OurCycleResult[] = [];
    for (const { cycle, contender } of ourCycles) {
      const units = await writeUnits(proxy.endpoint, options.coordinationTable, cycle);
      for (const workers of options.workers) {
        const result = at(contender.name, workers);
        const failClosed = at(FAIL_CLOSED, workers);
        cycleResults.push({
          ...result,
          cycle,
          does: CYCLES[cycle].does,
          ratioToFailClosed: ratio(result.p50Ms, failClosed.p50Ms),
          ...units,
        });
      }
    }
    const [single, concurrent] = [ourAt(Math.min(...options.workers)), ourAt(maxWorkers)];
    return {
      method:
        `acquire + release of a free lock (ours: each cycle of CYCLES); ${options.workers.join(' and ')} concurrent workers, each on its own key; ` +
        `${WARM_UP} cycles of each first (one worker), then ${options.rounds} rounds in rotated order; requests counted on the wire by the proxy; ` +
        'write units (DynamoDB Local ConsumedCapacity) and the lease item size measured apart after the rounds',
      lease: { ...single, concurrent },
      cycles: cycleResults,
      peers: compared('peer'),
      controls: compared('control'),
      guarantees: GUARANTEES,
    };
  } finally {
    for (const contender of contenders) contender.close();
    client.destroy();
  }
}
