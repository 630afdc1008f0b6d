/** The simulated year's truth and glitch schedule: pure, seeded, and honest about when things change. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_GLITCH_RATES, glitchSchedule, HARMFUL_GLITCHES } from './glitches.js';
import { buildTruth, DAY, finalStart, HOUR, listAt, loadSeedData, phaseAt, startAt, upcomingAt, WEEK } from './truth.js';

const truth = buildTruth({ seed: 7, days: 365 });

describe('truth', () => {
  it('is the recorded contests, shifted by whole weeks into a year after 2027-01-01', () => {
    expect(truth.yearStart).toBeGreaterThanOrEqual(Date.UTC(2027, 0, 1) / 1000);
    const data = loadSeedData();
    const recorded = new Map(data.contests.map(([id, , type, duration, start]) => [id, { type, duration, start }]));
    for (const contest of truth.contests) {
      const base = [...recorded].find(([id]) => (contest.id - id) % (Math.max(...recorded.keys()) - Math.min(...recorded.keys()) + 1) === 0 && id <= contest.id);
      expect(base).toBeDefined();
      // Weekday and time of day of the recorded start are kept (before any reschedule).
      expect((contest.starts[0]!.start - base![1].start) % WEEK).toBe(0);
      expect(contest.type).toBe(base![1].type);
      expect(contest.durationSeconds).toBe(base![1].duration);
    }
    const inYear = truth.contests.filter((c) => c.starts[0]!.start >= truth.yearStart && c.starts[0]!.start < truth.end);
    expect(inYear.length).toBeGreaterThan(100);
    expect(new Set(truth.contests.map((c) => c.id)).size).toBe(truth.contests.length);
  });

  it('is the same for the same seed and differs for another', () => {
    expect(buildTruth({ seed: 7, days: 365 })).toEqual(truth);
    expect(buildTruth({ seed: 8, days: 365 }).changes).not.toEqual(truth.changes);
  });

  it('changes only on whole hours, reschedules and withdrawals at least 2 days before every start', () => {
    for (const change of truth.changes) expect(change.at % HOUR).toBe(0);
    for (const contest of truth.contests) {
      expect(contest.announcedAt).toBeLessThanOrEqual(contest.starts[0]!.start - 7 * DAY + HOUR);
      for (const version of contest.starts.slice(1)) {
        for (const start of contest.starts.map((s) => s.start)) expect(start - version.at).toBeGreaterThanOrEqual(2 * DAY);
      }
      if (contest.withdrawnAt !== undefined) expect(finalStart(contest) - contest.withdrawnAt).toBeGreaterThanOrEqual(2 * DAY);
    }
    const kinds = new Set(truth.changes.map((c) => c.kind));
    expect([...kinds].sort()).toEqual(['announce', 'rename', 'reschedule', 'withdraw']);
    expect(truth.changes.some((c) => c.kind === 'withdraw' && c.mass)).toBe(true);
    expect(truth.changes.some((c) => c.kind === 'withdraw' && !c.mass)).toBe(true);
    const moved = truth.contests.filter((c) => c.starts.length > 1);
    expect(moved.some((c) => finalStart(c) > c.starts[0]!.start)).toBe(true);
    expect(moved.some((c) => finalStart(c) < c.starts[0]!.start)).toBe(true);
  });

  it('goes through the phases in order, some stuck in PENDING_SYSTEM_TEST for long', () => {
    const order = ['BEFORE', 'CODING', 'PENDING_SYSTEM_TEST', 'SYSTEM_TEST', 'FINISHED'];
    for (const contest of truth.contests.slice(0, 60)) {
      let last = 0;
      const over = finalStart(contest) + contest.durationSeconds + contest.pendingSeconds + contest.systemTestSeconds;
      for (let t = contest.announcedAt; t <= over + HOUR; t += Math.max(600, Math.floor((over - contest.announcedAt) / 3000))) {
        const index = order.indexOf(phaseAt(contest, t));
        expect(index).toBeGreaterThanOrEqual(last);
        last = index;
      }
      expect(last).toBe(4);
    }
    expect(truth.contests.some((c) => c.pendingSeconds > 6 * HOUR)).toBe(true);
  });

  it('lists what is announced and not withdrawn; upcoming is what starts at or after now', () => {
    const t = truth.yearStart + 100 * DAY;
    const listed = listAt(truth, t);
    for (const entry of listed) {
      const contest = truth.contests.find((c) => c.id === entry.id)!;
      expect(contest.announcedAt).toBeLessThanOrEqual(t);
      expect(contest.withdrawnAt === undefined || contest.withdrawnAt > t).toBe(true);
      expect(entry.startTimeSeconds).toBe(startAt(contest, t));
      expect(entry.relativeTimeSeconds).toBe(t - entry.startTimeSeconds);
    }
    const upcoming = upcomingAt(truth, t);
    expect([...upcoming.keys()].sort()).toEqual(listed.filter((e) => e.startTimeSeconds >= t).map((e) => e.id).sort());
    expect(upcoming.size).toBeGreaterThan(0);
  });
});

describe('glitch schedule', () => {
  it('is seeded, leaves hour 0 quiet and draws every kind over a year', () => {
    const a = glitchSchedule(3, 8760);
    expect(glitchSchedule(3, 8760)).toEqual(a);
    expect(a[0]).toBeUndefined();
    const kinds = new Set(a.flatMap((g) => (g === undefined ? [] : [g.kind])));
    expect(kinds.size).toBe(14);
    const share = a.filter((g) => g !== undefined).length / a.length;
    expect(share).toBeGreaterThan(0.03);
    expect(share).toBeLessThan(0.12);
    for (const g of a) if (g?.kind === 'crash') expect(g.crashAfter).toBeGreaterThanOrEqual(1);
  });

  it('never serves a harmful reply three hours running; a repeated one is the same stale reply', () => {
    const harmful = new Set(['partial', 'all-finished', 'starts-past']);
    for (const always of [false, true]) {
      const schedule = glitchSchedule(5, 8760, HARMFUL_GLITCHES, { alwaysRepeatHarmful: always });
      let run = 0;
      let repeated = 0;
      schedule.forEach((g, hour) => {
        run = g !== undefined && harmful.has(g.kind) ? run + 1 : 0;
        expect(run).toBeLessThanOrEqual(2);
        if (run === 2) {
          repeated += 1;
          expect(g).toEqual({ ...schedule[hour - 1], fromHour: hour - 1 });
        }
      });
      expect(repeated).toBeGreaterThan(always ? 300 : 100);
    }
  });

  it('takes rates: zero everywhere is a quiet year, one kind only is that kind', () => {
    const zero = Object.fromEntries(Object.keys(DEFAULT_GLITCH_RATES).map((kind) => [kind, 0]));
    expect(glitchSchedule(1, 500, zero).every((g) => g === undefined)).toBe(true);
    const only = glitchSchedule(1, 500, { ...zero, 'all-finished': 0.2 }).filter((g) => g !== undefined);
    expect(only.every((g) => g.kind === 'all-finished')).toBe(true);
    expect(only.length).toBeGreaterThan(50);
  });
});
