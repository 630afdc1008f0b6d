/**
 * Reminder delivery in `npm run bench`: 20,000 reminders of one contest due at once, delivered by
 * the real handler (createDeliveryHandler, the package's wrapper, lease and fenced outbox) on
 * DynamoDB Local through the counting proxy; then an idle minute. Also the same rows claimed one
 * per transaction, on a sample, to compare; and reminders spread over many contests (5 each), to
 * measure what the rule costs when its ConditionCheck (one per contest per transaction) is shared
 * by fewer claims. Each reminder must be claimed once and have exactly one outbox item; the
 * figures are wall-clock here and requests on the wire, and a projection to AWS's limits
 * (docs/performance.md).
 */
import { performance } from 'node:perf_hooks';
import { BatchWriteItemCommand, ScanCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { createDeliveryHandler } from '../lambda/delivery/handler.js';
import { MAX_CLAIMS_PER_TRANSACTION, reminderDueId } from '../lambda/delivery/due.js';
import { replyClockId } from '../lambda/contests/model.js';
import { gateItems } from '../lambda/contests/bucket-gates.js';
import { contestKeyOf, dueShardOf } from '../lambda/reminders/table.js';
import { codeforcesId } from '../lambda/sources/codeforces/source.js';
import { DUE_INDEX } from '../lambda/delivery/dynamo-due.js';
import { deliveryLeaseKey, deliveryRunRecordPrefix } from '../lambda/delivery/schema.js';
import { ENV } from '../lambda/contract.js';
import type { DynamoProxy } from '../local/dynamo-proxy.js';
import type { TableNames } from '../local/tables.js';
import { benchClient } from '../local/counting-client.js';
import { round, sortedCounts, total } from './stats.js';
import { runRound, type RoundResult } from './round.js';

export const DELIVERY_REMINDERS = 20_000;
/** Per-row transactions, measured on a sample of this many rows (the full 20,000 would take minutes here). */
export const PER_ROW_SAMPLE = 2_000;
/** Reminders spread over many rounds: this many in all, this many per contest (20,000 over 400 rounds). */
export const SPREAD_REMINDERS = 20_000;
export const SPREAD_PER_CONTEST = 50;
/** The promise: 20,000 due at once are all delivered within this. */
export const DELIVERY_BUDGET_MS = 120_000;
const LEASE_SECONDS = 30;
/** Function timeout of the delivery job (lib/contest-sync-stack.ts): one run may use this much. */
export const FUNCTION_TIMEOUT_MS = 120_000;
const SOURCE = 'contest-sync.reminders';

/** AWS limits the projection uses (DynamoDB developer guide, "Service quotas" and "Transactions"). */
export const AWS_LIMITS = {
  /** Write units per second one partition serves (an item collection, a GSI partition key). */
  partitionWriteUnitsPerSecond: 1000,
  /** Transactional writes cost 2 write units per KB of item. */
  transactionalWriteUnits: 2,
  /** A GSI write (the byDue entry removed) costs 1 write unit per KB. */
  indexWriteUnits: 1,
} as const;
/** Assumed AWS latency of one 99-action TransactWriteItems (not measured here; a round figure with margin). */
export const ASSUMED_AWS_TRANSACTION_MS = 100;

export interface DeliveryPass {
  reminders: number;
  /** Contests the reminders belong to. */
  contests: number;
  claimsPerTransaction: number;
  runs: number;
  /** Runs that failed (their rows stayed due for the next one). */
  failedRuns: number;
  wallMs: number;
  requests: number;
  requestsByOperation: Record<string, number>;
  requestsPerReminder: number;
  transactions: number;
  /** The rule's ConditionChecks on contests committed (one per contest per transaction), and per reminder. */
  gateChecks: number;
  gateChecksPerReminder: number;
  writeUnits: number;
  /** Checks: every reminder claimed once, one outbox item per reminder, none left due. */
  claimed: number;
  outboxItems: number;
  leftDue: number;
  duplicateIds: number;
}

export interface DeliveryResult {
  batched: DeliveryPass;
  perRow: DeliveryPass;
  /** SPREAD_REMINDERS over SPREAD_REMINDERS / SPREAD_PER_CONTEST contests. */
  spread: DeliveryPass;
  /** One popular round, delivered by every job of a stack with the most shards (bench/round.ts). */
  round: RoundResult;
  /** `partitions`: the byDue partitions the job serves (one Query each, at once). */
  idle: { requests: number; partitions: number; requestsByOperation: Record<string, number>; leaseTaken: boolean; outcome: string };
  projection: {
    sequentialTransactions: number;
    transactionsSeconds: number;
    contestPartitionSeconds: number;
    indexPartitionSeconds: number;
    projectedSeconds: number;
  };
}

export function startOfMinute(ms: number): string {
  return new Date(Math.floor(ms / 60_000) * 60_000).toISOString();
}
export function scheduledEvent(ms: number) {
  return {
    version: '0',
    id: `bench-${ms}`,
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '000000000000',
    time: startOfMinute(ms),
    region: 'us-east-1',
    resources: [],
    detail: {},
  };
}
export function context(remainingMs: number) {
  const deadline = Date.now() + remainingMs;
  return { getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()), awsRequestId: 'bench' };
}

export async function batchWrite(admin: DynamoDBClient, table: string, items: Record<string, unknown>[]): Promise<void> {
  const chunks: Record<string, unknown>[][] = [];
  for (let i = 0; i < items.length; i += 25) chunks.push(items.slice(i, i + 25));
  const worker = async () => {
    for (let chunk = chunks.shift(); chunk !== undefined; chunk = chunks.shift()) {
      let requests = chunk.map((Item) => ({ PutRequest: { Item: marshall(Item) } }));
      while (requests.length > 0) {
        const out = await admin.send(new BatchWriteItemCommand({ RequestItems: { [table]: requests } }));
        requests = (out.UnprocessedItems?.[table] ?? []) as typeof requests;
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

export async function scanAll(admin: DynamoDBClient, table: string, index?: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, never> | undefined;
  do {
    const page = await admin.send(new ScanCommand({ TableName: table, ...(index ? { IndexName: index } : {}), ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []).map((item) => unmarshall(item)));
    start = page.LastEvaluatedKey as Record<string, never> | undefined;
  } while (start !== undefined);
  return items;
}

/** The first contest id the bench seeds; a spread pass uses the ones after it. */
const FIRST_CONTEST_ID = 2051;

/**
 * Seeds `contests` contests starting in 50 minutes (due there: `dueStart`, as the sync writes it)
 * and `count` reminders spread evenly over them, all due now, each in its byDue partition under a
 * setting of `dueShards` (its bucket mod the setting, as the sync and the write path put it).
 */
export async function seed(
  admin: DynamoDBClient,
  tables: TableNames,
  contests: number,
  count: number,
  nowSeconds: number,
  dueShards = 1,
): Promise<number> {
  const start = nowSeconds + 3000;
  const seeded = Array.from({ length: contests }, (_, c) => ({
    contestId: codeforcesId(FIRST_CONTEST_ID + c),
    platform: 'codeforces',
    platformId: String(FIRST_CONTEST_ID + c),
    name: `Codeforces Round ${FIRST_CONTEST_ID + c} (Div. 2)`,
    type: 'CF',
    phase: 'BEFORE',
    startTimeSeconds: start,
    durationSeconds: 7200,
    url: `https://codeforces.com/contest/${FIRST_CONTEST_ID + c}`,
    updatedAt: new Date().toISOString(),
    expiresAt: start + 7200 + 7 * 86_400,
    dueStart: start,
  }));
  await batchWrite(admin, tables.contests, [
    // The sync's reply clock: fresh evidence (delivery sends nothing on stale evidence).
    { contestId: replyClockId('codeforces'), replyMadeAt: nowSeconds, updatedAt: new Date().toISOString() },
    ...seeded,
    // Each contest's bucket gates, as the sync writes them with it (the claims check them).
    ...seeded.flatMap((contest) => {
      const gates = gateItems(contest);
      return 'put' in gates ? gates.put : [];
    }),
  ]);
  await batchWrite(
    admin,
    tables.reminders,
    Array.from({ length: count }, (_, i) => ({
      contestKey: contestKeyOf(codeforcesId(FIRST_CONTEST_ID + (i % contests)), `user-${String(i).padStart(6, '0')}`),
      contestId: codeforcesId(FIRST_CONTEST_ID + (i % contests)),
      userId: `user-${String(i).padStart(6, '0')}`,
      minutesBefore: 60,
      remindAt: start - 3600,
      dueAt: start - 3600,
      dueShard: dueShardOf(`user-${String(i).padStart(6, '0')}`, dueShards),
      dueStart: start,
      expiresAt: start + 7200 + 7 * 86_400,
    })),
  );
  return start;
}

/** The environment the stack gives delivery job `shard` of `dueShards` (lib/contest-sync-stack.ts), on these tables. */
export function deliveryEnv(tables: TableNames, outbox: string, shard: number, dueShards: number): Record<string, string> {
  return {
    AWS_REGION: 'us-east-1',
    [ENV.contestsTable]: tables.contests,
    [ENV.remindersTable]: tables.reminders,
    COORDINATION_TABLE_NAME: tables.coordination,
    LEASE_DURATION_SECONDS: String(LEASE_SECONDS),
    SCHEDULE_RATE_MINUTES: '1',
    LEASE_KEY: deliveryLeaseKey(shard),
    RUN_RECORD_PREFIX: deliveryRunRecordPrefix(shard),
    OUTBOX_TABLE_NAME: outbox,
    OUTBOX_EVENT_SOURCE: SOURCE,
    OUTBOX_RETENTION_DAYS: '7',
    POWERTOOLS_METRICS_NAMESPACE: 'ContestSync',
    POWERTOOLS_SERVICE_NAME: 'reminder-delivery',
    DUE_SHARD: String(shard),
    DUE_SHARDS: String(dueShards),
  };
}

export interface Setup {
  proxy: DynamoProxy;
  admin: DynamoDBClient;
  createTables(label: string): Promise<TableNames>;
}

async function deliverAll(
  setup: Setup,
  label: string,
  count: number,
  claimsPerTransaction: number,
  contests = 1,
): Promise<{
  pass: DeliveryPass;
  handler: ReturnType<typeof createDeliveryHandler>;
  tables: TableNames;
  outbox: string;
  client: ReturnType<typeof benchClient>;
}> {
  const { proxy, admin } = setup;
  const tables = await setup.createTables(label);
  // The template's outbox table (local/tables.ts creates it with the data tables).
  const outbox = tables.outbox;
  if (outbox === undefined) throw new Error('the template has no outbox table');
  const start = await seed(admin, tables, contests, count, Math.floor(Date.now() / 1000));
  const client = benchClient(proxy.endpoint, { trackCapacity: true });
  const handler = createDeliveryHandler({
    env: deliveryEnv(tables, outbox, 0, 1),
    dynamo: client.client,
    write: () => undefined,
    claimsPerTransaction,
  });
  proxy.reset();
  client.reset();
  const began = performance.now();
  let runs = 0;
  let transactions = 0;
  let gateChecks = 0;
  let failedRuns = 0;
  // A run that reaches its deadline leaves the rest due, and so does a run that fails (on a loaded
  // machine, its deadline): the next minute's run goes on (here: at once, forced).
  for (let more = true; more && runs < 20; runs += 1) {
    try {
      const result = await handler(
        runs === 0 ? scheduledEvent(Date.now()) : { interval: startOfMinute(Date.now()), force: true },
        context(FUNCTION_TIMEOUT_MS),
      );
      const counts = (result as { counts?: { more?: boolean; transactions?: number; gateChecks?: number } }).counts;
      transactions += counts?.transactions ?? 0;
      gateChecks += counts?.gateChecks ?? 0;
      if (result.outcome !== 'succeeded') throw new Error(`delivery run failed: ${JSON.stringify(result)}`);
      more = counts?.more === true;
    } catch {
      failedRuns += 1;
    }
  }
  const wallMs = performance.now() - began;
  const byOperation = sortedCounts(proxy.counts);
  const reminders = await scanAll(admin, tables.reminders);
  const items = await scanAll(admin, outbox);
  const ids = items.map((item) => String(item.eventId));
  const expected = new Set(reminders.map((r) => reminderDueId(String(r.contestId), String(r.userId), undefined, start)));
  const pass: DeliveryPass = {
    reminders: count,
    contests,
    claimsPerTransaction,
    runs,
    failedRuns,
    wallMs: round(wallMs, 0),
    requests: total(byOperation),
    requestsByOperation: byOperation,
    requestsPerReminder: round(total(byOperation) / count, 4),
    transactions,
    gateChecks,
    gateChecksPerReminder: round(gateChecks / count, 4),
    writeUnits: round(client.capacity.write, 1),
    claimed: reminders.filter((r) => r.notifiedStart === start && r.dueAt === undefined).length,
    outboxItems: items.length,
    leftDue: (await scanAll(admin, tables.reminders, DUE_INDEX)).length,
    duplicateIds: ids.length - new Set(ids).size + ids.filter((id) => !expected.has(id)).length,
  };
  return { pass, handler, tables, outbox, client };
}

export async function runDelivery(options: Setup): Promise<DeliveryResult> {
  const batched = await deliverAll(options, 'delivery', DELIVERY_REMINDERS, MAX_CLAIMS_PER_TRANSACTION);
  // The idle minute: the next tick finds nothing due. It must cost one Query per partition served and leave the lease item as it was.
  const leaseItem = async () =>
    JSON.stringify((await scanAll(options.admin, batched.tables.coordination)).find((item) => item.pk === deliveryLeaseKey(0)) ?? null);
  const leaseBefore = await leaseItem();
  options.proxy.reset();
  const idleResult = await batched.handler(scheduledEvent(Date.now()), context(FUNCTION_TIMEOUT_MS));
  const idleOps = sortedCounts(options.proxy.counts);
  const idle = {
    requests: total(idleOps),
    // The job is shard 0 of DUE_SHARDS = 1 (the default): it reads its own partition only.
    partitions: 1,
    requestsByOperation: idleOps,
    leaseTaken: (await leaseItem()) !== leaseBefore,
    outcome: `${idleResult.outcome}${idleResult.idle === true ? ' (idle)' : ''}`,
  };
  batched.client.client.destroy();
  const perRow = await deliverAll(options, 'delivery-per-row', PER_ROW_SAMPLE, 1);
  perRow.client.client.destroy();
  const spread = await deliverAll(
    options,
    'delivery-spread',
    SPREAD_REMINDERS,
    MAX_CLAIMS_PER_TRANSACTION,
    SPREAD_REMINDERS / SPREAD_PER_CONTEST,
  );
  spread.client.client.destroy();

  const n = DELIVERY_REMINDERS;
  const sequentialTransactions = Math.ceil(n / MAX_CLAIMS_PER_TRANSACTION);
  const projection = {
    sequentialTransactions,
    // The lease item is in every fenced transaction, so they go one after another (two at once would conflict).
    transactionsSeconds: round((sequentialTransactions * ASSUMED_AWS_TRANSACTION_MS) / 1000, 1),
    // All 20,000 rows share one partition key (the contest): transactional writes at 2 units each.
    contestPartitionSeconds: round((n * AWS_LIMITS.transactionalWriteUnits) / AWS_LIMITS.partitionWriteUnitsPerSecond, 1),
    // Their byDue entries share one index partition (dueShard 0): one unit each to remove.
    indexPartitionSeconds: round((n * AWS_LIMITS.indexWriteUnits) / AWS_LIMITS.partitionWriteUnitsPerSecond, 1),
    projectedSeconds: 0,
  };
  projection.projectedSeconds = Math.max(
    projection.transactionsSeconds,
    projection.contestPartitionSeconds,
    projection.indexPartitionSeconds,
  );
  const popular = await runRound(options);
  return { batched: batched.pass, perRow: perRow.pass, spread: spread.pass, round: popular, idle, projection };
}
