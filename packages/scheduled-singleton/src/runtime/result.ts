/**
 * The result of one invocation of the wrapper, as plain JSON: what the run's settlement says, named
 * and completed by the job's hooks (`resultDefaults`, `summary`, `failure`). Pure apart from the log
 * line a throwing hook leaves. See the package README, "What the wrapper does".
 */
import { describe } from './aws-errors.js';
import { RunDeadlineError } from './errors.js';
import type { Invocation } from './invocation.js';
import type { JobLogger } from './report.js';
import type { ExclusiveOutcome } from './run.js';
import type { FailureNaming, ResultHooks, RunOutcome, RunResult } from './run-result.js';
import { bound } from './text.js';

export type { ResultHooks };

/** The precheck's settlement when it ended the run before the lease. */
export type PrecheckSettlement =
  { outcome: 'succeeded'; idle: true; summary: Record<string, unknown> } | { outcome: 'failed'; reason: 'precheck'; error: unknown };

/** A dry run's settlement (no lease). */
export type DrySettlement<T> =
  { outcome: 'succeeded'; value: T; dryRun: true } | { outcome: 'failed'; reason: 'work'; error: unknown; deadline: boolean; dryRun: true };

/** How an invocation ended, before it is reported. */
export type Settlement<T> =
  | ExclusiveOutcome<T>
  | DrySettlement<T>
  | PrecheckSettlement
  | { outcome: 'failed'; reason: 'event' | 'config'; error: unknown; dryRun?: undefined };

/** The result, and the wrapper's own reason (what the metrics count, whatever `failure` named it). */
export interface Reported {
  result: RunResult;
  wrapperReason: string | undefined;
}

/** The result of a settlement: the wrapper's fields, over `resultDefaults`, under the work's or the failure's. */
export function resultOf<T>(
  settled: Settlement<T>,
  invocation: Invocation | undefined,
  extra: { runId: string; durationMs: number; hooks: ResultHooks<T>; log: JobLogger },
): Reported {
  const s = settled as Partial<Record<string, unknown>> & { outcome: RunOutcome };
  const wrapperReason = typeof s.reason === 'string' ? s.reason : undefined;
  const heartbeats = typeof s.heartbeats === 'number' ? s.heartbeats : 0;
  const error = 'error' in s ? (s.deadline === true ? asDeadlineError(s.error) : s.error) : undefined;
  const named: FailureNaming =
    settled.outcome === 'failed' && 'error' in s ? nameFailure(error, { reason: wrapperReason ?? 'work', heartbeats }, extra) : {};
  const base: RunResult = {
    runId: extra.runId,
    source: invocation?.source ?? 'unknown',
    ...(invocation?.interval !== undefined ? { interval: invocation.interval } : {}),
    outcome: settled.outcome,
    ...(named.reason !== undefined ? { reason: named.reason } : wrapperReason !== undefined ? { reason: wrapperReason } : {}),
    ...(typeof s.fence === 'number' && s.fence > 0 ? { fence: s.fence } : {}),
    ...(typeof s.holder === 'string' ? { holder: s.holder } : {}),
    ...(typeof s.holderExpiresAt === 'string' ? { holderExpiresAt: s.holderExpiresAt } : {}),
    ...(typeof s.detail === 'string' ? { detail: s.detail } : {}),
    ...('error' in s ? { error: bound(describe(error)) } : {}),
    ...(s.deadline === true ? { deadline: true } : {}),
    ...(s.dryRun === true ? { dryRun: true as const } : {}),
    ...(s.idle === true ? { idle: true as const } : {}),
    durationMs: extra.durationMs,
  };
  const defaults = extra.hooks.resultDefaults === undefined ? {} : guarded(extra.log, 'resultDefaults', extra.hooks.resultDefaults, {});
  // The wrapper's fields first (their order in the line), the defaults' values only where the
  // wrapper has none, then the work's or the failure's own fields.
  const result = Object.assign({}, base, defaults, base, ownFields(settled, heartbeats, named, extra)) as RunResult;
  return { result, wrapperReason };
}

/** The fields the job adds: the precheck's (idle), the work's value's (`summary`), the failure's. */
function ownFields<T>(
  settled: Settlement<T>,
  heartbeats: number,
  named: FailureNaming,
  extra: { hooks: ResultHooks<T>; log: JobLogger },
): Record<string, unknown> {
  if ('idle' in settled) return settled.summary;
  if (settled.outcome === 'failed') return named.summary ?? {};
  const { summary } = extra.hooks;
  if (settled.outcome !== 'succeeded' || summary === undefined) return {};
  return guarded(extra.log, 'summary', () => summary(settled.value, { heartbeats }), {});
}

/** What the job's `failure` hook names a failed run (nothing without one). */
function nameFailure<T>(
  error: unknown,
  run: { reason: string; heartbeats: number },
  extra: { hooks: ResultHooks<T>; log: JobLogger },
): FailureNaming {
  const { failure } = extra.hooks;
  if (failure === undefined) return {};
  return guarded(extra.log, 'failure', () => failure(error, run), {});
}

/**
 * A hook's answer; a hook that throws is logged (`warn`) and its part left out, so the run is
 * still reported (the summary line, the metrics, the throw for Lambda's retry).
 */
export function guarded<R>(log: JobLogger, hook: string, call: () => R, fallback: R): R {
  try {
    return call();
  } catch (error) {
    log.warn(`the ${hook} option threw; its part is left out`, { error: describe(error) });
    return fallback;
  }
}

/**
 * What a run stopped by its deadline reports: the RunDeadlineError its signal carried, whatever the
 * work threw on seeing it (an AbortError of the call it passed the signal to, usually).
 */
function asDeadlineError(error: unknown): unknown {
  if (error instanceof RunDeadlineError) return error;
  return new RunDeadlineError('the run reached its deadline before Lambda timeout', { cause: error });
}
