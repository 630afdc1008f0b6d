/**
 * The API function's handler around the router: a request API Gateway routed to `$default` (no
 * route of the API matched it, so no authorizer ran) is answered here, without reaching a route:
 * 405 if its path is one of ours, 404 otherwise. docs/api.md.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { errorResponse } from './answers.js';
import { API_ROUTES } from './contract.js';
import { ApiError } from './errors.js';
import { createApi, type ApiDeps } from './routes.js';

const pathPattern = (path: string) => new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
const PATHS = [...new Set(API_ROUTES.map((route) => route.path))].map(pathPattern);

/** The refusal of a request no route matched. */
export function unmatched(path: string): ApiError {
  return PATHS.some((pattern) => pattern.test(path))
    ? new ApiError('method-not-allowed', 'the route does not take this method')
    : new ApiError('not-found', 'no such route');
}

export type ApiHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

export function createApiHandler(deps: ApiDeps): ApiHandler {
  const app = createApi(deps);
  return async (event, context) => {
    if (event.routeKey !== '$default') return app.resolve(event, context);
    const error = unmatched(event.rawPath);
    deps.log.warn('refused', { code: error.code, status: error.status });
    const response = errorResponse(error);
    return { statusCode: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
  };
}
