/**
 * The run's result and the hooks that shape it: types only, imported by the errors, the result's
 * assembly and the wrapper alike (so that none of them imports another for a type).
 */

/** How an invocation came: the schedule, a console test, or the deploy-time run. */
export type InvocationSource = 'schedule' | 'console' | 'deploy';

export type RunOutcome = 'succeeded' | 'skipped' | 'failed';

/** The run's outcome: returned, logged as the summary line, and carried by ScheduledRunFailedError. */
export interface RunResult {
  runId: string;
  source: InvocationSource | 'unknown';
  interval?: string;
  outcome: RunOutcome;
  /**
   * skipped: `lease-held`, `already-done`; failed: `event`, `config`, `precheck`, `lease`,
   * `lease-lost`, `work`, or what the `failure` option named it.
   */
  reason?: string;
  fence?: number;
  holder?: string;
  holderExpiresAt?: string;
  detail?: string;
  error?: string;
  /** The work was stopped by the run's deadline. */
  deadline?: boolean;
  dryRun?: true;
  /** The precheck found nothing to do: no lease was taken. */
  idle?: true;
  durationMs: number;
  [field: string]: unknown;
}

/** What `failure` names a failed run: its reason (replacing the wrapper's) and fields of the result. */
export interface FailureNaming {
  /** @default the wrapper's reason */
  reason?: string;
  /** @default none */
  summary?: Record<string, unknown>;
}

/** What the wrapper knows of a failed run when it asks `failure` to name it. */
export interface FailedRun {
  /** The wrapper's reason: `event`, `config`, `precheck`, `lease`, `lease-lost` or `work`. */
  readonly reason: string;
  /** Renewals confirmed before the run ended (0 before the lease). */
  readonly heartbeats: number;
}

/** The wrapper's options that shape a result (part of ScheduledSingletonOptions). */
export interface ResultHooks<T> {
  /**
   * Extra fields of the summary line and the returned result, from the work's value (a success).
   * @default none
   */
  summary?: (value: T, run: { heartbeats: number }) => Record<string, unknown>;
  /**
   * Names a failed run: called for every failed outcome that has an error (reasons `work`,
   * `precheck`, `lease`, `lease-lost`, `config`, `event`) with the error the result reports. Its
   * `reason` replaces the wrapper's (e.g. a job's phases: `codeforces`, `store`), its `summary`
   * fields join the result and the summary line (e.g. partial counts). The `LeaseLost` metric
   * still counts the wrapper's `lease-lost`, whatever the run is named.
   * @default none: the wrapper's reason, no extra fields
   */
  failure?: (error: unknown, run: FailedRun) => FailureNaming;
  /**
   * Fields every result carries whatever the outcome (e.g. zeroed counts), under the wrapper's,
   * the work's (`summary`) and the failure's own: every result has one shape.
   * @default none
   */
  resultDefaults?: () => Record<string, unknown>;
}
