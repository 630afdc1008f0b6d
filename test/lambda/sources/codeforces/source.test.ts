import { describe, expect, it } from 'vitest';
import type { FetchContestsResult } from '../../../../lambda/sources/codeforces/client.js';
import { codeforcesReply, listedContest, replyDating } from '../../../../lambda/sources/codeforces/source.js';

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
  it('says what a Codeforces entry is in the model: a platform, its id and its URL', () => {
    expect(listedContest(entry(2120, T))).toEqual({
      contestId: 2120,
      platform: 'codeforces',
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
    expect(reply.contests.map(({ contestId, platform }) => `${platform}:${contestId}`)).toEqual(['codeforces:1']);
    expect([...reply.listedIds]).toEqual([1, 5, 6]);
    expect(reply).toMatchObject({ dating: { madeAt: T }, invalid: 2, attempts: 2, latencyMs: 812 });
  });
});
