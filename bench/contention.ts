/**
 * Contention: N invocations of one scheduled interval (the same Scheduled Event) at once.
 *
 * In-process: N instances of the real handler (createHandler), each with its own DynamoDB client
 * on the counting proxy, invoked together with Promise.all. (64 Node processes on 2 cores would
 * measure process spawn more than the lease.) The Codeforces stand-in answers after a delay, so
 * the winner holds the lease while the others decide.
 *
 * Each instance is warmed first with one invocation of an interval that already succeeded (one
 * refused UpdateItem: builds its runtime and opens its connection), like a warm container; the
 * counters are reset before the measured round.
 *
 * Time to decision: for a skipped invocation, from invoke to the returned skip; for the winner,
 * from invoke to its `lease acquired` log line. Requests per skip: the HTTP attempts of the
 * skipped instances' clients, which must add up with the winner's to what the proxy counted on
 * the wire (checked: `wireRequests` = `attributedRequests`).
 */
import { performance } from 'node:perf_hooks';
import type { CodeforcesStandin } from '../local/codeforces-standin.js';
import type { DynamoProxy } from '../local/dynamo-proxy.js';
import type { TableNames } from '../local/tables.js';
import type { RunSummary } from '../lambda/sync/summary.js';
import { functionEnv } from './environment.js';
import { benchHandler, invoke } from './handlers.js';
import { addCounts, percentile, round, sortedCounts, summarize } from './stats.js';
import { scheduledEvent } from '../test/support/processes.js';

export interface ContentionResult {
  invocations: number;
  rounds: number;
  /** Syncs that ran for one interval: the most over all rounds (must be 1). */
  syncs: number;
  syncsPerRound: number[];
  /** Codeforces calls per round (one sync = one call). */
  codeforcesCallsPerRound: number[];
  skips: number;
  skipReasons: Record<string, number>;
  /** Mean DynamoDB requests of a skipped invocation (physical limit 1); null when nothing was skipped. */
  requestsPerSkip: number | null;
  maxRequestsPerSkip: number | null;
  /** Requests of the winning invocation (whole sync), by operation, summed over rounds. */
  winnerRequests: Record<string, number>;
  wireRequests: number;
  attributedRequests: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Time to decision of the winner alone (median over rounds). */
  winnerP50Ms: number | null;
}

export interface ContentionOptions {
  proxy: DynamoProxy;
  standin: CodeforcesStandin;
  tables: TableNames;
  leaseSeconds: number;
  /** Codeforces stand-in delay during a measured round. */
  codeforcesDelayMs: number;
  /** N → number of rounds (each round is a new interval). */
  plan: { invocations: number; rounds: number }[];
}

export async function runContention(options: ContentionOptions): Promise<ContentionResult[]> {
  const { proxy, standin, tables } = options;
  const env = functionEnv(tables, standin.baseUrl, options.leaseSeconds);
  // Recent hours, so that they stay inside the lease item's retention of succeeded intervals.
  const hour = 3_600_000;
  const base = Math.floor(Date.now() / hour) * hour - 48 * hour;
  let nextHour = 0;
  const eventAt = () => scheduledEvent(new Date(base + nextHour++ * hour).toISOString());

  // Interval 0 succeeds once here: the warm-up interval (and the Contests table gets its contests).
  const warmEvent = eventAt();
  standin.setDelay(0);
  const seed = benchHandler({ endpoint: proxy.endpoint, env });
  const seeded = await invoke(seed.handler, warmEvent);
  seed.dynamo.client.destroy();
  if (seeded.outcome !== 'succeeded') throw new Error(`contention seed sync did not succeed: ${JSON.stringify(seeded)}`);

  const results: ContentionResult[] = [];
  for (const { invocations, rounds } of options.plan) {
    const decisions: number[] = [];
    const winnerDecisions: number[] = [];
    const skipRequests: number[] = [];
    const syncsPerRound: number[] = [];
    const codeforcesCallsPerRound: number[] = [];
    const skipReasons: Record<string, number> = {};
    const winnerRequests: Record<string, number> = {};
    let wireRequests = 0;
    let attributedRequests = 0;

    for (let r = 0; r < rounds; r += 1) {
      const instances = Array.from({ length: invocations }, () => benchHandler({ endpoint: proxy.endpoint, env }));
      standin.setDelay(0);
      const warm = await Promise.all(instances.map((instance) => invoke(instance.handler, warmEvent)));
      const notDone = warm.filter((summary) => summary.reason !== 'already-done');
      if (notDone.length > 0) throw new Error(`warm-up expected already-done skips, got ${JSON.stringify(notDone[0])}`);
      for (const instance of instances) instance.dynamo.reset();

      standin.setDelay(options.codeforcesDelayMs);
      const event = eventAt();
      const callsBefore = standin.requests.length;
      proxy.reset();
      const outcomes = await Promise.all(
        instances.map(async (instance) => {
          const startedAt = performance.now();
          const summary: RunSummary = await invoke(instance.handler, event);
          return { instance, summary, startedAt, endedAt: performance.now() };
        }),
      );
      wireRequests += proxy.total();
      codeforcesCallsPerRound.push(standin.requests.length - callsBefore);

      let syncs = 0;
      for (const { instance, summary, startedAt, endedAt } of outcomes) {
        attributedRequests += instance.dynamo.attemptsTotal();
        if (summary.outcome === 'skipped') {
          skipReasons[summary.reason ?? 'unknown'] = (skipReasons[summary.reason ?? 'unknown'] ?? 0) + 1;
          skipRequests.push(instance.dynamo.attemptsTotal());
          decisions.push(endedAt - startedAt);
        } else {
          if (summary.outcome === 'succeeded') syncs += 1;
          else throw new Error(`an invocation failed under contention: ${JSON.stringify(summary)}`);
          addCounts(winnerRequests, instance.dynamo.attempts);
          const acquiredAt = instance.logger.acquiredAt;
          if (acquiredAt === undefined) throw new Error('the winner never logged `lease acquired`');
          decisions.push(acquiredAt - startedAt);
          winnerDecisions.push(acquiredAt - startedAt);
        }
        instance.dynamo.client.destroy();
      }
      syncsPerRound.push(syncs);
    }

    const latency = summarize(decisions);
    const skips = skipRequests.length;
    results.push({
      invocations,
      rounds,
      syncs: Math.max(...syncsPerRound),
      syncsPerRound,
      codeforcesCallsPerRound,
      skips,
      skipReasons,
      requestsPerSkip: skips === 0 ? null : round(skipRequests.reduce((a, b) => a + b, 0) / skips, 3),
      maxRequestsPerSkip: skips === 0 ? null : Math.max(...skipRequests),
      winnerRequests: sortedCounts(winnerRequests),
      wireRequests,
      attributedRequests,
      p50Ms: latency.p50Ms,
      p99Ms: latency.p99Ms,
      maxMs: latency.maxMs,
      winnerP50Ms: winnerDecisions.length === 0 ? null : round(percentile(winnerDecisions, 50), 2),
    });
  }
  standin.setDelay(0);
  return results;
}
