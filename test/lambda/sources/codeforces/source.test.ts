import { describe, expect, it } from 'vitest';
import type { FetchContestsResult } from '../../../../lambda/sources/codeforces/client.js';
import { codeforcesReply, fromLegacyId, legacyIdSeed, listedContest, replyDating } from '../../../../lambda/sources/codeforces/source.js';
import { idSeed } from '../../../../lambda/sources/ids.js';

const T = 1_800_000_000;
const entry = (id: number, start: number, madeAt?: number, phase: 'BEFORE' | 'FINISHED' = 'BEFORE') => ({
  id,
  name: `Codeforces Round ${id}`,
  type: 'CF' as const,
  phase,
  frozen: false,
  durationSeconds: 7200,
  startTimeSeconds: start,
  ...(madeAt !== undefined ? { relativeTimeSeconds: madeAt - start } : {}),
});

describe('listedContest', () => {
  it('says what a Codeforces entry is in the model: its qualified id, platform, its own id as text, and its URL', () => {
    expect(listedContest(entry(2120, T))).toEqual({
      contestId: 'codeforces:2120',
      platform: 'codeforces',
      platformId: '2120',
      name: 'Codeforces Round 2120',
      type: 'CF',
      phase: 'BEFORE',
      startTimeSeconds: T,
      durationSeconds: 7200,
      url: 'https://codeforces.com/contest/2120',
    });
  });
});

describe('replyDating', () => {
  it('dates a reply by start + relativeTimeSeconds, the median of its entries (a moved start is outvoted)', () => {
    const moved = { ...entry(3, T + 100, T), startTimeSeconds: T - 3600 };
    expect(replyDating([entry(1, T + 100, T), entry(2, T - 5000, T, 'FINISHED'), moved])).toEqual({ madeAt: T });
  });

  it('bounds an undated reply by its earliest contest not started yet, and knows nothing without one', () => {
    expect(replyDating([entry(1, T + 3600), entry(2, T - 60), entry(3, T - 9000, undefined, 'FINISHED')])).toEqual({ madeBefore: T - 60 });
    expect(replyDating([entry(3, T - 9000, undefined, 'FINISHED')])).toEqual({});
  });
});

describe('codeforcesReply', () => {
  it('is the fetched list as the model judges it: listed contests, every listed id, the date, what was skipped', () => {
    const fetched: FetchContestsResult = {
      contests: [entry(1, T + 3600, T)],
      invalid: 2,
      unscheduled: 1,
      listedIds: [1, 5, 6],
      attempts: 2,
      latencyMs: 812,
    };
    const reply = codeforcesReply(fetched);
    expect(reply.contests.map(({ contestId }) => contestId)).toEqual(['codeforces:1']);
    expect([...reply.listedIds]).toEqual(['codeforces:1', 'codeforces:5', 'codeforces:6']);
    expect(reply).toMatchObject({ dating: { madeAt: T }, invalid: 2, attempts: 2, latencyMs: 812 });
  });
});

describe('ids that predate qualification', () => {
  it("a Codeforces contest's event ids are derived from its number, as before; every other id from the qualified id", () => {
    expect(legacyIdSeed('2120')).toBe(2120);
    for (const notANumber of ['02120', 'abc', '1e3', '', '99999999999999999999']) expect(legacyIdSeed(notANumber)).toBeUndefined();
    expect(idSeed('codeforces:2120')).toBe(2120);
    expect(idSeed('atcoder:2120')).toBe('atcoder:2120');
    expect(idSeed('atcoder:abc199')).toBe('atcoder:abc199');
    expect(idSeed('codeforces:gym-1')).toBe('codeforces:gym-1');
  });

  it('reads a number a store or an event of the release before qualified ids holds as the Codeforces contest it named', () => {
    expect(fromLegacyId(2120)).toBe('codeforces:2120');
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(fromLegacyId(bad)).toBeUndefined();
  });
});
