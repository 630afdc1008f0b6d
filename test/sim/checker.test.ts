/** The simulated year's invariant checker bites where it should and only there. */
import { describe, expect, it } from 'vitest';
import { Checker, diffUpcoming } from './checker.js';
import { HOUR, type Truth, type TruthContest } from './truth.js';

const Y = 1_800_000_000;
function contest(id: number, start: number, extra: Partial<TruthContest> = {}): TruthContest {
  return {
    id,
    type: 'CF',
    durationSeconds: 7200,
    announcedAt: Y - 10 * 24 * HOUR,
    starts: [{ at: Y - 10 * 24 * HOUR, start }],
    names: [{ at: Y - 10 * 24 * HOUR, name: `Round ${id}` }],
    pendingSeconds: 600,
    systemTestSeconds: 1800,
    ...extra,
  };
}
const truth: Truth = {
  yearStart: Y,
  end: Y + 10 * 24 * HOUR,
  contests: [contest(1, Y + 2 * 24 * HOUR), contest(2, Y + 3 * 24 * HOUR), contest(3, Y + 4 * 24 * HOUR, { withdrawnAt: Y + HOUR })],
  changes: [],
};
const view = (entries: [number, number][]) => new Map(entries.map(([id, start]) => [id, { name: `Round ${id}`, startTimeSeconds: start }]));
const upcoming = view([[1, Y + 2 * 24 * HOUR], [2, Y + 3 * 24 * HOUR]]);

describe('upcoming view', () => {
  it('equal views match; a missing, moved, renamed or extra contest is a difference', () => {
    expect(diffUpcoming(upcoming, upcoming)).toBeUndefined();
    expect(diffUpcoming(view([[1, Y + 2 * 24 * HOUR]]), upcoming)).toBe('2 missing');
    expect(diffUpcoming(view([[1, Y + 2 * 24 * HOUR + 60], [2, Y + 3 * 24 * HOUR]]), upcoming)).toBe('1 starts 60 s off');
    expect(diffUpcoming(new Map([...upcoming, [3, { name: 'x', startTimeSeconds: Y }]]), upcoming)).toBe('3 shown but not upcoming');
    expect(diffUpcoming(new Map([[1, { name: 'old', startTimeSeconds: Y + 2 * 24 * HOUR }], [2, upcoming.get(2)!]]), upcoming)).toBe('1 named "old"');
  });

  it('a stale view is excused for 2 intervals after a glitch, N + 1 after a mass change, then a violation', () => {
    const checker = new Checker(truth);
    const stale = view([[1, Y + 2 * 24 * HOUR]]);
    checker.compareUpcoming(0, upcoming, upcoming);
    checker.glitch(1);
    for (const hour of [1, 2, 3]) checker.compareUpcoming(hour, stale, upcoming);
    expect(checker.violationsTotal).toBe(0);
    checker.compareUpcoming(4, stale, upcoming);
    expect(checker.violations).toEqual([{ hour: 4, invariant: 'upcoming-stale', detail: 'stale for 4 interval(s): 2 missing' }]);
    expect(checker.maxStalenessIntervals).toBe(4);

    const held = new Checker(truth);
    held.compareUpcoming(0, upcoming, upcoming);
    held.honestChange(1, true);
    for (const hour of [1, 2, 3, 4, 5]) held.compareUpcoming(hour, stale, upcoming);
    expect(held.violations.map((v) => v.hour)).toEqual([]);
    held.compareUpcoming(6, stale, upcoming);
    expect(held.violations.map((v) => v.hour)).toEqual([6]);

    const plain = new Checker(truth);
    plain.compareUpcoming(0, upcoming, upcoming);
    plain.honestChange(1, false);
    plain.compareUpcoming(1, stale, upcoming);
    plain.compareUpcoming(2, stale, upcoming);
    plain.compareUpcoming(3, stale, upcoming);
    expect(plain.violations.map((v) => v.hour)).toEqual([3]);
  });
});

describe('syncs, deletions', () => {
  it('a second successful sync of one interval is a violation', () => {
    const checker = new Checker(truth);
    checker.syncSucceeded(0, '2027-01-04T00:00:00Z');
    checker.syncSucceeded(1, '2027-01-04T01:00:00Z');
    expect(checker.violationsTotal).toBe(0);
    checker.syncSucceeded(1, '2027-01-04T01:00:00Z');
    expect(checker.violations[0]).toMatchObject({ hour: 1, invariant: 'one-sync-per-interval' });
  });

  it('deleting a contest Codeforces lists is a violation; deleting a withdrawn one is not', () => {
    const checker = new Checker(truth);
    checker.contestsDeleted(5, [1, 3], (id) => id !== 3);
    expect(checker.violations).toEqual([{ hour: 5, invariant: 'deleted-listed', detail: 'contest 1 deleted while Codeforces lists it' }]);
  });
});

describe('reminders', () => {
  it('every reminder of a contest that takes place fires once within an interval; none for a withdrawn one', () => {
    const checker = new Checker(truth);
    const start1 = Y + 2 * 24 * HOUR;
    const start2 = Y + 3 * 24 * HOUR;
    checker.reminderSet(1, 'on-time', 60, Y);
    checker.reminderFired(1, 'on-time', start1 - 3600 + 1200);
    checker.reminderSet(1, 'twice', 10, Y);
    checker.reminderFired(1, 'twice', start1 - 600);
    checker.reminderFired(1, 'twice', start1 - 300);
    checker.reminderSet(1, 'late', 1440, Y);
    checker.reminderFired(1, 'late', start1 - 1440 * 60 + 2 * HOUR);
    checker.reminderSet(2, 'early', 10, Y);
    checker.reminderFired(2, 'early', start2 - 6 * HOUR);
    checker.reminderSet(2, 'never', 60, Y);
    checker.reminderSet(3, 'withdrawn', 60, Y);
    checker.reminderFired(3, 'withdrawn', Y + 2 * HOUR);
    checker.reminderSet(3, 'withdrawn-quiet', 10, Y);
    const figures = checker.finishReminders(truth.end);
    expect(figures).toEqual({ set: 7, expected: 5, fired: 6, onTime: 2, early: 1, late: 1, missed: 1, duplicate: 1, forWithdrawn: 1 });
    expect(Object.keys(checker.byInvariant).sort()).toEqual(['reminder-duplicate', 'reminder-early', 'reminder-late', 'reminder-missed', 'reminder-withdrawn']);
  });

  it('a reminder due too close to the end is not judged', () => {
    const checker = new Checker({ ...truth, end: Y + 2 * 24 * HOUR });
    checker.reminderSet(1, 'u', 10, Y);
    expect(checker.finishReminders(Y + 2 * 24 * HOUR)).toMatchObject({ set: 1, expected: 0, missed: 0 });
    expect(checker.violationsTotal).toBe(0);
  });
});
