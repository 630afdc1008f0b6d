/**
 * LeetCode's recorded allContests reply parses to its contests (ids from titleSlug, epoch-second
 * starts, durations, phases derived at the time the reply was made); and every answer that is not
 * allContests is a failed reply.
 */
import { describe, expect, it } from 'vitest';
import { contestType, entryReading, readLeetCodeReply } from '../../../../lambda/sources/leetcode/index.js';
import type { RawReply } from '../../../../lambda/sources/http/index.js';
import { candidateProblem } from '../../../../lambda/sources/listing.js';
import { CHALLENGE_PAGE, leetcodeReply, recordedAtSeconds } from '../../../../local/source-fixtures.js';
import { httpDate } from '../doubles.js';

const RECORDED = recordedAtSeconds('leetcode');
const JSON_HEADERS = { 'content-type': 'application/json' };
const reply = (body: unknown, statusCode = 200, headers: RawReply['headers'] = JSON_HEADERS): RawReply => ({
  statusCode,
  headers,
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

describe('the recorded reply (2018-07)', () => {
  const read = readLeetCodeReply(reply(leetcodeReply(RECORDED * 1000)), RECORDED * 1000);
  const listing = read.ok ? read.value.listing : undefined;
  const byId = new Map(listing?.contests.map((c) => [c.platformId, c]));

  it('lists all 97 contests by titleSlug, the newest upcoming and the rest finished', () => {
    expect(read.ok).toBe(true);
    expect(listing!.contests).toHaveLength(97);
    expect(listing!.invalid).toBe(0);
    expect(listing!.contests.filter((c) => c.phase !== 'FINISHED').map((c) => [c.platformId, c.phase])).toEqual([
      ['weekly-contest-91', 'BEFORE'],
    ]);
    expect(byId.get('weekly-contest-91')).toEqual({
      contestId: 'leetcode:weekly-contest-91',
      platform: 'leetcode',
      platformId: 'weekly-contest-91',
      name: 'Weekly Contest 91',
      type: 'weekly',
      phase: 'BEFORE',
      startTimeSeconds: 1530408600,
      durationSeconds: 5400,
      url: 'https://leetcode.com/contest/weekly-contest-91',
    });
  });

  it('reads durations in seconds and types rounds by their slug', () => {
    expect(byId.get('warm-up-contest')).toMatchObject({ durationSeconds: 86400, type: 'other' });
    expect(byId.get('weekly-contest-58')).toMatchObject({ durationSeconds: 6600 });
    expect(byId.get('leetcode-weekly-contest-57')?.type).toBe('weekly');
    expect(byId.get('weekly-contest-by-app-academy')).toMatchObject({ name: 'Weekly Contest 62', type: 'weekly' });
    expect(contestType('biweekly-contest-1')).toBe('biweekly');
  });

  it('derives phases at when the reply was made, by its Date header minus its Age', () => {
    const during = 1530408600 + 600;
    const headers = { ...JSON_HEADERS, date: httpDate(during * 1000), age: '0' };
    const dated = readLeetCodeReply(reply(leetcodeReply(RECORDED * 1000), 200, headers), during * 1000 + 5_000);
    expect(dated.ok && dated.value.listing.contests.find((c) => c.platformId === 'weekly-contest-91')?.phase).toBe('CODING');
    expect(dated.ok && dated.value.dating).toEqual({ madeAt: during });
    const cached = readLeetCodeReply(reply(leetcodeReply(RECORDED * 1000), 200, { ...headers, age: '900' }), during * 1000);
    expect(cached.ok && cached.value.listing.contests.find((c) => c.platformId === 'weekly-contest-91')?.phase).toBe('BEFORE');
    expect(cached.ok && cached.value.dating).toEqual({ madeAt: during - 900, madeBefore: 1530408600 });
  });

  it('shifted to any moment, keeps the newest contest upcoming', () => {
    const now = Date.UTC(2031, 4, 6, 7, 8, 9);
    const shifted = readLeetCodeReply(reply(leetcodeReply(now)), now);
    expect(shifted.ok && shifted.value.listing.contests.filter((c) => c.phase === 'BEFORE').map((c) => c.platformId)).toEqual([
      'weekly-contest-91',
    ]);
  });
});

describe('entries at their bounds and just past them', () => {
  const NOW = Date.UTC(2025, 6, 1) / 1000;
  const entry = (overrides: Record<string, unknown>) => ({
    title: 'Weekly Contest 460',
    titleSlug: 'weekly-contest-460',
    startTime: NOW + 3600,
    duration: 5400,
    ...overrides,
  });
  const verdict = (overrides: Record<string, unknown>) => {
    const reading = entryReading(entry(overrides), NOW);
    return reading.kind === 'contest' ? (candidateProblem(reading.candidate, NOW) ?? reading.candidate) : reading;
  };

  it('takes titles of 512 characters and slugs of 64, not 513 or 65', () => {
    expect(verdict({ title: 't'.repeat(512) })).toMatchObject({ name: 't'.repeat(512) });
    expect(verdict({ title: 't'.repeat(513) })).toMatch(/name/);
    expect(verdict({ titleSlug: 's'.repeat(64) })).toMatchObject({ platformId: 's'.repeat(64) });
    expect(verdict({ titleSlug: 's'.repeat(65) })).toMatch(/platformId/);
    expect(verdict({ titleSlug: '../admin' })).toMatch(/platformId/);
  });

  it('refuses starts that are not epoch seconds, and durations past a year', () => {
    expect(verdict({ startTime: '1530408600' })).toMatchObject({ kind: 'invalid', platformId: 'weekly-contest-460' });
    expect(verdict({ startTime: 1530408600.5 })).toMatchObject({ kind: 'invalid' });
    expect(verdict({ startTime: 1530408600000 })).toMatch(/startTimeSeconds/);
    expect(verdict({ duration: 366 * 86400 + 1 })).toMatch(/durationSeconds/);
    expect(verdict({ duration: 0 })).toMatch(/durationSeconds/);
  });
});

describe('an answer that is not allContests is a failed reply', () => {
  const NOW = Date.UTC(2025, 6, 1);
  const kindOf = (r: RawReply) => {
    const read = readLeetCodeReply(r, NOW);
    return read.ok ? 'ok' : `${read.problem.kind}${read.problem.retryable ? ' (retried)' : ''}`;
  };
  const contest = { title: 'Weekly Contest 460', titleSlug: 'weekly-contest-460', startTime: NOW / 1000 + 3600, duration: 5400 };

  it.each<[string, string, RawReply]>([
    ['allContests', 'ok', reply({ data: { allContests: [contest] } })],
    ['GraphQL errors', 'api-failed', reply({ errors: [{ message: 'Cannot query field "allContests"' }], data: null })],
    ['data null', 'bad-shape', reply({ data: null })],
    ['no allContests', 'bad-shape', reply({ data: { upcomingContests: [] } })],
    ['an empty list', 'empty', reply({ data: { allContests: [] } })],
    ['an empty body', 'empty', reply('')],
    ['truncated JSON', 'not-json', reply('{"data":{"allContests":[{"title":"Week')],
    ['a 403', 'challenge (retried)', reply('Forbidden', 403, { 'content-type': 'text/plain' })],
    ['a 429', 'rate-limited (retried)', reply('', 429, {})],
    ['a Cloudflare challenge with 200', 'challenge (retried)', reply(CHALLENGE_PAGE, 200, { 'content-type': 'text/html' })],
    ['HTTP 499', 'http', reply('', 499, {})],
  ])('%s → %s', (_, kind, r) => {
    expect(kindOf(r)).toBe(kind);
  });

  it('quotes the first GraphQL error, bounded', () => {
    const read = readLeetCodeReply(reply({ errors: [{ message: 'e'.repeat(3_000) }, { message: 'second' }] }), NOW);
    expect(!read.ok && read.problem.message).toMatch(/^LeetCode GraphQL answered with 2 error\(s\): e+… \[cut from 3000 bytes\]$/);
  });
});
