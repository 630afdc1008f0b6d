import { describe, expect, it } from 'vitest';
import { buildPlatformTruth, codechefList, misdatedAt } from './platforms.js';
import { startAt } from './truth.js';

const YEAR_START = Date.parse('2027-01-04T00:00:00Z') / 1000;
const HOUR = 3600;

describe("CodeChef's AM/PM error: a wrong listing, not a move", () => {
  it('lists the round 12 hours early for a week while the truth keeps its start, and names those contests wrong for those hours', () => {
    const truth = buildPlatformTruth('codechef', { seed: 2, days: 365, yearStart: YEAR_START });
    const error = truth.misdated[0]!;
    expect(error.by).toBe(-12 * HOUR);
    expect(error.until - error.from).toBe(7 * 24 * HOUR);
    const contest = truth.contests.find((c) => c.id === error.id)!;
    const code = truth.platformIds.get(error.id)!;
    const listedStart = (t: number): number => {
      const reply = JSON.parse(codechefList(truth, t)) as { future_contests: { contest_code: string; contest_start_date_iso: string }[] };
      const entry = reply.future_contests.find((c) => c.contest_code === code)!;
      return Date.parse(entry.contest_start_date_iso) / 1000;
    };
    const during = error.from + HOUR;
    expect(listedStart(during)).toBe(startAt(contest, during) - 12 * HOUR);
    expect(startAt(contest, during)).toBe(startAt(contest, error.from - HOUR));
    expect(misdatedAt(truth, during)).toContain(error.id);
    expect(listedStart(error.until)).toBe(startAt(contest, error.until));
    expect(misdatedAt(truth, error.until)).not.toContain(error.id);
    expect(truth.changes.some((c) => c.contestId === error.id && c.kind === 'reschedule')).toBe(false);
  });
});
