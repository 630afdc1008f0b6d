/**
 * Every error the package throws, in one file, each extending one base class an adopter can
 * catch (`error instanceof ScheduledSingletonError`). Callers branch on the class; logs print
 * `name: message`. Every entry point exports the base and the errors it throws. Messages that may
 * quote what came from outside (an event, an item) are bounded to 1 KB.
 */
import type { RunResult } from './run-result.js';
import { bound } from './text.js';

/** The base of every error of @contest-sync/scheduled-singleton. */
export class ScheduledSingletonError extends Error {
  override readonly name: string = 'ScheduledSingletonError';
}

// ── Configuration: refused before any lease or work ──────────────────────────────────────────

/** A lease timing that breaks its invariants, or that the function timeout cannot honour. */
export class LeaseConfigError extends ScheduledSingletonError {
  override readonly name = 'LeaseConfigError';
}

/** The environment ScheduledSingletonJob sets is missing or wrong (a run fails with reason `config`). */
export class JobConfigError extends ScheduledSingletonError {
  override readonly name = 'JobConfigError';
}

/** The outbox relay's environment (OutboxDelivery sets it) is missing: the batch is retried. */
export class RelayConfigError extends ScheduledSingletonError {
  override readonly name = 'RelayConfigError';
}

/** ScheduledSingletonJob's props refused at synth. */
export class ScheduledSingletonJobError extends ScheduledSingletonError {
  override readonly name = 'ScheduledSingletonJobError';
}

/** OutboxDelivery's props (or a job's `outbox`) refused at synth. */
export class OutboxDeliveryError extends ScheduledSingletonError {
  override readonly name = 'OutboxDeliveryError';
}

/** ConsoleTestEvents' props refused at synth. */
export class ConsoleTestEventsError extends ScheduledSingletonError {
  override readonly name = 'ConsoleTestEventsError';
}

// ── The invocation ───────────────────────────────────────────────────────────────────────────

/** An event the wrapper refuses (a run fails with reason `event`), naming what is wrong. */
export class EventValidationError extends ScheduledSingletonError {
  override readonly name = 'EventValidationError';
  constructor(message: string) {
    // Bounded: it may quote the event, and it becomes the result.
    super(bound(message));
  }
}

/**
 * Thrown by a scheduled run that failed (so that Lambda retries it), and by a bad event or
 * configuration; carries the run's result. A job may subclass it (the wrapper's `failedError`
 * option) to keep its own error name.
 */
export class ScheduledRunFailedError extends ScheduledSingletonError {
  override readonly name: string = 'ScheduledRunFailedError';
  /** `message`: the job's own text (bounded); default `run <runId> failed (<reason>): <error>`. */
  constructor(
    readonly summary: RunResult,
    message?: string,
  ) {
    super(bound(message ?? `run ${summary.runId} failed (${summary.reason ?? 'unknown'}): ${summary.error ?? 'no detail'}`));
  }
}

// ── The lease ────────────────────────────────────────────────────────────────────────────────

/** This run no longer holds the lease (taken over, expired, or a renewal could not be confirmed in time). */
export class LeaseLostError extends ScheduledSingletonError {
  override readonly name = 'LeaseLostError';
  constructor(
    message: string,
    readonly runId: string,
    readonly fence: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** DynamoDB could not be asked (network, throttling, permissions) while acquiring the lease. */
export class LeaseUnavailableError extends ScheduledSingletonError {
  override readonly name = 'LeaseUnavailableError';
}

/** Contention (conflicts, throttling, 5xx) outlasted its retry budget; `cause` is the last error. */
export class ContentionError extends ScheduledSingletonError {
  override readonly name = 'ContentionError';
  constructor(
    readonly reason: string,
    readonly attempts: number,
    options: { cause: unknown },
  ) {
    super(`DynamoDB contention did not clear within ${attempts} attempts (last: ${reason})`, options);
  }
}

/** The run reached its own deadline (Lambda's remaining time minus the stop margin). */
export class RunDeadlineError extends ScheduledSingletonError {
  override readonly name = 'RunDeadlineError';
}

// ── Writes and events ────────────────────────────────────────────────────────────────────────

/** A fenced data transaction failed for a reason other than the lease (a refused condition, an error). */
export class FencedWriteError extends ScheduledSingletonError {
  override readonly name = 'FencedWriteError';
  /**
   * The data actions of the transaction (as sent) that their own condition refused, from the
   * cancellation reasons; empty when the failure was not a refused condition. A job whose actions
   * may lose a race one by one (per-row claims) drops these and commits the rest again.
   */
  readonly refused: readonly unknown[];
  constructor(message: string, options?: { cause?: unknown; refused?: readonly unknown[] }) {
    super(message, options);
    this.refused = options?.refused ?? [];
  }
}

/** A commit from a run without the lease (a dry run): nothing is written. */
export class UnfencedWriteError extends ScheduledSingletonError {
  override readonly name = 'UnfencedWriteError';
}

/** An event that cannot be delivered, or a commit with events but no outbox. Nothing was written. */
export class OutboxEventError extends ScheduledSingletonError {
  override readonly name = 'OutboxEventError';
  constructor(
    message: string,
    readonly eventId?: string,
  ) {
    super(bound(message));
  }
}

/** A stream record the relay cannot deliver (not an outbox item of the package). */
export class OutboxRecordError extends ScheduledSingletonError {
  override readonly name = 'OutboxRecordError';
}
