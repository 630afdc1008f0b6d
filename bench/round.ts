/**
 * One popular round in `npm run bench`: ROUND_REMINDERS reminders of one contest due in the same
 * minute, delivered by the delivery jobs a stack with ROUND_DUE_SHARDS shards runs (one job per
 * byDue shard, each with its own lease and its own DynamoDB client, all invoked at once every
 * minute until nothing is left) on DynamoDB Local through the counting proxy, whose transaction
 * locks refuse what AWS refuses (two ongoing transactions on one item). Counted on the way:
 * requests, transactions, conflicts, failed runs, and the write units every partition key took
 * (bench/partition-load.ts). Checked after: each reminder claimed once with exactly one outbox
 * item, none left due. Then a projection of 100,000 to AWS for each setting (docs/performance.md).
 * The one-job figures of a round (the default setting) are bench/delivery.ts's 20,000 pass.
 */
import { performance } from 'node:perf_hooks';
import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDeliveryHandler } from '../lambda/delivery/handler.js';
import { MAX_CLAIMS_PER_TRANSACTION, reminderDueId } from '../lambda/delivery/due.js';
import { DUE_INDEX } from '../lambda/delivery/dynamo-due.js';
import { REMINDER_BUCKETS, bucketOf } from '../lambda/reminders/table.js';
import { MAX_DUE_SHARDS } from '../lambda/contract.js';
import { benchClient } from '../local/counting-client.js';
import type { TableNames } from '../local/tables.js';
import {
  ASSUMED_AWS_TRANSACTION_MS,
  AWS_LIMITS,
  FUNCTION_TIMEOUT_MS,
  context,
  deliveryEnv,
  scanAll,
  scheduledEvent,
  seed,
  startOfMinute,
  type Setup,
} from './delivery.js';
import { PartitionLoad, keyWrites, type KeyWrite } from './partition-load.js';
import { round, sortedCounts, total } from './stats.js';

/**
 * One round's reminders measured with every job of ROUND_DUE_SHARDS at once: a few thousand (the
 * jobs' transactions conflict on the contest's item, so a run here takes minutes);
 * BENCH_ROUND_REMINDERS measures another count.
 */
export const ROUND_REMINDERS = Number(process.env.BENCH_ROUND_REMINDERS ?? 3_000);
/** The setting the round is measured with: the most shards a stack may run, one job each. */
export const ROUND_DUE_SHARDS = MAX_DUE_SHARDS;
/** The count the projection is made for (the popular round). */
export const PROJECTED_REMINDERS = 100_000;
/** Minutes of runs before the bench gives up (a run left rows due, or failed: the next minute's goes on). */
const MAX_MINUTES = 30;
/** The settings projected. */
const SETTINGS = [1, 2, 4, 8, 16];

export interface RoundPass {
  reminders: number;
  dueShards: number;
  seedMs: number;
  wallMs: number;
  /** Minutes of runs: every job with rows left invoked at once. */
  minutes: number;
  runs: number;
  /** Runs that failed (contention beyond the package's budget, a lease lost): their rows stayed due for the next minute. */
  failedRuns: number;
  failures: string[];
  transactions: number;
  gateChecks: number;
  /** TransactWriteItems refused because another ongoing transaction held one of its items (as AWS refuses them). */
  conflicts: number;
  requests: number;
  requestsByOperation: Record<string, number>;
  /** The partition keys (table or index) that took the most write units. */
  hottest: KeyWrite[];
  claimed: number;
  outboxItems: number;
  leftDue: number;
  duplicateIds: number;
}

export interface RoundProjection {
  dueShards: number;
  /** The most rows one byDue partition holds: what its job claims. */
  rowsPerJob: number;
  /** That job's fenced transactions one after another (its lease is in each) at the assumed ~100 ms. */
  jobSeconds: number;
  /** The busiest bucket key of the table: 2 units per transactional claim. */
  bucketKeySeconds: number;
  /** The busiest byDue partition: 1 unit per entry removed. */
  indexKeySeconds: number;
  /** The busiest bucket gate: the rule's ConditionCheck, 2 units in each transaction of its key's claims. */
  gateSeconds: number;
  /** The round on AWS: its slowest limit — the busiest job's transactions in a row, or its busiest key's write units (no item is shared by two jobs). */
  roundSeconds: number;
  /** The most write units one key takes (table or index). */
  mostUnits: number;
  /** The most write units of one key, at ~1,000 a second. */
  unitsSeconds: number;
}

export interface RoundResult {
  pass: RoundPass;
  /** Rows per bucket key of PROJECTED_REMINDERS users named as the bench names them. */
  bucketRows: number[];
  projections: RoundProjection[];
}

interface Jobs {
  handlers: ReturnType<typeof createDeliveryHandler>[];
  clients: ReturnType<typeof benchClient>[];
}

/** The delivery jobs of a stack with `dueShards` shards, each on its own client (one function each). */
function jobsOf(setup: Setup, tables: TableNames, outbox: string, dueShards: number): Jobs {
  const clients = Array.from({ length: dueShards }, () => benchClient(setup.proxy.endpoint));
  const handlers = clients.map((client, shard) =>
    createDeliveryHandler({ env: deliveryEnv(tables, outbox, shard, dueShards), dynamo: client.client, write: () => undefined }),
  );
  return { handlers, clients };
}

interface Minutes {
  minutes: number;
  runs: number;
  failedRuns: number;
  failures: string[];
  transactions: number;
  gateChecks: number;
}

/** Every job with rows left, at once, minute after minute (forced re-runs here), until none has any. */
async function runMinutes(jobs: Jobs): Promise<Minutes> {
  const out: Minutes = { minutes: 0, runs: 0, failedRuns: 0, failures: [], transactions: 0, gateChecks: 0 };
  let pending = jobs.handlers.map((_, shard) => shard);
  for (; pending.length > 0 && out.minutes < MAX_MINUTES; out.minutes += 1) {
    const event = out.minutes === 0 ? scheduledEvent(Date.now()) : { interval: startOfMinute(Date.now()), force: true };
    const left = await Promise.all(
      pending.map(async (shard) => {
        out.runs += 1;
        try {
          const result = await jobs.handlers[shard]!(event, context(FUNCTION_TIMEOUT_MS));
          const counts = (result as { counts?: { more?: boolean; transactions?: number; gateChecks?: number } }).counts;
          out.transactions += counts?.transactions ?? 0;
          out.gateChecks += counts?.gateChecks ?? 0;
          if (result.outcome === 'succeeded') return counts?.more === true ? [shard] : [];
          out.failures.push(`shard ${shard}: ${String((result as { error?: unknown }).error ?? result.outcome)}`);
        } catch (error) {
          out.failures.push(`shard ${shard}: ${error instanceof Error ? error.message : String(error)}`);
        }
        out.failedRuns += 1;
        return [shard];
      }),
    );
    pending = left.flat();
  }
  if (pending.length > 0)
    throw new Error(`the round was not delivered in ${MAX_MINUTES} minutes of runs: ${out.failures.slice(-3).join('; ')}`);
  return out;
}

async function partitionKeys(admin: DynamoDBClient, tables: TableNames): Promise<Map<string, string>> {
  const keys = new Map<string, string>();
  for (const table of Object.values(tables) as (string | undefined)[]) {
    if (table === undefined) continue;
    const described = await admin.send(new DescribeTableCommand({ TableName: table }));
    const hash = described.Table?.KeySchema?.find((key) => key.KeyType === 'HASH')?.AttributeName;
    if (hash !== undefined) keys.set(table, hash);
  }
  return keys;
}

const labelsOf = (tables: TableNames): Map<string, string> =>
  new Map(
    Object.entries(tables).flatMap(([role, name]) =>
      typeof name === 'string' ? [[name, role.charAt(0).toUpperCase() + role.slice(1)] as [string, string]] : [],
    ),
  );

/** Rows per bucket key of the round's users (`user-000000`…, as seed() names them). */
function bucketRowsOf(count: number): number[] {
  const rows = Array.from({ length: REMINDER_BUCKETS }, () => 0);
  for (let i = 0; i < count; i += 1) rows[bucketOf(`user-${String(i).padStart(6, '0')}`)]! += 1;
  return rows;
}

/** The round's reminders, seeded in their byDue partitions, delivered by every job of the setting; checked exactly once. */
export async function deliverRound(setup: Setup, count = ROUND_REMINDERS, dueShards = ROUND_DUE_SHARDS): Promise<RoundPass> {
  const { proxy, admin } = setup;
  const tables = await setup.createTables('round');
  const outbox = tables.outbox;
  if (outbox === undefined) throw new Error('the template has no outbox table');
  const seeding = performance.now();
  const start = await seed(admin, tables, 1, count, Math.floor(Date.now() / 1000), dueShards);
  const seedMs = performance.now() - seeding;
  const load = new PartitionLoad();
  const names = { partitionKeys: await partitionKeys(admin, tables), reminders: tables.reminders, dueShards, labels: labelsOf(tables) };
  const jobs = jobsOf(setup, tables, outbox, dueShards);
  proxy.reset();
  proxy.setAfterApply((request, reply) => {
    if (reply.status === 200) load.add(keyWrites(request.operation, request.body, names));
  });
  const began = performance.now();
  try {
    const minutes = await runMinutes(jobs);
    const wallMs = performance.now() - began;
    const byOperation = sortedCounts(proxy.counts);
    const conflicts = proxy.injected().conflict?.TransactWriteItems ?? 0;
    const reminders = await scanAll(admin, tables.reminders);
    const items = await scanAll(admin, outbox);
    const ids = items.map((item) => String(item.eventId));
    const expected = new Set(reminders.map((r) => reminderDueId(String(r.contestId), String(r.userId), undefined, start)));
    return {
      reminders: count,
      dueShards,
      seedMs: round(seedMs, 0),
      wallMs: round(wallMs, 0),
      ...minutes,
      failures: minutes.failures.slice(0, 5),
      conflicts,
      requests: total(byOperation),
      requestsByOperation: byOperation,
      hottest: load.hottest(6),
      claimed: reminders.filter((r) => r.notifiedStart === start && r.dueAt === undefined).length,
      outboxItems: items.length,
      leftDue: (await scanAll(admin, tables.reminders, DUE_INDEX)).length,
      duplicateIds: ids.length - new Set(ids).size + ids.filter((id) => !expected.has(id)).length,
    };
  } finally {
    proxy.setAfterApply(undefined);
    for (const client of jobs.clients) client.client.destroy();
  }
}

/**
 * What one round of `PROJECTED_REMINDERS` takes on AWS under each setting, from the measured
 * round's spread over bucket keys (scaled) and the limits: a partition key serves ~1,000 write
 * units a second; a job's transactions go one after another (its lease is in each); each checks
 * the gates of its own bucket keys (the rule), so the jobs share no item and run side by side.
 */
export function projectRound(bucketRows: readonly number[], n = PROJECTED_REMINDERS): RoundProjection[] {
  const measured = bucketRows.reduce((a, b) => a + b, 0);
  const scaled = bucketRows.map((rows) => (rows * n) / Math.max(1, measured));
  const seconds = (units: number) => round(units / AWS_LIMITS.partitionWriteUnitsPerSecond, 1);
  return SETTINGS.map((dueShards) => {
    const shardRows = Array.from({ length: dueShards }, (_, shard) => scaled.filter((_, bucket) => bucket % dueShards === shard));
    const perShard = shardRows.map((rows) => rows.reduce((a, b) => a + b, 0));
    const rowsPerJob = Math.ceil(Math.max(...perShard));
    // A job's claims are packed by bucket key: each of its keys' rows fill their own transactions.
    const jobTransactions = Math.max(
      ...shardRows.map((rows) => rows.reduce((sum, r) => sum + Math.ceil(r / MAX_CLAIMS_PER_TRANSACTION), 0)),
    );
    const bucketUnits = Math.max(...scaled) * AWS_LIMITS.transactionalWriteUnits;
    const indexUnits = rowsPerJob * AWS_LIMITS.indexWriteUnits;
    const gateUnits = Math.ceil(Math.max(...scaled) / MAX_CLAIMS_PER_TRANSACTION) * AWS_LIMITS.transactionalWriteUnits;
    const mostUnits = Math.ceil(Math.max(bucketUnits, indexUnits, gateUnits));
    const jobSeconds = round((jobTransactions * ASSUMED_AWS_TRANSACTION_MS) / 1000, 1);
    return {
      dueShards,
      rowsPerJob,
      jobSeconds,
      bucketKeySeconds: seconds(bucketUnits),
      indexKeySeconds: seconds(indexUnits),
      gateSeconds: seconds(gateUnits),
      roundSeconds: Math.max(jobSeconds, seconds(mostUnits)),
      mostUnits,
      unitsSeconds: seconds(mostUnits),
    };
  });
}

export async function runRound(setup: Setup): Promise<RoundResult> {
  const pass = await deliverRound(setup);
  if (pass.claimed !== pass.reminders || pass.outboxItems !== pass.reminders || pass.leftDue !== 0 || pass.duplicateIds !== 0)
    throw new Error(`the round was not delivered exactly once: ${JSON.stringify(pass)}`);
  const bucketRows = bucketRowsOf(PROJECTED_REMINDERS);
  return { pass, bucketRows, projections: projectRound(bucketRows) };
}
