/**
 * The local HTTP API (local/door/gateway.ts) as the template declares it: the routes and their
 * authorizers are the stack's; a JWT route without a valid token never reaches the function; and
 * what API Gateway and Lambda refuse — a payload over 10 MB, a function past its timeout or an
 * integration past its own, a response over 6 MB — is answered as they answer it.
 */
import type { APIGatewayProxyEventV2WithJWTAuthorizer, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { API_ROUTES, PUBLIC_FEEDS } from '../../lambda/api/contract.js';
import {
  gatewayFromTemplate,
  matchRoute,
  MAX_LAMBDA_RESPONSE_BYTES,
  MAX_REQUEST_BYTES,
  startGateway,
  type GatewayDefinition,
} from '../../local/door/gateway.js';
import { synthesizedTemplate } from '../support/tables.js';

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

const deployed = () => gatewayFromTemplate(synthesizedTemplate() as { Resources: Record<string, { Type: string; Properties?: any }> });

async function gateway(
  api: GatewayDefinition,
  invoke: (event: APIGatewayProxyEventV2WithJWTAuthorizer) => Promise<APIGatewayProxyStructuredResultV2>,
) {
  const events: APIGatewayProxyEventV2WithJWTAuthorizer[] = [];
  const started = await startGateway({
    api,
    invoke: (event) => (events.push(event), invoke(event)),
    verify: async (token) => (token === 'good' ? { sub: 'alice' } : undefined),
  });
  closing.push(() => started.close());
  return { url: started.url, events };
}

const ok = async () => ({ statusCode: 200, body: '{}' });

describe('the HTTP API as the template declares it', () => {
  it('has the stack’s routes, each with its authorizer, a $default route, payload format 2.0 and the function’s timeout', () => {
    const api = deployed();
    expect(api.routes.map((r) => `${r.auth} ${r.method} ${r.path}`).sort()).toEqual(
      API_ROUTES.map((r) => `${r.auth} ${r.method} ${r.path}`).sort(),
    );
    expect([api.defaultRoute, api.payloadFormatVersion, api.integrationTimeoutMs, api.functionTimeoutMs]).toEqual([
      true,
      '2.0',
      30_000,
      10_000,
    ]);
  });

  it('authorizes a JWT route before the function, and passes the claims', async () => {
    const { url, events } = await gateway(deployed(), ok);
    expect((await fetch(`${url}/me/reminders`)).status).toBe(401);
    expect((await fetch(`${url}/me/reminders`, { headers: { authorization: 'Bearer bad' } })).status).toBe(401);
    expect(events).toEqual([]);
    expect((await fetch(`${url}/me/reminders`, { headers: { authorization: 'Bearer good' } })).status).toBe(200);
    expect(events.map((e) => [e.routeKey, e.requestContext.authorizer.jwt.claims.sub])).toEqual([['GET /me/reminders', 'alice']]);
    for (const feed of PUBLIC_FEEDS) expect((await fetch(`${url}/calendar/${feed}.ics`)).status).toBe(200);
    expect((await fetch(`${url}/calendar/topcoder.ics`)).status).toBe(200);
    expect((await fetch(`${url}/nowhere`)).status).toBe(200);
    // Every public feed on its own route, without a token; a feed of no platform's, like any unknown path, on $default.
    expect(events.slice(1).map((e) => e.routeKey)).toEqual([
      ...PUBLIC_FEEDS.map((feed) => `GET /calendar/${feed}.ics`),
      '$default',
      '$default',
    ]);
  });

  it('matches {name} to one segment and {name+} to the rest; an exact path first', () => {
    const routes = [
      { method: 'GET', path: '/files/{name}', auth: 'none' as const },
      { method: 'GET', path: '/files/latest', auth: 'none' as const },
      { method: 'GET', path: '/proxy/{path+}', auth: 'none' as const },
    ];
    expect(matchRoute(routes, 'GET', '/files/a%20b')?.params).toEqual({ name: 'a b' });
    expect(matchRoute(routes, 'GET', '/files/latest')?.route.path).toBe('/files/latest');
    expect(matchRoute(routes, 'GET', '/files/a/b')).toBeUndefined();
    expect(matchRoute(routes, 'GET', '/proxy/a/b/c')?.params).toEqual({ path: 'a/b/c' });
  });
});

describe('what API Gateway and Lambda refuse', () => {
  const small = (timeouts: Partial<GatewayDefinition>): GatewayDefinition => ({
    routes: [{ method: 'POST', path: '/echo', auth: 'none' }],
    defaultRoute: false,
    payloadFormatVersion: '2.0',
    integrationTimeoutMs: 30_000,
    functionTimeoutMs: 10_000,
    ...timeouts,
  });

  it('answers a payload over 10 MB 413 without invoking the function', async () => {
    const { url, events } = await gateway(small({}), ok);
    const answer = await fetch(`${url}/echo`, { method: 'POST', body: Buffer.alloc(MAX_REQUEST_BYTES + 1, 97) });
    expect([answer.status, await answer.json()]).toEqual([413, { message: 'Request Entity Too Large' }]);
    expect(events).toEqual([]);
    expect((await fetch(`${url}/echo`, { method: 'POST', body: Buffer.alloc(1024, 97) })).status).toBe(200);
  });

  it('answers a function past its timeout 500, an integration past its own 503', async () => {
    const slow = () => new Promise<APIGatewayProxyStructuredResultV2>((resolve) => setTimeout(() => resolve({ statusCode: 200 }), 300));
    const functionTimeout = await gateway(small({ functionTimeoutMs: 50 }), slow);
    expect((await fetch(`${functionTimeout.url}/echo`, { method: 'POST' })).status).toBe(500);
    const integrationTimeout = await gateway(small({ integrationTimeoutMs: 50 }), slow);
    const answer = await fetch(`${integrationTimeout.url}/echo`, { method: 'POST' });
    expect([answer.status, await answer.json()]).toEqual([503, { message: 'Service Unavailable' }]);
  });

  it('answers a response over 6 MB 500 (the invocation fails), and no route without $default 404', async () => {
    const { url } = await gateway(small({}), async () => ({ statusCode: 200, body: 'x'.repeat(MAX_LAMBDA_RESPONSE_BYTES) }));
    expect((await fetch(`${url}/echo`, { method: 'POST' })).status).toBe(500);
    expect((await fetch(`${url}/elsewhere`)).status).toBe(404);
  });
});
