/**
 * Every failed reply of every source: one base class, `SourceError`, and one subclass per platform
 * (docs/sources.md, "Failed replies"). A failed reply changes nothing stored: the source throws, its
 * job's run fails, the alarms see it; it never returns an empty or partial list as if it were the truth.
 *
 * `kind` says what went wrong, `retryable` whether the HTTP layer would have tried again (it already
 * did, within its deadline, before throwing), `attempts` how many HTTP attempts were made in total.
 * The message is at most 1 KB (`bound`): it may quote what the platform sent.
 */
import { bound } from '@contest-sync/scheduled-singleton';

export type SourceErrorKind =
  | 'network' // connection refused/reset, DNS, a transfer cut short
  | 'timeout' // no headers or body within the per-attempt timeout
  | 'http' // an unexpected HTTP status (5xx: retryable; other 4xx, 3xx: not), an unknown content encoding
  | 'challenge' // HTTP 403 or a bot challenge page (Cloudflare): retryable
  | 'rate-limited' // HTTP 429 (or the platform's own rate-limit answer): retryable
  | 'api-failed' // the platform answered with its own failure (CodeChef `status` not success, GraphQL `errors`)
  | 'not-json' // a body that should be JSON and is not (truncated, an error page)
  | 'markup' // an HTML page without the tables the source reads (renamed ids, a login page, truncated)
  | 'too-large' // a body (or its decompressed form, or its list) above the cap: refused before parsing, not retried
  | 'bad-shape' // JSON, but not the envelope the source expects
  | 'invalid-contests' // too many entries failed validation
  | 'empty' // an empty body, or no scheduled contest where the platform always lists some: never wipes data
  | 'deadline' // the next attempt could not start before the deadline; cause = the last error
  | 'aborted'; // the caller's AbortSignal fired

export interface SourceErrorOptions {
  attempts: number;
  retryable: boolean;
  cause?: unknown;
}

/**
 * The base class. Generic in its kind, so that a platform that throws only some of these kinds can
 * subclass it with its narrower type.
 */
export class SourceError<K extends string = SourceErrorKind> extends Error {
  override readonly name: string = 'SourceError';
  readonly platform: string;
  readonly kind: K;
  readonly attempts: number;
  readonly retryable: boolean;

  constructor(platform: string, kind: K, message: string, options: SourceErrorOptions) {
    super(bound(message), options.cause === undefined ? undefined : { cause: options.cause });
    this.platform = platform;
    this.kind = kind;
    this.attempts = options.attempts;
    this.retryable = options.retryable;
  }
}

/** How the shared HTTP layer makes a platform's error (each subclass below is one). */
export type SourceErrorClass = new (kind: SourceErrorKind, message: string, options: SourceErrorOptions) => SourceError;

export class AtCoderError extends SourceError {
  override readonly name = 'AtCoderError';
  constructor(kind: SourceErrorKind, message: string, options: SourceErrorOptions) {
    super('atcoder', kind, message, options);
  }
}

export class CodeChefError extends SourceError {
  override readonly name = 'CodeChefError';
  constructor(kind: SourceErrorKind, message: string, options: SourceErrorOptions) {
    super('codechef', kind, message, options);
  }
}

export class LeetCodeError extends SourceError {
  override readonly name = 'LeetCodeError';
  constructor(kind: SourceErrorKind, message: string, options: SourceErrorOptions) {
    super('leetcode', kind, message, options);
  }
}

export function isSourceError(error: unknown): error is SourceError<string> {
  return error instanceof SourceError;
}
