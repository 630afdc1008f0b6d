/** The simulated year's truth and glitch schedule: pure, seeded, honest about when things change, and not tuned to the model. */
import { describe, expect, it } from 'vitest';
import {
  contestLie,
  DEFAULT_GLITCH_RATES,
  EPISODE_GLITCHES,
  glitchSchedule,
  HARMFUL_GLITCHES,
  pickTargets,
  wrongList,
  type HourGlitch,
} from './glitches.js';
import {
  buildTruth,
  contestOver,
  DAY,
  durationAt,
  HOUR,
  listAt,
  listedAt,
  loadSeedData,
  MINUTE,
  phaseAt,
  PREPONE_NOTICE_SECONDS,
  startAt,
  takesPlace,
  upcomingAt,
  WEEK,
} from './truth.js';

const truth = buildTruth({ seed: 7, days: 365 });

describe('truth', () => {
  it('is the recorded contests, shifted by whole weeks into a year after 2027-01-01', () => {
    expect(truth.yearStart).toBeGreaterThanOrEqual(Date.UTC(2027, 0, 1) / 1000);
    const data = loadSeedData();
    const recorded = new Map(data.contests.map(([id, , type, duration, start]) => [id, { type, duration, start }]));
    const span = Math.max(...recorded.keys()) - Math.min(...recorded.keys()) + 1;
    for (const contest of truth.contests) {
      const base = [...recorded].find(([id]) => (contest.id - id) % span === 0 && id <= contest.id);
      expect(base).toBeDefined();
      // Weekday and time of day of the recorded start are kept (before any reschedule).
      expect((contest.starts[0]!.value - base![1].start) % WEEK).toBe(0);
      expect(contest.type).toBe(base![1].type);
      expect(contest.durations[0]!.value).toBe(base![1].duration);
    }
    const inYear = truth.contests.filter((c) => c.starts[0]!.value >= truth.yearStart && c.starts[0]!.value < truth.end);
    expect(inYear.length).toBeGreaterThan(100);
    expect(new Set(truth.contests.map((c) => c.id)).size).toBe(truth.contests.length);
  });

  it('is the same for the same seed and differs for another', () => {
    expect(buildTruth({ seed: 7, days: 365 })).toEqual(truth);
    expect(buildTruth({ seed: 8, days: 365 }).changes).not.toEqual(truth.changes);
  });

  it('changes on whole hours or between two syncs, and every reschedule or withdrawal is honest when it happens: listed, not started, the new start ahead', () => {
    const between = truth.changes.filter((change) => change.kind !== 'announce' && change.at % HOUR !== 0);
    for (const change of between) expect(change.at % MINUTE).toBe(0);
    // About 30 % of the changes between syncs (DEFAULT_CHURN.betweenSyncs), the rest just before one.
    const changes = truth.changes.filter((change) => change.kind !== 'announce').length;
    expect(between.length / changes).toBeGreaterThan(0.15);
    expect(between.length / changes).toBeLessThan(0.45);
    // With none between syncs, every change is on a whole hour.
    for (const change of buildTruth({ seed: 7, days: 365, rates: { betweenSyncs: 0 } }).changes) expect(change.at % HOUR).toBe(0);
    for (const contest of truth.contests) {
      for (let i = 1; i < contest.starts.length; i += 1) {
        const { at, value } = contest.starts[i]!;
        const before = contest.starts[i - 1]!.value;
        expect(at).toBeGreaterThan(contest.starts[i - 1]!.at);
        expect(before).toBeGreaterThan(at);
        // A prepone is announced at least 1.5 h before the new start; a postponement at most at the start.
        if (value < before) expect(value - at).toBeGreaterThanOrEqual(PREPONE_NOTICE_SECONDS);
        else expect(value).toBeGreaterThan(at);
      }
      for (const w of contest.withdrawals) {
        expect(startAt(contest, w.at)).toBeGreaterThan(w.at);
        if (w.relistAt !== undefined) expect(w.relistAt).toBeGreaterThan(w.at);
      }
    }
  });

  it('churns close to the start as the world does: postponements and prepones within 3 h, withdrawals within 2 h, mass postponements, several moves of one contest', () => {
    const truths = [1, 2, 3, 7].map((seed) => (seed === 7 ? truth : buildTruth({ seed, days: 365 })));
    const all = truths.flatMap((t) => t.contests.map((c) => ({ t, c })));
    const moves = all.flatMap(({ c }) => c.starts.slice(1).map((v, i) => ({ at: v.at, from: c.starts[i]!.value, to: v.value })));
    expect(moves.filter((m) => m.to > m.from && m.from - m.at <= 3 * HOUR).length).toBeGreaterThan(10);
    expect(moves.filter((m) => m.to < m.from && m.to - m.at <= 3 * HOUR).length).toBeGreaterThan(5);
    expect(moves.some((m) => m.to > m.from && m.from - m.at <= HOUR && m.to - m.from <= 2 * HOUR)).toBe(true);
    expect(all.filter(({ c }) => c.withdrawals.some((w) => startAt(c, w.at) - w.at <= 2 * HOUR)).length).toBeGreaterThan(2);
    expect(all.some(({ c }) => c.starts.length >= 3)).toBe(true);
    for (const t of truths) {
      const kinds = new Set(t.changes.map((c) => c.kind));
      expect(kinds.has('reschedule') && kinds.has('withdraw') && kinds.has('rename') && kinds.has('duration')).toBe(true);
    }
    const changes = truths.flatMap((t) => t.changes);
    expect(changes.some((c) => c.kind === 'reschedule' && c.mass && c.near)).toBe(true);
    expect(changes.some((c) => c.kind === 'withdraw' && c.mass)).toBe(true);
    expect(changes.filter((c) => c.kind === 'relist').length).toBeGreaterThan(3);
    expect(changes.filter((c) => c.kind === 'retest').length).toBeGreaterThan(10);
  });

  it('goes through the phases in order, except a retest (FINISHED back to SYSTEM_TEST) and long PENDING_SYSTEM_TEST', () => {
    const order = ['BEFORE', 'CODING', 'PENDING_SYSTEM_TEST', 'SYSTEM_TEST', 'FINISHED'];
    let regressions = 0;
    for (const contest of truth.contests) {
      let last = 0;
      const over = Math.max(contestOver(contest), ...contest.retests.map((r) => r.at + r.seconds)) + HOUR;
      for (let t = contest.announcedAt; t <= over; t += 10 * MINUTE) {
        const index = order.indexOf(phaseAt(contest, t));
        if (index < last) {
          expect([order[last], order[index]]).toEqual(['FINISHED', 'SYSTEM_TEST']);
          expect(contest.retests.some((r) => r.at <= t && t < r.at + r.seconds)).toBe(true);
          regressions += 1;
        }
        last = index;
      }
      expect(last).toBe(4);
    }
    expect(regressions).toBeGreaterThan(0);
    expect(truth.contests.some((c) => c.pendingSeconds > 6 * HOUR)).toBe(true);
    expect(truth.contests.some((c) => c.durations.length > 1)).toBe(true);
  });

  it('lists what is announced and not withdrawn, a re-listed contest again under its id, with relativeTimeSeconds = now − start', () => {
    const t = truth.yearStart + 100 * DAY;
    const listed = listAt(truth, t);
    for (const entry of listed) {
      const contest = truth.contests.find((c) => c.id === entry.id)!;
      expect(contest.announcedAt).toBeLessThanOrEqual(t);
      expect(entry.startTimeSeconds).toBe(startAt(contest, t));
      expect(entry.durationSeconds).toBe(durationAt(contest, t));
      expect(entry.relativeTimeSeconds).toBe(t - entry.startTimeSeconds);
    }
    const upcoming = upcomingAt(truth, t);
    expect([...upcoming.keys()].sort()).toEqual(
      listed
        .filter((e) => e.startTimeSeconds >= t)
        .map((e) => e.id)
        .sort(),
    );
    expect(upcoming.size).toBeGreaterThan(0);
    const relisted = [1, 2, 3, 7]
      .flatMap((seed) => buildTruth({ seed, days: 365 }).contests)
      .find((c) => c.withdrawals.some((w) => w.relistAt !== undefined))!;
    const w = relisted.withdrawals.find((x) => x.relistAt !== undefined)!;
    expect(listedAt(relisted, w.at - 1)).toBe(true);
    expect(listedAt(relisted, w.at)).toBe(false);
    expect(listedAt(relisted, w.relistAt!)).toBe(true);
    expect(takesPlace(relisted)).toBe(true);
  });
});

describe('glitch schedule', () => {
  it('is seeded, leaves hour 0 quiet and draws every kind over a year', () => {
    const a = glitchSchedule(3, 8760);
    expect(glitchSchedule(3, 8760)).toEqual(a);
    expect(a[0]).toBeUndefined();
    const kinds = new Set(a.flatMap((g) => (g === undefined ? [] : [g.kind])));
    expect(kinds.size).toBe(Object.keys(DEFAULT_GLITCH_RATES).length);
    const share = a.filter((g) => g !== undefined).length / a.length;
    expect(share).toBeGreaterThan(0.03);
    expect(share).toBeLessThan(0.15);
    for (const g of a) if (g?.kind === 'crash') expect(g.crashAfter).toBeGreaterThanOrEqual(1);
  });

  it('serves a wrong upstream up to N hours running, frozen or fresh; no rule keeps it below what the model accepts', () => {
    for (const episode of [6, 12]) {
      const schedule = glitchSchedule(5, 8760, HARMFUL_GLITCHES, { episode });
      const lengths = new Map<number, number>();
      const modes = new Set<string>();
      schedule.forEach((g) => {
        if (g === undefined || !EPISODE_GLITCHES.has(g.kind)) return;
        lengths.set(g.fromHour, (lengths.get(g.fromHour) ?? 0) + 1);
        modes.add(g.mode);
      });
      const counts = [...lengths.values()];
      expect(Math.max(...counts)).toBe(episode);
      expect(counts.filter((n) => n >= 3).length).toBeGreaterThan(50);
      expect([...modes].sort()).toEqual(['fresh', 'frozen']);
      // Each hour of an episode is the same lie.
      schedule.forEach((g, hour) => {
        if (g !== undefined && EPISODE_GLITCHES.has(g.kind) && g.kind !== 'outage' && g.fromHour < hour)
          expect(g).toEqual(schedule[g.fromHour]);
      });
    }
    const full = glitchSchedule(5, 2000, HARMFUL_GLITCHES, { episode: 4, fullEpisodes: true });
    const runs = new Map<number, number>();
    for (const g of full) if (g !== undefined && EPISODE_GLITCHES.has(g.kind)) runs.set(g.fromHour, (runs.get(g.fromHour) ?? 0) + 1);
    expect([...runs.entries()].filter(([from]) => from < 1990).every(([, n]) => n === 4)).toBe(true);
  });

  it('takes rates: zero everywhere is a quiet year, one kind only is that kind', () => {
    const zero = Object.fromEntries(Object.keys(DEFAULT_GLITCH_RATES).map((kind) => [kind, 0]));
    expect(glitchSchedule(1, 500, zero).every((g) => g === undefined)).toBe(true);
    const only = glitchSchedule(1, 500, { ...zero, 'all-finished': 0.2 }).filter((g) => g !== undefined);
    expect(only.every((g) => g.kind === 'all-finished')).toBe(true);
    expect(only.length).toBeGreaterThan(50);
  });
});

describe('wrong lists', () => {
  const t0 = truth.yearStart + 50 * DAY + 2;
  const glitch = (kind: HourGlitch['kind'], extra: Partial<HourGlitch> = {}): HourGlitch => ({
    kind,
    mode: 'fresh',
    seed: 11,
    fromHour: 0,
    length: 3,
    ...extra,
  });
  const target = listAt(truth, t0).find((e) => e.startTimeSeconds > t0 + HOUR)!.id;

  it('date themselves as Codeforces does: start + relativeTimeSeconds is when the reply was made (a stale one, hours ago)', () => {
    for (const kind of ['all-finished', 'starts-past', 'one-started', 'one-later', 'partial'] as const) {
      for (const madeAt of [t0, t0 + 3 * HOUR]) {
        for (const entry of wrongList(truth, glitch(kind, { shiftSeconds: 2 * HOUR, skewMinutes: 5 }), t0, madeAt, [target])) {
          expect(entry.startTimeSeconds + entry.relativeTimeSeconds).toBe(madeAt);
        }
      }
    }
    for (const entry of wrongList(truth, glitch('stale', { shiftSeconds: 4 * HOUR }), t0, t0 + HOUR)) {
      expect(entry.startTimeSeconds + entry.relativeTimeSeconds).toBe(t0 + HOUR - 4 * HOUR);
    }
  });

  it('lie the same way all episode long: one contest started minutes ago (inside the skew), or listed later', () => {
    const later = t0 + 2 * HOUR;
    const started = wrongList(truth, glitch('one-started', { skewMinutes: 5 }), t0, later, [target]).find((e) => e.id === target)!;
    expect(started.startTimeSeconds).toBe(t0 - 5 * MINUTE);
    expect(started.phase).not.toBe('BEFORE');
    const moved = wrongList(truth, glitch('one-later', { shiftSeconds: DAY }), t0, later, [target]).find((e) => e.id === target)!;
    expect(moved.startTimeSeconds).toBe(listAt(truth, later).find((e) => e.id === target)!.startTimeSeconds + DAY);
    const others = wrongList(truth, glitch('one-later', { shiftSeconds: DAY }), t0, later, [target]).filter((e) => e.id !== target);
    expect(others).toEqual(listAt(truth, later).filter((e) => e.id !== target));
    // Several contests lied about at once, each its own way; the others as they are.
    const several = glitch('several-lies', { seed: 5 });
    // The first hour with at least two contests starting 1 hour to 3 days later.
    let t1 = t0;
    while (pickTargets(truth, several, t1).length < 2) t1 += HOUR;
    const targets = pickTargets(truth, several, t1);
    const lied = wrongList(truth, several, t1, t1 + HOUR, targets);
    expect(lied.filter((e) => !targets.includes(e.id))).toEqual(listAt(truth, t1 + HOUR).filter((e) => !targets.includes(e.id)));
    targets.forEach((id, index) => {
      const honest = listAt(truth, t1 + HOUR).find((e) => e.id === id)!;
      const said = lied.find((e) => e.id === id);
      const lie = contestLie(several, index);
      if (lie === 'missing') expect(said).toBeUndefined();
      else if (lie === 'finished') expect(said).toEqual({ ...honest, phase: 'FINISHED' });
      else if (lie === 'later') expect(said!.startTimeSeconds).toBeGreaterThanOrEqual(honest.startTimeSeconds + 2 * HOUR);
      else expect(said!.startTimeSeconds).toBeLessThan(t1);
    });
    // In about half the episodes the lie is about a contest whose start it lasts until or past.
    let t2 = t0;
    const startsWithin = (t: number, hours: number) =>
      listAt(truth, t).some((e) => e.startTimeSeconds > t + HOUR && e.startTimeSeconds <= t + (hours + 1) * HOUR);
    const startsLater = (t: number) => listAt(truth, t).some((e) => e.startTimeSeconds > t + 5 * HOUR && e.startTimeSeconds < t + 3 * DAY);
    while (!startsWithin(t2, 4) || !startsLater(t2)) t2 += HOUR;
    const picks = Array.from({ length: 200 }, (_, seed) => pickTargets(truth, glitch('one-later', { seed, length: 4 }), t2)[0]!);
    const covering = picks.filter((id) => listAt(truth, t2).find((e) => e.id === id)!.startTimeSeconds <= t2 + 5 * HOUR).length;
    expect(covering / picks.length).toBeGreaterThan(0.4);
    expect(covering / picks.length).toBeLessThan(0.9);
    const kinds = new Set(Array.from({ length: 40 }, (_, seed) => contestLie(glitch('several-lies', { seed }), 0)));
    expect([...kinds].sort()).toEqual(['finished', 'later', 'missing', 'past', 'started']);
    const partial = (at: number) => wrongList(truth, glitch('partial', { keep: 0.5 }), t0, at).map((e) => e.id);
    expect(partial(later).filter((id) => listAt(truth, t0).some((e) => e.id === id))).toEqual(
      partial(t0).filter((id) => listAt(truth, later).some((e) => e.id === id)),
    );
  });
});
