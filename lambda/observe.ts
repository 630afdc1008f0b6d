/**
 * What an invocation leaves behind for operators: exactly one summary log line (`ran`,
 * `skipped`, `failed`) carrying every count of the run, and five EMF metrics (runs by outcome,
 * lease lost, duration), flushed on every path.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import { METRIC } from './contract.js';
import type { RunSummary } from './summary.js';

export function summaryMessage(summary: Pick<RunSummary, 'outcome'>): 'ran' | 'skipped' | 'failed' {
  return summary.outcome === 'succeeded' ? 'ran' : summary.outcome;
}

export function logSummary(logger: Logger, summary: RunSummary): void {
  const { outcome, reason, holder, holderExpiresAt, error, durationMs, counts, dryRun, held, accepted, stale } = summary;
  const fields = {
    summary: true,
    outcome,
    durationMs,
    counts,
    ...(reason !== undefined ? (outcome === 'failed' ? { phase: reason } : { reason }) : {}),
    ...(holder !== undefined ? { holder, holderExpiresAt } : {}),
    ...(error !== undefined ? { error } : {}),
    ...(dryRun ? { dryRun } : {}),
    // Held and accepted changes (at most 50 each): what a reply said that was not acted on, and since when.
    ...(held !== undefined ? { held } : {}),
    ...(accepted !== undefined ? { accepted } : {}),
    // A stale reply (never applied): when it was made, and the newest applied one.
    ...(stale !== undefined ? { stale } : {}),
  };
  if (outcome === 'failed') logger.error(summaryMessage(summary), fields);
  else logger.info(summaryMessage(summary), fields);
}

/**
 * The same five metrics on every path (a run that did not fail reports RunFailed 0, and so on), so
 * that alarms see a value each run; per-phase and per-reason splits are in the summary line.
 */
export function recordMetrics(metrics: Metrics, summary: Pick<RunSummary, 'outcome' | 'reason' | 'durationMs'>): void {
  const { outcome, reason } = summary;
  metrics.addMetric(METRIC.runSucceeded, MetricUnit.Count, outcome === 'succeeded' ? 1 : 0);
  metrics.addMetric(METRIC.runFailed, MetricUnit.Count, outcome === 'failed' ? 1 : 0);
  metrics.addMetric(METRIC.runSkipped, MetricUnit.Count, outcome === 'skipped' ? 1 : 0);
  metrics.addMetric(METRIC.leaseLost, MetricUnit.Count, outcome === 'failed' && reason === 'lease-lost' ? 1 : 0);
  metrics.addMetric(METRIC.duration, MetricUnit.Milliseconds, summary.durationMs);
}
