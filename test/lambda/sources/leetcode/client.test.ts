/**
 * LeetCode's source end to end through undici's MockAgent: a browser-like POST that names the
 * product, the reply the judge reads, and every refusal or hostile reply a failed reply
 * (LeetCodeError), never a wipe.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { LeetCodeError } from '../../../../lambda/sources/errors.js';
import {
  fetchLeetCodeReply,
  GRAPHQL_PATH,
  LEETCODE_SETTINGS,
  LEETCODE_USER_AGENT,
  leetcodeSource,
  QUERY,
} from '../../../../lambda/sources/leetcode/index.js';
import { CHALLENGE_PAGE, leetcodeReply } from '../../../../local/source-fixtures.js';
import { failure, fakeClock, httpDate, mockPlatform, seams, type FakeClock } from '../doubles.js';

const ORIGIN = 'https://leetcode.test';
const JSON_HEADERS = { 'content-type': 'application/json' };

let clock: FakeClock;
let mock: ReturnType<typeof mockPlatform>;

beforeEach(() => {
  clock = fakeClock();
  mock = mockPlatform(ORIGIN, GRAPHQL_PATH, 'POST', clock);
});

const fetch = (overrides: { signal?: AbortSignal; deadline?: number; maxBodyBytes?: number } = {}) =>
  fetchLeetCodeReply({ ...seams(mock.agent, clock), baseUrl: ORIGIN, ...overrides });
const body = () => JSON.stringify(leetcodeReply(clock.start));

describe('the request and the reply', () => {
  it('POSTs the allContests query as a browser would, with a User-Agent naming the product', async () => {
    mock.reply(200, body(), JSON_HEADERS);
    await fetch();
    expect(mock.seen[0]!.headers).toMatchObject({
      'content-type': 'application/json',
      accept: 'application/json',
      origin: 'https://leetcode.com',
      referer: 'https://leetcode.com/contest/',
      'user-agent': LEETCODE_USER_AGENT,
    });
    expect(LEETCODE_USER_AGENT).toMatch(/^Mozilla\/5\.0 \(compatible; contest-sync\//);
    expect(JSON.parse(String(mock.seen[0]!.body))).toEqual({ query: QUERY, variables: {} });
    expect(QUERY).toMatch(/allContests \{ title titleSlug startTime duration \}/);
  });

  it('is the reply the judge reads, dated by its Date header', async () => {
    mock.reply(200, body(), { ...JSON_HEADERS, date: httpDate(clock.start) });
    const reply = await fetch();
    expect(reply.contests).toHaveLength(97);
    expect(reply).toMatchObject({ invalid: 0, attempts: 1, dating: { madeAt: clock.start / 1000 } });
    expect(reply.contests.find((c) => c.phase === 'BEFORE')?.contestId).toBe('leetcode:weekly-contest-91');
  });

  it('is what leetcodeSource runs, attempts spaced as its settings say', async () => {
    mock.reply(503, 'busy');
    mock.reply(200, body(), JSON_HEADERS);
    const source = leetcodeSource({ ...seams(mock.agent, clock), baseUrl: ORIGIN });
    const reply = await source.fetchReply({ signal: new AbortController().signal, deadline: clock.start + 25_000 });
    expect(source.platform).toBe('leetcode');
    expect(reply.attempts).toBe(2);
    expect(mock.starts[1]! - mock.starts[0]!).toBeGreaterThanOrEqual(LEETCODE_SETTINGS.http.minSpacingMs);
  });
});

describe('refusals and hostile replies: a failed reply, never a wipe', () => {
  it('a 403 is retried within the deadline, then fails as a challenge', async () => {
    mock.reply(403, '<html><body>Forbidden</body></html>', { 'content-type': 'text/html' }).persist();
    const error = await failure(fetch({ deadline: clock.start + 8_000 }), LeetCodeError);
    expect(error).toMatchObject({ kind: 'deadline', platform: 'leetcode', name: 'LeetCodeError' });
    expect((error.cause as LeetCodeError).kind).toBe('challenge');
  });

  it('a 429 waits its Retry-After, then the reply is believed', async () => {
    mock.reply(429, '', { 'retry-after': '6' });
    mock.reply(200, body(), JSON_HEADERS);
    const reply = await fetch();
    expect(reply.attempts).toBe(2);
    expect(mock.starts[1]! - mock.starts[0]!).toBeGreaterThanOrEqual(6_000);
  });

  it('a Cloudflare challenge page is retried', async () => {
    mock.reply(200, CHALLENGE_PAGE, { 'content-type': 'text/html', 'cf-mitigated': 'challenge' });
    mock.reply(200, body(), JSON_HEADERS);
    expect((await fetch()).attempts).toBe(2);
  });

  it('GraphQL errors, an empty list, an empty body, truncated JSON: failed, not retried', async () => {
    mock.reply(200, JSON.stringify({ errors: [{ message: 'rate limited' }], data: null }), JSON_HEADERS);
    expect(await failure(fetch(), LeetCodeError)).toMatchObject({ kind: 'api-failed', attempts: 1 });
    mock.reply(200, JSON.stringify({ data: { allContests: [] } }), JSON_HEADERS);
    expect(await failure(fetch(), LeetCodeError)).toMatchObject({ kind: 'empty' });
    mock.reply(200, '', JSON_HEADERS);
    expect(await failure(fetch(), LeetCodeError)).toMatchObject({ kind: 'empty' });
    mock.reply(200, body().slice(0, 5_000), JSON_HEADERS);
    expect(await failure(fetch(), LeetCodeError)).toMatchObject({ kind: 'not-json' });
  });

  it('a 10 MB body is refused while it streams', async () => {
    mock.reply(200, Buffer.alloc(10 * 1024 * 1024, 0x20), JSON_HEADERS);
    expect(await failure(fetch({ maxBodyBytes: LEETCODE_SETTINGS.http.maxBodyBytes }), LeetCodeError)).toMatchObject({ kind: 'too-large' });
  });

  it('entries past their bounds are skipped and counted, their safe ids listed', async () => {
    const reply = leetcodeReply(clock.start);
    const first = reply.data.allContests[0]!;
    reply.data.allContests.push({ ...first, titleSlug: 'long-title', title: 't'.repeat(513) }, { ...first, titleSlug: 's'.repeat(65) });
    mock.reply(200, JSON.stringify(reply), JSON_HEADERS);
    const fetched = await fetch();
    expect(fetched.invalid).toBe(2);
    expect(fetched.listedIds.has('leetcode:long-title')).toBe(true);
    expect(fetched.listedIds.size).toBe(98);
  });

  it('abort: the signal ends the fetch in flight', async () => {
    const controller = new AbortController();
    mock.agent.get(ORIGIN).intercept({ path: GRAPHQL_PATH, method: 'POST' }).reply(200, body()).delay(5_000);
    setTimeout(() => controller.abort(new Error('lease lost')), 20);
    const error = await failure(fetch({ signal: controller.signal }), LeetCodeError);
    expect(error).toMatchObject({ kind: 'aborted', attempts: 1 });
  });
});
