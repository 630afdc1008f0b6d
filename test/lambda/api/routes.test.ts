/**
 * The HTTP API's routes on the router, with doubles of the write path, the contests and the
 * feeds (test/lambda/api/doubles.ts): every route's answer checked against the schema the OpenAPI
 * description publishes, every error code reached by a request and answered with its status and
 * the JSON error shape, and a refused request writes nothing. docs/api.md.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { createApiHandler, type ApiHandler } from '../../../lambda/api/app.js';
import { API_LIMITS, API_ROUTES, PLATFORMS, PUBLIC_FEEDS } from '../../../lambda/api/contract.js';
import { ALL_PLATFORMS_FEED } from '../../../lambda/calendar/contract.js';
import { ERROR_STATUS, type ApiErrorCode } from '../../../lambda/api/errors.js';
import { ROUTE_DOCS, openApiDocument, type RouteKey } from '../../../lambda/api/openapi.js';
import type { ContestRecord } from '../../../lambda/api/ports.js';
import * as S from '../../../lambda/api/schemas.js';
import { listInputSchema } from '../../../lambda/reminders/input.js';
import { isUserId } from '../../../lambda/reminders/user-id.js';
import { CodedError, listReader, memoryWritePath, recordingFeeds, type Calls } from './doubles.js';
import { httpEvent, lambdaContext, type RequestSpec } from './events.js';

const NOW = 1_796_126_400_000; // 2026-12-01T12:00:00Z
const round = (id: number, inHours: number, platform = 'codeforces'): ContestRecord => ({
  contestId: `${platform}:${id}`,
  name: `Round ${id}`,
  type: 'CF',
  phase: 'BEFORE',
  startTimeSeconds: NOW / 1000 + inHours * 3600,
  durationSeconds: 7200,
  url: `https://codeforces.com/contest/${id}`,
});
const contests = [round(2120, 24), round(2121, 48), round(2000, -1), round(199, 72), round(199, 72, 'atcoder')];

let calls: Calls;
let api: ApiHandler;
let writePath: ReturnType<typeof memoryWritePath>;
let feeds: ReturnType<typeof recordingFeeds>;
let reader: ReturnType<typeof listReader>;
let logged: { code?: unknown; status?: unknown }[];
const stored = new Map<string, { body: string; etag: string }>();

beforeEach(() => {
  calls = { writes: [], rebuilds: [] };
  logged = [];
  stored.clear();
  writePath = memoryWritePath(contests, () => NOW, calls);
  feeds = recordingFeeds(calls, stored);
  reader = listReader(contests.slice(0, 2));
  api = createApiHandler({
    contests: reader,
    reminders: writePath,
    feeds,
    now: () => NOW,
    log: { warn: (_m, extra) => logged.push(extra ?? {}), error: (_m, extra) => logged.push(extra ?? {}) },
  });
});

const json = { 'content-type': 'application/json' };
async function call(spec: RequestSpec) {
  const result = await api(httpEvent(spec), lambdaContext);
  const type = String(result.headers?.['content-type'] ?? '');
  return { ...result, json: type.startsWith('application/json') && result.body ? JSON.parse(result.body) : undefined };
}
const put = (contestId: string, body: unknown, extra: Partial<RequestSpec> = {}) =>
  call({
    method: 'PUT',
    path: `/me/reminders/${contestId}`,
    sub: 'alice',
    headers: json,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...extra,
  });

function expectError(result: { statusCode?: number; json?: any }, code: ApiErrorCode) {
  expect(result.statusCode).toBe(ERROR_STATUS[code]);
  expect(S.errorSchema.parse(result.json).error.code).toBe(code);
  expect(result.json.error.message.length).toBeGreaterThan(0);
}

describe('GET /contests', () => {
  it('shows contests with platform-qualified ids, in the published shape, and passes the page request on', async () => {
    const result = await call({ method: 'GET', path: '/contests', query: 'limit=1&cursor=abc_-1', sub: 'alice' });
    expect(result.statusCode).toBe(200);
    const page = S.contestsPageSchema.parse(result.json);
    expect(page.contests.map((c) => [c.id, c.platform])).toEqual([['codeforces:2120', 'codeforces']]);
    expect(page.contests[0]!.startTime).toBe(new Date(contests[0]!.startTimeSeconds * 1000).toISOString());
    expect(page.cursor).toBe('next');
    // No platform asked for: every platform's contests.
    expect(reader.requests).toEqual([{ status: 'upcoming', limit: 1, cursor: 'abc_-1', now: NOW / 1000 }]);
    expect(result.headers?.['cache-control']).toBe('no-store');
  });

  it("shows each contest of the merged list under its own platform, and passes one platform's request on", async () => {
    reader = listReader([contests[3]!, contests[4]!]);
    api = createApiHandler({
      contests: reader,
      reminders: writePath,
      feeds,
      now: () => NOW,
      log: { warn: () => undefined, error: () => undefined },
    });
    const merged = S.contestsPageSchema.parse((await call({ method: 'GET', path: '/contests', sub: 'alice' })).json);
    expect(merged.contests.map((c) => [c.id, c.platform])).toEqual([
      ['codeforces:199', 'codeforces'],
      ['atcoder:199', 'atcoder'],
    ]);
    await call({ method: 'GET', path: '/contests', query: 'platform=atcoder', sub: 'alice' });
    expect(reader.requests.map((r) => r.platform)).toEqual([undefined, 'atcoder']);
  });

  it('names the platforms it takes when refusing an unknown one', async () => {
    const result = await call({ method: 'GET', path: '/contests', query: 'platform=topcoder', sub: 'alice' });
    expectError(result, 'invalid-input');
    expect(result.json.error.message).toBe(
      "platform: expected one of codeforces, atcoder, codechef, leetcode (or no platform, for every platform's contests)",
    );
  });

  it('takes status=recent and the default page size', async () => {
    await call({ method: 'GET', path: '/contests', query: 'status=recent', sub: 'alice' });
    expect(reader.requests[0]).toMatchObject({ status: 'recent', limit: API_LIMITS.defaultPageSize });
  });

  it.each([
    ['limit=0', ['limit']],
    ['limit=101', ['limit']],
    ['limit=ten', ['limit']],
    ['status=soon', ['status']],
    ['platform=topcoder', ['platform']],
    ['cursor=%00%00', ['cursor']],
    [`cursor=${'a'.repeat(API_LIMITS.maxCursorChars + 1)}`, ['cursor']],
    ['evil=1', ['query']],
  ])('refuses %s as invalid-input naming %j, without reading', async (query, fields) => {
    const result = await call({ method: 'GET', path: '/contests', query, sub: 'alice' });
    expectError(result, 'invalid-input');
    expect(result.json.error.fields).toEqual(fields);
    expect(result.json.error.message).not.toContain('evil');
    expect(reader.requests).toEqual([]);
  });
});

describe('PUT /me/reminders/{contestId}', () => {
  it('sets a reminder by the write path and asks for the feed to be rebuilt; the same request again changes nothing', async () => {
    const first = await put('codeforces:2120', { minutesBefore: 15 });
    expect(first.statusCode).toBe(200);
    expect(S.reminderSetSchema.parse(first.json)).toEqual({
      reminder: {
        contestId: 'codeforces:2120',
        platform: 'codeforces',
        minutesBefore: 15,
        remindAt: new Date((contests[0]!.startTimeSeconds - 900) * 1000).toISOString(),
        state: 'scheduled',
      },
      changed: true,
    });
    const again = await put('codeforces%3A2120', { minutesBefore: 15 });
    expect(again.json.changed).toBe(false);
    expect(calls.writes).toEqual([{ op: 'set', contestId: 'codeforces:2120', userId: 'alice', minutesBefore: 15 }]);
    expect(calls.rebuilds).toEqual(['alice', 'alice']);
  });

  it('two platforms whose ids collide as numbers are two contests: two reminders, each listed under its own id', async () => {
    expect((await put('codeforces:199', { minutesBefore: 15 })).json).toMatchObject({
      reminder: { contestId: 'codeforces:199', platform: 'codeforces' },
    });
    expect((await put('atcoder:199', { minutesBefore: 30 })).json).toMatchObject({
      reminder: { contestId: 'atcoder:199', platform: 'atcoder' },
    });
    const list = await call({ method: 'GET', path: '/me/reminders', sub: 'alice' });
    expect(S.remindersPageSchema.parse(list.json).reminders.map((r) => [r.contestId, r.platform, r.minutesBefore])).toEqual([
      ['atcoder:199', 'atcoder', 30],
      ['codeforces:199', 'codeforces', 15],
    ]);
    expect((await call({ method: 'DELETE', path: '/me/reminders/atcoder:199', sub: 'alice' })).statusCode).toBe(204);
    expect(writePath.rows.has('codeforces:199/alice')).toBe(true);
  });

  it('changes the lead time', async () => {
    await put('codeforces:2120', { minutesBefore: 15 });
    const changed = await put('codeforces:2120', { minutesBefore: 60 });
    expect(changed.json).toMatchObject({ reminder: { minutesBefore: 60 }, changed: true });
  });

  it.each([
    ['2120', 'bare id'],
    ['codeforces:', 'no platform id'],
    ['codeforces:-1', 'a platform id starting with a dash'],
    ['codeforces:21%2020', 'a space'],
    ['codeforces:2120%232', 'a #'],
    ['CODEFORCES:2120', 'a platform in capitals'],
    ['topcoder:1', 'unknown platform'],
    [`atcoder:${'a'.repeat(65)}`, 'a platform id over 64 characters'],
    ['codeforces:2120%3Bdrop', 'trailing junk'],
    ['codeforces%3A2120%00', 'NUL'],
    ['%F0%9F%92%A5', 'emoji'],
    [`codeforces:${'1'.repeat(200)}`, 'long'],
  ])('refuses the contest id %s (%s) and writes nothing', async (id) => {
    const result = await put(id, { minutesBefore: 15 });
    expectError(result, 'invalid-input');
    expect(result.json.error.fields).toContain('contestId');
    expect(calls.writes).toEqual([]);
    expect(calls.rebuilds).toEqual([]);
  });

  it.each([
    [{ minutesBefore: -1 }, ['minutesBefore']],
    [{ minutesBefore: 10_081 }, ['minutesBefore']],
    [{ minutesBefore: 1.5 }, ['minutesBefore']],
    [{ minutesBefore: '15' }, ['minutesBefore']],
    [{ minutesBefore: null }, ['minutesBefore']],
    [{}, ['minutesBefore']],
    [{ minutesBefore: 15, userId: 'bob' }, ['body']],
    [[15], ['body']],
    ['"15"', ['body']],
  ])('refuses the body %j naming %j, quoting none of it, and writes nothing', async (body, fields) => {
    const result = await put('codeforces:2120', body);
    expectError(result, 'invalid-input');
    expect(result.json.error.fields).toEqual(fields);
    expect(result.json.error.message).not.toContain('bob');
    expect(calls.writes).toEqual([]);
  });

  it.each(['{"minutesBefore":', '', 'minutesBefore=15', '{"minutesBefore":15}}'])('refuses the malformed body %j', async (body) => {
    const result = await put('codeforces:2120', body);
    expectError(result, 'malformed-body');
    expect(calls.writes).toEqual([]);
  });

  it('refuses a body over the limit before parsing it, plain or base64-encoded', async () => {
    const big = JSON.stringify({ minutesBefore: 15, pad: 'x'.repeat(API_LIMITS.maxBodyBytes) });
    expectError(await put('codeforces:2120', big), 'body-too-large');
    const encoded = await put('codeforces:2120', Buffer.from(big).toString('base64'), { isBase64Encoded: true });
    expectError(encoded, 'body-too-large');
    expect(calls.writes).toEqual([]);
  });

  it.each<Record<string, string>>([{}, { 'content-type': 'text/plain' }, { 'content-type': 'application/jsonx' }])(
    'refuses the content type %j',
    async (headers) => {
      const result = await put('codeforces:2120', { minutesBefore: 15 }, { headers });
      expectError(result, 'unsupported-media-type');
      expect(calls.writes).toEqual([]);
    },
  );

  it.each([
    ['codeforces:999', 'contest-not-found'],
    // Ids of any known platform, in its own terms: a contest the write path does not know is not found.
    ['codeforces:0', 'contest-not-found'],
    ['codeforces:02120', 'contest-not-found'],
    ['codeforces:9999999999', 'contest-not-found'],
    ['atcoder:2120', 'contest-not-found'],
    ['codeforces:2000', 'contest-started'],
  ] as const)('answers the write path refusing %s with %s', async (id, code) => {
    expectError(await put(id, { minutesBefore: 15 }), code);
    expect(calls.rebuilds).toEqual([]);
  });

  it.each([
    [new CodedError('conflict', 'the reminder could not be written: condition on each of 5 attempts; try again'), 'conflict'],
    [new CodedError('invalid-input', 'userId must be a string of 1 to 256 bytes', ['userId']), 'invalid-input'],
    [Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }), 'unavailable'],
    [new TypeError('secret detail of a bug'), 'internal'],
  ] as const)('answers %s from below as %s, hiding what is not the caller’s business', async (error, code) => {
    writePath.setReminder = () => Promise.reject(error);
    const result = await put('codeforces:2120', { minutesBefore: 15 });
    expectError(result, code);
    expect(result.body).not.toContain('secret detail');
    if (code === 'invalid-input') expect(result.json.error.fields).toEqual(['userId']);
  });
});

describe('DELETE /me/reminders/{contestId} and GET /me/reminders', () => {
  it('cancels, then answers a second cancel as not found; the feed is rebuilt each time', async () => {
    await put('codeforces:2120', { minutesBefore: 15 });
    const done = await call({ method: 'DELETE', path: '/me/reminders/codeforces:2120', sub: 'alice' });
    expect(done.statusCode).toBe(204);
    expect(done.body ?? '').toBe('');
    expectError(await call({ method: 'DELETE', path: '/me/reminders/codeforces:2120', sub: 'alice' }), 'reminder-not-found');
    expect(calls.rebuilds).toEqual(['alice', 'alice', 'alice']);
  });

  it("answers another user's reminder exactly as one that does not exist, and leaves it", async () => {
    await put('codeforces:2120', { minutesBefore: 15 });
    const theirs = await call({ method: 'DELETE', path: '/me/reminders/codeforces:2120', sub: 'mallory' });
    const none = await call({ method: 'DELETE', path: '/me/reminders/codeforces:2121', sub: 'mallory' });
    expect([theirs.statusCode, theirs.json.error.code]).toEqual([none.statusCode, none.json.error.code]);
    expect(theirs.json.error.message.replace('2120', 'N')).toBe(none.json.error.message.replace('2121', 'N'));
    expect(writePath.rows.size).toBe(1);
    const list = await call({ method: 'GET', path: '/me/reminders', sub: 'mallory' });
    expect(list.json).toEqual({ reminders: [] });
  });

  it('refuses a bad id on DELETE', async () => {
    expectError(await call({ method: 'DELETE', path: '/me/reminders/codeforces:', sub: 'alice' }), 'invalid-input');
    expectError(await call({ method: 'DELETE', path: '/me/reminders/topcoder:1', sub: 'alice' }), 'invalid-input');
  });

  it("lists only the caller's reminders, a page at a time", async () => {
    await put('codeforces:2120', { minutesBefore: 15 });
    await put('codeforces:2121', { minutesBefore: 30 });
    await call({ method: 'PUT', path: '/me/reminders/codeforces:2121', sub: 'bob', headers: json, body: '{"minutesBefore":5}' });
    const first = S.remindersPageSchema.parse((await call({ method: 'GET', path: '/me/reminders', query: 'limit=1', sub: 'alice' })).json);
    expect(first.reminders.map((r) => r.contestId)).toEqual(['codeforces:2120']);
    const second = S.remindersPageSchema.parse(
      (await call({ method: 'GET', path: '/me/reminders', query: `limit=1&cursor=${first.cursor}`, sub: 'alice' })).json,
    );
    expect(second.reminders.map((r) => [r.contestId, r.minutesBefore])).toEqual([['codeforces:2121', 30]]);
    expect(second.cursor).toBeUndefined();
  });

  it.each(['limit=0', 'cursor=%2F%2F', 'other=1'])('refuses the list query %s', async (query) => {
    expectError(await call({ method: 'GET', path: '/me/reminders', query, sub: 'alice' }), 'invalid-input');
  });
});

describe('who the user is', () => {
  it.each([
    ['no authorizer claims', undefined],
    ['an empty sub', ''],
    ['a sub over 256 bytes', 'é'.repeat(129)],
    ['a sub with a control character', 'alice\u0000'],
    ['a sub with a lone high surrogate', '\ud800'],
    ['a sub with a lone low surrogate inside', 'ali\udc00ce'],
  ])('refuses %s on every /me/ route and /contests, writing nothing', async (_what, sub) => {
    const requests: RequestSpec[] = [
      { method: 'GET', path: '/contests', sub },
      { method: 'GET', path: '/me/reminders', sub },
      { method: 'PUT', path: '/me/reminders/codeforces:2120', sub, headers: json, body: '{"minutesBefore":15}' },
      { method: 'DELETE', path: '/me/reminders/codeforces:2120', sub },
      { method: 'GET', path: '/me/calendar', sub },
      { method: 'POST', path: '/me/calendar', sub },
      { method: 'DELETE', path: '/me/calendar', sub },
    ];
    for (const request of requests) expectError(await call(request), 'unauthorized');
    expect(calls.writes).toEqual([]);
    expect(feeds.tokens.size).toBe(0);
    expect(reader.requests).toEqual([]);
  });

  it('takes the same ids the write path takes (one definition of a user id)', async () => {
    const ids = ['alice', 'auth0|6543 用户 😀', 'é'.repeat(128), '𝒳'.repeat(64), '\ud800', 'a\udfffb', '\u007f', 'a\u0085', '𝒳'.repeat(65)];
    for (const sub of ids) {
      const answer = await call({ method: 'GET', path: '/me/reminders', sub });
      expect([sub, answer.statusCode]).toEqual([sub, isUserId(sub) ? 200 : 401]);
      expect([sub, isUserId(sub)]).toEqual([sub, listInputSchema.safeParse({ userId: sub }).success]);
    }
  });
});

describe('the calendar feed routes', () => {
  it('issues a secret URL, tells whether one is active, and revokes it', async () => {
    expect(S.calendarStatusSchema.parse((await call({ method: 'GET', path: '/me/calendar', sub: 'alice' })).json)).toEqual({
      active: false,
    });
    const issued = await call({ method: 'POST', path: '/me/calendar', sub: 'alice' });
    expect(issued.statusCode).toBe(201);
    const { url, webcal } = S.calendarIssuedSchema.parse(issued.json);
    const token = feeds.tokens.get('alice')!;
    expect(url).toBe(`https://api.example.com/calendar/u/${token}.ics`);
    expect(webcal).toBe(`webcal://api.example.com/calendar/u/${token}.ics`);
    expect(issued.headers?.['cache-control']).toBe('no-store');
    expect((await call({ method: 'GET', path: '/me/calendar', sub: 'alice' })).json.active).toBe(true);

    const feed = await call({ method: 'GET', path: `/calendar/u/${token}.ics` });
    expect([feed.statusCode, feed.headers?.['content-type'], feed.headers?.['cache-control']]).toEqual([
      200,
      'text/calendar; charset=utf-8',
      'private, max-age=300',
    ]);
    const unchanged = await call({
      method: 'GET',
      path: `/calendar/u/${token}.ics`,
      headers: { 'if-none-match': String(feed.headers?.etag) },
    });
    expect([unchanged.statusCode, unchanged.body ?? '']).toEqual([304, '']);

    expect((await call({ method: 'DELETE', path: '/me/calendar', sub: 'alice' })).statusCode).toBe(204);
    expectError(await call({ method: 'GET', path: `/calendar/u/${token}.ics` }), 'feed-not-found');
    expectError(await call({ method: 'DELETE', path: '/me/calendar', sub: 'alice' }), 'feed-not-found');
  });

  it('a rotated URL stops working at once; the new one works', async () => {
    await call({ method: 'POST', path: '/me/calendar', sub: 'alice' });
    const old = feeds.tokens.get('alice')!;
    await call({ method: 'POST', path: '/me/calendar', sub: 'alice' });
    expectError(await call({ method: 'GET', path: `/calendar/u/${old}.ics` }), 'feed-not-found');
    expect((await call({ method: 'GET', path: `/calendar/u/${feeds.tokens.get('alice')!}.ics` })).statusCode).toBe(200);
  });

  it.each([
    'abc.ics',
    `${'A'.repeat(43)}`,
    `${'A'.repeat(43)}.ICS`,
    `${'A'.repeat(44)}.ics`,
    '..%2F..%2Fetc.ics',
    `${'A'.repeat(42)}%00.ics`,
  ])('answers the feed file %s as not found', async (file) => {
    expectError(await call({ method: 'GET', path: `/calendar/u/${file}` }), 'feed-not-found');
  });

  it.each([...PUBLIC_FEEDS])('serves the public feed %s.ics with its ETag, and 304 when unchanged', async (name) => {
    const path = `/calendar/${name}.ics`;
    expectError(await call({ method: 'GET', path }), 'feed-not-found');
    stored.set(`public/${name}`, { body: `BEGIN:VCALENDAR\r\nX-WR-CALNAME:${name}\r\nEND:VCALENDAR\r\n`, etag: `"${name}"` });
    const feed = await call({ method: 'GET', path });
    expect([feed.statusCode, feed.headers?.etag, feed.headers?.['cache-control']]).toEqual([200, `"${name}"`, 'public, max-age=300']);
    expect(feed.body).toContain(`X-WR-CALNAME:${name}`);
    expect((await call({ method: 'GET', path, headers: { 'if-none-match': `"${name}"` } })).statusCode).toBe(304);
  });

  it('has a public feed for every platform and one of all of them, and no other', () => {
    expect(PUBLIC_FEEDS).toEqual([...PLATFORMS, ALL_PLATFORMS_FEED]);
    expect((PLATFORMS as readonly string[]).includes(ALL_PLATFORMS_FEED)).toBe(false);
    const publicPaths = API_ROUTES.filter((r) => r.path.startsWith('/calendar/') && !r.path.startsWith('/calendar/u/')).map((r) => r.path);
    expect(publicPaths).toEqual(PUBLIC_FEEDS.map((f) => `/calendar/${f}.ics`));
  });

  it('answers a feed of a platform it does not know 404 (API Gateway sends it to $default)', async () => {
    expectError(await call({ method: 'GET', path: '/calendar/topcoder.ics', routeKey: '$default' }), 'not-found');
  });
});

describe('requests no route takes', () => {
  it('answers a known path with another method 405, anything else 404 (API Gateway sends both to $default)', async () => {
    expectError(await call({ method: 'POST', path: '/contests', routeKey: '$default' }), 'method-not-allowed');
    expectError(await call({ method: 'PATCH', path: '/me/reminders/codeforces:1', routeKey: '$default' }), 'method-not-allowed');
    expectError(await call({ method: 'GET', path: '/admin', routeKey: '$default' }), 'not-found');
    expectError(await call({ method: 'GET', path: '/me/reminders/codeforces:1/../../x', routeKey: '$default' }), 'not-found');
  });

  it('answers a path the router does not know 404 even on a route key', async () => {
    expectError(await call({ method: 'GET', path: '/nowhere', sub: 'alice' }), 'not-found');
  });

  it('answers a path that is not percent-encoding as invalid-input', async () => {
    expectError(await put('%E0%A4%A', { minutesBefore: 1 }), 'invalid-input');
  });
});

describe('the OpenAPI description', () => {
  it('describes exactly the routes of the route table, each with its parameters, body and answers', async () => {
    const result = await call({ method: 'GET', path: '/openapi.json' });
    const doc = result.json as {
      openapi: string;
      paths: Record<string, Record<string, any>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(doc.openapi).toBe('3.1.0');
    const described = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));
    expect(described.sort()).toEqual(API_ROUTES.map((r) => `${r.method} ${r.path}`).sort());
    expect(Object.keys(ROUTE_DOCS).sort()).toEqual(described.sort());
    const putDoc = doc.paths['/me/reminders/{contestId}']!.put;
    expect(putDoc.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(['path:contestId']);
    const body = putDoc.requestBody.content['application/json'].schema as { $ref: string };
    const bodySchema = doc.components.schemas[body.$ref.split('/').pop()!] as { properties: Record<string, unknown> };
    expect(bodySchema.properties.minutesBefore).toMatchObject({ type: 'integer', minimum: 0, maximum: 10080 });
    expect(putDoc.responses['409'].description).toBe('code: contest-started, conflict');
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['Contest', 'Reminder', 'Error']));
    // Every $ref resolves inside the document.
    for (const [, ref] of JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g))
      expect(doc.components.schemas).toHaveProperty(ref!);
    expect(openApiDocument()).toEqual(doc);
  });

  it('lists every error code on some route, and only codes that exist', () => {
    const documented = new Set(Object.values(ROUTE_DOCS).flatMap((d) => d.errors));
    const all = Object.keys(ERROR_STATUS).filter(
      (code) => !['not-found', 'method-not-allowed', 'malformed-body'].includes(code) || documented.has(code as ApiErrorCode),
    );
    expect([...documented].sort()).toEqual(all.filter((c) => documented.has(c as ApiErrorCode)).sort());
    for (const [key, doc] of Object.entries(ROUTE_DOCS) as [RouteKey, (typeof ROUTE_DOCS)[RouteKey]][]) {
      const route = API_ROUTES.find((r) => `${r.method} ${r.path}` === key)!;
      expect(doc.errors.includes('unauthorized')).toBe(route.auth === 'jwt');
    }
  });

  it('counts every refusal in one log line with its code', async () => {
    await put('codeforces:2120', { minutesBefore: -1 });
    await call({ method: 'GET', path: '/admin', routeKey: '$default' });
    expect(logged).toEqual([
      { code: 'invalid-input', status: 400 },
      { code: 'not-found', status: 404 },
    ]);
  });
});

describe('the upgrade to qualified keys: reminder writes wait for the copy', () => {
  it('answers a set and a cancel 503 migrating with Retry-After while the copy is not done, asks the gate until done, then writes', async () => {
    let done = false;
    let asked = 0;
    const gated = createApiHandler({
      contests: reader,
      reminders: writePath,
      feeds,
      now: () => NOW,
      log: { warn: (_m, extra) => logged.push(extra ?? {}), error: (_m, extra) => logged.push(extra ?? {}) },
      migration: { done: () => (asked++, Promise.resolve(done)) },
    });
    const send = async (spec: RequestSpec) => {
      const result = await gated(httpEvent(spec), lambdaContext);
      return { ...result, json: result.body ? JSON.parse(result.body) : undefined };
    };
    const set = {
      method: 'PUT',
      path: '/me/reminders/codeforces:2120',
      sub: 'alice',
      headers: json,
      body: '{"minutesBefore":15}',
    } as const;
    const waiting = await send(set);
    expectError(waiting, 'migrating');
    expect(waiting.statusCode).toBe(503);
    expect(waiting.headers?.['retry-after']).toBe('30');
    expectError(await send({ method: 'DELETE', path: '/me/reminders/codeforces:2120', sub: 'alice' }), 'migrating');
    expect(writePath.rows.size).toBe(0);
    expect(calls.rebuilds).toEqual([]);
    // Reads are not gated.
    expect((await send({ method: 'GET', path: '/me/reminders', sub: 'alice' })).statusCode).toBe(200);
    expect(asked).toBe(2);
    done = true;
    expect((await send(set)).statusCode).toBe(200);
    expect(writePath.rows.size).toBe(1);
  });
});
