/**
 * Every refusal of the HTTP API: one class with a stable `code` (the contract: docs/api.md,
 * "Errors") and the status it answers with. Messages name the problem and never quote the
 * caller's input whole; they are cut to 1 KB like every error text of the product.
 */
import { bound } from '@contest-sync/scheduled-singleton';

export type ApiErrorCode = keyof typeof ERROR_STATUS;

export const ERROR_STATUS = {
  'invalid-input': 400,
  'malformed-body': 400,
  unauthorized: 401,
  'not-found': 404,
  'contest-not-found': 404,
  'reminder-not-found': 404,
  'feed-not-found': 404,
  'method-not-allowed': 405,
  'contest-started': 409,
  conflict: 409,
  'body-too-large': 413,
  'unsupported-media-type': 415,
  internal: 500,
  unavailable: 503,
  /** The upgrade to qualified keys is copying the previous release's tables (docs/runbook.md): writes wait. */
  migrating: 503,
} as const;

/** The codes answered with `Retry-After` (seconds): the request is right, the moment is not. */
export const RETRY_AFTER_SECONDS: Partial<Record<ApiErrorCode, number>> = { migrating: 30 };

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;

  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly fields?: readonly string[],
  ) {
    super(bound(message));
    this.status = ERROR_STATUS[code];
  }

  toBody(): { error: { code: ApiErrorCode; message: string; fields?: readonly string[] } } {
    return { error: { code: this.code, message: this.message, ...(this.fields === undefined ? {} : { fields: this.fields }) } };
  }
}

/** The codes the reminder write path refuses with (docs/api.md); its errors carry them as `code`. */
const WRITE_PATH_CODES = new Set<ApiErrorCode>(['invalid-input', 'contest-not-found', 'contest-started', 'conflict']);

/** DynamoDB's answers that mean "try again later", not "the request is wrong". */
const RETRYABLE = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'TransactionConflictException',
  'InternalServerError',
  'ServiceUnavailable',
]);

/** The ApiError an error thrown below a route becomes: a typed refusal keeps its code; anything else is ours. */
export function apiErrorOf(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const { code, message, fields, name } = (error ?? {}) as { code?: unknown; message?: unknown; fields?: unknown; name?: unknown };
  if (typeof code === 'string' && WRITE_PATH_CODES.has(code as ApiErrorCode)) {
    const named = Array.isArray(fields) ? fields.filter((f): f is string => typeof f === 'string') : undefined;
    return new ApiError(code as ApiErrorCode, typeof message === 'string' ? message : code, named);
  }
  if (typeof name === 'string' && RETRYABLE.has(name)) return new ApiError('unavailable', 'the service is busy; try again shortly');
  return new ApiError('internal', 'internal error');
}
