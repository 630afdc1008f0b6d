/**
 * Runs a series of chaos trials (some in parallel if asked) and adds up what they found. Shared
 * by the CLI (`npm run chaos`) and the short run in `npm test`.
 */
import type { ProxyFault } from '../../local/dynamo-proxy.js';
import { trialSeed, type FaultKind, type TrialPlan } from './faults.js';
import { runTrial, type ChaosEnvironment, type DeliveryFigures, type TrialResult } from './runner.js';

export interface IndexedTrial extends TrialResult {
  index: number;
}

export interface ChaosSummary {
  trials: IndexedTrial[];
  invocations: number;
  faults: Partial<Record<FaultKind, number>>;
  /** AWS faults injected by the proxies, by kind and operation. */
  awsFaults: Partial<Record<ProxyFault, Record<string, number>>>;
  /** Contention retries the runs logged, by operation. */
  contentionRetries: Record<string, number>;
  /** Skips `lease-held` with no holder known (contention outlasted the acquire's budget). */
  contentionSkips: number;
  outcomes: Record<string, number>;
  violations: number;
  violationsByRule: Record<string, number>;
  /** What the harness's starvation kept from being judged, by the rule it would have been judged by (not violations). */
  starved: number;
  starvedByRule: Record<string, number>;
  /** The reminder delivery part, added up over the trials that had one. */
  delivery?: DeliveryFigures & { trials: number };
  /** The other source jobs' part (sources.ts), added up by platform. */
  sources?: NonNullable<TrialResult['sources']>;
}

export async function runChaos(
  env: ChaosEnvironment,
  options: {
    seed: number;
    trials: number;
    first?: number;
    workers: number;
    parallel?: number;
    /** AWS faults through the proxies (conflicts, throttling, 500s, dropped connections). */
    aws?: boolean;
    /** Adjusts each seeded plan (the test pins one decisive fault per trial). */
    adjust?: (plan: TrialPlan) => TrialPlan;
    /** Delivery workers per trial (with `env.deliveryEntry`; 0: no delivery part). */
    deliveryWorkers?: number;
    /** The other source jobs run beside Codeforces' (default: every one with an entry in `env.sourceEntries`). */
    sources?: readonly string[];
    onTrial?: (trial: IndexedTrial) => void;
  },
): Promise<ChaosSummary> {
  const first = options.first ?? 0;
  const indexes = Array.from({ length: options.trials }, (_, i) => first + i);
  const trials: IndexedTrial[] = [];
  const lanes = Array.from({ length: Math.max(1, options.parallel ?? 1) }, async () => {
    for (let index = indexes.shift(); index !== undefined; index = indexes.shift()) {
      const result = await runTrial(env, trialSeed(options.seed, index), {
        workers: options.workers,
        aws: options.aws === true,
        ...(options.adjust !== undefined ? { adjust: options.adjust } : {}),
        ...(options.deliveryWorkers !== undefined ? { deliveryWorkers: options.deliveryWorkers } : {}),
        ...(options.sources !== undefined ? { sources: options.sources } : {}),
      });
      const trial = { ...result, index };
      trials.push(trial);
      options.onTrial?.(trial);
    }
  });
  await Promise.all(lanes);
  trials.sort((a, b) => a.index - b.index);

  const summary: ChaosSummary = {
    trials,
    invocations: 0,
    faults: {},
    awsFaults: {},
    contentionRetries: {},
    contentionSkips: 0,
    outcomes: {},
    violations: 0,
    violationsByRule: {},
    starved: 0,
    starvedByRule: {},
  };
  for (const trial of trials) {
    summary.invocations += trial.invocations;
    summary.contentionSkips += trial.contentionSkips;
    for (const [operation, n] of Object.entries(trial.contentionRetries))
      summary.contentionRetries[operation] = (summary.contentionRetries[operation] ?? 0) + n;
    for (const [fault, byOperation] of Object.entries(trial.awsFaults) as [ProxyFault, Record<string, number>][]) {
      const merged = (summary.awsFaults[fault] ??= {});
      for (const [operation, n] of Object.entries(byOperation)) merged[operation] = (merged[operation] ?? 0) + n;
    }
    for (const [kind, n] of Object.entries(trial.faults) as [FaultKind, number][]) summary.faults[kind] = (summary.faults[kind] ?? 0) + n;
    for (const [kind, n] of Object.entries(trial.outcomes)) summary.outcomes[kind] = (summary.outcomes[kind] ?? 0) + n;
    if (trial.delivery !== undefined) {
      const d = (summary.delivery ??= {
        trials: 0,
        invocations: 0,
        outcomes: {},
        claims: 0,
        events: 0,
        eventsByPlatform: {},
        reminders: 0,
        resent: 0,
        duringFaults: 0,
        lost: 0,
        deferred: 0,
        appWrites: 0,
      });
      d.trials += 1;
      for (const field of [
        'invocations',
        'claims',
        'events',
        'reminders',
        'resent',
        'duringFaults',
        'lost',
        'deferred',
        'appWrites',
      ] as const)
        d[field] += trial.delivery[field];
      for (const [kind, n] of Object.entries(trial.delivery.outcomes)) d.outcomes[kind] = (d.outcomes[kind] ?? 0) + n;
      for (const [platform, n] of Object.entries(trial.delivery.eventsByPlatform))
        d.eventsByPlatform[platform] = (d.eventsByPlatform[platform] ?? 0) + n;
    }
    for (const [platform, figures] of Object.entries(trial.sources ?? {})) {
      const sum = ((summary.sources ??= {})[platform] ??= { invocations: 0, outcomes: {}, requests: 0, awsFaults: 0 });
      sum.invocations += figures.invocations;
      sum.requests += figures.requests;
      sum.awsFaults += figures.awsFaults;
      for (const [kind, n] of Object.entries(figures.outcomes)) sum.outcomes[kind] = (sum.outcomes[kind] ?? 0) + n;
    }
    summary.starved += trial.starved.length;
    for (const note of trial.starved) summary.starvedByRule[note.rule] = (summary.starvedByRule[note.rule] ?? 0) + 1;
    summary.violations += trial.violations.length;
    for (const violation of trial.violations)
      summary.violationsByRule[violation.rule] = (summary.violationsByRule[violation.rule] ?? 0) + 1;
  }
  return summary;
}
