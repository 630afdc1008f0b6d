/**
 * The HTTP API's bundle as `cdk deploy` uploads it (the run's synthesis, test/support/global-setup.ts):
 * it stays under the bundle budget, imports in a fresh process, and answers requests as deployed —
 * API Gateway's $default route (404 / 405), the OpenAPI description of exactly the route table, a
 * /me/ route reached without the authorizer's claims (401) — without touching AWS.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { API_ROUTES } from '../../lambda/api/contract.js';
import { bundleDirOfFunction } from '../../local/template.js';

const BUDGET_BYTES = 1024 * 1024;
let entry: string;

beforeAll(() => {
  const templatePath = inject('templatePath');
  const template = JSON.parse(readFileSync(templatePath, 'utf8'));
  const [id] = Object.keys(template.Resources).filter(
    (key) => key.startsWith('DoorApiFunction') && template.Resources[key].Type === 'AWS::Lambda::Function',
  );
  entry = join(bundleDirOfFunction(dirname(templatePath), template, id!), 'index.mjs');
});

const ENV = {
  CONTESTS_TABLE_NAME: 'local-contests',
  REMINDERS_TABLE_NAME: 'local-reminders',
  DOOR_TABLE_NAME: 'local-door',
  FEED_BUCKET_NAME: 'local-feeds',
  FEED_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/feeds.fifo',
};

/** One request through the bundle's handler in a fresh Node process, as Lambda runs it. */
function invoke(event: Record<string, unknown>): { statusCode: number; headers: Record<string, string>; body: string } {
  const script = `const { handler } = await import(${JSON.stringify(pathToFileURL(entry).href)});
    process.stdout.write('@@' + JSON.stringify(await handler(JSON.parse(process.argv[1]), {})));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(event)], {
    env: { ...process.env, ...ENV, POWERTOOLS_LOG_LEVEL: 'SILENT' },
    encoding: 'utf8',
  });
  return JSON.parse(out.slice(out.indexOf('@@') + 2)) as { statusCode: number; headers: Record<string, string>; body: string };
}

const request = (method: string, path: string, routeKey = `${method} ${path}`) => ({
  version: '2.0',
  routeKey,
  rawPath: path,
  rawQueryString: '',
  headers: { host: 'api.example.com', 'x-forwarded-proto': 'https' },
  requestContext: {
    http: { method, path, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'test' },
    domainName: 'api.example.com',
    stage: '$default',
  },
  isBase64Encoded: false,
});

describe('the HTTP API bundle', () => {
  it('stays under the 1 MiB bundle budget', () => {
    expect(statSync(entry).size).toBeLessThan(BUDGET_BYTES);
  });

  it("answers API Gateway's $default route 404, or 405 on a known path", () => {
    const unknown = invoke(request('GET', '/admin', '$default'));
    expect([unknown.statusCode, JSON.parse(unknown.body).error.code]).toEqual([404, 'not-found']);
    const wrongMethod = invoke(request('POST', '/contests', '$default'));
    expect([wrongMethod.statusCode, JSON.parse(wrongMethod.body).error.code]).toEqual([405, 'method-not-allowed']);
  });

  it('refuses a /me/ route reached without the authorizer’s claims, before any read', () => {
    const answer = invoke(request('GET', '/me/reminders'));
    expect([answer.statusCode, JSON.parse(answer.body).error.code]).toEqual([401, 'unauthorized']);
  });

  it('describes exactly the route table', () => {
    const answer = invoke(request('GET', '/openapi.json'));
    const paths = (JSON.parse(answer.body) as { paths: Record<string, Record<string, unknown>> }).paths;
    const described = Object.entries(paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));
    expect(described.sort()).toEqual(API_ROUTES.map((r) => `${r.method} ${r.path}`).sort());
  });
});
