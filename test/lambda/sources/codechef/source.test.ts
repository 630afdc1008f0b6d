/**
 * CodeChef's list (the synthetic fixture, in the shape its clients document) parses to its contests:
 * each division its own contest, placeholders listed but not scheduled, starts read with their
 * offset, durations in minutes, only recently finished past contests; and every envelope that is
 * not a successful list is a failed reply.
 */
import { describe, expect, it } from 'vitest';
import { contestType, entryReading, readCodeChefReply } from '../../../../lambda/sources/codechef/index.js';
import type { RawReply } from '../../../../lambda/sources/http/index.js';
import { candidateProblem } from '../../../../lambda/sources/listing.js';
import { CHALLENGE_PAGE, codechefReply, recordedAtSeconds } from '../../../../local/source-fixtures.js';
import { httpDate } from '../doubles.js';

const RECORDED_MS = recordedAtSeconds('codechef') * 1000;
const JSON_HEADERS = { 'content-type': 'application/json' };
const reply = (body: unknown, statusCode = 200, headers: RawReply['headers'] = JSON_HEADERS): RawReply => ({
  statusCode,
  headers,
  body: typeof body === 'string' ? body : JSON.stringify(body),
});
const utc = (iso: string): number => Date.parse(iso) / 1000;

const entry = (overrides: Record<string, unknown> = {}) => ({
  contest_code: 'START200B',
  contest_name: 'Starters 200 (Div. 2)',
  contest_start_date: '22 Jul 2025  20:00:00',
  contest_start_date_iso: '2025-07-22T20:00:00+05:30',
  contest_end_date_iso: '2025-07-22T22:00:00+05:30',
  contest_duration: '120',
  distinct_users: 0,
  ...overrides,
});

describe('the synthetic reply', () => {
  const read = readCodeChefReply(reply(codechefReply(RECORDED_MS)), RECORDED_MS);
  const listing = read.ok ? read.value.listing : undefined;
  const ids = (phase: string) => listing!.contests.filter((c) => c.phase === phase).map((c) => c.platformId);

  it('lists present contests as running, future ones as not started, recent past ones as finished', () => {
    expect(read.ok).toBe(true);
    expect(ids('CODING')).toEqual(['START134A', 'START134B', 'START134C', 'START134D']);
    expect(ids('BEFORE')).toEqual(['START135A', 'START135B', 'START135C', 'START135D', 'LONG24']);
    expect(ids('FINISHED')).toEqual(['START133A', 'START133B', 'START133C', 'START133D']);
    expect(listing!.invalid).toBe(0);
  });

  it('keeps each division its own contest, with its own id, name and page', () => {
    const divisions = listing!.contests.filter((c) => c.platformId.startsWith('START135'));
    expect(divisions.map((c) => [c.contestId, c.name, c.url])).toEqual(
      ['A', 'B', 'C', 'D'].map((d, i) => [
        `codechef:START135${d}`,
        `Starters 135 (Div. ${i + 1})`,
        `https://www.codechef.com/START135${d}`,
      ]),
    );
    expect(new Set(divisions.map((c) => c.startTimeSeconds)).size).toBe(1);
  });

  it('reads starts with their +05:30 offset and durations in minutes', () => {
    const start135 = listing!.contests.find((c) => c.platformId === 'START135B');
    expect(start135).toMatchObject({
      startTimeSeconds: utc('2024-05-22T14:30:00Z'),
      durationSeconds: 7200,
      type: 'START',
      platform: 'codechef',
    });
    expect(listing!.contests.find((c) => c.platformId === 'LONG24')).toMatchObject({ durationSeconds: 3 * 86400, type: 'LONG' });
  });

  it('lists placeholder rounds "(Date to be decided)" without scheduling them or counting them invalid', () => {
    expect(listing!.contests.some((c) => c.platformId === 'START136' || c.platformId === 'START137')).toBe(false);
    expect(listing!.listedIds.has('codechef:START136')).toBe(true);
    expect(listing!.listedIds.has('codechef:START137')).toBe(true);
    expect(listing!.unscheduled).toBe(2);
  });

  it('does not read past contests that ended more than 7 days ago', () => {
    expect([...listing!.listedIds].some((id) => id.startsWith('codechef:START132'))).toBe(false);
    expect(listing!.listedIds.size).toBe(15);
  });

  it('shifted to any moment, keeps the same contests in the same phases', () => {
    for (const now of [Date.UTC(2026, 0, 1), Date.UTC(2041, 2, 3, 4, 5, 6)]) {
      const shifted = readCodeChefReply(reply(codechefReply(now)), now);
      const shift = Math.floor(now / 1000) - recordedAtSeconds('codechef');
      expect(shifted.ok && shifted.value.listing.contests.map((c) => [c.platformId, c.phase, c.startTimeSeconds - shift])).toEqual(
        listing!.contests.map((c) => [c.platformId, c.phase, c.startTimeSeconds]),
      );
    }
  });

  it('dates the reply by Date minus Age', () => {
    const dated = readCodeChefReply(
      reply(codechefReply(RECORDED_MS), 200, { ...JSON_HEADERS, date: httpDate(RECORDED_MS, 5) }),
      RECORDED_MS,
    );
    expect(dated.ok && dated.value.dating).toEqual({ madeAt: recordedAtSeconds('codechef') - 5, madeBefore: utc('2024-05-22T14:30:00Z') });
  });
});

describe('entries at their bounds and just past them', () => {
  const NOW = Date.UTC(2025, 6, 1) / 1000;
  const verdict = (overrides: Record<string, unknown>) => {
    const reading = entryReading(entry(overrides), 'BEFORE');
    return reading.kind === 'contest' ? (candidateProblem(reading.candidate, NOW) ?? reading.candidate) : reading;
  };

  it('takes names of 512 characters and codes of 64, not 513 or 65', () => {
    expect(verdict({ contest_name: 'n'.repeat(512) })).toMatchObject({ name: 'n'.repeat(512) });
    expect(verdict({ contest_name: 'n'.repeat(513) })).toMatch(/name/);
    expect(verdict({ contest_code: 'C'.repeat(64) })).toMatchObject({ platformId: 'C'.repeat(64) });
    expect(verdict({ contest_code: 'C'.repeat(65) })).toMatch(/platformId/);
    expect(verdict({ contest_code: 'START 200' })).toMatch(/platformId/);
  });

  it('refuses a start without an offset, never guessing IST', () => {
    expect(verdict({ contest_start_date_iso: '2025-07-22T20:00:00' })).toMatchObject({
      kind: 'invalid',
      platformId: 'START200B',
      why: expect.stringMatching(/offset/),
    });
  });

  it('takes a duration as a string of minutes or a number, and refuses other shapes and zero', () => {
    expect(verdict({ contest_duration: 180 })).toMatchObject({ durationSeconds: 10_800 });
    expect(verdict({ contest_duration: '2h' })).toMatchObject({ kind: 'invalid', why: expect.stringMatching(/contest_duration/) });
    expect(verdict({ contest_duration: '0' })).toMatch(/durationSeconds/);
    expect(verdict({ contest_duration: String(366 * 24 * 60 + 1) })).toMatch(/durationSeconds/);
  });

  it('takes the id from the code, never from the title', () => {
    expect(verdict({ contest_code: 'START102', contest_name: 'Starters 101' })).toMatchObject({
      platformId: 'START102',
      name: 'Starters 101',
    });
    expect(contestType('COOK165')).toBe('COOK');
    expect(contestType('2024ICPC')).toBe('other');
  });

  it('knows a placeholder by its name, whatever its spacing and case', () => {
    expect(entryReading(entry({ contest_name: 'Starters 201 ( date to be Decided )' }), 'BEFORE')).toEqual({
      kind: 'unscheduled',
      platformId: 'START200B',
    });
  });
});

describe('a reply that is not a successful list is a failed reply', () => {
  const NOW = Date.UTC(2025, 6, 1);
  const lists = { status: 'success', present_contests: [], future_contests: [entry()], past_contests: [] };
  const kindOf = (r: RawReply) => {
    const read = readCodeChefReply(r, NOW);
    return read.ok ? 'ok' : `${read.problem.kind}${read.problem.retryable ? ' (retried)' : ''}`;
  };

  it.each<[string, string, RawReply]>([
    ['a successful list', 'ok', reply(lists)],
    ['status not success', 'api-failed', reply({ status: 'error', message: 'Something went wrong' })],
    ['no status', 'bad-shape', reply({ present_contests: [] })],
    ['future_contests missing', 'bad-shape', reply({ status: 'success', present_contests: [] })],
    ['future_contests not a list', 'bad-shape', reply({ ...lists, future_contests: {} })],
    ['nothing running or coming', 'empty', reply({ ...lists, future_contests: [] })],
    ['only placeholders', 'empty', reply({ ...lists, future_contests: [entry({ contest_name: 'Starters 201 (Date to be decided)' })] })],
    ['an empty body', 'empty', reply('')],
    ['truncated JSON', 'not-json', reply(JSON.stringify(lists).slice(0, 60))],
    ['a challenge page', 'challenge (retried)', reply(CHALLENGE_PAGE, 403, { 'content-type': 'text/html' })],
    ['an HTML page with 200', 'challenge (retried)', reply('<html><body>Login</body></html>', 200, { 'content-type': 'text/html' })],
    ['HTTP 429', 'rate-limited (retried)', reply('slow down', 429, {})],
    ['HTTP 500', 'http (retried)', reply('oops', 500, {})],
  ])('%s → %s', (_, kind, r) => {
    expect(kindOf(r)).toBe(kind);
  });

  it('quotes what CodeChef said, bounded', () => {
    const read = readCodeChefReply(reply({ status: 'x'.repeat(5_000), message: 'm'.repeat(5_000) }), NOW);
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.problem.message).toMatch(/^CodeChef said status "x+… \[cut from 5000 bytes\]": m+… \[cut from 5000 bytes\]$/);
    expect(read.problem.message.length).toBeLessThan(400);
  });
});
