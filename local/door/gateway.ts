/**
 * API Gateway's HTTP API on this machine: an HTTP server that matches a request against the
 * stack's routes (lambda/api/contract.ts; anything else goes to `$default`), runs the JWT
 * authorizer on a `jwt` route (a missing or refused token answers API Gateway's own
 * `401 {"message":"Unauthorized"}` and the function never runs), and invokes the function with
 * the payload-format-2.0 event, the verified claims in `requestContext.authorizer.jwt`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { JWTPayload } from 'jose';
import { API_ROUTES, type ApiRoute } from '../../lambda/api/contract.js';

export interface GatewayOptions {
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

/** The route a request takes, and its path parameters; none: `$default`. */
export function matchRoute(method: string, path: string): { route: ApiRoute; params: Record<string, string> } | undefined {
  for (const route of API_ROUTES as readonly ApiRoute[]) {
    if (route.method !== method) continue;
    const names: string[] = [];
    const pattern = new RegExp(`^${route.path.replace(/\{([^}]+)\}/g, (_, name: string) => (names.push(name), '([^/]+)'))}$`);
    const found = pattern.exec(path);
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

async function handle(options: GatewayOptions, req: IncomingMessage): Promise<APIGatewayProxyStructuredResultV2> {
  const body = await readBody(req);
  const path = new URL(req.url ?? '/', 'http://local').pathname;
  const matched = matchRoute(req.method ?? 'GET', path);
  if (matched === undefined) return options.invoke(eventOf(req, body, '$default'));
  const event = eventOf(req, body, `${matched.route.method} ${matched.route.path}`, matched.params);
  if (matched.route.auth === 'jwt') {
    const claims = await authorize(req, (token) => options.verify(token));
    if (claims === undefined) return UNAUTHORIZED;
    event.requestContext.authorizer.jwt.claims = claims;
  }
  return options.invoke(event);
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
