/** The simulated year's checker: its bounds are the user's promise, and it bites where the promise is broken and only there. */
import { describe, expect, it } from 'vitest';
import { Checker, diffUpcoming, PROMISE } from './checker.js';
import { DAY, HOUR, MINUTE, type Truth, type TruthContest } from './truth.js';

const Y = 1_800_000_000;
function contest(id: number, start: number, extra: Partial<TruthContest> = {}): TruthContest {
  const at = Y - 10 * DAY;
  return {
    id,
    type: 'CF',
    announcedAt: at,
    starts: [{ at, value: start }],
    durations: [{ at, value: 7200 }],
    names: [{ at, value: `Round ${id}` }],
    withdrawals: [],
    pendingSeconds: 600,
    systemTestSeconds: 1800,
    retests: [],
    ...extra,
  };
}
const start1 = Y + 2 * DAY;
const start2 = Y + 3 * DAY;
const truth: Truth = {
  yearStart: Y,
  end: Y + 10 * DAY,
  contests: [
    contest(1, start1),
    contest(2, start2),
    contest(3, Y + 4 * DAY, { withdrawals: [{ at: Y + HOUR }] }),
    // Postponed by a day 90 minutes before its start.
    contest(4, Y + 5 * DAY, {
      starts: [
        { at: Y - 10 * DAY, value: Y + 5 * DAY },
        { at: Y + 5 * DAY - 90 * MINUTE, value: Y + 6 * DAY },
      ],
    }),
  ],
  changes: [{ at: Y + 5 * DAY - 90 * MINUTE, kind: 'reschedule', contestId: 4, mass: false, near: true }],
};
/** Every hour honest, except `wrong` (hours). */
function honestYear(checker: Checker, wrong: ReadonlySet<number> = new Set(), wrongFor?: Map<number, number>): void {
  for (let hour = 0; hour < 240; hour += 1) {
    const f = wrongFor?.get(hour);
    checker.upstreamHour(hour, { t: Y + hour * HOUR + 2, ok: !wrong.has(hour), ...(f !== undefined ? { wrongFor: f } : {}) });
  }
}
const view = (entries: [number, number][]) => new Map(entries.map(([id, start]) => [id, { name: `Round ${id}`, startTimeSeconds: start }]));
const upcoming = view([
  [1, start1],
  [2, start2],
]);

describe('upcoming view', () => {
  it('equal views match; a missing, moved, renamed or extra contest is a difference', () => {
    expect(diffUpcoming(upcoming, upcoming)).toBeUndefined();
    expect(diffUpcoming(view([[1, start1]]), upcoming)).toBe('2 missing');
    expect(
      diffUpcoming(
        view([
          [1, start1 + 60],
          [2, start2],
        ]),
        upcoming,
      ),
    ).toBe('1 starts 60 s off');
    expect(diffUpcoming(new Map([...upcoming, [3, { name: 'x', startTimeSeconds: Y }]]), upcoming)).toBe('3 shown but not upcoming');
    expect(
      diffUpcoming(
        new Map([
          [1, { name: 'old', startTimeSeconds: start1 }],
          [2, upcoming.get(2)!],
        ]),
        upcoming,
      ),
    ).toBe('1 named "old"');
  });

  it('may differ during a wrong-upstream episode however long and in the first honest interval after it, never later', () => {
    const checker = new Checker(truth);
    honestYear(checker, new Set([10, 11, 12, 13, 14, 15, 16, 17]));
    const stale = view([[1, start1]]);
    for (let hour = 10; hour <= 18; hour += 1) checker.compareUpcoming(hour, stale, upcoming);
    expect(checker.violationsTotal).toBe(0);
    checker.compareUpcoming(19, stale, upcoming);
    expect(checker.violations).toEqual([{ hour: 19, invariant: 'upcoming-stale', detail: 'stale for 20 interval(s): 2 missing' }]);
  });

  it('may differ in the hour of an honest change and in that of the first sync that can see it, not in the next (no N + 1 after a mass change)', () => {
    const checker = new Checker(truth);
    honestYear(checker);
    // Contest 4 is postponed at 22:30, between two syncs: the 23:00 sync is the first that can see it.
    const hour = 5 * 24 - 2;
    checker.compareUpcoming(hour, view([[4, Y + 5 * DAY]]), view([[4, Y + 6 * DAY]]));
    checker.compareUpcoming(hour + 1, view([[4, Y + 5 * DAY]]), view([[4, Y + 6 * DAY]]));
    expect(checker.violationsTotal).toBe(0);
    checker.compareUpcoming(hour + 2, view([[4, Y + 5 * DAY]]), view([[4, Y + 6 * DAY]]));
    expect(checker.byInvariant['upcoming-stale']).toBe(1);
  });
});

describe('syncs, deletions, storage', () => {
  it('a second successful sync of one interval is a violation', () => {
    const checker = new Checker(truth);
    checker.syncSucceeded(0, '2027-01-04T00:00:00Z');
    checker.syncSucceeded(1, '2027-01-04T01:00:00Z');
    expect(checker.violationsTotal).toBe(0);
    checker.syncSucceeded(1, '2027-01-04T01:00:00Z');
    expect(checker.violations[0]).toMatchObject({ hour: 1, invariant: 'one-sync-per-interval' });
  });

  it('a listed contest deleted is counted; a reminder row deleted other than by its TTL is a violation', () => {
    const checker = new Checker(truth);
    checker.contestsDeleted([1, 3], (id) => id !== 3);
    expect(checker.contestsDeletedWhileListed).toBe(1);
    checker.reminderSet(1, 'a', 60, Y);
    checker.reminderSet(1, 'b', 60, Y);
    checker.reminderSet(1, 'c', 60, Y);
    checker.remindersStored(5, new Set(['1/a']), new Set(['1/b']));
    expect(checker.violations).toEqual([
      { hour: 5, invariant: 'reminder-destroyed', detail: 'reminder 1/c (60 min) deleted, not by its TTL' },
    ]);
    checker.remindersStored(6, new Set(['1/a']), new Set(['1/b']));
    expect(checker.violationsTotal).toBe(1);
  });

  it('storage: reminders kept months after they were set are unbounded growth', () => {
    const checker = new Checker(truth);
    checker.reminderSet(1, 'old', 60, Y);
    checker.storage(10, Y + 30 * DAY, {
      contests: 10,
      leaseItemBytes: 2000,
      runRecordsByJob: { codeforces: 720, atcoder: 744 },
      reminderKeys: ['1/old'],
    });
    expect(checker.violationsTotal).toBe(0);
    checker.storage(11, Y + 91 * DAY, {
      contests: 10,
      leaseItemBytes: 2000,
      runRecordsByJob: { codeforces: 720, atcoder: 744 },
      reminderKeys: ['1/old'],
    });
    expect(checker.violations[0]).toMatchObject({ invariant: 'storage-unbounded' });
  });

  it('storage: run records are bounded per job, so four jobs keep four months’ worth and one job past its own is growth', () => {
    const checker = new Checker(truth);
    const month = { codeforces: 744, atcoder: 744, codechef: 744, leetcode: 744 };
    checker.storage(10, Y + 30 * DAY, { contests: 10, leaseItemBytes: 2000, runRecordsByJob: month, reminderKeys: [] });
    expect(checker.violationsTotal).toBe(0);
    checker.storage(11, Y + 60 * DAY, {
      contests: 10,
      leaseItemBytes: 2000,
      runRecordsByJob: { ...month, codechef: 1500 },
      reminderKeys: [],
    });
    expect(checker.violations).toEqual([{ hour: 11, invariant: 'storage-unbounded', detail: '1500 run records of codechef' }]);
  });
});

describe('reminders: the promise', () => {
  it('on time is 10 minutes early to 70 minutes late; early, late, twice, never and for a withdrawn contest are violations', () => {
    const checker = new Checker(truth);
    honestYear(checker);
    checker.reminderSet(1, 'on-time', 60, Y);
    checker.reminderFired(1, 'on-time', start1 - HOUR + 65 * MINUTE, start1);
    checker.reminderSet(1, 'just-early', 10, Y);
    checker.reminderFired(1, 'just-early', start1 - 20 * MINUTE, start1);
    checker.reminderSet(1, 'twice', 10, Y);
    checker.reminderFired(1, 'twice', start1 - 600, start1);
    checker.reminderFired(1, 'twice', start1 - 300, start1);
    checker.reminderSet(1, 'late', 1440, Y);
    checker.reminderFired(1, 'late', start1 - DAY + 71 * MINUTE, start1);
    checker.reminderSet(2, 'early', 10, Y);
    checker.reminderFired(2, 'early', start2 - 6 * HOUR, start2);
    checker.reminderSet(2, 'never', 60, Y);
    checker.reminderSet(3, 'withdrawn-soon', 60, Y);
    checker.reminderFired(3, 'withdrawn-soon', Y + HOUR + 65 * MINUTE, Y + 4 * DAY);
    checker.reminderSet(3, 'withdrawn', 60, Y);
    checker.reminderFired(3, 'withdrawn', Y + HOUR + 75 * MINUTE, Y + 4 * DAY);
    const figures = checker.finishReminders(truth.end);
    expect(figures).toMatchObject({
      set: 8,
      expected: 6,
      fired: 8,
      onTime: 3,
      early: 2,
      late: 1,
      missed: 2,
      duplicate: 1,
      forWithdrawn: 1,
    });
    expect(checker.byInvariant).toEqual({
      'reminder-duplicate': 1,
      'reminder-early': 2,
      'reminder-late': 1,
      'reminder-missed': 2,
      'reminder-withdrawn': 1,
    });
  });

  it('a postponement after the reminder fired: it must fire again for the new start, once', () => {
    const fired = Y + 5 * DAY - 2 * HOUR + 5 * MINUTE;
    const ok = new Checker(truth);
    honestYear(ok);
    ok.reminderSet(4, 'u', 120, Y);
    ok.reminderFired(4, 'u', fired, Y + 5 * DAY);
    ok.reminderFired(4, 'u', Y + 6 * DAY - 2 * HOUR + 5 * MINUTE, Y + 6 * DAY);
    expect(ok.finishReminders(truth.end)).toMatchObject({ expected: 1, onTime: 1, refired: 1, duplicate: 0 });
    expect(ok.violationsTotal).toBe(0);
    const once = new Checker(truth);
    honestYear(once);
    once.reminderSet(4, 'u', 120, Y);
    once.reminderFired(4, 'u', fired, Y + 5 * DAY);
    expect(once.finishReminders(truth.end)).toMatchObject({ missed: 1 });
  });

  it('late is measured from the end of a wrong-upstream episode or the first honest reply, however long the episode', () => {
    const due = start1 - HOUR;
    const hourOfDue = (due - Y) / HOUR;
    const wrong = new Set(Array.from({ length: 12 }, (_, i) => Math.floor(hourOfDue) - 2 + i));
    const checker = new Checker(truth);
    honestYear(checker, wrong);
    const episodeEnd = Y + (Math.max(...wrong) + 1) * HOUR + 2;
    expect(checker.deadline(truth.contests[0]!, due, Y)).toBe(episodeEnd + PROMISE.lateSeconds);
    checker.reminderSet(1, 'u', 60, Y);
    checker.reminderFired(1, 'u', episodeEnd + 65 * MINUTE, start1);
    checker.reminderSet(1, 'v', 60, Y);
    checker.reminderFired(1, 'v', episodeEnd + 75 * MINUTE, start1);
    expect(checker.finishReminders(truth.end)).toMatchObject({ expected: 2, lateExcused: 1, late: 1 });
    // A lie about another contest does not excuse this one.
    const other = new Checker(truth);
    honestYear(other, new Set(), new Map([...wrong].map((h) => [h, 2])));
    expect(other.deadline(truth.contests[0]!, due, Y)).toBe(due + PROMISE.lateSeconds);
  });

  it('the first reply showing the start bounds it too; a reminder due too close to the end of the run is not judged', () => {
    const checker = new Checker(truth);
    honestYear(checker);
    // Contest 4 moved 90 minutes before its start: the first reply showing the new start is that hour's.
    expect(checker.deadline(truth.contests[3]!, Y + 6 * DAY - 10 * MINUTE, Y)).toBe(Y + 6 * DAY - 10 * MINUTE + PROMISE.lateSeconds);
    const short = new Checker({ ...truth, end: start1 });
    honestYear(short);
    short.reminderSet(1, 'u', 10, Y);
    expect(short.finishReminders(start1)).toMatchObject({ set: 1, expected: 0, missed: 0 });
    expect(short.violationsTotal).toBe(0);
  });
});

describe("reminders: the user's intent", () => {
  it('set, told, cancelled and set again is two intents, each told once; a changed lead supersedes an intent not yet due', () => {
    const checker = new Checker(truth);
    honestYear(checker);
    const due = start1 - HOUR;
    // a: told, cancelled, set again, told again for the same start: two intents, no duplicate.
    checker.reminderSet(1, 'a', 60, Y);
    checker.reminderClaimed(1, 'a', due + 5, 'e-a1');
    checker.reminderFired(1, 'a', due + 8, start1, 'e-a1');
    checker.reminderCancelled(1, 'a', due + 10 * MINUTE);
    checker.reminderSet(1, 'a', 60, due + 11 * MINUTE);
    checker.reminderClaimed(1, 'a', due + 12 * MINUTE, 'e-a2');
    checker.reminderFired(1, 'a', due + 12 * MINUTE + 3, start1, 'e-a2');
    // b: the same, but the second intent's claim found its event id in the outbox: never told.
    checker.reminderSet(1, 'b', 60, Y);
    checker.reminderClaimed(1, 'b', due + 5, 'e-b1');
    checker.reminderFired(1, 'b', due + 8, start1, 'e-b1');
    checker.reminderCancelled(1, 'b', due + 10 * MINUTE);
    checker.reminderSet(1, 'b', 60, due + 11 * MINUTE);
    checker.reminderClaimed(1, 'b', due + 12 * MINUTE, undefined);
    // c: 10 minutes, changed to 30 two hours ahead: the first intent is superseded, the second told.
    checker.reminderSet(1, 'c', 10, Y);
    checker.reminderSet(1, 'c', 30, start1 - 2 * HOUR);
    checker.reminderClaimed(1, 'c', start1 - 30 * MINUTE, 'e-c2');
    checker.reminderFired(1, 'c', start1 - 30 * MINUTE + 4, start1, 'e-c2');
    // d: cancelled three hours ahead, then claimed: a violation.
    checker.reminderSet(1, 'd', 60, Y);
    checker.reminderCancelled(1, 'd', start1 - 3 * HOUR);
    checker.reminderClaimed(1, 'd', due + 5, 'e-d1');
    checker.reminderFired(1, 'd', due + 9, start1, 'e-d1');
    const figures = checker.finishReminders(truth.end);
    expect(figures).toMatchObject({
      intents: 7,
      cancels: 3,
      expected: 5,
      onTime: 4,
      missed: 1,
      duplicate: 0,
      superseded: 2,
      silentClaims: 1,
    });
    expect(checker.byInvariant).toEqual({ 'reminder-missed': 1, 'reminder-cancelled': 1 });
    expect(checker.violations.find((v) => v.invariant === 'reminder-missed')?.detail).toMatch(/1\/b intent 2 .*without an event/);
    // A cancelled reminder's row is rightly gone; the others must stay.
    checker.remindersStored(100, new Set(['1/a', '1/b', '1/c']), new Set());
    expect(checker.byInvariant['reminder-destroyed']).toBeUndefined();
  });

  it('a start no reply showed ahead is not judged late or missed; one a reply showed is', () => {
    const hidden = contest(6, Y + 14 * HOUR + 35 * MINUTE, {
      starts: [
        { at: Y - 10 * DAY, value: Y + 14 * HOUR + 35 * MINUTE },
        { at: Y + 10 * HOUR, value: Y + 12 * HOUR + 45 * MINUTE },
      ],
    });
    const world: Truth = { ...truth, contests: [...truth.contests, hidden] };
    // Every reply from the prepone until after the new start was wrong: no reply showed 12:45 ahead.
    const episode = new Set([10, 11, 12, 13, 14]);
    const unseen = new Checker(world);
    honestYear(unseen, episode);
    unseen.reminderSet(6, 'u', 30, Y);
    expect(unseen.finishReminders(world.end)).toMatchObject({ expected: 0, missed: 0, startNotShown: 1 });
    expect(unseen.violationsTotal).toBe(0);
    // The first reply after the prepone was honest: 12:45 was shown ahead, so the reminder is owed.
    const seen = new Checker(world);
    honestYear(seen, new Set([11, 12, 13, 14]));
    seen.reminderSet(6, 'u', 30, Y);
    expect(seen.finishReminders(world.end)).toMatchObject({ expected: 1, missed: 1, startNotShown: 0 });
  });

  it('a change after the last reply a sync applied cannot be seen: firing for the start that reply listed is not early', () => {
    const at = (minutesBefore: number) => Y + 3 * DAY - minutesBefore * MINUTE;
    const moved = (id: number, changedAt: number) =>
      contest(id, Y + 3 * DAY, {
        starts: [
          { at: Y - 10 * DAY, value: Y + 3 * DAY },
          { at: changedAt, value: Y + 3 * DAY + 2 * HOUR },
        ],
      });
    // Postponed 50 minutes before the start (after that hour's sync), and 70 minutes before (before it).
    const world: Truth = { ...truth, contests: [...truth.contests, moved(7, at(50)), moved(8, at(70))] };
    const checker = new Checker(world);
    honestYear(checker);
    for (const id of [7, 8]) {
      checker.reminderSet(id, 'u', 10, Y);
      checker.reminderFired(id, 'u', at(10), Y + 3 * DAY);
      checker.reminderFired(id, 'u', Y + 3 * DAY + 110 * MINUTE, Y + 3 * DAY + 2 * HOUR);
    }
    expect(checker.finishReminders(world.end)).toMatchObject({ earlyUnseen: 1, early: 1, expected: 2, onTime: 2 });
    expect(checker.violations.map((v) => v.detail)).toEqual([expect.stringMatching(/^reminder 8\/u .*before its true time/)]);
    // Behind a wrong upstream (the sync of that hour got a wrong list), the same fire is early: the product must delay.
    const lied = new Checker(world);
    honestYear(lied, new Set([Math.floor((at(50) - Y) / HOUR)]));
    lied.reminderSet(7, 'u', 10, Y);
    lied.reminderFired(7, 'u', at(10), Y + 3 * DAY);
    expect(lied.finishReminders(world.end)).toMatchObject({ earlyUnseen: 0, early: 1 });
  });
});
