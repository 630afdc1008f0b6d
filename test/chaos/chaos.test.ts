/**
 * A short chaos run (three trials) on the bundled function, as part of `npm test`: faults are
 * injected (AWS faults through the DynamoDB proxies included) and the checker finds no violation.
 * The full run is `npm run chaos -- --trials 200`.
 */
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { localDynamoClient } from '../../local/dynamodb-local.js';
import { contentionOnlyPlan, trialSeed, type TrialPlan } from './faults.js';
import { runChaos } from './suite.js';

const client = localDynamoClient(inject('dynamoEndpoint'));
afterAll(() => client.destroy());

/**
 * Makes sure every trial exercises the decisive fault: the first worker (alone for 600 ms, so it
 * takes the lease) is frozen as its first write reaches DynamoDB, the write is held past the lease,
 * and a contender takes over meanwhile. The rest of the seeded plan stays as drawn.
 */
function withFrozenWriter(plan: TrialPlan): TrialPlan {
  const leaseMs = plan.leaseSeconds * 1000;
  const [first, ...rest] = plan.workers;
  if (first === undefined) return plan;
  return {
    ...plan,
    workers: [
      {
        ...first,
        startAtMs: 0,
        event: { kind: 'console' },
        fault: { kind: 'stop-at-write', nth: 1, holdMs: Math.round(leaseMs * 1.8), forMs: Math.round(leaseMs * 2) },
        contenders: [{ event: { kind: 'console' }, afterMs: leaseMs + 100 }],
      },
      ...rest.map((worker) => ({ ...worker, startAtMs: Math.max(600, worker.startAtMs) })),
    ],
  };
}

const SEED = 20_260_101;
/** Trial 0 has contention as its only fault (the checker's contention rule applies); the others a frozen writer. */
const pinned = (plan: TrialPlan): TrialPlan => (plan.seed === trialSeed(SEED, 0) ? contentionOnlyPlan(plan) : withFrozenWriter(plan));

describe('chaos (short run)', () => {
  it('three trials with SIGKILL, SIGSTOP, slow and failing Codeforces, DynamoDB delays and AWS faults: no violation', { timeout: 150_000 }, async () => {
    const summary = await runChaos(
      {
        dynamoEndpoint: inject('dynamoEndpoint'),
        bundleEntry: inject('bundleEntry'),
        template: JSON.parse(readFileSync(inject('templatePath'), 'utf8')),
        client,
      },
      { seed: SEED, trials: 3, workers: 5, parallel: 3, aws: true, adjust: pinned },
    );
    const violations = summary.trials.flatMap((trial) => trial.violations.map((v) => `trial ${trial.index} (seed ${trial.seed}) [${v.rule}] ${v.message}`));
    expect(violations).toEqual([]);
    expect(summary.trials).toHaveLength(3);
    const injected = Object.entries(summary.faults).filter(([kind]) => kind !== 'short-lease').reduce((sum, [, n]) => sum + n, 0);
    expect(injected).toBeGreaterThanOrEqual(3);
    expect(summary.faults.sigstop ?? 0).toBeGreaterThanOrEqual(1);
    expect(summary.faults['contention-only-trial']).toBe(1);
    const aws = (summary.faults['aws-conflict'] ?? 0) + (summary.faults['aws-throttling'] ?? 0) + (summary.faults['aws-throughput-exceeded'] ?? 0) + (summary.faults['aws-internal-error'] ?? 0);
    expect(aws).toBeGreaterThanOrEqual(3);
    console.info(`[chaos short] ${JSON.stringify({ faults: summary.faults, outcomes: summary.outcomes, contentionRetries: summary.contentionRetries })}`);
  });
});
