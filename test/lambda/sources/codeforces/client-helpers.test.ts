/**
 * The pure helpers the client runs: backoff, Retry-After and error classification (the shared HTTP
 * layer's, as Codeforces sees them), reply classification (the client's).
 */
import { describe, expect, it } from 'vitest';
import {
  classifyReply,
  LABEL,
  parseContestList,
  MAX_LIST_ENTRIES,
  type ReplyOutcome,
} from '../../../../lambda/sources/codeforces/client.js';
import {
  BACKOFF_CAP_MS,
  backoffDelay,
  classifyRequestError,
  nextWaitMs,
  parseRetryAfter,
  snippet,
  type RawReply,
} from '../../../../lambda/sources/http/index.js';
import { CodeforcesError } from '../../../../lambda/sources/codeforces/errors.js';

/** The time replies are classified at (epoch seconds): `contest` starts after it. */
const NOW_S = 1_750_000_000;
const at = { nowSeconds: NOW_S };
const json = { 'content-type': 'application/json;charset=UTF-8' };
const contest = {
  id: 1,
  name: 'Round',
  type: 'CF',
  phase: 'BEFORE',
  frozen: false,
  durationSeconds: 7200,
  startTimeSeconds: 1_800_000_000,
};

function reply(statusCode: number, body: unknown, headers: RawReply['headers'] = json): RawReply {
  return { statusCode, headers, body: typeof body === 'string' ? body : JSON.stringify(body) };
}

function problem(outcome: ReplyOutcome) {
  if (outcome.ok) throw new Error('expected a problem');
  return outcome.problem;
}

describe('backoffDelay (full jitter)', () => {
  it('is uniform in [0, base·2^(attempt−1)) and capped', () => {
    expect(backoffDelay(1, () => 0)).toBe(0);
    expect(backoffDelay(1, () => 0.5)).toBe(500);
    expect(backoffDelay(2, () => 0.5)).toBe(1_000);
    expect(backoffDelay(4, () => 0.999)).toBe(7_992);
    expect(backoffDelay(30, () => 0.999)).toBe(Math.floor(0.999 * BACKOFF_CAP_MS));
    expect(backoffDelay(3, () => 0.25, 100, 250)).toBe(62);
  });

  it('stays within its bounds for any random value', () => {
    for (let attempt = 1; attempt <= 10; attempt++) {
      for (const r of [0, 0.1, 0.5, 0.9, 0.999999]) {
        const delay = backoffDelay(attempt, () => r);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThan(Math.min(BACKOFF_CAP_MS, 1_000 * 2 ** (attempt - 1)));
      }
    }
  });
});

describe('nextWaitMs', () => {
  it('never lets attempt starts come closer than minSpacingMs', () => {
    expect(nextWaitMs({ attempts: 1, sinceLastStartMs: 0, minSpacingMs: 2_000, random: () => 0 })).toBe(2_000);
    expect(nextWaitMs({ attempts: 1, sinceLastStartMs: 1_500, minSpacingMs: 2_000, random: () => 0 })).toBe(500);
    expect(nextWaitMs({ attempts: 1, sinceLastStartMs: 9_000, minSpacingMs: 2_000, random: () => 0 })).toBe(0);
  });

  it('takes the larger of the jittered backoff, the spacing and Retry-After', () => {
    expect(nextWaitMs({ attempts: 4, sinceLastStartMs: 0, minSpacingMs: 2_000, random: () => 0.999 })).toBe(7_992);
    expect(nextWaitMs({ attempts: 1, sinceLastStartMs: 0, minSpacingMs: 2_000, random: () => 0, retryAfterMs: 5_000 })).toBe(5_000);
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('3', 0)).toBe(3_000);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(10_000);
    expect(parseRetryAfter(undefined, 0)).toBeUndefined();
    expect(parseRetryAfter('soon', 0)).toBeUndefined();
  });
});

describe('snippet', () => {
  it('keeps the first 80 bytes with whitespace collapsed', () => {
    expect(snippet('x'.repeat(200))).toBe('x'.repeat(80));
    expect(snippet('<html>\n  <head>')).toBe('<html> <head>');
  });
});

describe('classifyReply', () => {
  it('returns the scheduled contests of an OK reply', () => {
    const outcome = classifyReply(reply(200, { status: 'OK', result: [contest] }), at);
    expect(outcome).toEqual({ ok: true, value: { contests: [contest], invalid: 0, unscheduled: 0, listedIds: [1] } });
  });

  it.each([
    ['403 challenge', reply(403, '<!DOCTYPE html><title>Just a moment...</title>', { 'content-type': 'text/html' }), 'challenge', true],
    ['HTML with 200', reply(200, '<html><body>Codeforces is temporarily unavailable</body></html>', {}), 'challenge', true],
    ['HTML with 503', reply(503, '<html>Under attack</html>', { 'content-type': 'text/html; charset=UTF-8' }), 'challenge', true],
    ['HTTP 429', reply(429, 'slow down', {}), 'rate-limited', true],
    ['HTTP 500', reply(500, 'oops', {}), 'http', true],
    ['HTTP 502 JSON', reply(502, { error: 'bad gateway' }), 'http', true],
    ['Call limit exceeded', reply(400, { status: 'FAILED', comment: 'Call limit exceeded' }), 'rate-limited', true],
    ['other FAILED', reply(400, { status: 'FAILED', comment: 'contest.list: Internal error' }), 'api-failed', false],
    ['HTTP 404 text', reply(404, 'Not Found', {}), 'http', false],
    ['HTTP 400 non-envelope JSON', reply(400, { message: 'bad' }), 'http', false],
    ['HTTP 201 with OK envelope', reply(201, { status: 'OK', result: [contest] }), 'http', false],
    ['truncated JSON', reply(200, '{"status":"OK","result":[{"id":1,'), 'not-json', false],
    ['JSON but no envelope', reply(200, [1, 2, 3]), 'bad-shape', false],
    ['result null', reply(200, { status: 'OK', result: null }), 'bad-shape', false],
    ['empty result', reply(200, { status: 'OK', result: [] }), 'empty', false],
  ] as const)('%s → %s (retryable: %s)', (_name, raw, kind, retryable) => {
    const p = problem(classifyReply(raw, at));
    expect(p.kind).toBe(kind);
    expect(p.retryable).toBe(retryable);
  });

  it("reads an HTTP-date Retry-After against the injected clock, not the machine's", () => {
    const nowMs = Date.parse('2030-01-01T00:00:00Z');
    const dated = reply(503, 'busy', { 'retry-after': 'Tue, 01 Jan 2030 00:00:30 GMT' });
    expect(problem(classifyReply(dated, { nowSeconds: nowMs / 1000, nowMs })).retryAfterMs).toBe(30_000);
  });

  it('passes Retry-After on for retryable replies', () => {
    expect(problem(classifyReply(reply(503, 'busy', { 'retry-after': '4' }), at)).retryAfterMs).toBe(4_000);
    expect(
      problem(classifyReply(reply(400, { status: 'FAILED', comment: 'Call limit exceeded' }, { ...json, 'retry-after': '2' }), at))
        .retryAfterMs,
    ).toBe(2_000);
  });

  it('names the JSON parse error and the first bytes', () => {
    const p = problem(classifyReply(reply(200, '{"status":"OK","result":['), at));
    expect(p.message).toMatch(/^Codeforces reply is not JSON: .*JSON.* \(first 80 bytes: \{"status":"OK","result":\[\)$/);
  });
});

describe('parseContestList', () => {
  it('refuses a list of more entries than a real one could have before validating any (CPU and memory)', () => {
    const outcome = parseContestList(new Array(MAX_LIST_ENTRIES + 1).fill(0), at);
    expect(outcome).toMatchObject({ ok: false, problem: { kind: 'too-large', retryable: false } });
    expect(problem(outcome).message).toBe(
      `Codeforces reply refused: its list has ${MAX_LIST_ENTRIES + 1} entries, above the ${MAX_LIST_ENTRIES}-entry cap`,
    );
  });

  it('skips invalid entries up to the share and fails above it', () => {
    const valid = Array.from({ length: 9 }, (_, i) => ({ ...contest, id: i + 1 }));
    const underThreshold = parseContestList([...valid, { ...contest, id: 99, type: 'TEAM' }], at);
    expect(underThreshold).toMatchObject({ ok: true, value: { invalid: 1, unscheduled: 0 } });

    const overThreshold = problem(parseContestList([...valid, { ...contest, id: 99, type: 'TEAM' }, { id: -3 }], at));
    expect(overThreshold.kind).toBe('invalid-contests');
    expect(overThreshold.message).toMatch(/^2 of 11 contests failed validation \(e\.g\. contest 99: type: Invalid option/);
  });

  it('lists the ids of every entry, valid, invalid or unscheduled, so skipped ones are not taken for cancelled', () => {
    const { startTimeSeconds: _s, ...unscheduled } = contest;
    const entries = [
      contest,
      { ...unscheduled, id: 2 },
      ...Array.from({ length: 20 }, (_, i) => ({ ...contest, id: 10 + i })),
      { ...contest, id: 3, phase: 'WAITING' },
      { id: '4', name: '' },
      { name: 'no id' },
      7,
    ];
    const outcome = parseContestList(entries, { ...at, maxInvalidShare: 0.2 });
    if (!outcome.ok) throw new Error(outcome.problem.message);
    expect(outcome.value.contests.map((c) => c.id)).toEqual([1, ...Array.from({ length: 20 }, (_, i) => 10 + i)]);
    expect(outcome.value.listedIds).toEqual([1, 2, ...Array.from({ length: 20 }, (_, i) => 10 + i), 3, 4]);
    expect(outcome.value).toMatchObject({ invalid: 4, unscheduled: 1 });
  });

  it('names entries without an id by position', () => {
    const p = problem(parseContestList([42], { ...at, maxInvalidShare: 0.1 }));
    expect(p.message).toBe('1 of 1 contests failed validation (e.g. entry #0: Invalid input: expected object, received number)');
  });

  it('counts entries inconsistent with now (FINISHED before the start, BEFORE long after the end) as invalid, and lists them', () => {
    const valid = Array.from({ length: 18 }, (_, i) => ({ ...contest, id: i + 1 }));
    const finishedEarly = { ...contest, id: 50, phase: 'FINISHED' };
    const staleBefore = { ...contest, id: 51, startTimeSeconds: NOW_S - 3 * 86_400 };
    const outcome = parseContestList([...valid, finishedEarly, staleBefore], { ...at, maxInvalidShare: 0.2 });
    if (!outcome.ok) throw new Error(outcome.problem.message);
    expect(outcome.value.invalid).toBe(2);
    expect(outcome.value.contests.map((c) => c.id)).not.toContain(50);
    expect(outcome.value.listedIds).toEqual(expect.arrayContaining([50, 51]));
    // The same entries are fine at a time they are consistent with.
    const later = parseContestList([finishedEarly], { nowSeconds: contest.startTimeSeconds + 7200 });
    expect(later.ok).toBe(true);
  });

  it('respects a custom maxInvalidShare', () => {
    expect(parseContestList([contest, { id: 0 }], { ...at, maxInvalidShare: 0.5 }).ok).toBe(true);
    expect(parseContestList([contest, { id: 0 }], { ...at, maxInvalidShare: 0.4 }).ok).toBe(false);
  });
});

describe('classifyRequestError', () => {
  it('tells timeouts from other network errors', () => {
    expect(classifyRequestError(new Error('aborted'), LABEL, 300)).toMatchObject({
      kind: 'timeout',
      retryable: true,
      message: 'Codeforces request timed out after 300 ms',
    });
    expect(
      classifyRequestError(Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' }), LABEL),
    ).toMatchObject({
      kind: 'timeout',
    });
    expect(
      classifyRequestError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }), LABEL),
    ).toMatchObject({
      kind: 'network',
      retryable: true,
      message: 'network error calling Codeforces: connect ECONNREFUSED 127.0.0.1:1',
    });
    expect(classifyRequestError(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }), LABEL).message).toBe(
      'network error calling Codeforces: other side closed (UND_ERR_SOCKET)',
    );
  });
});

describe('CodeforcesError', () => {
  it('carries kind, attempts, retryable and cause', () => {
    const cause = new Error('inner');
    const error = new CodeforcesError('http', 'HTTP 503 from Codeforces', { attempts: 3, retryable: true, cause });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('CodeforcesError');
    expect(error).toMatchObject({ kind: 'http', attempts: 3, retryable: true, cause, message: 'HTTP 503 from Codeforces' });
  });
});
