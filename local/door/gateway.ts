/**
 * API Gateway's HTTP API on this machine, as the synthesized template declares it
 * (`gatewayFromTemplate`: the AWS::ApiGatewayV2::Route keys and authorization types, the
 * integration's payload format and timeout, the function's timeout): an HTTP server that matches a
 * request against those routes (anything else goes to `$default`), runs the JWT authorizer on a
 * `JWT` route (a missing or refused token answers API Gateway's own `401 {"message":"Unauthorized"}`
 * and the function never runs), and invokes the function with the payload-format-2.0 event, the
 * verified claims in `requestContext.authorizer.jwt`. What it refuses, and where AWS says so:
 *
 *   - Amazon API Gateway Developer Guide — Quotas for configuring and running an HTTP API
 *     https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-quotas.html
 *     a request payload over 10 MB is answered `413` before the function; an integration that has
 *     not answered within its timeout (30 seconds at most, the default) `503`.
 *   - AWS Lambda Developer Guide — Lambda quotas
 *     https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html
 *     a synchronous response over 6 MB fails the invocation, and a function stops at its timeout:
 *     either is a failed integration, answered `500`.
 *   - Amazon API Gateway Developer Guide — Working with routes for HTTP APIs
 *     https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-routes.html
 *     `{name}` takes one path segment, `{name+}` the rest of the path; `$default` takes what no
 *     route does.
 *   - Amazon API Gateway Developer Guide — Create AWS Lambda proxy integrations for HTTP APIs
 *     https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-integrations-lambda.html
 *     the payload format version 2.0 event.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { JWTPayload } from 'jose';
import { referenced } from '../../lib/wiring.js';

/** One route of the HTTP API: `GET /me/reminders/{contestId}`, and whether its authorizer is the JWT one. */
export interface GatewayRoute {
  method: string;
  path: string;
  auth: 'jwt' | 'none';
}

/** The HTTP API as the template declares it. */
export interface GatewayDefinition {
  routes: GatewayRoute[];
  /** Whether a `$default` route takes what no route does (without it: 404 `{"message":"Not Found"}`). */
  defaultRoute: boolean;
  payloadFormatVersion: string;
  /** The integration's timeout (ms): TimeoutInMillis, 30,000 by default and at most. */
  integrationTimeoutMs: number;
  /** The function's own timeout (ms). */
  functionTimeoutMs: number;
}

/** HTTP API quotas: the largest request payload. */
export const MAX_REQUEST_BYTES = 10 * 1024 * 1024;
/** Lambda quotas: the largest synchronous response. */
export const MAX_LAMBDA_RESPONSE_BYTES = 6 * 1024 * 1024;
const MAX_INTEGRATION_TIMEOUT_MS = 30_000;

interface CfnResource {
  Type: string;
  Properties?: Record<string, any>;
}

/** The HTTP API of the template (one, with one Lambda integration). */
export function gatewayFromTemplate(template: { Resources: Record<string, CfnResource> }): GatewayDefinition {
  const all = Object.values(template.Resources);
  const routes = all.filter((r) => r.Type === 'AWS::ApiGatewayV2::Route').map((r) => r.Properties!);
  const integrations = all.filter((r) => r.Type === 'AWS::ApiGatewayV2::Integration').map((r) => r.Properties!);
  if (integrations.length !== 1) throw new Error(`expected one HTTP API integration in the template, found ${integrations.length}`);
  const [integration] = integrations as [Record<string, any>];
  const fn = template.Resources[referenced(integration.IntegrationUri) ?? '']?.Properties;
  return {
    routes: routes
      .filter((r) => r.RouteKey !== '$default')
      .map((r) => {
        const [method, path] = String(r.RouteKey).split(' ') as [string, string];
        return { method, path, auth: r.AuthorizationType === 'JWT' ? 'jwt' : 'none' };
      }),
    defaultRoute: routes.some((r) => r.RouteKey === '$default'),
    payloadFormatVersion: String(integration.PayloadFormatVersion ?? '2.0'),
    integrationTimeoutMs: Math.min(Number(integration.TimeoutInMillis ?? MAX_INTEGRATION_TIMEOUT_MS), MAX_INTEGRATION_TIMEOUT_MS),
    functionTimeoutMs: 1000 * Number(fn?.Timeout ?? 3),
  };
}

export interface GatewayOptions {
  api: GatewayDefinition;
  invoke(event: APIGatewayProxyEventV2WithJWTAuthorizer): Promise<APIGatewayProxyStructuredResultV2>;
  verify(token: string): Promise<JWTPayload | undefined>;
  /** One line per request (method, path, status), if given. */
  log?: (line: string) => void;
  port?: number;
}

export interface Gateway {
  url: string;
  close(): Promise<void>;
}

const UNAUTHORIZED = {
  statusCode: 401,
  headers: { 'content-type': 'application/json', 'www-authenticate': 'Bearer' },
  body: '{"message":"Unauthorized"}',
};
const TEXT = /^(application\/(json|x-www-form-urlencoded)|text\/)/i;
const gatewayAnswer = (statusCode: number, message: string) => ({
  statusCode,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ message }),
});

/** The route a request takes, and its path parameters; none: `$default`. An exact path wins over one with parameters. */
export function matchRoute(
  routes: readonly GatewayRoute[],
  method: string,
  path: string,
): { route: GatewayRoute; params: Record<string, string> } | undefined {
  const candidates = routes.filter((route) => route.method === method || route.method === 'ANY');
  for (const route of [...candidates].sort((a, b) => Number(a.path.includes('{')) - Number(b.path.includes('{')))) {
    const names: string[] = [];
    const source = route.path
      .replace(/[.*?^$()|[\]\\]/g, '\\$&')
      .replace(/\{([^}+]+)(\+?)\}/g, (_, name: string, greedy: string) => (names.push(name), greedy === '+' ? '(.+)' : '([^/]+)'));
    const found = new RegExp(`^${source}$`).exec(path);
    if (found !== null) return { route, params: Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(found[i + 1]!)])) };
  }
  return undefined;
}

/** Claims as API Gateway passes them: strings (a list as `[a b]`). */
export function claimsOf(payload: JWTPayload): Record<string, string> {
  return Object.fromEntries(
    Object.entries(payload).map(([name, value]) => [name, Array.isArray(value) ? `[${value.join(' ')}]` : String(value)]),
  );
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The payload-format-2.0 event API Gateway sends the function for this request. */
export function eventOf(
  req: IncomingMessage,
  body: Buffer,
  routeKey: string,
  params?: Record<string, string>,
): APIGatewayProxyEventV2WithJWTAuthorizer {
  const url = new URL(req.url ?? '/', 'http://local');
  const headers = Object.fromEntries(
    Object.entries(req.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(',') : (value ?? '')]),
  );
  const text = TEXT.test(headers['content-type'] ?? 'application/json');
  const now = new Date();
  return {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers: { ...headers, 'x-forwarded-proto': 'http' },
    ...(url.search === '' ? {} : { queryStringParameters: Object.fromEntries(url.searchParams) }),
    ...(params === undefined || Object.keys(params).length === 0 ? {} : { pathParameters: params }),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      http: {
        method: req.method ?? 'GET',
        path: url.pathname,
        protocol: 'HTTP/1.1',
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
      authorizer: { principalId: '', integrationLatency: 0, jwt: { claims: {}, scopes: [] } },
    },
    ...(body.length === 0 ? {} : { body: text ? body.toString('utf8') : body.toString('base64') }),
    isBase64Encoded: body.length > 0 && !text,
  };
}

/** The authorizer's verdict for a `jwt` route: the claims, or undefined (401). */
async function authorize(req: IncomingMessage, verify: GatewayOptions['verify']): Promise<Record<string, string> | undefined> {
  const bearer = /^Bearer (\S+)$/i.exec(req.headers.authorization ?? '');
  const payload = bearer === null ? undefined : await verify(bearer[1]!);
  return payload === undefined ? undefined : claimsOf(payload);
}

/** The function's answer as the integration passes it on: a timeout or an oversized response is a failed integration. */
async function integrate(
  options: GatewayOptions,
  event: APIGatewayProxyEventV2WithJWTAuthorizer,
): Promise<APIGatewayProxyStructuredResultV2> {
  const { functionTimeoutMs, integrationTimeoutMs } = options.api;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<APIGatewayProxyStructuredResultV2>((resolve) => {
    timer = setTimeout(
      () =>
        resolve(
          integrationTimeoutMs < functionTimeoutMs
            ? gatewayAnswer(503, 'Service Unavailable')
            : gatewayAnswer(500, 'Internal Server Error'),
        ),
      Math.min(functionTimeoutMs, integrationTimeoutMs),
    );
  });
  try {
    const answer = await Promise.race([options.invoke(event), late]);
    return Buffer.byteLength(JSON.stringify(answer)) > MAX_LAMBDA_RESPONSE_BYTES ? gatewayAnswer(500, 'Internal Server Error') : answer;
  } finally {
    clearTimeout(timer);
  }
}

async function handle(options: GatewayOptions, req: IncomingMessage): Promise<APIGatewayProxyStructuredResultV2> {
  const body = await readBody(req);
  if (body.length > MAX_REQUEST_BYTES) return gatewayAnswer(413, 'Request Entity Too Large');
  const path = new URL(req.url ?? '/', 'http://local').pathname;
  const matched = matchRoute(options.api.routes, req.method ?? 'GET', path);
  if (matched === undefined)
    return options.api.defaultRoute ? integrate(options, eventOf(req, body, '$default')) : gatewayAnswer(404, 'Not Found');
  const event = eventOf(req, body, `${matched.route.method} ${matched.route.path}`, matched.params);
  if (matched.route.auth === 'jwt') {
    const claims = await authorize(req, (token) => options.verify(token));
    if (claims === undefined) return UNAUTHORIZED;
    event.requestContext.authorizer.jwt.claims = claims;
  }
  return integrate(options, event);
}

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const server: Server = createServer((req, res) => {
    handle(options, req)
      .then((answer) => {
        options.log?.(`${req.method} ${req.url} → ${answer.statusCode}`);
        const body = answer.body === undefined ? undefined : Buffer.from(answer.body, answer.isBase64Encoded === true ? 'base64' : 'utf8');
        res.writeHead(answer.statusCode ?? 200, {
          ...(answer.headers as Record<string, string>),
          ...(answer.cookies === undefined ? {} : { 'set-cookie': answer.cookies }),
        });
        res.end(body);
      })
      .catch((error: Error) => {
        options.log?.(`${req.method} ${req.url} → 500 (${error.message})`);
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"Internal Server Error"}');
      });
  });
  server.listen(options.port ?? 0, '127.0.0.1');
  await new Promise((resolve, reject) => server.once('listening', resolve).once('error', reject));
  return {
    url: `http://localhost:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
