/** Typed lease errors: callers branch on the class, logs print the message. */

export class LeaseConfigError extends Error {
  override readonly name = 'LeaseConfigError';
}

/** This run no longer holds the lease (taken over, expired, or a renewal could not be confirmed in time). */
export class LeaseLostError extends Error {
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
export class LeaseUnavailableError extends Error {
  override readonly name = 'LeaseUnavailableError';
}

/** A fenced data transaction failed for a reason other than the lease (a refused condition, an error). */
export class FencedWriteError extends Error {
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

/** The run reached its own deadline (Lambda's remaining time minus the stop margin). */
export class RunDeadlineError extends Error {
  override readonly name = 'RunDeadlineError';
}
