/**
 * Lease timing, validated once at construction (as client-go's leader election does): the lease
 * lasts `durationMs`; the holder renews every `renewEveryMs`; a renewal that is not confirmed by
 * `renewDeadlineMs` after the last confirmed one makes the holder give the lease up (abort) before
 * it can lapse; a run stops `stopMarginMs` before Lambda's own timeout so that it can release.
 * The stop margin covers one DynamoDB call at its worst (every SDK attempt timing out, with the
 * SDK's backoff between them) plus a second, so the release is never cut short by the SDK's own
 * timeouts (the package README, "Timing rules").
 *
 *   0 < renewEveryMs < renewDeadlineMs < durationMs,   stopMarginMs + renewEveryMs < function timeout
 */
import { worstCallMs } from './client-budget.js';
import { LeaseConfigError } from './errors.js';

export interface LeaseTiming {
  readonly durationMs: number;
  readonly renewEveryMs: number;
  readonly renewDeadlineMs: number;
  /** How long before Lambda's timeout the run stops its work to release cleanly. */
  readonly stopMarginMs: number;
  /** Wait between retries of a renewal whose outcome was unknown (timeout, network). */
  readonly renewRetryMs: number;
}

export const MIN_LEASE_DURATION_SECONDS = 2;

export interface LeaseTimingOptions {
  /**
   * The function timeout the timing must honour (validated with it).
   * @default none: checked at the start of each invocation instead
   */
  functionTimeoutMs?: number;
  /**
   * The longest one DynamoDB call can take: the stop margin is this plus 1 s.
   * @default worstCallMs(): 12.6 s with DYNAMO_CLIENT_SETTINGS
   */
  callBudgetMs?: number;
}

/** The timing of a lease of `durationSeconds`, validated once (LeaseConfigError). */
export function leaseTiming(durationSeconds: number, options: LeaseTimingOptions = {}): LeaseTiming {
  if (!Number.isFinite(durationSeconds) || durationSeconds < MIN_LEASE_DURATION_SECONDS) {
    throw new LeaseConfigError(
      `lease duration must be a number of seconds >= ${MIN_LEASE_DURATION_SECONDS}, got ${String(durationSeconds)}`,
    );
  }
  const durationMs = Math.round(durationSeconds * 1000);
  const renewEveryMs = Math.round(durationMs / 3);
  const renewDeadlineMs = Math.round((durationMs * 2) / 3);
  const stopMarginMs = (options.callBudgetMs ?? worstCallMs()) + 1_000;
  const renewRetryMs = Math.max(100, Math.round(renewEveryMs / 5));
  const timing: LeaseTiming = { durationMs, renewEveryMs, renewDeadlineMs, stopMarginMs, renewRetryMs };
  validateTiming(timing, options.functionTimeoutMs);
  return timing;
}

export function validateTiming(timing: LeaseTiming, functionTimeoutMs?: number): void {
  const { durationMs, renewEveryMs, renewDeadlineMs, stopMarginMs } = timing;
  if (!(renewEveryMs > 0 && renewEveryMs < renewDeadlineMs && renewDeadlineMs < durationMs)) {
    throw new LeaseConfigError(
      `lease timing must satisfy 0 < renewEvery (${renewEveryMs} ms) < renewDeadline (${renewDeadlineMs} ms) < duration (${durationMs} ms)`,
    );
  }
  if (functionTimeoutMs !== undefined && functionTimeoutMs <= minimumFunctionTimeoutMs(timing)) {
    throw new LeaseConfigError(
      `function timeout (${Math.round(functionTimeoutMs)} ms) leaves no time to work: it must exceed the stop margin kept for the release (${stopMarginMs} ms, one DynamoDB call with every SDK retry) plus one renewal period (${renewEveryMs} ms)`,
    );
  }
}

/** The shortest function timeout (or time left at the start of an invocation) that can honour `timing`. */
export function minimumFunctionTimeoutMs(timing: LeaseTiming): number {
  return timing.stopMarginMs + timing.renewEveryMs;
}
