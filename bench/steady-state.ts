/**
 * Steady state: what one sync costs in DynamoDB, on the recorded contest.list fixture (60 contests).
 *
 *   first      empty tables: every stored contest is written
 *   second     the same list again: 0 contest writes, and the second sweep of the byDue partitions
 *              a table with no recorded DUE_SHARDS may hold rows in (the first run swept them and
 *              recorded the setting; the following run sweeps once more: once in a table's life)
 *   unchanged  the same list a third time: goal 0 contest writes, nothing swept
 *   changed    every contest renamed: every stored contest is rewritten
 *
 * Requests are counted on the wire by the proxy (by operation). Capacity units come from
 * ReturnConsumedCapacity: 'TOTAL', set on every command by a client middleware (local/counting-client.ts).
 * Manual invocations (`{}`), so that no interval dedupe stands between the runs.
 */
import type { CodeforcesStandin } from '../local/codeforces-standin.js';
import type { DynamoProxy } from '../local/dynamo-proxy.js';
import type { TableNames } from '../local/tables.js';
import { functionEnv } from './environment.js';
import { benchHandler, invoke } from './handlers.js';
import { round, sortedCounts, total } from './stats.js';

export interface SyncCost {
  outcome: string;
  /** DynamoDB requests on the wire, total. */
  requests: number;
  requestsByOperation: Record<string, number>;
  readCapacityUnits: number;
  writeCapacityUnits: number;
  capacityUnits: number;
  capacityByOperation: Record<string, number>;
  contestsFetched: number;
  contestWrites: number;
  contestsUnchanged: number;
  transactions: number;
  durationMs: number;
}

export interface SteadyStateResult {
  contests: number;
  first: SyncCost;
  second: SyncCost;
  unchanged: SyncCost;
  changed: SyncCost;
}

export async function runSteadyState(options: {
  proxy: DynamoProxy;
  standin: CodeforcesStandin;
  tables: TableNames;
  contests: object[];
}): Promise<SteadyStateResult> {
  const { proxy, standin, tables, contests } = options;
  const bench = benchHandler({
    endpoint: proxy.endpoint,
    env: functionEnv(tables, standin.baseUrl, 30),
    trackCapacity: true,
  });
  standin.setDelay(0);

  const measure = async (list: object[]): Promise<SyncCost> => {
    standin.setContests(list);
    proxy.reset();
    bench.dynamo.reset();
    const summary = await invoke(bench.handler, {});
    if (summary.outcome !== 'succeeded') throw new Error(`steady-state sync did not succeed: ${JSON.stringify(summary)}`);
    const byOperation = sortedCounts(proxy.counts);
    const { read, write, total: units, byOperation: capacityByOperation } = bench.dynamo.capacity;
    return {
      outcome: summary.outcome,
      requests: total(byOperation),
      requestsByOperation: byOperation,
      readCapacityUnits: round(read, 2),
      writeCapacityUnits: round(write, 2),
      capacityUnits: round(units, 2),
      capacityByOperation: sortedCounts(capacityByOperation),
      contestsFetched: summary.counts.contestsFetched,
      contestWrites: summary.counts.contestsWritten,
      contestsUnchanged: summary.counts.contestsUnchanged,
      transactions: summary.counts.transactions,
      durationMs: summary.durationMs,
    };
  };

  try {
    const first = await measure(contests);
    const second = await measure(contests);
    const unchanged = await measure(contests);
    const renamed = contests.map((contest) => {
      const c = contest as { name?: unknown };
      return { ...contest, name: `${String(c.name)} (renamed)` };
    });
    const changed = await measure(renamed);
    return { contests: contests.length, first, second, unchanged, changed };
  } finally {
    bench.dynamo.client.destroy();
  }
}
