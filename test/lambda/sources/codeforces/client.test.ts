import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fetchContests, MAX_BODY_BYTES, type FetchContestsOptions } from '../../../../lambda/sources/codeforces/client.js';
import { USER_AGENT } from '../../../../lambda/sources/http/index.js';
import { CodeforcesError } from '../../../../lambda/sources/codeforces/errors.js';
import { fakeClock } from '../doubles.js';
import { MAX_TEXT_BYTES, utf8Bytes } from '@contest-sync/scheduled-singleton';

const ORIGIN = 'https://codeforces.test';
const PATH = '/api/contest.list?gym=false';
const FIXTURE_TEXT = readFileSync(new URL('../../../fixtures/contest-list.json', import.meta.url), 'utf8');
const FIXTURE = JSON.parse(FIXTURE_TEXT) as { status: 'OK'; result: Record<string, unknown>[] };
const JSON_HEADERS = { 'content-type': 'application/json;charset=UTF-8' };
const HTML_CHALLENGE = '<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>Checking your browser</body></html>';

let agent: MockAgent;
let clock: ReturnType<typeof fakeClock>;
let starts: number[];

beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
  // The fixture's upcoming contests are upcoming at this time.
  clock = fakeClock(1_750_000_000_000);
  starts = [];
});

afterEach(async () => {
  await agent.close();
});

function pool() {
  return agent.get(ORIGIN);
}

function intercept() {
  return pool().intercept({ path: PATH, method: 'GET' });
}

/** Reply (once, unless .persist()) to a contest.list call, recording the (fake) time it started. */
function on(statusCode: number, body: string | Buffer, headers: Record<string, string> = {}) {
  return intercept().reply(() => {
    starts.push(clock.now());
    return { statusCode, data: body, responseOptions: { headers } };
  });
}

function options(overrides: Partial<FetchContestsOptions> = {}): FetchContestsOptions {
  return {
    baseUrl: `${ORIGIN}/api`,
    deadline: clock.start + 25_000,
    dispatcher: agent,
    now: clock.now,
    sleep: clock.sleep,
    random: () => 0,
    ...overrides,
  };
}

async function failure(promise: Promise<unknown>): Promise<CodeforcesError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(CodeforcesError);
    return error as CodeforcesError;
  }
  throw new Error('expected fetchContests to fail');
}

const ok = (result: unknown) => JSON.stringify({ status: 'OK', result });

describe('fetchContests: happy path', () => {
  it('returns the scheduled contests of a plain JSON reply, skipping the unscheduled one', async () => {
    let seenHeaders: Record<string, string> = {};
    pool()
      .intercept({ path: PATH, method: 'GET' })
      .reply((request) => {
        seenHeaders = request.headers as Record<string, string>;
        return { statusCode: 200, data: FIXTURE_TEXT, responseOptions: { headers: JSON_HEADERS } };
      });

    const result = await fetchContests(options());

    expect(result.contests).toHaveLength(59);
    expect(result.unscheduled).toBe(1);
    expect(result.invalid).toBe(0);
    expect(result.listedIds).toEqual(FIXTURE.result.map((c) => c.id));
    expect(result.attempts).toBe(1);
    expect(result.latencyMs).toBe(0);
    expect(result.contests[0]).toMatchObject({ id: 2126, name: 'Codeforces Round 1036 (Div. 1)', type: 'CF', phase: 'BEFORE' });
    expect(result.contests.every((c) => typeof c.startTimeSeconds === 'number')).toBe(true);
    expect(seenHeaders).toMatchObject({ accept: 'application/json', 'accept-encoding': 'gzip', 'user-agent': USER_AGENT });
    expect(USER_AGENT).toMatch(/contest-sync/);
  });

  it('decompresses a gzip reply', async () => {
    on(200, gzipSync(FIXTURE_TEXT), { ...JSON_HEADERS, 'content-encoding': 'gzip' });
    const result = await fetchContests(options());
    expect(result.contests).toHaveLength(59);
    expect(result.contests.map((c) => c.id)).toContain(2119);
  });

  it('accepts a base URL with a trailing slash and keeps unknown fields', async () => {
    const contest = { ...FIXTURE.result[1], newApiField: 'x' };
    on(200, ok([contest]), JSON_HEADERS);
    const result = await fetchContests(options({ baseUrl: `${ORIGIN}/api/` }));
    expect(result.contests).toEqual([contest]);
  });
});

describe('fetchContests: bad replies are refused with a clear message', () => {
  it('truncated JSON → not-json, not retried', async () => {
    on(200, FIXTURE_TEXT.slice(0, 500), JSON_HEADERS);
    const error = await failure(fetchContests(options()));
    expect(error.kind).toBe('not-json');
    expect(error.retryable).toBe(false);
    expect(error.attempts).toBe(1);
    expect(error.message).toMatch(/^Codeforces reply is not JSON: .+ \(first 80 bytes: \{"status":"OK","result":\[ \{"id":2127/);
  });

  it('corrupt gzip body → network error, retried', async () => {
    on(200, Buffer.from('definitely not gzip'), { ...JSON_HEADERS, 'content-encoding': 'gzip' });
    on(200, FIXTURE_TEXT, JSON_HEADERS);
    const result = await fetchContests(options());
    expect(result.attempts).toBe(2);
  });

  it('an HTML page with HTTP 200 → challenge, retried, and named in the deadline error', async () => {
    on(200, HTML_CHALLENGE, { 'content-type': 'text/html' }).persist();
    const error = await failure(fetchContests(options({ deadline: clock.start + 5_000 })));
    expect(error.kind).toBe('deadline');
    expect(error.attempts).toBe(3);
    const cause = error.cause as CodeforcesError;
    expect(cause.kind).toBe('challenge');
    expect(cause.message).toMatch(
      /HTML page \(HTTP 200, likely a Cloudflare challenge; first 80 bytes: <!DOCTYPE html><html><head><title>Just a moment/,
    );
  });

  it('wrong envelope → bad-shape', async () => {
    on(200, JSON.stringify({ contests: [] }), JSON_HEADERS);
    const error = await failure(fetchContests(options()));
    expect(error.kind).toBe('bad-shape');
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/^Codeforces reply is not a contest.list envelope: status: .*\(first 80 bytes: \{"contests":\[\]\}\)$/);
  });

  it('result not an array → bad-shape', async () => {
    on(200, JSON.stringify({ status: 'OK', result: { contests: [] } }), JSON_HEADERS);
    const error = await failure(fetchContests(options()));
    expect(error.kind).toBe('bad-shape');
    expect(error.message).toBe('Codeforces reply has status OK but result is object, not an array');
  });

  it('invalid fields in many contests → invalid-contests naming one example', async () => {
    const result = FIXTURE.result.slice(0, 40).map((c, i) => (i >= 1 && i <= 12 ? { ...c, phase: 'WAITING' } : c));
    on(200, ok(result), JSON_HEADERS);
    const error = await failure(fetchContests(options()));
    expect(error.kind).toBe('invalid-contests');
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(
      /^12 of 40 contests failed validation \(e\.g\. contest 2126: phase: Invalid option: expected one of "BEFORE"/,
    );
  });

  it('one odd entry under the threshold → skipped and counted', async () => {
    const result = [...FIXTURE.result];
    result[5] = { ...result[5], durationSeconds: -1 };
    result.push({ id: 'not-a-number', name: '' });
    on(200, ok(result), JSON_HEADERS);
    const outcome = await fetchContests(options());
    expect(outcome.invalid).toBe(2);
    expect(outcome.unscheduled).toBe(1);
    expect(outcome.contests).toHaveLength(58);
    expect(outcome.contests.map((c) => c.id)).not.toContain(FIXTURE.result[5]?.id);
    expect(outcome.listedIds).toHaveLength(FIXTURE.result.length);
    expect(outcome.listedIds).toContain(FIXTURE.result[5]?.id);
  });

  it('an empty list → empty, never wipes anything downstream', async () => {
    on(200, ok([]), JSON_HEADERS);
    const error = await failure(fetchContests(options()));
    expect(error.kind).toBe('empty');
    expect(error.retryable).toBe(false);
    expect(error.message).toBe('Codeforces returned an empty contest list');
  });

  it('a list with only unscheduled contests → empty', async () => {
    on(200, ok([FIXTURE.result[0]]), JSON_HEADERS);
    const error = await failure(fetchContests(options()));
    expect(error.kind).toBe('empty');
    expect(error.message).toMatch(/no scheduled contests \(1 unscheduled/);
  });

  it('HTTP 404 with a plain body → http, not retried', async () => {
    on(404, 'Not Found', { 'content-type': 'text/plain' });
    const error = await failure(fetchContests(options()));
    expect(error.kind).toBe('http');
    expect(error.retryable).toBe(false);
    expect(error.message).toBe('HTTP 404 from Codeforces (first 80 bytes: Not Found)');
  });
});

describe('fetchContests: FAILED replies', () => {
  it('"Call limit exceeded" (HTTP 400) is retried with attempt starts ≥ 2 s apart', async () => {
    const limited = JSON.stringify({ status: 'FAILED', comment: 'Call limit exceeded' });
    on(400, limited, JSON_HEADERS);
    on(400, limited, JSON_HEADERS);
    on(200, FIXTURE_TEXT, JSON_HEADERS);

    const result = await fetchContests(options());

    expect(result.attempts).toBe(3);
    expect(starts).toHaveLength(3);
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(2_000);
    expect(result.latencyMs).toBe(4_000);
  });

  it('another FAILED comment is surfaced and not retried', async () => {
    const comment = 'contest.list: Field gym should contain a boolean value';
    on(400, JSON.stringify({ status: 'FAILED', comment }), JSON_HEADERS);
    const error = await failure(fetchContests(options()));
    expect(error.kind).toBe('api-failed');
    expect(error.retryable).toBe(false);
    expect(error.attempts).toBe(1);
    expect(error.message).toBe(`Codeforces said FAILED: ${comment}`);
    expect(clock.sleeps).toEqual([]);
  });
});

describe('fetchContests: retries within the deadline', () => {
  it('HTTP 503 until the deadline → deadline error with the attempt count and the last error', async () => {
    intercept().reply(503, 'Service Unavailable').persist();
    // random≈1: backoff ceilings 1 s, 2 s, 4 s, 8 s, 16 s → attempts at 0, 2000, 4000, 7996, 15988; next would be 31972.
    const error = await failure(fetchContests(options({ random: () => 0.999 })));
    expect(error.kind).toBe('deadline');
    expect(error.retryable).toBe(false);
    expect(error.attempts).toBe(5);
    expect(error.message).toBe(
      'Codeforces: gave up after 5 attempts within 25000 ms: last error HTTP 503 from Codeforces (first 80 bytes: Service Unavailable)',
    );
    expect((error.cause as CodeforcesError).kind).toBe('http');
    expect(clock.now()).toBeLessThanOrEqual(clock.start + 25_000);
  });

  it('with zero jitter, attempts are exactly minSpacingMs apart', async () => {
    on(502, 'Bad Gateway').persist();
    const error = await failure(fetchContests(options({ deadline: clock.start + 10_000 })));
    expect(error.attempts).toBe(5);
    expect(starts.map((s) => s - clock.start)).toEqual([0, 2_000, 4_000, 6_000, 8_000]);
  });

  it('honours Retry-After', async () => {
    on(503, 'busy', { 'retry-after': '7' });
    on(200, FIXTURE_TEXT, JSON_HEADERS);
    const result = await fetchContests(options());
    expect(result.attempts).toBe(2);
    expect(starts[1]! - starts[0]!).toBe(7_000);
  });

  it('HTTP 403 challenge is retried', async () => {
    on(403, HTML_CHALLENGE, { 'content-type': 'text/html' });
    on(200, FIXTURE_TEXT, JSON_HEADERS);
    const result = await fetchContests(options());
    expect(result.attempts).toBe(2);
    expect(result.contests).toHaveLength(59);
  });

  it('a network error is retried', async () => {
    intercept().replyWithError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    on(200, FIXTURE_TEXT, JSON_HEADERS);
    const result = await fetchContests(options());
    expect(result.attempts).toBe(2);
  });

  it('a network error until the deadline names it as the last error', async () => {
    intercept().replyWithError(new Error('getaddrinfo ENOTFOUND codeforces.test')).persist();
    const error = await failure(fetchContests(options({ deadline: clock.start + 3_000 })));
    expect(error.kind).toBe('deadline');
    expect(error.attempts).toBe(2);
    expect(error.message).toMatch(/last error network error calling Codeforces: getaddrinfo ENOTFOUND codeforces.test$/);
  });

  it('a slow reply times out per attempt and is retried', async () => {
    intercept().reply(200, FIXTURE_TEXT, { headers: JSON_HEADERS }).delay(2_000);
    on(200, FIXTURE_TEXT, JSON_HEADERS);
    const result = await fetchContests(options({ attemptTimeoutMs: 50 }));
    expect(result.attempts).toBe(2);
  });

  it('the attempt timeout is capped by the time left to the deadline', async () => {
    intercept().reply(200, FIXTURE_TEXT, { headers: JSON_HEADERS }).delay(5_000);
    const began = Date.now();
    const error = await failure(fetchContests(options({ deadline: clock.start + 300 })));
    expect(Date.now() - began).toBeLessThan(2_000);
    expect(error.kind).toBe('deadline');
    expect(error.attempts).toBe(1);
    expect((error.cause as CodeforcesError).kind).toBe('timeout');
    expect((error.cause as CodeforcesError).message).toBe('Codeforces request timed out after 300 ms');
  });

  it('a deadline already past → deadline without any attempt', async () => {
    const error = await failure(fetchContests(options({ deadline: clock.start - 1 })));
    expect(error.kind).toBe('deadline');
    expect(error.attempts).toBe(0);
    expect(error.message).toMatch(/deadline reached before the first attempt/);
  });
});

describe('fetchContests: abort', () => {
  it('aborting mid-request ends at once with aborted, no retry', async () => {
    intercept().reply(200, FIXTURE_TEXT, { headers: JSON_HEADERS }).delay(10_000);
    const controller = new AbortController();
    const began = Date.now();
    setTimeout(() => controller.abort(new Error('lease lost')), 30);
    const error = await failure(fetchContests(options({ signal: controller.signal })));
    expect(Date.now() - began).toBeLessThan(1_000);
    expect(error.kind).toBe('aborted');
    expect(error.retryable).toBe(false);
    expect(error.attempts).toBe(1);
    expect(error.message).toBe('Codeforces fetch aborted: lease lost');
    expect((error.cause as Error).message).toBe('lease lost');
  });

  it('aborting mid-backoff ends the sleep at once, even if the injected sleep ignores the signal', async () => {
    on(503, 'Service Unavailable');
    const controller = new AbortController();
    let sleeping = 0;
    const neverEndingSleep = () => {
      sleeping += 1;
      setTimeout(() => controller.abort(new Error('lease lost')), 10);
      return new Promise<void>(() => {});
    };
    const error = await failure(fetchContests(options({ signal: controller.signal, sleep: neverEndingSleep })));
    expect(sleeping).toBe(1);
    expect(error.kind).toBe('aborted');
    expect(error.attempts).toBe(1);
  });

  it('the default sleep honours the signal', async () => {
    on(503, 'Service Unavailable');
    const controller = new AbortController();
    const began = Date.now();
    setTimeout(() => controller.abort(new Error('shutting down')), 50);
    const { sleep: _unused, ...rest } = options({
      signal: controller.signal,
      now: Date.now,
      deadline: Date.now() + 60_000,
      minSpacingMs: 30_000,
    });
    const error = await failure(fetchContests(rest));
    expect(Date.now() - began).toBeLessThan(1_000);
    expect(error.kind).toBe('aborted');
    expect(error.message).toBe('Codeforces fetch aborted: shutting down');
  });

  it('an already aborted signal makes no call', async () => {
    const controller = new AbortController();
    controller.abort(new Error('lease lost'));
    const error = await failure(fetchContests(options({ signal: controller.signal })));
    expect(error.kind).toBe('aborted');
    expect(error.attempts).toBe(0);
  });
});

describe('fetchContests: hostile replies (issue #8)', () => {
  const MB = 1024 * 1024;
  /** Every message in the error and its causes is at most 1 KB. */
  function expectSmall(error: CodeforcesError) {
    for (let e: unknown = error; e instanceof Error; e = e.cause) expect(utf8Bytes(e.message)).toBeLessThanOrEqual(MAX_TEXT_BYTES);
  }

  it('a 7 MB FAILED comment → api-failed with a message of at most 1 KB that says it was cut', async () => {
    on(400, JSON.stringify({ status: 'FAILED', comment: `contest.list: ${'x'.repeat(7 * MB)}` }), JSON_HEADERS);
    const error = await failure(fetchContests(options()));
    expect(error.kind).toBe('api-failed');
    expect(error.retryable).toBe(false);
    expectSmall(error);
    expect(error.message).toMatch(/^Codeforces said FAILED: contest\.list: x+… \[cut from \d+ bytes\]$/);
  });

  it('a huge "Call limit exceeded" comment is still retried, with small messages', async () => {
    on(400, JSON.stringify({ status: 'FAILED', comment: `Call limit exceeded ${'€'.repeat(MB)}` }), JSON_HEADERS).persist();
    const error = await failure(fetchContests(options({ deadline: clock.start + 5_000 })));
    expect(error.kind).toBe('deadline');
    expect((error.cause as CodeforcesError).kind).toBe('rate-limited');
    expectSmall(error);
  });

  it('a body above the cap (declared by Content-Length) → too-large, refused before parsing, not retried', async () => {
    on(200, Buffer.alloc(MAX_BODY_BYTES + 1, 0x20), { ...JSON_HEADERS, 'content-length': String(MAX_BODY_BYTES + 1) });
    const error = await failure(fetchContests(options()));
    expect(error.kind).toBe('too-large');
    expect(error.retryable).toBe(false);
    expect(error.attempts).toBe(1);
    expect(error.message).toBe(
      `Codeforces reply refused: its body declares ${MAX_BODY_BYTES + 1} bytes (Content-Length), above the ${MAX_BODY_BYTES}-byte cap`,
    );
  });

  it('a body above the cap without Content-Length → too-large while streaming', async () => {
    on(200, Buffer.alloc(MAX_BODY_BYTES + 1, 0x20), JSON_HEADERS);
    const error = await failure(fetchContests(options()));
    expect(error.kind).toBe('too-large');
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/went past 8388608 bytes while streaming/);
  });

  it('a small gzip body that inflates above the cap → too-large, not a retried network error', async () => {
    const bomb = gzipSync(Buffer.alloc(MAX_BODY_BYTES + MB, 0x20));
    expect(bomb.length).toBeLessThan(MB);
    on(200, bomb, { ...JSON_HEADERS, 'content-encoding': 'gzip' });
    const error = await failure(fetchContests(options()));
    expect(error.kind).toBe('too-large');
    expect(error.retryable).toBe(false);
    expect(error.attempts).toBe(1);
    expect(error.message).toMatch(/gunzips to more than 8388608 bytes/);
  });

  it('the cap is far above a real list: a 4 MB valid reply is accepted', async () => {
    const many = Array.from({ length: 25_000 }, (_, i) => ({ ...FIXTURE.result[5], id: 100_000 + i }));
    const body = ok(many);
    expect(body.length).toBeGreaterThan(4 * MB);
    on(200, gzipSync(body), { ...JSON_HEADERS, 'content-encoding': 'gzip' });
    const result = await fetchContests(options());
    expect(result.contests).toHaveLength(25_000);
  });

  it('huge bodies in HTML, 5xx, not-JSON and bad-shape replies give messages of at most 1 KB', async () => {
    const junk = 'y'.repeat(3 * MB);
    on(200, `<html>${junk}</html>`, { 'content-type': 'text/html' });
    on(503, junk);
    on(200, `{"status":"OK","result":[${junk}`, JSON_HEADERS);
    on(200, JSON.stringify({ [junk]: 1 }), JSON_HEADERS);
    const deadline = await failure(fetchContests(options({ deadline: clock.start + 3_000 })));
    expect(deadline.kind).toBe('deadline');
    expect(deadline.attempts).toBe(2);
    expectSmall(deadline);
    const notJson = await failure(fetchContests(options()));
    expect(notJson.kind).toBe('not-json');
    expectSmall(notJson);
    const badShape = await failure(fetchContests(options()));
    expect(badShape.kind).toBe('bad-shape');
    expectSmall(badShape);
  });

  it('a contest with a 500 KB name is skipped and counted invalid; the others are synced', async () => {
    const result = [...FIXTURE.result];
    result[3] = { ...result[3], name: 'n'.repeat(500 * 1024) };
    on(200, ok(result), JSON_HEADERS);
    const outcome = await fetchContests(options());
    expect(outcome.invalid).toBe(1);
    expect(outcome.contests).toHaveLength(58);
    expect(outcome.listedIds).toContain(FIXTURE.result[3]?.id);
  });

  it('many invalid entries with huge ids and names → invalid-contests with a message of at most 1 KB', async () => {
    const result = FIXTURE.result.slice(0, 10).map((c) => ({ ...c, id: 'i'.repeat(MB / 4), name: 'n'.repeat(MB / 4) }));
    on(200, ok(result), JSON_HEADERS);
    const error = await failure(fetchContests(options()));
    expect(error.kind).toBe('invalid-contests');
    expectSmall(error);
  });

  it('a list marking every upcoming contest FINISHED before its start is not believed: they are invalid, still listed', async () => {
    const nowS = clock.start / 1000;
    const upcoming = FIXTURE.result.filter((c) => typeof c.startTimeSeconds === 'number' && c.startTimeSeconds > nowS);
    expect(upcoming.length).toBeGreaterThanOrEqual(3);
    const lying = FIXTURE.result.map((c) => (upcoming.includes(c) ? { ...c, phase: 'FINISHED' } : c));
    on(200, ok(lying.slice(0, 30)), JSON_HEADERS);
    const error = await failure(fetchContests(options()));
    // More than a tenth of these 30 entries: the whole reply is refused.
    expect(error.kind).toBe('invalid-contests');
    expect(error.message).toMatch(/phase FINISHED but it starts in \d+ s/);

    // The same lie in a long list (like the real one, ~2000 entries): those entries are skipped.
    const old = Array.from({ length: 200 }, (_, i) => ({ ...FIXTURE.result[20], id: 1_000 + i }));
    on(200, ok([...lying, ...old]), JSON_HEADERS);
    const outcome = await fetchContests(options());
    expect(outcome.invalid).toBe(upcoming.length);
    expect(outcome.contests.map((c) => c.id)).not.toContain(upcoming[0]?.id);
    for (const c of upcoming) expect(outcome.listedIds).toContain(c.id);
  });
});
