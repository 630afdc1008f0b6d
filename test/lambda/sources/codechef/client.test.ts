/**
 * CodeChef's source end to end through undici's MockAgent: the list becomes the reply the judge
 * reads, and every hostile reply is a counted skip or a failed reply (CodeChefError).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { CODECHEF_SETTINGS, codechefSource, CONTESTS_PATH, fetchCodeChefReply } from '../../../../lambda/sources/codechef/index.js';
import { CodeChefError } from '../../../../lambda/sources/errors.js';
import { USER_AGENT } from '../../../../lambda/sources/http/index.js';
import { CHALLENGE_PAGE, codechefReply } from '../../../../local/source-fixtures.js';
import { failure, fakeClock, httpDate, mockPlatform, seams, type FakeClock } from '../doubles.js';

const ORIGIN = 'https://codechef.test';
const JSON_HEADERS = { 'content-type': 'application/json' };

let clock: FakeClock;
let mock: ReturnType<typeof mockPlatform>;
let list: ReturnType<typeof codechefReply>;

beforeEach(() => {
  clock = fakeClock();
  mock = mockPlatform(ORIGIN, CONTESTS_PATH, 'GET', clock);
  list = codechefReply(clock.start);
});

const fetch = (overrides: { signal?: AbortSignal; deadline?: number; maxBodyBytes?: number } = {}) =>
  fetchCodeChefReply({ ...seams(mock.agent, clock), baseUrl: ORIGIN, ...overrides });

describe('the list', () => {
  it('is the reply the judge reads, dated by its Date header', async () => {
    mock.reply(200, JSON.stringify(list), { ...JSON_HEADERS, date: httpDate(clock.start, 2) });
    const reply = await fetch();
    expect(reply.contests).toHaveLength(13);
    expect(reply.listedIds.size).toBe(15);
    expect(reply).toMatchObject({ invalid: 0, attempts: 1, dating: { madeAt: clock.start / 1000 - 2 } });
    expect(reply.contests.filter((c) => c.phase === 'BEFORE').every((c) => c.startTimeSeconds > clock.start / 1000)).toBe(true);
  });

  it('is asked for at the documented path, as the product', async () => {
    mock.reply(200, JSON.stringify(list), JSON_HEADERS);
    await fetch();
    expect(CONTESTS_PATH).toBe('/api/list/contests/all?sort_by=START&sorting_order=asc&offset=0&mode=all');
    expect(mock.seen[0]!.headers).toMatchObject({ 'user-agent': USER_AGENT, accept: 'application/json' });
  });

  it('is what codechefSource runs, with its settings (past contests of the last 7 days)', async () => {
    mock.reply(200, JSON.stringify(list), JSON_HEADERS);
    const source = codechefSource({ ...seams(mock.agent, clock), baseUrl: ORIGIN }, { ...CODECHEF_SETTINGS, recentPastSeconds: 3600 });
    const reply = await source.fetchReply({ signal: new AbortController().signal, deadline: clock.start + 25_000 });
    expect(source.platform).toBe('codechef');
    expect(reply.contests.some((c) => c.phase === 'FINISHED')).toBe(false);
  });
});

describe('hostile replies', () => {
  it('status not success: a failed reply, not retried', async () => {
    mock.reply(200, JSON.stringify({ status: 'failure', message: 'Invalid request' }), JSON_HEADERS);
    const error = await failure(fetch(), CodeChefError);
    expect(error).toMatchObject({ kind: 'api-failed', attempts: 1, retryable: false, platform: 'codechef' });
    expect(error.message).toBe('CodeChef said status "failure": Invalid request');
  });

  it('an empty body and a truncated list are failed replies', async () => {
    mock.reply(200, '', JSON_HEADERS);
    expect(await failure(fetch(), CodeChefError)).toMatchObject({ kind: 'empty' });
    mock.reply(200, JSON.stringify(list).slice(0, 1_000), JSON_HEADERS);
    expect(await failure(fetch(), CodeChefError)).toMatchObject({ kind: 'not-json' });
  });

  it('a 403 and a challenge page are retried, then the list is believed', async () => {
    mock.reply(403, 'Forbidden');
    mock.reply(503, CHALLENGE_PAGE, { 'content-type': 'text/html', 'cf-mitigated': 'challenge' });
    mock.reply(200, JSON.stringify(list), JSON_HEADERS);
    expect((await fetch()).attempts).toBe(3);
  });

  it('a 10 MB body is refused while it streams', async () => {
    mock.reply(200, Buffer.alloc(10 * 1024 * 1024, 0x20), JSON_HEADERS);
    const error = await failure(fetch({ maxBodyBytes: CODECHEF_SETTINGS.http.maxBodyBytes }), CodeChefError);
    expect(error).toMatchObject({ kind: 'too-large', attempts: 1 });
  });

  it('entries past their bounds and starts without an offset are skipped and counted', async () => {
    const future = list.future_contests;
    const odd = [
      { ...future[0], contest_code: 'LONGNAME', contest_name: 'n'.repeat(513) },
      { ...future[0], contest_code: 'C'.repeat(65) },
      { ...future[0], contest_code: 'NOZONE', contest_start_date_iso: '2025-06-08T20:00:00' },
    ];
    const padding = Array.from({ length: 30 }, (_, i) => ({ ...future[0], contest_code: `START9${i}` }));
    mock.reply(200, JSON.stringify({ ...list, future_contests: [...future, ...odd, ...padding] }), JSON_HEADERS);
    const reply = await fetch();
    expect(reply.invalid).toBe(3);
    expect(reply.listedIds.has('codechef:LONGNAME')).toBe(true);
    expect(reply.listedIds.has('codechef:NOZONE')).toBe(true);
    expect([...reply.listedIds].some((id) => id.includes('C'.repeat(65)))).toBe(false);
  });

  it('5xx then success: retried', async () => {
    mock.reply(502, 'Bad Gateway');
    mock.reply(200, JSON.stringify(list), JSON_HEADERS);
    expect((await fetch()).attempts).toBe(2);
  });

  it('abort: the signal ends the fetch', async () => {
    const error = await failure(fetch({ signal: AbortSignal.abort(new Error('lease lost')) }), CodeChefError);
    expect(error).toMatchObject({ kind: 'aborted', attempts: 0 });
  });
});
