/**
 * AtCoder's recorded contests page parses to the contests it shows (ids, starts read with their
 * offset, durations of long contests, phases by table, the rated column), shifted or not; and a
 * page that is not the one it expects is a failed reply, never an empty or partial list.
 */
import { describe, expect, it } from 'vitest';
import { contestType, parseDuration, parseRated, readAtCoderReply, rowReading } from '../../../../lambda/sources/atcoder/index.js';
import { candidateProblem } from '../../../../lambda/sources/listing.js';
import type { RawReply } from '../../../../lambda/sources/http/index.js';
import type { ListedContest } from '../../../../lambda/sources/source.js';
import { atcoderPage, CHALLENGE_PAGE, fixtureText, recordedAtSeconds } from '../../../../local/source-fixtures.js';

import { httpDate } from '../doubles.js';
import { minimalPage, page, row } from './pages.js';

const RECORDED_MS = recordedAtSeconds('atcoder') * 1000;
const HTML = { 'content-type': 'text/html; charset=utf-8' };
const reply = (body: string, headers: RawReply['headers'] = HTML, statusCode = 200): RawReply => ({ statusCode, headers, body });
const utc = (iso: string): number => Date.parse(iso) / 1000;

function contests(body: string, at = RECORDED_MS): ListedContest[] {
  const read = readAtCoderReply(reply(body), at);
  if (!read.ok) throw new Error(read.problem.message);
  return read.value.listing.contests;
}

describe('the recorded page (2021-04)', () => {
  const read = readAtCoderReply(reply(fixtureText('atcoder')), RECORDED_MS);
  const listing = read.ok ? read.value.listing : undefined;
  const byId = new Map(listing?.contests.map((c) => [c.platformId, c]));

  it('lists the upcoming, running and recent tables, not the permanent one', () => {
    expect(read.ok).toBe(true);
    expect(listing!.contests).toHaveLength(56);
    expect(listing!.listedIds.size).toBe(57);
    expect(listing!.contests.filter((c) => c.phase === 'BEFORE').map((c) => c.platformId)).toEqual([
      'abc199',
      'ahc002',
      'zone2021',
      'arc118',
      'ahc003',
      'arc119',
    ]);
    expect(listing!.contests.filter((c) => c.phase === 'CODING').map((c) => c.platformId)).toEqual(['typical90']);
    expect(listing!.contests.filter((c) => c.phase === 'FINISHED')).toHaveLength(49);
    for (const permanent of ['practice', 'APG4b', 'abs', 'practice2']) expect(listing!.listedIds.has(`atcoder:${permanent}`)).toBe(false);
  });

  it('reads each start with its +0900 offset and each duration HH:MM, long contests included', () => {
    expect(byId.get('abc199')).toEqual({
      contestId: 'atcoder:abc199',
      platform: 'atcoder',
      platformId: 'abc199',
      name: 'AtCoder Beginner Contest 199（Sponsored by Panasonic）',
      type: 'ABC',
      phase: 'BEFORE',
      startTimeSeconds: utc('2021-04-24T12:00:00Z'),
      durationSeconds: 100 * 60,
      url: 'https://atcoder.jp/contests/abc199',
    });
    expect(byId.get('ahc003')).toMatchObject({ startTimeSeconds: utc('2021-05-22T03:00:00Z'), durationSeconds: 200 * 3600, type: 'AHC' });
    expect(byId.get('typical90')).toMatchObject({
      startTimeSeconds: utc('2021-04-20T10:20:00Z'),
      durationSeconds: 1992 * 3600 + 40 * 60,
      type: 'unrated',
    });
    expect(byId.get('hokudai-hitachi2020')).toMatchObject({ durationSeconds: 743 * 3600 + 59 * 60, phase: 'FINISHED' });
  });

  it('types rounds by series, else by the rated column', () => {
    expect(byId.get('zone2021')).toMatchObject({ type: 'rated', name: 'ZONeエナジー プログラミングコンテスト “HELLO SPACE”' });
    expect(byId.get('arc118')?.type).toBe('ARC');
    expect(byId.get('agc053')?.type).toBe('AGC');
    expect(byId.get('jsc2021')?.type).toBe('rated');
  });

  it('skips and counts the one row it cannot believe (joisc2021: a 00:00 duration), keeping its id listed', () => {
    expect(listing!.invalid).toBe(1);
    expect(byId.has('joisc2021')).toBe(false);
    expect(listing!.listedIds.has('atcoder:joisc2021')).toBe(true);
  });

  it('shifted to any moment, keeps upcoming contests upcoming and the running one running', () => {
    for (const now of [Date.UTC(2026, 0, 1), Date.UTC(2040, 6, 1, 3, 4, 5)]) {
      const shifted = contests(atcoderPage(now), now);
      const shift = Math.floor(now / 1000) - recordedAtSeconds('atcoder');
      expect(shifted.map((c) => [c.platformId, c.startTimeSeconds - shift, c.durationSeconds, c.phase])).toEqual(
        listing!.contests.map((c) => [c.platformId, c.startTimeSeconds, c.durationSeconds, c.phase]),
      );
    }
    expect(atcoderPage(RECORDED_MS)).toBe(fixtureText('atcoder'));
  });

  it('dates the reply by Date minus Age, and bounds it by its first upcoming start', () => {
    const dated = readAtCoderReply(reply(fixtureText('atcoder'), { ...HTML, date: httpDate(RECORDED_MS), age: '30' }), RECORDED_MS);
    expect(dated.ok && dated.value.dating).toEqual({ madeAt: recordedAtSeconds('atcoder') - 30, madeBefore: utc('2021-04-24T12:00:00Z') });
    expect(read.ok && read.value.dating).toEqual({ madeBefore: utc('2021-04-24T12:00:00Z') });
  });
});

describe('the rated column and durations', () => {
  it('reads ranges, All and unrated', () => {
    expect(parseRated(' ~ 1999')).toEqual({ kind: 'range', max: 1999 });
    expect(parseRated('1200 ~ ')).toEqual({ kind: 'range', min: 1200 });
    expect(parseRated('1200 ~ 2799')).toEqual({ kind: 'range', min: 1200, max: 2799 });
    expect(parseRated('All')).toEqual({ kind: 'all' });
    expect(parseRated('-')).toEqual({ kind: 'unrated' });
    expect(parseRated('Div. 2')).toEqual({ kind: 'unknown' });
    expect(contestType('practice3', { kind: 'all' })).toBe('rated');
    expect(contestType('abc', { kind: 'unknown' })).toBe('unrated');
  });

  it('reads HH:MM with any number of hours', () => {
    expect(parseDuration('01:40')).toBe(6000);
    expect(parseDuration('240:00')).toBe(864_000);
    expect(parseDuration('1:60')).toBeUndefined();
    expect(parseDuration('01:40:00')).toBeUndefined();
  });
});

describe('rows at their bounds and just past them', () => {
  const NOW = Date.UTC(2025, 5, 1);
  const recent = Array.from({ length: 20 }, (_, i) => row({ id: `abc${300 + i}`, time: '2025-05-01 21:00:00+0900' }));
  const cells = { cells: 4, time: '2025-06-07 21:00:00+0900', href: '/contests/abc400', name: 'ABC 400', duration: '01:40', rated: '-' };
  /** A row as the page's listing takes it: its contest, or why it is skipped. */
  const verdict = (changes: Partial<typeof cells>) => {
    const reading = rowReading({ ...cells, ...changes }, 'BEFORE');
    if (reading.kind !== 'contest') return reading;
    return candidateProblem(reading.candidate, NOW / 1000) ?? reading.candidate;
  };

  it('takes a name of 512 characters and an id of 64, not 513 or 65', () => {
    expect(verdict({ name: 'n'.repeat(512) })).toMatchObject({ name: 'n'.repeat(512) });
    expect(verdict({ name: 'n'.repeat(513) })).toMatch(/name/);
    expect(verdict({ href: `/contests/${'a'.repeat(64)}` })).toMatchObject({ platformId: 'a'.repeat(64) });
    expect(verdict({ href: `/contests/${'a'.repeat(65)}` })).toMatch(/platformId/);
  });

  it('skips and counts a row past a bound, keeping a safe id listed and leaving out an unsafe one', () => {
    const upcoming = [row({ name: 'n'.repeat(513) }), row({ id: 'a'.repeat(65) }), row({ id: 'abc401' })];
    const read = readAtCoderReply(reply(page({ upcoming, recent })), NOW);
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.value.listing.invalid).toBe(2);
    expect(read.value.listing.contests.map((c) => c.platformId)).toEqual(['abc401', ...recent.map((_, i) => `abc${300 + i}`)]);
    expect(read.value.listing.listedIds.has('atcoder:abc400')).toBe(true);
    expect([...read.value.listing.listedIds].some((id) => id.includes('a'.repeat(65)))).toBe(false);
  });

  it('refuses a time without an offset, never guessing the zone', () => {
    expect(rowReading({ ...cells, time: '2025-06-07 21:00:00' }, 'BEFORE')).toMatchObject({
      kind: 'invalid',
      platformId: 'abc400',
      why: expect.stringMatching(/offset/),
    });
    expect(verdict({ time: '2025-02-30 21:00:00+0900' })).toMatchObject({ kind: 'invalid', why: expect.stringMatching(/calendar/) });
    const read = readAtCoderReply(reply(page({ upcoming: [row({ time: '2025-06-07 21:00:00' })], recent })), NOW);
    expect(read.ok && [read.value.listing.invalid, read.value.listing.listedIds.has('atcoder:abc400')]).toEqual([1, true]);
  });

  it('refuses a row of another shape, an unsafe id, a foreign link and a duration over a year', () => {
    expect(verdict({ cells: 5 })).toMatchObject({ kind: 'invalid', why: expect.stringMatching(/four cells/) });
    expect(verdict({ href: '/contests/abc 400' })).toMatch(/platformId/);
    expect(verdict({ href: 'https://evil.example/contests/abc400' })).toMatchObject({ kind: 'invalid' });
    expect(verdict({ duration: '8784:00' })).toMatchObject({ durationSeconds: 366 * 86400 });
    expect(verdict({ duration: '8784:01' })).toMatch(/durationSeconds/);
  });
});

describe('a page that is not the contests page is a failed reply', () => {
  const NOW = Date.UTC(2025, 5, 1);
  const kindOf = (r: RawReply) => {
    const read = readAtCoderReply(r, NOW);
    return read.ok ? 'ok' : `${read.problem.kind}${read.problem.retryable ? ' (retried)' : ''}`;
  };

  it('believes the smallest page, with or without a running table', () => {
    expect(kindOf(reply(minimalPage()))).toBe('ok');
    const past = { time: '2025-05-31 21:00:00+0900' };
    expect(
      kindOf(
        reply(
          page({
            upcoming: [row()],
            action: [row({ id: 'abc398', ...past, duration: '240:00' })],
            recent: [row({ id: 'abc399', ...past })],
          }),
        ),
      ),
    ).toBe('ok');
  });

  it.each<[string, string, RawReply]>([
    [
      'the tables renamed',
      'markup',
      reply(
        page(
          { upcoming: [row()], recent: [row({ id: 'abc399' })] },
          { upcoming: 'contests-upcoming', action: 'contests-action', recent: 'contests-recent' },
        ),
      ),
    ],
    ['no upcoming table', 'markup', reply(page({ recent: [row({ id: 'abc399' })] }))],
    ['an empty recent table', 'markup', reply(page({ upcoming: [row()], recent: [] }))],
    [
      'a login page',
      'markup',
      reply('<!DOCTYPE html><html><head><title>Sign In - AtCoder</title></head><body><form action="/login"></form></body></html>'),
    ],
    ['an empty 200', 'empty', reply('')],
    ['a page cut short', 'markup', reply(minimalPage().slice(0, 900))],
    ['JSON', 'markup', reply('{"contests":[]}', { 'content-type': 'application/json' })],
    ['a Cloudflare challenge (403)', 'challenge (retried)', reply(CHALLENGE_PAGE, HTML, 403)],
    ['a Cloudflare challenge (200)', 'challenge (retried)', reply(CHALLENGE_PAGE)],
    ['HTTP 503', 'http (retried)', reply('down', {}, 503)],
    ['HTTP 404', 'http', reply('gone', {}, 404)],
  ])('%s → %s', (_, kind, r) => {
    expect(kindOf(r)).toBe(kind);
  });

  it('names what it misses', () => {
    const read = readAtCoderReply(
      reply(page({ upcoming: [row()], recent: [] }, { upcoming: 'x', action: 'y', recent: 'contest-table-recent' })),
      NOW,
    );
    expect(!read.ok && read.problem.message).toMatch(/#contest-table-upcoming \(no such table\), #contest-table-recent \(no rows\)/);
  });
});
