import { describe, expect, it } from 'vitest';
import {
  evidenceOf,
  judgeReply,
  nextEvidence,
  replyMadeAt,
  shownAhead,
  SKEW_SECONDS,
  undatedMadeBefore,
} from '../../../lambda/contests/judge.js';

const T = 1_800_000_000;
const dated = (start: number, madeAt: number, phase = 'BEFORE') => ({
  phase,
  startTimeSeconds: start,
  durationSeconds: 7200,
  relativeTimeSeconds: madeAt - start,
});

describe('replyMadeAt', () => {
  it('dates a reply by start + relativeTimeSeconds, the median of its entries (a moved start is outvoted)', () => {
    expect(replyMadeAt([dated(T + 100, T), dated(T - 5000, T, 'FINISHED'), { ...dated(T + 100, T), startTimeSeconds: T - 3600 }])).toBe(T);
    expect(replyMadeAt([{ phase: 'BEFORE', startTimeSeconds: T, durationSeconds: 1 }])).toBeUndefined();
  });
});

describe('judgeReply', () => {
  it('a reply made before the newest applied one is stale; the same reply served again long after is stale; a fresh one is not', () => {
    expect(judgeReply([dated(T + 9999, T - 1)], T, T + 60)).toEqual({ stale: true, madeAt: T - 1, newestApplied: T });
    expect(judgeReply([dated(T + 9999, T)], T, T + SKEW_SECONDS + 1)).toEqual({ stale: true, madeAt: T, newestApplied: T });
    expect(judgeReply([dated(T + 9999, T)], T, T + 5)).toEqual({ stale: false, madeAt: T });
    expect(judgeReply([dated(T + 9999, T + 3600)], T, T + 3600)).toEqual({ stale: false, madeAt: T + 3600 });
    expect(judgeReply([dated(T + 9999, T)], undefined, T)).toEqual({ stale: false, madeAt: T });
  });

  it('records no date later than our clock (a reply dated in the future cannot make honest ones stale)', () => {
    expect(judgeReply([dated(T + 99_999, T + 86_400)], undefined, T)).toEqual({ stale: false, madeAt: T });
  });

  it('an undated reply is stale when a contest it lists as not started had started before the newest applied reply', () => {
    const undated = [{ phase: 'BEFORE', startTimeSeconds: T - 3600, durationSeconds: 7200 }];
    expect(undatedMadeBefore(undated)).toBe(T - 3600 + SKEW_SECONDS);
    expect(judgeReply(undated, T, T + 60)).toEqual({ stale: true, madeAt: T - 3600 + SKEW_SECONDS, newestApplied: T });
    expect(judgeReply([{ phase: 'BEFORE', startTimeSeconds: T + 3600, durationSeconds: 7200 }], T, T + 60)).toEqual({ stale: false });
  });
});

describe('evidence', () => {
  it('the key ignores phase progress and duration', () => {
    expect(evidenceOf({ startTimeSeconds: T })).toBe(`listed@${T}`);
    expect(evidenceOf(undefined)).toBe('missing');
    expect(nextEvidence({ held: true, said: `listed@${T}`, replies: 2, since: 5 }, `listed@${T}`, 9)).toEqual({
      said: `listed@${T}`,
      replies: 3,
      since: 5,
    });
  });

  it('a start is shown ahead only if first reported more than the skew before it', () => {
    expect(shownAhead(T + SKEW_SECONDS + 1, T)).toBe(true);
    expect(shownAhead(T + SKEW_SECONDS, T)).toBe(false);
    expect(shownAhead(T - 300, T)).toBe(false);
  });
});
