import { SourceError, type SourceErrorKind, type SourceErrorOptions } from '../errors.js';

/**
 * The one error type `fetchContests` throws: a `SourceError` of platform `codeforces`
 * (lambda/sources/errors.ts), so that its job fails, is retried and is alarmed on like every
 * source's. `kind` says what went wrong (docs/sources.md, "Failed replies"; a FAILED "Call limit
 * exceeded" is `rate-limited`, any other FAILED comment `api-failed`), `retryable` whether the
 * client would have tried again (it already did, within its deadline, before throwing), and
 * `attempts` how many HTTP attempts were made in total. The message is at most 1 KB (`bound`).
 */
export class CodeforcesError extends SourceError {
  override readonly name = 'CodeforcesError';

  constructor(kind: SourceErrorKind, message: string, options: SourceErrorOptions) {
    // Bounded by the base class: a message may quote what Codeforces sent (comments, body snippets, names).
    super('codeforces', kind, message, options);
  }
}

export function isCodeforcesError(error: unknown): error is CodeforcesError {
  return error instanceof CodeforcesError;
}
