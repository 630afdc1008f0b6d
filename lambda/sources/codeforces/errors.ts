import { bound } from '@contest-sync/scheduled-singleton';

/**
 * The one error type `fetchContests` throws. `kind` says what went wrong, `retryable` whether the
 * client would have tried again (it already did, within its deadline, before throwing), and
 * `attempts` how many HTTP attempts were made in total. The message is at most 1 KB (`bound`).
 */
export type CodeforcesErrorKind =
  | 'network' // connection refused/reset, DNS, corrupt transfer
  | 'timeout' // no headers or body within the per-attempt timeout
  | 'http' // unexpected HTTP status (5xx: retryable; other 4xx: not)
  | 'challenge' // HTTP 403 or an HTML page (Cloudflare challenge): retryable
  | 'rate-limited' // FAILED "Call limit exceeded" or HTTP 429: retryable
  | 'api-failed' // any other {"status":"FAILED","comment":...}
  | 'not-json' // HTTP 200 whose body is not JSON
  | 'too-large' // a body (or its gunzipped form) above MAX_BODY_BYTES: refused before parsing, not retried
  | 'bad-shape' // JSON but not the contest.list envelope
  | 'invalid-contests' // too many contests failed validation
  | 'empty' // an empty (or all-unscheduled) contest list: refused, never wipes data
  | 'deadline' // the next attempt could not start before the deadline; cause = last error
  | 'aborted'; // the caller's AbortSignal fired

export class CodeforcesError extends Error {
  override readonly name = 'CodeforcesError';
  readonly kind: CodeforcesErrorKind;
  readonly attempts: number;
  readonly retryable: boolean;

  constructor(kind: CodeforcesErrorKind, message: string, options: { attempts: number; retryable: boolean; cause?: unknown }) {
    // Bounded: a message may quote what Codeforces sent (comments, body snippets, names).
    super(bound(message), options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.attempts = options.attempts;
    this.retryable = options.retryable;
  }
}

export function isCodeforcesError(error: unknown): error is CodeforcesError {
  return error instanceof CodeforcesError;
}
