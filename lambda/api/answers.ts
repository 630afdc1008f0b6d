/**
 * How the API answers what went wrong (docs/api.md, "Errors"): every refusal, the router's own
 * included, becomes JSON with a stable `code`, and is counted by one log line (`refused` with the
 * code: Logs Insights charts them); an unexpected error is logged whole and answered `internal`
 * without its details.
 */
import { MethodNotAllowedError, NotFoundError, RequestValidationError, type Router } from '@aws-lambda-powertools/event-handler/http';
import { ApiError, apiErrorOf, RETRY_AFTER_SECONDS } from './errors.js';
import type { RouterEnv } from './ports.js';

export interface ApiLog {
  warn(message: string, extra?: Record<string, unknown>): void;
  error(message: string, extra?: Record<string, unknown>): void;
}

/** The answer of an ApiError: its status, its JSON body, never cached; `Retry-After` where the code says when to try again. */
export function errorResponse(error: ApiError): Response {
  const retryAfter = RETRY_AFTER_SECONDS[error.code];
  return new Response(JSON.stringify(error.toBody()), {
    status: error.status,
    headers: {
      'content-type': 'application/json',
      'cache-control': 'no-store',
      ...(retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }),
    },
  });
}

interface Issue {
  message: string;
  path?: readonly (PropertyKey | { key: PropertyKey })[];
}

/** A failed schema check as `invalid-input`, naming the fields (never their values); a body that is not JSON as `malformed-body`. */
export function validationError(error: RequestValidationError): ApiError {
  const issues = ((error.details as { issues?: Issue[] } | undefined)?.issues ?? []).filter((i) => i.path !== undefined);
  if (issues.length === 0) return new ApiError('malformed-body', 'the body is not valid JSON');
  const name = (part: PropertyKey | { key: PropertyKey }) => String(typeof part === 'object' ? part.key : part);
  const fieldOf = (issue: Issue) => {
    const path = (issue.path ?? []).map(name);
    return path.slice(1).join('.') || (path[0] ?? 'request');
  };
  const fields = [...new Set(issues.map(fieldOf))];
  // zod quotes unknown keys, which are the caller's: name none.
  const said = (issue: Issue) => (/^Unrecognized key/.test(issue.message) ? 'unknown field' : issue.message);
  const message = issues
    .slice(0, 3)
    .map((issue) => `${fieldOf(issue)}: ${said(issue)}`)
    .join('; ');
  return new ApiError('invalid-input', message, fields);
}

export function installErrorHandlers(app: Router<RouterEnv>, log: ApiLog): void {
  const refuse = (error: ApiError) => {
    if (error.status >= 500) log.error('failed', { code: error.code });
    else log.warn('refused', { code: error.code, status: error.status });
    return Promise.resolve(errorResponse(error));
  };
  app.errorHandler(ApiError, (error) => refuse(error));
  app.errorHandler(RequestValidationError, (error) => refuse(validationError(error)));
  app.errorHandler(NotFoundError, () => refuse(new ApiError('not-found', 'no such route')));
  app.errorHandler(MethodNotAllowedError, () => refuse(new ApiError('method-not-allowed', 'the route does not take this method')));
  app.errorHandler(URIError, () => refuse(new ApiError('invalid-input', 'the path is not valid percent-encoding', ['path'])));
  app.errorHandler(Error, (error) => {
    const mapped = apiErrorOf(error);
    if (mapped.code === 'internal' || mapped.code === 'unavailable') log.error('unexpected error', { error });
    return refuse(mapped);
  });
}
