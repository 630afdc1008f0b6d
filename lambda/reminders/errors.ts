/**
 * Every refusal of the reminder write path: one base class with a stable `code` that callers (the
 * HTTP API) map to their own answers. Messages name the problem and are at most 1 KB; they never
 * quote the caller's values whole (input is untrusted: a user id or an unknown key may be huge or
 * hostile), only field names and bounds.
 */
import { bound } from '@contest-sync/scheduled-singleton';

export type ReminderErrorCode = 'invalid-input' | 'contest-not-found' | 'contest-started' | 'conflict';

export abstract class ReminderError extends Error {
  abstract readonly code: ReminderErrorCode;

  constructor(message: string, options?: { cause?: unknown }) {
    super(bound(message), options);
  }
}

/** The input is not one the write path accepts: `fields` names what is wrong (never the values). */
export class InvalidInputError extends ReminderError {
  override readonly name = 'InvalidInputError';
  readonly code = 'invalid-input';

  constructor(
    message: string,
    readonly fields: readonly string[],
  ) {
    super(message);
  }
}

/** No contest with this id is stored, or it is marked vanished (the app does not show it). */
export class ContestNotFoundError extends ReminderError {
  override readonly name = 'ContestNotFoundError';
  readonly code = 'contest-not-found';

  constructor(readonly contestId: string) {
    super(`contest ${contestId} not found`);
  }
}

/** The contest has started (its start has passed, or its phase is past BEFORE): no reminder is set or changed. */
export class ContestStartedError extends ReminderError {
  override readonly name = 'ContestStartedError';
  readonly code = 'contest-started';

  constructor(
    readonly contestId: string,
    readonly startTimeSeconds: number,
  ) {
    super(`contest ${contestId} has already started (at ${new Date(startTimeSeconds * 1000).toISOString()})`);
  }
}

/**
 * The write did not land within its bounded retries: the row or its contest kept changing between
 * the read and the transaction (`reason: 'condition'`), or DynamoDB contention (a transaction
 * conflict, throttling, a 5xx) did not clear. Nothing was written by this call; trying again later
 * is safe (a set is idempotent).
 */
export class ReminderConflictError extends ReminderError {
  override readonly name = 'ReminderConflictError';
  readonly code = 'conflict';

  constructor(
    readonly reason: string,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(`the reminder could not be written: ${reason} on each of ${attempts} attempts; try again`, options);
  }
}
