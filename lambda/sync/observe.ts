/**
 * The sync's one summary line per invocation, in its own words (docs/design.md, "Observability"):
 * `ran`, `skipped` with the reason and holder, `failed` with the phase, and every count of the
 * run. The package's wrapper writes it through this hook and emits the five EMF metrics itself.
 */
import type { JobLogger, RunResult } from '@contest-sync/scheduled-singleton';

/** `migrating`: a run that worked on the upgrade's copy (docs/runbook.md, "Upgrading to qualified keys"). */
export function summaryMessage(result: Pick<RunResult, 'outcome'>): 'ran' | 'migrating' | 'skipped' | 'failed' {
  if (result.outcome !== 'succeeded') return result.outcome;
  return (result as { migration?: unknown }).migration === undefined ? 'ran' : 'migrating';
}

export function logSummary(result: RunResult, log: JobLogger): void {
  // runId, source and interval are on every line already; a dry run's changes are in its result only.
  const {
    runId: _runId,
    source: _source,
    interval: _interval,
    changes: _changes,
    outcome,
    reason,
    holder,
    holderExpiresAt,
    ...rest
  } = result;
  const fields = {
    summary: true,
    outcome,
    ...(reason !== undefined ? (outcome === 'failed' ? { phase: reason } : { reason }) : {}),
    ...(holder !== undefined ? { holder, holderExpiresAt } : {}),
    // The counts, held and accepted changes (at most 50 each), a stale reply, the error, the duration.
    ...rest,
  };
  if (outcome === 'failed') log.error(summaryMessage(result), fields);
  else log.info(summaryMessage(result), fields);
}
