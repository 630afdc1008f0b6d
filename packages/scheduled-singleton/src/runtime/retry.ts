/**
 * Contention on real DynamoDB: what the SDK does not retry (a plain write to an item that an
 * in-flight transaction holds answers `TransactionConflictException`), and what it retries only a
 * few times (throttling, 5xx). The lease and the store retry these themselves, with full-jitter
 * backoff inside a small bounded budget (the package README, "What it guarantees"). Pure classification plus
 * one loop; the sleep and the random source are injected so tests control time.
 */
import { setTimeout as sleepTimer } from 'node:timers/promises';
import { cancellationCodes } from './aws-errors.js';
import { ContentionError } from './errors.js';

/** Error names AWS returns for contention, throttling and server faults. */
const CONTENTION_NAMES = new Set([
  'TransactionConflictException',
  'TransactionInProgressException',
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'LimitExceededException',
]);

/** Cancellation reasons of a TransactionCanceledException that mean "try again". */
export const RETRYABLE_CANCELLATION_CODES = new Set([
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
  'RequestLimitExceeded',
]);

/**
 * Why `error` is contention (the error name or the cancellation reason), or undefined when it is
 * not: a conflict, throttling or a 5xx clears on its own; a failed condition, a validation error,
 * a missing table or a permission error does not.
 */
export function contentionOf(error: unknown): string | undefined {
  const name = (error as { name?: unknown } | null)?.name;
  if (typeof name !== 'string') return undefined;
  if (name === 'TransactionCanceledException') {
    const codes = cancellationCodes(error);
    if (codes.includes('ConditionalCheckFailed')) return undefined;
    return codes.find((code) => RETRYABLE_CANCELLATION_CODES.has(code));
  }
  if (CONTENTION_NAMES.has(name)) return name;
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  return status !== undefined && status >= 500 ? `${name} (HTTP ${status})` : undefined;
}

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const realSleep: Sleep = (ms, signal) => sleepTimer(ms, undefined, signal === undefined ? {} : { signal });

export interface ContentionBudget {
  /** Attempts in all (the first included). */
  attempts: number;
  /** Full-jitter backoff: the wait before attempt n+1 is uniform in [0, min(capMs, baseMs·2^(n−1))). */
  baseMs: number;
  capMs: number;
}

/** The budget of lease operations: 4 attempts, at most ~0.7 s of waiting. */
export const LEASE_CONTENTION_BUDGET: ContentionBudget = { attempts: 4, baseMs: 100, capMs: 400 };
/** The budget of a fenced data transaction: 5 attempts, at most ~1.5 s of waiting. */
export const COMMIT_CONTENTION_BUDGET: ContentionBudget = { attempts: 5, baseMs: 100, capMs: 800 };

export interface RetryOptions {
  budget: ContentionBudget;
  sleep: Sleep;
  random: () => number;
  /**
   * Stops the retries (and the wait) when it aborts.
   * @default none
   */
  signal?: AbortSignal;
  /**
   * Called before each wait with the reason and the attempt that met it.
   * @default none
   */
  onContention?: (reason: string, attempt: number) => void;
}

/** What an adapter takes to retry contention; every part has a default. */
export interface RetrySettings {
  /**
   * The wait between attempts.
   * @default a real timer (realSleep)
   */
  sleep?: Sleep;
  /**
   * The jitter of each wait (full jitter: uniform below the backoff).
   * @default Math.random
   */
  random?: () => number;
  /**
   * Attempts and waits.
   * @default the adapter's: LEASE_CONTENTION_BUDGET for the lease, COMMIT_CONTENTION_BUDGET for fenced transactions
   */
  budget?: ContentionBudget;
  /**
   * Told before each wait with the reason and the attempt that met it.
   * @default none
   */
  onContention?: (reason: string, attempt: number) => void;
}

/** The RetryOptions of `settings`, with real sleep, Math.random and `budget` as defaults. */
export function retryOptions(settings: RetrySettings, budget: ContentionBudget, signal?: AbortSignal): RetryOptions {
  return {
    budget: settings.budget ?? budget,
    sleep: settings.sleep ?? realSleep,
    random: settings.random ?? Math.random,
    ...(signal !== undefined ? { signal } : {}),
    ...(settings.onContention !== undefined ? { onContention: settings.onContention } : {}),
  };
}

export function backoffMs(attempt: number, budget: ContentionBudget, random: () => number): number {
  return Math.floor(random() * Math.min(budget.capMs, budget.baseMs * 2 ** Math.max(0, attempt - 1)));
}

/**
 * Runs `operation` (given its attempt number) until it succeeds, throws something that is not
 * contention (rethrown as is), or meets contention on its last attempt (ContentionError).
 */
export async function retryContention<T>(operation: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const { budget, sleep, random, signal } = options;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await operation(attempt);
    } catch (error) {
      const reason = contentionOf(error);
      if (reason === undefined || signal?.aborted) throw error;
      if (attempt >= budget.attempts) throw new ContentionError(reason, attempt, { cause: error });
      options.onContention?.(reason, attempt);
      await sleep(backoffMs(attempt, budget, random), signal);
    }
  }
}
