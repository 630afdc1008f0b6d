/**
 * What every source does with its entries: the contract's bounds at and just past their limits,
 * consistency with the time the reply was made, ids listed even for entries not believed, and the
 * list refused whole when it cannot be the truth.
 */
import { describe, expect, it } from 'vitest';
import {
  candidateProblem,
  listEntries,
  MAX_LIST_ENTRIES,
  referenceSeconds,
  replyDating,
  safeId,
  type Candidate,
  type Reading,
} from '../../../lambda/sources/listing.js';
import { LISTED_LIMITS } from '../../../lambda/sources/source.js';

const NOW = Date.UTC(2025, 5, 1) / 1000;
const base: Candidate = {
  platformId: 'abc199',
  name: 'AtCoder Beginner Contest 199',
  type: 'ABC',
  phase: 'BEFORE',
  startTimeSeconds: NOW + 3600,
  durationSeconds: 6000,
  url: 'https://atcoder.jp/contests/abc199',
};
const options = { platform: 'atcoder', label: 'AtCoder', nowSeconds: NOW };
const asContest = (candidate: Candidate): Reading => ({ kind: 'contest', candidate });

describe('candidateProblem: the bounds of the contract', () => {
  it.each<[string, Partial<Candidate>]>([
    ['a name of 512 characters', { name: 'n'.repeat(512) }],
    ['an id of 64 safe characters', { platformId: `A-z_0.9${'x'.repeat(56)}` }],
    ['a type of 32 characters', { type: 't'.repeat(32) }],
    ['a start at 2000-01-01', { startTimeSeconds: LISTED_LIMITS.minStartTimeSeconds, phase: 'FINISHED' }],
    ['a start at 2100-01-01', { startTimeSeconds: LISTED_LIMITS.maxStartTimeSeconds }],
    ['a duration of 366 days', { durationSeconds: 366 * 86400 }],
    ['a URL of 2048 bytes', { url: `https://atcoder.jp/${'u'.repeat(2048 - 'https://atcoder.jp/'.length)}` }],
    ['a FINISHED contest starting within the skew', { phase: 'FINISHED', startTimeSeconds: NOW + 600 }],
  ])('accepts %s', (_, change) => {
    expect(candidateProblem({ ...base, ...change }, NOW)).toBeUndefined();
  });

  it.each<[string, Partial<Candidate>, RegExp]>([
    ['a name of 513 characters', { name: 'n'.repeat(513) }, /name/],
    ['an empty name', { name: '' }, /name/],
    ['an id of 65 characters', { platformId: 'x'.repeat(65) }, /platformId/],
    ['an id with a slash', { platformId: 'abc/199' }, /platformId/],
    ['an id with a space', { platformId: 'abc 199' }, /platformId/],
    ['a type of 33 characters', { type: 't'.repeat(33) }, /type/],
    ['a start before 2000', { startTimeSeconds: LISTED_LIMITS.minStartTimeSeconds - 1 }, /startTimeSeconds/],
    ['a start after 2100', { startTimeSeconds: LISTED_LIMITS.maxStartTimeSeconds + 1 }, /startTimeSeconds/],
    ['a duration of 366 days and a second', { durationSeconds: 366 * 86400 + 1 }, /durationSeconds/],
    ['a zero duration', { durationSeconds: 0 }, /durationSeconds/],
    ['a fractional start', { startTimeSeconds: NOW + 0.5 }, /startTimeSeconds/],
    ['an http URL', { url: 'http://atcoder.jp/contests/abc199' }, /url/],
    ['a URL of 2049 bytes', { url: `https://atcoder.jp/${'u'.repeat(2049 - 'https://atcoder.jp/'.length)}` }, /url/],
    ['a FINISHED contest that has not started', { phase: 'FINISHED', startTimeSeconds: NOW + 601 }, /FINISHED/],
    ['a BEFORE contest that ended over a day ago', { startTimeSeconds: NOW - 86400 - 6001 }, /BEFORE/],
  ])('refuses %s', (_, change, why) => {
    expect(candidateProblem({ ...base, ...change }, NOW)).toMatch(why);
  });
});

describe('safeId', () => {
  it('is the id when the contract can store it, else undefined', () => {
    expect(safeId('START151A')).toBe('START151A');
    expect(safeId('x'.repeat(65))).toBeUndefined();
    expect(safeId('<script>')).toBeUndefined();
    expect(safeId(42)).toBeUndefined();
  });
});

describe('listEntries', () => {
  it('qualifies ids, keeps every safe id listed, and counts what it skips', () => {
    const readings: Reading[] = [
      asContest(base),
      { kind: 'invalid', platformId: 'arc118', why: 'time: no offset' },
      { kind: 'invalid', why: 'no id at all' },
      { kind: 'unscheduled', platformId: 'START999' },
      asContest({ ...base, platformId: 'x'.repeat(65) }),
    ];
    const listed = listEntries(readings, (entry) => entry as Reading, { ...options, maxInvalidShare: 1 });
    expect(listed.ok).toBe(true);
    if (!listed.ok) return;
    expect(listed.value.contests.map((c) => [c.contestId, c.platform, c.platformId])).toEqual([['atcoder:abc199', 'atcoder', 'abc199']]);
    expect([...listed.value.listedIds]).toEqual(['atcoder:abc199', 'atcoder:arc118', 'atcoder:START999']);
    expect(listed.value.invalid).toBe(3);
    expect(listed.value.unscheduled).toBe(1);
  });

  it('believes an id listed twice alike once, and not at all when its entries differ', () => {
    const readings = [
      asContest(base),
      asContest(base),
      asContest({ ...base, platformId: 'arc1' }),
      asContest({ ...base, platformId: 'arc1', durationSeconds: 1 }),
    ];
    const listed = listEntries(readings, (entry) => entry as Reading, { ...options, maxInvalidShare: 1 });
    expect(listed.ok && listed.value.contests.map((c) => c.platformId)).toEqual(['abc199']);
    expect(listed.ok && listed.value.invalid).toBe(2);
    expect(listed.ok && [...listed.value.listedIds]).toEqual(['atcoder:abc199', 'atcoder:arc1']);
  });

  it('refuses an empty list, a list of nothing scheduled, and too many invalid entries', () => {
    const read = (entry: unknown) => entry as Reading;
    expect(listEntries([], read, options)).toMatchObject({ ok: false, problem: { kind: 'empty', retryable: false } });
    const unscheduled: Reading[] = [{ kind: 'unscheduled', platformId: 'A1' }];
    expect(listEntries(unscheduled, read, options)).toMatchObject({ ok: false, problem: { kind: 'empty' } });
    const mostlyBad: Reading[] = [asContest(base), { kind: 'invalid', why: 'bad' }];
    const refused = listEntries(mostlyBad, read, options);
    expect(refused).toMatchObject({ ok: false, problem: { kind: 'invalid-contests' } });
    expect(!refused.ok && refused.problem.message).toMatch(/1 of 2 AtCoder entries failed validation \(e\.g\. entry #1: bad\)/);
  });

  it('refuses a list above the entry cap unread', () => {
    let reads = 0;
    const refused = listEntries(new Array(MAX_LIST_ENTRIES + 1).fill(0), () => (reads++, asContest(base)), options);
    expect(refused).toMatchObject({ ok: false, problem: { kind: 'too-large' } });
    expect(reads).toBe(0);
  });
});

describe('dating', () => {
  it('judges entries at when the reply was made, never later than it arrived', () => {
    expect(referenceSeconds(NOW - 30, NOW * 1000)).toBe(NOW - 30);
    expect(referenceSeconds(NOW + 3600, NOW * 1000)).toBe(NOW);
    expect(referenceSeconds(undefined, NOW * 1000 + 999)).toBe(NOW);
  });

  it('dates a reply by its headers and bounds it by its earliest contest not started', () => {
    const contests = [
      { ...base, contestId: 'atcoder:a', platform: 'atcoder', startTimeSeconds: NOW + 50 },
      { ...base, contestId: 'atcoder:b', platform: 'atcoder', startTimeSeconds: NOW + 10 },
      { ...base, contestId: 'atcoder:c', platform: 'atcoder', startTimeSeconds: NOW - 10, phase: 'FINISHED' as const },
    ];
    expect(replyDating(NOW - 5, contests)).toEqual({ madeAt: NOW - 5, madeBefore: NOW + 10 });
    expect(replyDating(undefined, contests.slice(2))).toEqual({});
  });
});
