/**
 * What an invocation leaves behind for operators: exactly one summary log line (`ran`,
 * `skipped`, `failed`) and its EMF metrics, flushed on every path.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import { METRIC } from './contract.js';
import type { RunSummary } from './summary.js';

export function summaryMessage(summary: Pick<RunSummary, 'outcome'>): 'ran' | 'skipped' | 'failed' {
  return summary.outcome === 'succeeded' ? 'ran' : summary.outcome;
}

export function logSummary(logger: Logger, summary: RunSummary): void {
  const { outcome, reason, holder, holderExpiresAt, error, durationMs, counts, dryRun } = summary;
  const fields = {
    summary: true,
    outcome,
    durationMs,
    counts,
    ...(reason !== undefined ? (outcome === 'failed' ? { phase: reason } : { reason }) : {}),
    ...(holder !== undefined ? { holder, holderExpiresAt } : {}),
    ...(error !== undefined ? { error } : {}),
    ...(dryRun ? { dryRun } : {}),
  };
  if (outcome === 'failed') logger.error(summaryMessage(summary), fields);
  else logger.info(summaryMessage(summary), fields);
}

export function recordMetrics(metrics: Metrics, summary: RunSummary): void {
  const { outcome, reason, counts } = summary;
  metrics.addMetric(METRIC.runSucceeded, MetricUnit.Count, outcome === 'succeeded' ? 1 : 0);
  metrics.addMetric(METRIC.runFailed, MetricUnit.Count, outcome === 'failed' ? 1 : 0);
  metrics.addMetric(METRIC.runSkipped, MetricUnit.Count, outcome === 'skipped' ? 1 : 0);
  metrics.addMetric(METRIC.duration, MetricUnit.Milliseconds, summary.durationMs);
  if (outcome === 'skipped') {
    metrics.addMetric(reason === 'already-done' ? METRIC.skippedAlreadyDone : METRIC.skippedLeaseHeld, MetricUnit.Count, 1);
    return;
  }
  metrics.addMetric(METRIC.leaseLost, MetricUnit.Count, reason === 'lease-lost' ? 1 : 0);
  metrics.addMetric(METRIC.heartbeats, MetricUnit.Count, counts.heartbeats);
  if (counts.codeforcesAttempts > 0) {
    metrics.addMetric(METRIC.codeforcesAttempts, MetricUnit.Count, counts.codeforcesAttempts);
    metrics.addMetric(METRIC.codeforcesLatency, MetricUnit.Milliseconds, counts.codeforcesLatencyMs);
  }
  if (outcome === 'succeeded') {
    metrics.addMetric(METRIC.contestsFetched, MetricUnit.Count, counts.contestsFetched);
    metrics.addMetric(METRIC.contestsInvalid, MetricUnit.Count, counts.contestsInvalid);
    metrics.addMetric(METRIC.contestsWritten, MetricUnit.Count, counts.contestsWritten);
    metrics.addMetric(METRIC.contestsUnchanged, MetricUnit.Count, counts.contestsUnchanged);
    metrics.addMetric(METRIC.contestsRemoved, MetricUnit.Count, counts.contestsRemoved);
    metrics.addMetric(METRIC.remindersMoved, MetricUnit.Count, counts.remindersMoved);
    metrics.addMetric(METRIC.remindersDeleted, MetricUnit.Count, counts.remindersDeleted);
  }
  if (outcome === 'failed' && reason !== undefined) {
    // The same failure once more with its phase as a dimension, for "failed runs by phase".
    metrics.singleMetric().addDimension('phase', reason).addMetric(METRIC.runFailed, MetricUnit.Count, 1);
  }
}
