/** The shared HTTP layer's pure rules: backoff, Retry-After, the status verdicts, challenges, dating. */
import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  classifyRequestError,
  isChallenge,
  jsonApiBody,
  jsonBody,
  nextWaitMs,
  parseRetryAfter,
  replyMadeAt,
  retryAfter,
  snippet,
  statusProblem,
  unexpectedStatus,
  type RawReply,
} from '../../../../lambda/sources/http/index.js';

const NOW_MS = Date.UTC(2025, 5, 1, 12);
const reply = (statusCode: number, body = '', headers: RawReply['headers'] = {}): RawReply => ({ statusCode, body, headers });
const CHALLENGE = '<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>Checking your browser</body></html>';

describe('backoff', () => {
  it('is full jitter under an exponential ceiling, capped', () => {
    expect(backoffDelay(1, () => 0.999)).toBe(999);
    expect(backoffDelay(3, () => 0.5)).toBe(2000);
    expect(backoffDelay(30, () => 0.999)).toBe(15_984);
    expect(backoffDelay(4, () => 0)).toBe(0);
  });

  it('keeps attempt starts apart and honours Retry-After', () => {
    expect(nextWaitMs({ attempts: 1, sinceLastStartMs: 500, minSpacingMs: 2000, random: () => 0 })).toBe(1500);
    expect(nextWaitMs({ attempts: 1, sinceLastStartMs: 5000, minSpacingMs: 2000, random: () => 0 })).toBe(0);
    expect(nextWaitMs({ attempts: 1, sinceLastStartMs: 0, minSpacingMs: 0, random: () => 0, retryAfterMs: 7000 })).toBe(7000);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('3', NOW_MS)).toBe(3000);
    expect(parseRetryAfter(new Date(NOW_MS + 5000).toUTCString(), NOW_MS)).toBe(5000);
    expect(parseRetryAfter(new Date(NOW_MS - 5000).toUTCString(), NOW_MS)).toBe(0);
    expect(parseRetryAfter('soon', NOW_MS)).toBeUndefined();
    expect(parseRetryAfter(undefined, NOW_MS)).toBeUndefined();
  });
});

describe('statusProblem', () => {
  it('passes a 2xx that is no challenge', () => {
    expect(statusProblem(reply(200, '{}'), 'X', NOW_MS)).toBeUndefined();
    expect(statusProblem(reply(204), 'X', NOW_MS)).toBeUndefined();
  });

  it.each([
    [403, 'plain', 'challenge', true],
    [429, 'slow down', 'rate-limited', true],
    [500, 'oops', 'http', true],
    [503, 'down', 'http', true],
    [404, 'nope', 'http', false],
    [400, 'bad', 'http', false],
    [301, '', 'http', false],
  ])('HTTP %i is %s → %s, retryable %s', (status, body, kind, retryable) => {
    expect(statusProblem(reply(status, body), 'LeetCode', NOW_MS)).toMatchObject({ kind, retryable });
  });

  it('takes a challenge page for a challenge whatever its status, and keeps Retry-After', () => {
    expect(statusProblem(reply(503, CHALLENGE), 'AtCoder', NOW_MS)).toMatchObject({ kind: 'challenge', retryable: true });
    expect(statusProblem(reply(200, CHALLENGE), 'AtCoder', NOW_MS)).toMatchObject({ kind: 'challenge', retryable: true });
    expect(statusProblem(reply(429, '', { 'retry-after': '9' }), 'AtCoder', NOW_MS)).toMatchObject({ retryAfterMs: 9000 });
  });

  it('names the platform and quotes at most 80 bytes of the body', () => {
    const problem = statusProblem(reply(500, 'x'.repeat(10_000)), 'CodeChef', NOW_MS)!;
    expect(problem.message).toMatch(/^HTTP 500 from CodeChef/);
    expect(problem.message.length).toBeLessThan(140);
  });
});

describe('isChallenge', () => {
  it("knows Cloudflare's challenge by its header, title or script", () => {
    expect(isChallenge(reply(403, '', { 'cf-mitigated': 'challenge' }))).toBe(true);
    expect(isChallenge(reply(403, '<html><head><title>Attention Required! | Cloudflare</title>'))).toBe(true);
    expect(isChallenge(reply(200, '<html><script>window._cf_chl_opt={cvId:"3"}</script>'))).toBe(true);
  });

  it('does not take an ordinary page with the script Cloudflare injects for one', () => {
    const page =
      '<html><head><title>Contests - AtCoder</title></head><body><script src="/cdn-cgi/challenge-platform/scripts/jsd/main.js"></script></body></html>';
    expect(isChallenge(reply(200, page))).toBe(false);
  });
});

describe('jsonBody', () => {
  it('parses JSON, and refuses an empty body, an HTML page and text', () => {
    expect(jsonBody(reply(200, '{"a":1}'), 'X')).toEqual({ ok: true, value: { a: 1 } });
    expect(jsonBody(reply(200, '  '), 'X')).toMatchObject({ ok: false, problem: { kind: 'empty' } });
    expect(jsonBody(reply(200, '<html>login</html>'), 'X')).toMatchObject({ ok: false, problem: { kind: 'challenge', retryable: true } });
    expect(jsonBody(reply(200, '{}', { 'content-type': 'text/html' }), 'X')).toMatchObject({ ok: false, problem: { kind: 'challenge' } });
    expect(jsonBody(reply(200, '{"status":"succ'), 'X')).toMatchObject({ ok: false, problem: { kind: 'not-json', retryable: false } });
  });
});

describe('jsonApiBody: an API that answers its failures as JSON whatever the status', () => {
  const JSON_TYPE = { 'content-type': 'application/json' };

  it('reads the JSON of a 4xx, which a 2xx-only reading would refuse unread', () => {
    const failure = reply(400, '{"status":"FAILED","comment":"no"}', JSON_TYPE);
    expect(jsonApiBody(failure, 'X', NOW_MS)).toEqual({ ok: true, value: { status: 'FAILED', comment: 'no' } });
    expect(statusProblem(failure, 'X', NOW_MS)).toMatchObject({ kind: 'http', retryable: false });
  });

  it('takes an HTML page at any status, a 403 or a challenge header for a challenge, retried', () => {
    for (const status of [200, 404, 503]) {
      expect(jsonApiBody(reply(status, '<html>busy</html>'), 'X', NOW_MS)).toMatchObject({
        ok: false,
        problem: { kind: 'challenge', retryable: true },
      });
    }
    const refused = jsonApiBody(reply(403, '{}', JSON_TYPE), 'X', NOW_MS);
    expect(refused).toMatchObject({ ok: false, problem: { kind: 'challenge', retryable: true } });
    if (!refused.ok)
      expect(refused.problem.message).toBe('X replied with a non-API reply (HTTP 403, likely a Cloudflare challenge; first 80 bytes: {})');
    expect(jsonApiBody(reply(200, '{}', { 'cf-mitigated': 'challenge' }), 'X', NOW_MS)).toMatchObject({
      ok: false,
      problem: { kind: 'challenge' },
    });
  });

  it('retries a 429 and a 5xx after their Retry-After, as statusProblem does', () => {
    expect(jsonApiBody(reply(429, '', { 'retry-after': '5' }), 'X', NOW_MS)).toMatchObject({
      ok: false,
      problem: { kind: 'rate-limited', retryable: true, retryAfterMs: 5000 },
    });
    expect(jsonApiBody(reply(502, '{"error":"bad gateway"}', JSON_TYPE), 'X', NOW_MS)).toMatchObject({
      ok: false,
      problem: { kind: 'http', retryable: true },
    });
  });

  it('refuses a body that is not JSON: not-json from a 2xx, the status otherwise', () => {
    expect(jsonApiBody(reply(200, '{"a":'), 'X', NOW_MS)).toMatchObject({ ok: false, problem: { kind: 'not-json', retryable: false } });
    const notFound = jsonApiBody(reply(404, 'Not Found'), 'X', NOW_MS);
    expect(notFound).toMatchObject({ ok: false, problem: { kind: 'http', retryable: false } });
    if (!notFound.ok) expect(notFound.problem.message).toBe('HTTP 404 from X (first 80 bytes: Not Found)');
  });
});

describe('unexpectedStatus and retryAfter', () => {
  it('names the status, the platform, a note and the first bytes; not retried', () => {
    expect(unexpectedStatus(reply(201, '{"status":"OK"}'), 'X', ' with status OK')).toEqual({
      kind: 'http',
      message: 'HTTP 201 from X with status OK (first 80 bytes: {"status":"OK"})',
      retryable: false,
    });
  });

  it('reads Retry-After against the injected clock, and is nothing without one', () => {
    const at = new Date(NOW_MS + 30_000).toUTCString();
    expect(retryAfter(reply(400, '', { 'retry-after': at }), NOW_MS)).toEqual({ retryAfterMs: 30_000 });
    expect(retryAfter(reply(400, '', { 'retry-after': '2' }), NOW_MS)).toEqual({ retryAfterMs: 2000 });
    expect(retryAfter(reply(400), NOW_MS)).toEqual({});
  });
});

describe('classifyRequestError', () => {
  it('tells timeouts from network errors; both are retried', () => {
    expect(classifyRequestError(Object.assign(new Error('t'), { code: 'UND_ERR_HEADERS_TIMEOUT' }), 'X')).toMatchObject({
      kind: 'timeout',
      retryable: true,
    });
    expect(classifyRequestError(new Error('aborted'), 'X', 500).message).toMatch(/timed out after 500 ms/);
    const reset = classifyRequestError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), 'AtCoder');
    expect(reset).toMatchObject({ kind: 'network', retryable: true });
    expect(reset.message).toBe('network error calling AtCoder: socket hang up (ECONNRESET)');
  });
});

describe('replyMadeAt: Date minus Age', () => {
  const date = new Date(NOW_MS).toUTCString();
  it('is the Date header, less the Age a cache added', () => {
    expect(replyMadeAt({ date })).toBe(NOW_MS / 1000);
    expect(replyMadeAt({ date, age: '120' })).toBe(NOW_MS / 1000 - 120);
    expect(replyMadeAt({ date, age: ' 0 ' })).toBe(NOW_MS / 1000);
  });

  it('is undefined without a Date, with a bad Date, a bad Age or a date out of bounds', () => {
    expect(replyMadeAt({})).toBeUndefined();
    expect(replyMadeAt({ date: 'yesterday' })).toBeUndefined();
    expect(replyMadeAt({ date, age: '-5' })).toBeUndefined();
    expect(replyMadeAt({ date, age: '10, 20' })).toBeUndefined();
    expect(replyMadeAt({ date, age: ['10', '20'] })).toBeUndefined();
    expect(replyMadeAt({ date: 'Thu, 01 Jan 1970 00:00:00 GMT' })).toBeUndefined();
  });
});

describe('snippet', () => {
  it('is the first bytes, whitespace collapsed', () => {
    expect(snippet('  a\n\n b  ')).toBe('a b');
    expect(Buffer.byteLength(snippet('é'.repeat(500)))).toBeLessThanOrEqual(80);
  });
});
