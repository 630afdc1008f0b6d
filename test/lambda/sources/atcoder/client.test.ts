/**
 * AtCoder's source end to end through undici's MockAgent: the recorded page becomes the reply the
 * judge reads, and every hostile reply — markup changed, empty, truncated, 403, a challenge page,
 * 10 MB, rows past their bounds, times without an offset, 5xx, abort — is a counted skip or a
 * failed reply (AtCoderError), never an empty list.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { ATCODER_SETTINGS, atcoderSource, CONTESTS_PATH, fetchAtCoderReply } from '../../../../lambda/sources/atcoder/index.js';
import { AtCoderError } from '../../../../lambda/sources/errors.js';
import { USER_AGENT } from '../../../../lambda/sources/http/index.js';
import { atcoderPage, CHALLENGE_PAGE } from '../../../../local/source-fixtures.js';

import { failure, fakeClock, httpDate, mockPlatform, seams, type FakeClock } from '../doubles.js';
import { page, row } from './pages.js';

const ORIGIN = 'https://atcoder.test';
const HTML = { 'content-type': 'text/html; charset=utf-8' };

let clock: FakeClock;
let mock: ReturnType<typeof mockPlatform>;

beforeEach(() => {
  clock = fakeClock();
  mock = mockPlatform(ORIGIN, CONTESTS_PATH, 'GET', clock);
});

const fetch = (overrides: { signal?: AbortSignal; deadline?: number } = {}) =>
  fetchAtCoderReply({ ...seams(mock.agent, clock), baseUrl: `${ORIGIN}/`, ...overrides });
const recent = Array.from({ length: 20 }, (_, i) => row({ id: `abc${300 + i}`, time: '2025-05-01 21:00:00+0900' }));

describe('the recorded page', () => {
  it('is the reply the judge reads: qualified ids, every row listed, dated by Date minus Age', async () => {
    mock.reply(200, atcoderPage(clock.start), { ...HTML, date: httpDate(clock.start), age: '12' });
    const reply = await fetch();
    expect(reply.contests).toHaveLength(56);
    expect(reply.contests.filter((c) => c.phase === 'BEFORE').every((c) => c.startTimeSeconds > clock.start / 1000)).toBe(true);
    expect(reply.contests.every((c) => c.contestId === `atcoder:${c.platformId}`)).toBe(true);
    expect(reply.listedIds.size).toBe(57);
    expect(reply).toMatchObject({ invalid: 1, attempts: 1, latencyMs: 0, dating: { madeAt: clock.start / 1000 - 12 } });
  });

  it('asks for the English page as the product, accepting HTML and gzip', async () => {
    mock.reply(200, atcoderPage(clock.start), HTML);
    await fetch();
    expect(mock.seen[0]!.headers).toMatchObject({
      'user-agent': USER_AGENT,
      accept: 'text/html,application/xhtml+xml',
      'accept-encoding': 'gzip',
    });
    expect(CONTESTS_PATH).toBe('/contests/?lang=en');
  });

  it('is what atcoderSource runs, with the settings bounds', async () => {
    mock.reply(200, 'x'.repeat(ATCODER_SETTINGS.http.maxBodyBytes + 1), HTML);
    const source = atcoderSource({ ...seams(mock.agent, clock), baseUrl: ORIGIN });
    expect(source.platform).toBe('atcoder');
    const error = await failure(source.fetchReply({ signal: new AbortController().signal, deadline: clock.start + 25_000 }), AtCoderError);
    expect(error.kind).toBe('too-large');
  });
});

describe('hostile replies', () => {
  it('markup changed (tables renamed): a failed reply, not retried', async () => {
    const renamed = page(
      { upcoming: [row()], recent },
      { upcoming: 'contest-upcoming', action: 'contest-action', recent: 'contest-recent' },
    );
    mock.reply(200, renamed, HTML);
    const error = await failure(fetch(), AtCoderError);
    expect(error).toMatchObject({ kind: 'markup', attempts: 1, retryable: false, platform: 'atcoder', name: 'AtCoderError' });
    expect(error.message).toMatch(/lacks the tables it always has: #contest-table-upcoming/);
  });

  it('an empty body and a truncated page are failed replies', async () => {
    mock.reply(200, '', HTML);
    expect(await failure(fetch(), AtCoderError)).toMatchObject({ kind: 'empty' });
    const whole = atcoderPage(clock.start);
    mock.reply(200, whole.slice(0, whole.indexOf('contest-table-recent') + 2_000), HTML);
    expect(await failure(fetch(), AtCoderError)).toMatchObject({ kind: 'markup', message: expect.stringMatching(/truncated/) });
  });

  it('a 403 is retried within the deadline, then fails as a challenge', async () => {
    mock.reply(403, 'Forbidden', { 'content-type': 'text/plain' }).persist();
    const error = await failure(fetch({ deadline: clock.start + 8_000 }), AtCoderError);
    expect(error.kind).toBe('deadline');
    expect(error.attempts).toBeGreaterThan(1);
    expect((error.cause as AtCoderError).kind).toBe('challenge');
  });

  it('a Cloudflare challenge page, then the page: retried and believed', async () => {
    mock.reply(503, CHALLENGE_PAGE, { ...HTML, 'cf-mitigated': 'challenge' });
    mock.reply(200, atcoderPage(clock.start), HTML);
    const reply = await fetch();
    expect(reply.attempts).toBe(2);
    expect(mock.starts[1]! - mock.starts[0]!).toBeGreaterThanOrEqual(2_000);
  });

  it('a 10 MB body is refused while it streams, unretried', async () => {
    mock.reply(200, Buffer.alloc(10 * 1024 * 1024, 0x20), HTML);
    const error = await failure(
      fetchAtCoderReply({ ...seams(mock.agent, clock), baseUrl: ORIGIN, maxBodyBytes: ATCODER_SETTINGS.http.maxBodyBytes }),
      AtCoderError,
    );
    expect(error).toMatchObject({ kind: 'too-large', attempts: 1 });
  });

  it('rows past their bounds and times without an offset are skipped and counted, their safe ids listed', async () => {
    const upcoming = [
      row({ id: 'abc400', name: 'n'.repeat(512) }),
      row({ id: 'abc401', name: 'n'.repeat(513) }),
      row({ id: 'a'.repeat(64) }),
      row({ id: 'a'.repeat(65) }),
      row({ id: 'abc402', time: '2025-06-07 21:00:00' }),
    ];
    mock.reply(
      200,
      page({ upcoming, recent: [...recent, ...recent.map((_, i) => row({ id: `arc${100 + i}`, time: '2025-05-02 21:00:00+0900' }))] }),
      HTML,
    );
    const reply = await fetch();
    expect(reply.invalid).toBe(3);
    const upcomingIds = reply.contests.filter((c) => c.phase === 'BEFORE').map((c) => c.platformId);
    expect(upcomingIds).toEqual(['abc400', 'a'.repeat(64)]);
    expect(reply.listedIds.has('atcoder:abc401')).toBe(true);
    expect(reply.listedIds.has('atcoder:abc402')).toBe(true);
    expect([...reply.listedIds].some((id) => id.endsWith('a'.repeat(65)))).toBe(false);
  });

  it('5xx then success: retried', async () => {
    mock.reply(500, 'Internal Server Error');
    mock.reply(502, 'Bad Gateway');
    mock.reply(200, atcoderPage(clock.start), HTML);
    expect((await fetch()).attempts).toBe(3);
  });

  it('abort: the signal ends the fetch', async () => {
    mock.reply(503, 'busy');
    const controller = new AbortController();
    const aborting = { ...seams(mock.agent, clock), sleep: async () => controller.abort(new Error('lease lost')) };
    const error = await failure(fetchAtCoderReply({ ...aborting, baseUrl: ORIGIN, signal: controller.signal }), AtCoderError);
    expect(error).toMatchObject({ kind: 'aborted', attempts: 1 });
  });
});
