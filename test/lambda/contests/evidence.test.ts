import { describe, expect, it } from 'vitest';
import { replyDating, type DatedEntry } from '../../../lambda/sources/codeforces/source.js';
import {
  evidenceOf,
  heldConverged,
  judgeReply,
  nextEvidence,
  scheduleImplausibility,
  shownAhead,
  SKEW_SECONDS,
} from '../../../lambda/contests/evidence.js';
import type { ContestItem } from '../../../lambda/contests/model.js';

const T = 1_800_000_000;
const dated = (start: number, madeAt: number, phase: DatedEntry['phase'] = 'BEFORE'): DatedEntry => ({
  phase,
  startTimeSeconds: start,
  relativeTimeSeconds: madeAt - start,
});
/** The verdict on a Codeforces reply of these entries (the source dates it, the judge judges the date). */
const judge = (entries: DatedEntry[], newestApplied: number | undefined, now: number) =>
  judgeReply(replyDating(entries), newestApplied, now);

describe('judgeReply', () => {
  it('a reply made before the newest applied one is stale; the same reply served again long after is stale; a fresh one is not', () => {
    expect(judge([dated(T + 9999, T - 1)], T, T + 60)).toEqual({ stale: true, madeAt: T - 1, newestApplied: T });
    expect(judge([dated(T + 9999, T)], T, T + SKEW_SECONDS + 1)).toEqual({ stale: true, madeAt: T, newestApplied: T });
    expect(judge([dated(T + 9999, T)], T, T + 5)).toEqual({ stale: false, madeAt: T });
    expect(judge([dated(T + 9999, T + 3600)], T, T + 3600)).toEqual({ stale: false, madeAt: T + 3600 });
    expect(judge([dated(T + 9999, T)], undefined, T)).toEqual({ stale: false, madeAt: T });
  });

  it('records no date later than our clock (a reply dated in the future cannot make honest ones stale)', () => {
    expect(judge([dated(T + 99_999, T + 86_400)], undefined, T)).toEqual({ stale: false, madeAt: T });
  });

  it('an undated reply is stale when a contest it lists as not started had started before the newest applied reply', () => {
    const undated: DatedEntry[] = [{ phase: 'BEFORE', startTimeSeconds: T - 3600 }];
    expect(judge(undated, T, T + 60)).toEqual({ stale: true, madeAt: T - 3600 + SKEW_SECONDS, newestApplied: T });
    expect(judge([{ phase: 'BEFORE', startTimeSeconds: T + 3600 }], T, T + 60)).toEqual({ stale: false });
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

describe("the platform's schedule", () => {
  const item = (start: number) => ({ startTimeSeconds: start }) as ContestItem;
  const HOUR = 3600;

  it('scheduleImplausibility: a move by exactly a suspect amount, any move where rounds never move, nothing for no move', () => {
    const codechef = { moves: true, suspectMovesSeconds: [-12 * HOUR, 12 * HOUR] };
    expect(scheduleImplausibility(item(100 * HOUR), item(88 * HOUR), codechef)).toBe('suspect-move');
    expect(scheduleImplausibility(item(100 * HOUR), item(112 * HOUR), codechef)).toBe('suspect-move');
    expect(scheduleImplausibility(item(100 * HOUR), item(113 * HOUR), codechef)).toBeUndefined();
    const leetcode = { moves: false, suspectMovesSeconds: [] };
    expect(scheduleImplausibility(item(100 * HOUR), item(101 * HOUR), leetcode)).toBe('move');
    expect(scheduleImplausibility(item(100 * HOUR), item(100 * HOUR), leetcode)).toBeUndefined();
    expect(scheduleImplausibility(item(100 * HOUR), item(100 * HOUR), codechef)).toBeUndefined();
  });

  it('heldConverged: enough replies, and a suspect move besides its time held', () => {
    const settings = { suspectMoveHeldSeconds: 8 * 24 * HOUR };
    expect(heldConverged('move', { replies: 6, since: 0 }, 6, HOUR, settings)).toBe(true);
    expect(heldConverged('move', { replies: 5, since: 0 }, 6, 30 * 24 * HOUR, settings)).toBe(false);
    expect(heldConverged('suspect-move', { replies: 200, since: 0 }, 3, 8 * 24 * HOUR - 1, settings)).toBe(false);
    expect(heldConverged('suspect-move', { replies: 3, since: 0 }, 3, 8 * 24 * HOUR, settings)).toBe(true);
    expect(heldConverged('suspect-move', { replies: 2, since: 0 }, 3, 9 * 24 * HOUR, settings)).toBe(false);
  });
});
