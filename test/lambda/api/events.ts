/**
 * API Gateway HTTP API (payload format 2.0) events for the router's tests: what the gateway hands
 * the function after its JWT authorizer accepted a token (the claims as strings), per AWS's
 * documented example of the format.
 */
import type { APIGatewayProxyEventV2WithJWTAuthorizer, Context } from 'aws-lambda';

export interface RequestSpec {
  method: string;
  path: string;
  query?: string;
  body?: string;
  headers?: Record<string, string>;
  /** The token's `sub`; undefined: no authorizer ran (a public route). */
  sub?: string;
  routeKey?: string;
  isBase64Encoded?: boolean;
}

export function httpEvent(spec: RequestSpec): APIGatewayProxyEventV2WithJWTAuthorizer {
  const headers = { host: 'api.example.com', 'x-forwarded-proto': 'https', ...spec.headers };
  return {
    version: '2.0',
    routeKey: spec.routeKey ?? `${spec.method} ${spec.path}`,
    rawPath: spec.path,
    rawQueryString: spec.query ?? '',
    headers,
    ...(spec.query ? { queryStringParameters: Object.fromEntries(new URLSearchParams(spec.query)) } : {}),
    requestContext: {
      accountId: '123456789012',
      apiId: 'api-id',
      domainName: 'api.example.com',
      domainPrefix: 'api',
      http: { method: spec.method, path: spec.path, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'test' },
      requestId: 'request-id',
      routeKey: spec.routeKey ?? `${spec.method} ${spec.path}`,
      stage: '$default',
      time: '01/Dec/2026:12:00:00 +0000',
      timeEpoch: 1_796_126_400_000,
      authorizer:
        spec.sub === undefined
          ? (undefined as never)
          : { principalId: '', integrationLatency: 0, jwt: { claims: { sub: spec.sub, iss: 'https://issuer.example.com/' }, scopes: [] } },
    },
    ...(spec.body === undefined ? {} : { body: spec.body }),
    isBase64Encoded: spec.isBase64Encoded ?? false,
  };
}

export const lambdaContext = {
  awsRequestId: 'request-id',
  functionName: 'api',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:api',
  memoryLimitInMB: '256',
  logGroupName: '/aws/lambda/api',
  logStreamName: 'local',
  callbackWaitsForEmptyEventLoop: true,
  getRemainingTimeInMillis: () => 10_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
} as Context;
