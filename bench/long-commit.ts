/**
 * A lease through a large commit: the largest commit one run can make without losing its lease,
 * with the renewals taking turns with each transaction (the package) and, for comparison in the
 * same run, with the whole commit (how the package did it before: emulated here by a writer that
 * holds the run's turn for all of its transactions).
 *
 * One run, one commit of many 99-action transactions (reminder rows put on the Reminders table of
 * the template) through the counting proxy, which holds each data transaction `holdMs` with its
 * items locked, as DynamoDB does while it commits one: a renewal of the lease item meanwhile gets
 * TransactionConflictException. The commit is planned to last `leases` lease durations; a run
 * whose renewals wait for the whole commit loses its lease at 2/3 of one (its watchdog), and the
 * transactions committed by then are the largest commit it could have made.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  DynamoFencedWriter,
  DynamoLease,
  MAX_WRITES_PER_TRANSACTION,
  leaseTiming,
  runExclusively,
  type ExclusiveDeps,
  type FencedWriterPort,
  type TransactAction,
} from '@contest-sync/scheduled-singleton';
import { localDynamoClient } from '../local/dynamodb-local.js';
import type { DynamoProxy } from '../local/dynamo-proxy.js';
import type { TableNames } from '../local/tables.js';
import { round } from './stats.js';
import { contestKeyOf } from '../lambda/reminders/table.js';

/** Whose turn a renewal waits for. */
export type TurnScope = 'commit' | 'transaction';

export interface LongCommitCase {
  leaseSeconds: number;
  turns: TurnScope;
  /** Transactions in the one commit. */
  planned: number;
  /** Transactions committed (all of them, or those before the lease was lost). */
  committed: number;
  actions: number;
  outcome: string;
  /** From the commit's start to its end (or the loss), and that in lease durations. */
  commitSeconds: number;
  leases: number;
  /** Renewals confirmed while the run held the lease, and renewals refused as a conflict. */
  renewals: number;
  renewalConflicts: number;
  /** Sent to answered, per committed transaction (the hold plus DynamoDB Local's own time). */
  meanTransactionMs: number;
}

export interface LongCommitResult {
  holdMs: number;
  actionsPerTransaction: number;
  cases: LongCommitCase[];
  /** Per lease: the largest commit with per-commit turns, and what per-transaction turns kept. */
  comparison: { leaseSeconds: number; perCommit: number; perTransaction: number; atLeastTimes: number }[];
}

export interface LongCommitOptions {
  proxy: DynamoProxy;
  tables: TableNames;
  /** How long each data transaction holds its items (the latency a transaction has on AWS under load). */
  holdMs: number;
  leaseSeconds: readonly number[];
  /** How long the planned commit lasts, in lease durations. */
  leases: number;
}

export async function runLongCommit(options: LongCommitOptions): Promise<LongCommitResult> {
  const { proxy, tables, holdMs } = options;
  proxy.setTransactionHold((request) => (JSON.stringify(request.body ?? {}).includes(`"${tables.reminders}"`) ? holdMs : 0));
  const cases: LongCommitCase[] = [];
  try {
    // Warm DynamoDB Local (its first requests are slow) and the tables: one small commit, not counted.
    const warm = await oneCommit({ proxy, tables, leaseSeconds: 30, turns: 'transaction', planned: 2 });
    if (warm.outcome !== 'succeeded') throw new Error(`the warm-up commit did not succeed: ${JSON.stringify(warm)}`);
    for (const leaseSeconds of options.leaseSeconds) {
      const planned = Math.ceil((options.leases * leaseSeconds * 1000) / holdMs);
      for (const turns of ['commit', 'transaction'] as const) cases.push(await oneCommit({ proxy, tables, leaseSeconds, turns, planned }));
    }
  } finally {
    proxy.setTransactionHold(undefined);
  }
  const comparison = options.leaseSeconds.map((leaseSeconds) => {
    const of = (turns: TurnScope) => cases.find((c) => c.leaseSeconds === leaseSeconds && c.turns === turns)!;
    const perCommit = of('commit').committed;
    const perTransaction = of('transaction').outcome === 'succeeded' ? of('transaction').committed : 0;
    return { leaseSeconds, perCommit, perTransaction, atLeastTimes: perCommit === 0 ? 0 : round(perTransaction / perCommit, 1) };
  });
  return { holdMs, actionsPerTransaction: MAX_WRITES_PER_TRANSACTION, cases, comparison };
}

/** The renewals wait for the whole commit: the writer holds the run's turn for all its transactions (the former package). */
export function perCommitTurn(writer: FencedWriterPort): FencedWriterPort {
  return {
    commit: (actions, fence, signal, outbox, turn = (transaction) => transaction()) =>
      turn(() => writer.commit(actions, fence, signal, outbox)),
  };
}

interface CaseInput {
  proxy: DynamoProxy;
  tables: TableNames;
  leaseSeconds: number;
  turns: TurnScope;
  planned: number;
}

/** One run under a fresh lease making one commit of `planned` transactions. */
async function oneCommit(input: CaseInput): Promise<LongCommitCase> {
  const client = localDynamoClient(input.proxy.endpoint);
  const probe = probes();
  try {
    const deps = runDeps(DynamoDBDocumentClient.from(client), input, probe);
    const actions = reminderPuts(input.planned, input.tables.reminders);
    const commit = { startMs: 0, endMs: 0 };
    const endsAt = Date.now() + 2 * input.planned * 1_000 + 60_000;
    const outcome = await runExclusively(
      { runId: randomUUID(), source: 'console', remainingMs: () => endsAt - Date.now() },
      async (ctx) => {
        commit.startMs = performance.now();
        try {
          return await ctx.commit(actions);
        } finally {
          commit.endMs = performance.now();
        }
      },
      deps,
    );
    const commitSeconds = (commit.endMs - commit.startMs) / 1000;
    return {
      leaseSeconds: input.leaseSeconds,
      turns: input.turns,
      planned: input.planned,
      committed: probe.latencies.length,
      actions: probe.latencies.length * MAX_WRITES_PER_TRANSACTION,
      outcome: outcome.outcome === 'failed' ? `failed (${outcome.reason})` : outcome.outcome,
      commitSeconds: round(commitSeconds, 1),
      leases: round(commitSeconds / input.leaseSeconds, 2),
      renewals: probe.renewals,
      renewalConflicts: probe.conflicts,
      meanTransactionMs: round(probe.latencies.reduce((a, b) => a + b, 0) / Math.max(1, probe.latencies.length), 0),
    };
  } finally {
    client.destroy();
  }
}

interface Probes {
  latencies: number[];
  renewals: number;
  conflicts: number;
}

function probes(): Probes {
  return { latencies: [], renewals: 0, conflicts: 0 };
}

/** runExclusively's deps on DynamoDB (through the proxy), with a fresh lease key, counting what happens. */
function runDeps(doc: DynamoDBDocumentClient, input: CaseInput, probe: Probes): ExclusiveDeps {
  const timing = leaseTiming(input.leaseSeconds);
  const key = `lease#bench-long-commit-${randomUUID()}`;
  const lease = new DynamoLease({
    doc,
    table: input.tables.coordination,
    key,
    timing,
    now: Date.now,
    onContention: (operation) => void (operation === 'renew' && (probe.conflicts += 1)),
  });
  const writer = new DynamoFencedWriter(doc, {
    now: Date.now,
    onCommit: ({ sentAtMs, committedAtMs }) => void probe.latencies.push(committedAtMs - sentAtMs),
  });
  return {
    lease,
    writer: input.turns === 'commit' ? perCommitTurn(writer) : writer,
    timing,
    now: Date.now,
    runRecordPrefix: `run#bench-long-commit#`,
    onHeartbeat: () => void (probe.renewals += 1),
  };
}

/** `transactions` × 99 reminder rows put on `table` (whole items: a move as the sync writes it). */
function reminderPuts(transactions: number, table: string): TransactAction[] {
  const base = 9_000_000 + Math.floor(Math.random() * 1_000_000) * 1_000;
  return Array.from({ length: transactions * MAX_WRITES_PER_TRANSACTION }, (_, i) => ({
    Put: {
      TableName: table,
      Item: {
        contestKey: contestKeyOf(`codeforces:${base + i}`, 'bench'),
        contestId: `codeforces:${base + i}`,
        userId: 'bench',
        minutesBefore: 5,
        remindAt: 1_900_000_000 - 300,
      },
    },
  }));
}
