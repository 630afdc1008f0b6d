import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseContestList } from '../../../lambda/sources/codeforces/client.js';
import type { CodeforcesContest } from '../../../lambda/sources/codeforces/schema.js';
import { listedContest } from '../../../lambda/sources/codeforces/source.js';
import type { ContestItem } from '../../../lambda/contests/model.js';
import { DEFAULT_PLAN_SETTINGS, planContests, toItem, type ContestPlan } from '../../../lambda/contests/plan.js';
import { DAY, HOUR, MIN, PlannerWorld, cf, entryAt, honestList, promiseBroken, type TrueContest } from './replay.js';

const NOW = Date.parse('2026-11-29T14:00:00Z');
const NOW_S = NOW / 1000;

function contest(id: number, overrides: Partial<CodeforcesContest> = {}): CodeforcesContest {
  return {
    id,
    name: `Codeforces Round ${id} (Div. 2)`,
    type: 'CF',
    phase: 'BEFORE',
    frozen: false,
    durationSeconds: 7200,
    startTimeSeconds: NOW_S + id * 3600,
    relativeTimeSeconds: -id * 3600,
    ...overrides,
  };
}

/** As a sync stores it: the listed start confirmed, its reminders due there. */
const stored = (c: CodeforcesContest, updatedAt = '2026-11-28T00:00:00.000Z'): ContestItem => ({
  ...toItem(listedContest(c), DEFAULT_PLAN_SETTINGS, updatedAt),
  confirmedStart: c.startTimeSeconds,
  ...(c.phase === 'FINISHED' && c.startTimeSeconds + c.durationSeconds + DEFAULT_PLAN_SETTINGS.finishedRetentionSeconds <= NOW_S
    ? {}
    : { dueStart: c.startTimeSeconds }),
});
const ids = (list: CodeforcesContest[]) => new Set(list.map((c) => cf(c.id)));
const NOTHING: ContestPlan = {
  upserts: [],
  bookkeeping: [],
  unchanged: 0,
  vanished: [],
  restored: [],
  cancelled: [],
  held: [],
  accepted: [],
  remindersToCheck: [],
};
const plan = (
  fetched: CodeforcesContest[],
  storedItems: ContestItem[],
  nowMs = NOW,
  extra: Partial<Parameters<typeof planContests>[0]> = {},
) => planContests({ fetched: fetched.map(listedContest), listedIds: ids(fetched), stored: storedItems, nowMs, ...extra });

describe('planContests', () => {
  it('writes new contests with the data contract, a TTL in epoch seconds, their start confirmed and their reminders due there', () => {
    const result = plan([contest(1)], []);
    expect(result.upserts).toEqual([
      {
        contestId: cf(1),
        platform: 'codeforces',
        platformId: '1',
        name: 'Codeforces Round 1 (Div. 2)',
        type: 'CF',
        phase: 'BEFORE',
        startTimeSeconds: NOW_S + 3600,
        durationSeconds: 7200,
        url: 'https://codeforces.com/contest/1',
        updatedAt: '2026-11-29T14:00:00.000Z',
        expiresAt: NOW_S + 3600 + 7200 + 7 * DAY,
        confirmedStart: NOW_S + 3600,
        dueStart: NOW_S + 3600,
      },
    ]);
    // A new contest may have reminders of an earlier listing under its id: they are read.
    expect(result.remindersToCheck).toEqual([cf(1)]);
  });

  it('rewrites nothing when nothing changed (updatedAt is not compared), and reads no reminder', () => {
    const fetched = [contest(1), contest(2), contest(3, { phase: 'FINISHED', startTimeSeconds: NOW_S - DAY })];
    expect(
      plan(
        fetched,
        fetched.map((c) => stored(c)),
      ),
    ).toEqual({ ...NOTHING, unchanged: 3 });
  });

  it('an item written before the firing rule is rewritten once with its start confirmed, and its reminders are read', () => {
    const legacy = toItem(listedContest(contest(1)), DEFAULT_PLAN_SETTINGS, 'x');
    const result = plan([contest(1)], [legacy]);
    expect(result.bookkeeping).toMatchObject([{ contestId: cf(1), confirmedStart: NOW_S + 3600 }]);
    expect(result.remindersToCheck).toEqual([cf(1)]);
  });

  it('a renamed contest is rewritten, its reminders untouched; a rescheduled one awaits a second reply for its new start', () => {
    const before = [contest(1, { name: 'Codeforces Round (Div. 2)' }), contest(2)];
    const after = [contest(1, { name: 'Codeforces Round 1001 (Div. 2)' }), contest(2, { startTimeSeconds: NOW_S + 99_000 })];
    const first = plan(
      after,
      before.map((c) => stored(c)),
    );
    expect(first.upserts.map((u) => [u.contestId, u.confirmedStart, u.remindersPaused])).toEqual([
      [cf(1), NOW_S + 3600, undefined],
      // Later: due at the new start at once (the later time), so the app may write due reminders at it.
      [cf(2), NOW_S + 7200, undefined],
    ]);
    expect(first.upserts[1]?.pending).toEqual({
      held: false,
      kind: 'reschedule',
      said: `listed@${NOW_S + 99_000}`,
      replies: 1,
      since: NOW_S,
    });
    expect(first.remindersToCheck).toEqual([cf(2)]);
    const next = plan(after, first.upserts, NOW + HOUR * 1000);
    expect(next.bookkeeping.map((b) => [b.contestId, b.confirmedStart, b.pending, b.remindersPaused])).toEqual([
      [cf(2), NOW_S + 99_000, undefined, undefined],
    ]);
  });

  it('keeps recently finished contests, skips long-finished ones never stored', () => {
    const fetched = [
      contest(1, { phase: 'FINISHED', startTimeSeconds: NOW_S - 2 * DAY }),
      contest(2, { phase: 'FINISHED', startTimeSeconds: NOW_S - 30 * DAY }),
    ];
    expect(plan(fetched, []).upserts.map((u) => u.contestId)).toEqual([cf(1)]);
  });

  it('marks stored unfinished contests that vanished, but not ones listed with invalid data', () => {
    const storedItems = [stored(contest(1)), stored(contest(2)), stored(contest(3))];
    const fetched = [contest(1)];
    const result = planContests({
      fetched: fetched.map(listedContest),
      listedIds: new Set([1, 2].map(cf)),
      stored: storedItems,
      nowMs: NOW,
    });
    expect(result.vanished).toMatchObject([{ contestId: cf(3), vanishedAt: NOW_S, missingSyncs: 1, remindersPaused: 'vanished' }]);
    expect(result.remindersToCheck).toEqual([cf(3)]);
  });

  it('deletes a vanished contest after missingSyncsBeforeDelete consecutive misses; its reminders are read (to be paused, never deleted)', () => {
    let items = [stored(contest(1)), stored(contest(2))];
    const fetched = [contest(1)];
    for (let miss = 1; miss <= 3; miss += 1) {
      const result = plan(fetched, items, NOW + miss * HOUR * 1000);
      if (miss < 3) {
        expect(result.vanished).toMatchObject([{ contestId: cf(2), missingSyncs: miss }]);
        items = [items[0]!, ...result.vanished];
      } else {
        expect(result.cancelled).toEqual([cf(2)]);
        expect(result.remindersToCheck).toEqual([cf(2)]);
      }
    }
  });

  it('restores a vanished contest that comes back, without the marker', () => {
    const vanished = { ...stored(contest(2)), vanishedAt: NOW_S - 3600, missingSyncs: 1, remindersPaused: 'vanished' as const };
    const result = plan([contest(2)], [vanished]);
    expect(result.restored).toEqual([cf(2)]);
    expect(result.upserts[0]).not.toHaveProperty('vanishedAt');
    expect(result.upserts[0]).not.toHaveProperty('remindersPaused');
    expect(result.remindersToCheck).toEqual([cf(2)]);
  });

  it('writes a contest the API listed twice once (two writes of one item cannot share a transaction)', () => {
    const result = plan([contest(1), contest(1, { name: 'renamed' })], []);
    expect(result.upserts.map((u) => u.name)).toEqual(['renamed']);
  });

  it('holds the drops of a suspiciously shrunken list (the app keeps showing them; reminders paused), and writes the rest', () => {
    const storedItems = [1, 2, 3, 4, 5].map((id) => stored(contest(id)));
    const result = plan([contest(1), contest(6)], storedItems);
    expect(result.held.map((h) => [h.contestId, h.kind])).toEqual([2, 3, 4, 5].map((id) => [cf(id), 'drop']));
    expect(result.bookkeeping.map((b) => [b.contestId, b.remindersPaused, b.vanishedAt])).toEqual(
      [2, 3, 4, 5].map((id) => [cf(id), 'held', undefined]),
    );
    expect(result.upserts.map((u) => u.contestId)).toEqual([cf(6)]);
  });
});

describe("planContests: the platform's schedule (its settings)", () => {
  /** A contest 20 days ahead, stored with its start confirmed. */
  const far = () => contest(480);
  /** Each reply's outcome, fed as the next reply's stored contests. */
  function replies(listed: CodeforcesContest, settings: typeof DEFAULT_PLAN_SETTINGS, times: number[]) {
    let items = [stored(far())];
    return times.map((at) => {
      const result = plan([listed], items, at, { settings, lastSeenMs: at - HOUR * 1000 });
      items = [...result.upserts, ...result.bookkeeping];
      return result;
    });
  }
  const hourly = (n: number, from = NOW) => Array.from({ length: n }, (_, i) => from + i * HOUR * 1000);
  const SUSPECT = { ...DEFAULT_PLAN_SETTINGS, suspectMovesSeconds: [-12 * HOUR, 12 * HOUR], suspectMoveHeldSeconds: 8 * DAY };

  it('holds a move by exactly a suspect amount past acceptHeldAfterReplies, until it has lasted suspectMoveHeldSeconds', () => {
    const flipped = contest(480, { startTimeSeconds: far().startTimeSeconds - 12 * HOUR });
    const results = replies(flipped, SUSPECT, [...hourly(4), NOW + 8 * DAY * 1000]);
    for (const [i, result] of results.slice(0, 4).entries()) {
      expect(result.held).toEqual([{ contestId: cf(480), kind: 'suspect-move', since: NOW_S, replies: i + 1 }]);
      // Shown as stored, its reminders paused while the move is doubted.
      expect(result.bookkeeping).toMatchObject([{ startTimeSeconds: far().startTimeSeconds, remindersPaused: 'held' }]);
    }
    // Repeated for 8 days (the hours between are replies too: here the 5th reply comes 8 days on).
    expect(results[4]!.accepted).toEqual([{ contestId: cf(480), kind: 'suspect-move', since: NOW_S, replies: 5 }]);
    expect(results[4]!.upserts).toMatchObject([{ startTimeSeconds: flipped.startTimeSeconds }]);
  });

  it('takes a suspect move into the past for that error too, and shows any other amount as before', () => {
    const soon = contest(6);
    const intoPast = plan([{ ...soon, startTimeSeconds: soon.startTimeSeconds - 12 * HOUR }], [stored(soon)], NOW, { settings: SUSPECT });
    expect(intoPast.held.map((h) => h.kind)).toEqual(['suspect-move']);
    const eleven = contest(480, { startTimeSeconds: far().startTimeSeconds - 11 * HOUR });
    const shown = plan([eleven], [stored(far())], NOW, { settings: SUSPECT });
    expect(shown.held).toEqual([]);
    expect(shown.upserts).toMatchObject([{ startTimeSeconds: eleven.startTimeSeconds }]);
  });

  it('a suspect move whose contest comes back to its start is forgotten: nothing ever shown of it', () => {
    const flipped = contest(480, { startTimeSeconds: far().startTimeSeconds + 12 * HOUR });
    const [first] = replies(flipped, SUSPECT, [NOW]);
    const back = plan([far()], first!.bookkeeping, NOW + 7 * DAY * 1000, { settings: SUSPECT });
    expect(back.held).toEqual([]);
    expect(back.accepted).toEqual([]);
    expect(back.bookkeeping).toMatchObject([{ startTimeSeconds: far().startTimeSeconds }]);
    expect(back.bookkeeping[0]!.pending).toBeUndefined();
  });

  it('on a platform that does not move its rounds, holds every move until acceptHeldAfterReplies replies repeat it', () => {
    const still = { ...DEFAULT_PLAN_SETTINGS, moves: false, acceptHeldAfterReplies: 6 };
    const later = contest(480, { startTimeSeconds: far().startTimeSeconds + DAY });
    const results = replies(later, still, hourly(6));
    for (const [i, result] of results.slice(0, 5).entries()) {
      expect(result.held).toEqual([{ contestId: cf(480), kind: 'move', since: NOW_S, replies: i + 1 }]);
      expect(result.bookkeeping).toMatchObject([{ startTimeSeconds: far().startTimeSeconds, remindersPaused: 'held' }]);
    }
    expect(results[5]!.accepted).toEqual([{ contestId: cf(480), kind: 'move', since: NOW_S, replies: 6 }]);
    expect(results[5]!.upserts).toMatchObject([{ startTimeSeconds: later.startTimeSeconds }]);
    // A platform that moves its rounds shows the same move at once.
    expect(plan([later], [stored(far())], NOW).upserts).toMatchObject([{ startTimeSeconds: later.startTimeSeconds }]);
  });

  it('does not hold the return to the confirmed start, nor a change that moves no start', () => {
    const still = { ...DEFAULT_PLAN_SETTINGS, moves: false };
    const shownLater = { ...stored(far()), startTimeSeconds: far().startTimeSeconds + DAY, dueStart: far().startTimeSeconds };
    const undo = plan([far()], [shownLater], NOW, { settings: still });
    expect(undo.held).toEqual([]);
    expect(undo.upserts).toMatchObject([{ startTimeSeconds: far().startTimeSeconds }]);
    const renamed = plan([contest(480, { name: 'Codeforces Round 480 (Div. 1)' })], [stored(far())], NOW, { settings: still });
    expect(renamed.held).toEqual([]);
    expect(renamed.upserts).toMatchObject([{ name: 'Codeforces Round 480 (Div. 1)' }]);
  });
});

describe('planContests: a listing breaks a run of misses (review: the held-entry branch kept missingSyncs)', () => {
  it('miss, listed with a held change, miss, miss: never deleted', () => {
    const world = new PlannerWorld();
    const base = [contest(1), contest(8), contest(9)];
    world.sync(base, NOW_S);
    const without2 = [contest(1), contest(9)];
    // Contest 8 listed running hours before its start: held ('phase').
    const held2 = [...without2, contest(8, { phase: 'CODING' })];
    const steps = [without2, held2, without2, without2];
    steps.forEach((list, i) => {
      const result = world.sync(
        list.map((c) => ({ ...c, relativeTimeSeconds: NOW_S + (i + 1) * HOUR - c.startTimeSeconds })),
        NOW_S + (i + 1) * HOUR,
      );
      expect(result.plan?.cancelled).toEqual([]);
      if (i === 1) expect(result.plan?.held.map((h) => [h.contestId, h.kind])).toEqual([[cf(8), 'phase']]);
    });
    expect(world.contests.get(cf(8))).toMatchObject({ vanishedAt: NOW_S + 3 * HOUR, missingSyncs: 2 });
  });

  it('miss / invalid / miss / invalid / miss does not delete a contest Codeforces listed', () => {
    let items = [stored(contest(1)), stored(contest(2))];
    for (let i = 0; i < 5; i += 1) {
      const listedIds = new Set((i % 2 === 0 ? [1] : [1, 2]).map(cf));
      const result = planContests({ fetched: [listedContest(contest(1))], listedIds, stored: items, nowMs: NOW + i * HOUR * 1000 });
      expect(result.cancelled).toEqual([]);
      const after = new Map(items.map((item) => [item.contestId, item]));
      for (const item of [...result.upserts, ...result.bookkeeping, ...result.vanished]) after.set(item.contestId, item);
      items = [...after.values()];
    }
    expect(items.find((c) => c.contestId === cf(2))).toMatchObject({ missingSyncs: 1 });
  });
});

describe('planContests: contests stuck unfinished long after their end', () => {
  const stuck = contest(1308, { phase: 'PENDING_SYSTEM_TEST', startTimeSeconds: NOW_S - 5 * 365 * DAY });

  it('does not store one that is not stored (it would expire at once and be inserted again after every TTL deletion)', () => {
    expect(plan([stuck], []).upserts).toEqual([]);
  });

  it('a stored one past its TTL is marked once (its reminders get its TTL, orphans bounded), then never rewritten', () => {
    const item = stored(stuck);
    const first = plan([{ ...stuck, name: 'renamed' }], [item]);
    expect(first.bookkeeping).toMatchObject([{ contestId: cf(1308), name: item.name, remindersPaused: 'expired' }]);
    expect(first.remindersToCheck).toEqual([cf(1308)]);
    expect(plan([{ ...stuck, name: 'renamed' }], first.bookkeeping)).toEqual({ ...NOTHING, unchanged: 1 });
  });

  it('on the recorded list plus two stuck entries like 1308 and 1309: hourly syncs write nothing after the first', () => {
    const raw = JSON.parse(readFileSync(new URL('../../fixtures/contest-list.json', import.meta.url), 'utf8')) as { result: unknown[] };
    const meta = JSON.parse(readFileSync(new URL('../../fixtures/contest-list.meta.json', import.meta.url), 'utf8')) as {
      recordedAtSeconds: number;
    };
    const stuckEntries = [
      {
        id: 1308,
        name: 'VK Cup 2019-2020',
        type: 'CF',
        phase: 'PENDING_SYSTEM_TEST',
        frozen: false,
        durationSeconds: 10800,
        startTimeSeconds: 1584014700,
      },
      {
        id: 1309,
        name: 'Codeforces Round (Div. 1)',
        type: 'CF',
        phase: 'PENDING_SYSTEM_TEST',
        frozen: false,
        durationSeconds: 7200,
        startTimeSeconds: 1583600000,
      },
    ];
    const nowS = meta.recordedAtSeconds;
    const parsed = parseContestList([...raw.result, ...stuckEntries], { nowSeconds: nowS });
    if (!parsed.ok) throw new Error('fixture did not parse');
    const { contests, listedIds } = parsed.value;
    const first = planContests({
      fetched: contests.map(listedContest),
      listedIds: new Set(listedIds.map(cf)),
      stored: [],
      nowMs: nowS * 1000,
    });
    expect(first.upserts.some((u) => u.contestId === cf(1308) || u.contestId === cf(1309))).toBe(false);
    let items = first.upserts;
    for (let hour = 1; hour <= 3; hour += 1) {
      const next = planContests({
        fetched: contests.map(listedContest),
        listedIds: new Set(listedIds.map(cf)),
        stored: items,
        nowMs: (nowS + hour * 3600) * 1000,
      });
      expect(next.upserts).toEqual([]);
      expect(next.bookkeeping).toEqual([]);
      items = items.filter((item) => item.expiresAt > nowS + hour * 3600);
    }
  });
});

describe('planContests: evidence', () => {
  it('held evidence that changes starts again; evidence that stops is forgotten', () => {
    const items = [1, 2, 3, 4].map((id) => stored(contest(id)));
    const first = plan([contest(1)], items);
    expect(first.held).toHaveLength(3);
    const back = plan(
      [1, 2, 3, 4].map((id) => contest(id)),
      [items[0]!, ...first.bookkeeping],
      NOW + HOUR * 1000,
    );
    expect(back.held).toEqual([]);
    expect(back.bookkeeping.every((b) => b.pending === undefined && b.remindersPaused === undefined)).toBe(true);
  });

  it('evidence counts across phase progress: a held contest converges while it runs', () => {
    // Contest 1 is stored as starting in 10 h; a reply says it started 2 h ago (held: start-in-past).
    const item = stored(contest(10));
    const start = NOW_S - 2 * HOUR;
    let items = [item];
    const phases = ['CODING', 'SYSTEM_TEST', 'FINISHED'] as const;
    phases.forEach((phase, i) => {
      const result = plan([contest(10, { startTimeSeconds: start, phase, durationSeconds: 4 * HOUR })], items, NOW + i * HOUR * 1000, {
        lastSeenMs: NOW,
      });
      if (i < 2) {
        expect(result.held.map((h) => [h.kind, h.replies])).toEqual([['start-in-past', i + 1]]);
        items = result.bookkeeping;
      } else {
        expect(result.accepted.map((h) => [h.kind, h.replies])).toEqual([['start-in-past', 3]]);
        // Shown, but the start was never shown ahead: not confirmed, so no reminder is due at it.
        expect(result.upserts).toMatchObject([
          { phase: 'FINISHED', startTimeSeconds: start, confirmedStart: NOW_S + 10 * HOUR, remindersPaused: 'finished' },
        ]);
      }
    });
  });

  it('with plausibility off (the broken variant) the glitch is shown at once', () => {
    const items = [stored(contest(1))];
    const result = plan([contest(1, { phase: 'FINISHED', startTimeSeconds: NOW_S - DAY })], items, NOW, {
      settings: { ...DEFAULT_PLAN_SETTINGS, plausibility: false },
    });
    expect(result.upserts.map((u) => u.phase)).toEqual(['FINISHED']);
  });
});

// ---- the review's cases: hour by hour, with the app and a notifier every 10 minutes ----

const T0 = Date.parse('2026-12-01T00:00:00Z') / 1000;
const fixed = (id: number, start: number, durationSeconds = 2 * HOUR): TrueContest => ({ id, durationSeconds, startAt: () => start });
const USERS: [string, number][] = [
  ['a', 10],
  ['b', 60],
  ['c', 1440],
];

/** Upcoming rounds and two finished ones, synced once at T0 with reminders set by the app. */
function worldWith(truth: TrueContest[]): PlannerWorld {
  const world = new PlannerWorld();
  world.sync(honestList(truth, T0 - HOUR + 2), T0 - HOUR + 2);
  for (const c of truth) {
    if (c.startAt(T0) <= T0) continue;
    for (const [user, minutes] of USERS) if (c.startAt(T0) - 60 * minutes > T0) world.setReminder(c.id, user, minutes);
  }
  return world;
}

function brokenPromises(
  world: PlannerWorld,
  truth: TrueContest[],
  bounds: (c: TrueContest) => { episodeEnd?: number; firstShown?: number } = () => ({}),
): string[] {
  const problems: string[] = [];
  for (const reminder of world.reminders.values()) {
    const c = truth.find((t) => cf(t.id) === reminder.contestId)!;
    problems.push(...promiseBroken(world.fired, reminder, (t) => c.startAt(t), bounds(c)));
  }
  return problems;
}

const UPCOMING = (): TrueContest[] => [
  fixed(101, T0 + 5 * HOUR + 35 * MIN),
  fixed(102, T0 + 26 * HOUR + 35 * MIN),
  fixed(103, T0 + 30 * HOUR + 5 * MIN),
  fixed(104, T0 + 50 * HOUR),
  fixed(105, T0 + 75 * HOUR + 20 * MIN),
  fixed(90, T0 - 3 * DAY),
];

/** The harmful replies, each a persisting lie with fresh times (made at `t`). */
const LIES: Record<string, (truth: TrueContest[], t: number) => CodeforcesContest[]> = {
  'all-FINISHED (starts moved an hour back)': (truth, t) =>
    honestList(truth, t).map((e) => {
      if (e.phase === 'FINISHED') return e;
      const start = Math.min(e.startTimeSeconds, t - HOUR);
      return { ...e, phase: 'FINISHED', startTimeSeconds: start, relativeTimeSeconds: t - start };
    }),
  'all-FINISHED (starts kept)': (truth, t) => honestList(truth, t).map((e) => (e.phase === 'FINISHED' ? e : { ...e, phase: 'FINISHED' })),
  'starts moved into the past': (truth, t) =>
    honestList(truth, t).map((e) => (e.startTimeSeconds > t ? { ...e, startTimeSeconds: t - HOUR, relativeTimeSeconds: HOUR } : e)),
  'a partial list': (truth, t) => honestList(truth, t).filter((e) => e.id % 2 === 0),
};

describe('the review: a wrong upstream repeated for hours costs lateness only (nothing lost, early or twice)', () => {
  for (const [name, lie] of Object.entries(LIES)) {
    for (const repeats of [3, 6]) {
      it(`${name}, ${repeats} replies in a row`, () => {
        const truth = UPCOMING();
        const world = worldWith(truth);
        const reminders = world.reminders.size;
        const from = 3;
        const episodeEnd = T0 + (from + repeats) * HOUR + 2;
        world.run(T0, 100, (t, hour) => (hour >= from && hour < from + repeats ? lie(truth, t) : honestList(truth, t)));
        expect(brokenPromises(world, truth, () => ({ episodeEnd }))).toEqual([]);
        // Never lost: every reminder is still stored (the sync never deletes one).
        expect(world.reminders.size).toBe(reminders);
        expect(reminders).toBe(14);
      });
    }
  }

  it('the checks bite: with the firing rule and the guards off, the same lies send reminders early or twice', () => {
    const broken = { ...DEFAULT_PLAN_SETTINGS, plausibility: false, firingRule: false };
    for (const lie of [LIES['starts moved into the past']!]) {
      const truth = UPCOMING();
      const world = new PlannerWorld(broken);
      world.sync(honestList(truth, T0 - HOUR + 2), T0 - HOUR + 2);
      for (const c of truth)
        for (const [user, minutes] of USERS) if (c.startAt(T0) - 60 * minutes > T0) world.setReminder(c.id, user, minutes);
      world.run(T0, 100, (t, hour) => (hour >= 3 && hour < 6 ? lie(truth, t) : honestList(truth, t)));
      expect(brokenPromises(world, truth, () => ({ episodeEnd: T0 + 6 * HOUR + 2 })).length).toBeGreaterThan(0);
    }
  });

  it('the view equals the truth one interval after the episode ends (also after the lie was accepted)', () => {
    for (const lie of Object.values(LIES)) {
      const truth = UPCOMING();
      const world = worldWith(truth);
      world.run(T0, 7, (t, hour) => (hour >= 1 && hour < 7 ? lie(truth, t) : honestList(truth, t)));
      world.run(T0 + 7 * HOUR, 1, (t) => honestList(truth, t));
      for (const c of truth.slice(0, 5)) {
        expect(world.contests.get(cf(c.id))).toMatchObject({ startTimeSeconds: c.startAt(0), phase: entryAt(c, T0 + 7 * HOUR + 2).phase });
        expect(world.contests.get(cf(c.id))?.vanishedAt).toBeUndefined();
      }
    }
  });

  it('a frozen stale reply served again is stale: never applied, so it never converges', () => {
    const truth = UPCOMING();
    const world = worldWith(truth);
    const frozen = LIES['all-FINISHED (starts kept)']!(truth, T0 + 2);
    const results = world.run(T0, 100, (t, hour) => (hour < 5 ? frozen : honestList(truth, t)));
    expect(results.slice(0, 6).map((r) => r.verdict.stale)).toEqual([false, true, true, true, true, false]);
    expect(results[0]?.plan?.held).toHaveLength(5);
    // Paused by the held finish all along (never accepted): the first send comes after the episode.
    expect(world.fired.filter((f) => f.at < T0 + 5 * HOUR)).toEqual([]);
    expect(brokenPromises(world, truth, () => ({ episodeEnd: T0 + 5 * HOUR + 2 }))).toEqual([]);
  });

  it('a lie longer than any bound: only late — nothing lost, nothing twice, nothing early', () => {
    const truth = UPCOMING();
    const world = worldWith(truth);
    const lie = LIES['all-FINISHED (starts moved an hour back)']!;
    world.run(T0, 100, (t, hour) => (hour >= 2 && hour < 40 ? lie(truth, t) : honestList(truth, t)));
    const problems = brokenPromises(world, truth, () => ({ episodeEnd: T0 + 40 * HOUR + 2 }));
    expect(problems).toEqual([]);
    // Those due during the lie were sent after it ended, late.
    const late = world.fired.filter((f) => f.at > T0 + 40 * HOUR);
    expect(late.length).toBeGreaterThan(0);
    expect(new Set(world.fired.map((f) => `${f.contestId}/${f.userId}`)).size).toBe(world.fired.length);
  });
});

describe('the review: honest change near the start', () => {
  it('3 of 4 rounds postponed a day 90 minutes before the first start: held, and no reminder fires early or twice', () => {
    const first = T0 + 5 * HOUR;
    const postponedAt = first - 90 * MIN;
    const moved = (id: number, start: number): TrueContest => ({
      id,
      durationSeconds: 2 * HOUR,
      startAt: (t) => (t >= postponedAt ? start + DAY : start),
    });
    const truth = [moved(201, first), moved(202, first + 30 * MIN), moved(203, first + 2 * HOUR), fixed(204, first + 3 * HOUR)];
    const world = new PlannerWorld();
    world.sync(honestList(truth, T0 - 30 * HOUR + 2), T0 - 30 * HOUR + 2);
    for (const c of truth) for (const [user, minutes] of USERS) world.setReminder(c.id, user, minutes);
    world.run(T0 - 29 * HOUR, 29 + 60, (t) => honestList(truth, t));
    const firstShown = Math.ceil((postponedAt - T0) / HOUR) * HOUR + T0 + 2;
    const problems = brokenPromises(world, truth, () => ({ firstShown }));
    expect(problems).toEqual([]);
    // The three moved rounds' 1-day reminders had fired for the old start; each fires once more for the new one.
    expect(world.fired.filter((f) => f.userId === 'c' && f.contestId !== cf(204))).toHaveLength(6);
  });

  for (const [when, announced] of [
    ['just before a sync', T0 + 2 * HOUR - 5 * MIN],
    ['just after a sync', T0 + 2 * HOUR + 5 * MIN],
  ] as const) {
    it(`a round moved 2.5 h earlier, announced 1.5 h ahead ${when}: each reminder fires once, none early, within the promise`, () => {
      const start = announced + 4 * HOUR;
      const truth: TrueContest[] = [{ id: 301, durationSeconds: 2 * HOUR, startAt: (t) => (t >= announced ? start - 2.5 * HOUR : start) }];
      const world = new PlannerWorld();
      world.sync(honestList(truth, T0 - 2 * HOUR + 2), T0 - 2 * HOUR + 2);
      for (const [user, minutes] of [
        ['a', 10],
        ['d', 30],
        ['b', 60],
      ] as const)
        world.setReminder(301, user, minutes);
      world.run(T0 - HOUR, 12, (t) => honestList(truth, t));
      const firstShown = Math.ceil((announced - T0) / HOUR) * HOUR + T0 + 2;
      const problems = [...world.reminders.values()].flatMap((r) =>
        promiseBroken(world.fired, r, (t) => truth[0]!.startAt(t), { firstShown }),
      );
      expect(problems).toEqual([]);
      // Confirmed by the next reply: a reminder whose time comes after it fires on time.
      const newStart = start - 2.5 * HOUR;
      const a = world.fired.find((f) => f.userId === 'a')!;
      if (when === 'just before a sync') expect(a.at - (newStart - 10 * MIN)).toBeLessThanOrEqual(10 * MIN);
      expect(world.fired.every((f) => f.start === newStart)).toBe(true);
    });
  }

  it('a mass withdrawal, held: reminders of the withdrawn rounds are paused at once and never fire', () => {
    const truth = UPCOMING();
    const withdrawnAt = T0 + 2 * HOUR;
    for (const c of truth.slice(0, 4)) c.listedAt = (t) => t < withdrawnAt;
    const world = worldWith(truth);
    world.run(T0, 100, (t) => honestList(truth, t));
    expect(world.fired.filter((f) => [101, 102, 103, 104].map(cf).includes(f.contestId))).toEqual([]);
    expect(world.remindersOf(101).every((r) => r.dueAt === undefined)).toBe(true);
    expect(world.reminders.size).toBe(14);
  });
});

describe('the review: one believable lie per contest', () => {
  for (const repeats of [2, 6]) {
    it(`one contest listed as started 5 minutes ago in ${repeats} consecutive replies (fresh times): no reminder fires early`, () => {
      const truth = UPCOMING();
      const world = worldWith(truth);
      const liar = 102;
      world.run(T0, 100, (t, hour) => {
        const list = honestList(truth, t);
        if (hour < 2 || hour >= 2 + repeats) return list;
        return list.map((e) =>
          e.id === liar ? { ...e, phase: 'CODING', startTimeSeconds: t - 5 * MIN, relativeTimeSeconds: 5 * MIN } : e,
        );
      });
      expect(brokenPromises(world, truth, () => ({ episodeEnd: T0 + (2 + repeats) * HOUR + 2 }))).toEqual([]);
    });
  }

  it('the same lie with one frozen start, repeated: confirmed by two replies, but never shown ahead, so never due', () => {
    const truth = UPCOMING();
    const world = worldWith(truth);
    const lieStart = T0 + 2 * HOUR - 5 * MIN;
    world.run(T0, 100, (t, hour) => {
      const list = honestList(truth, t);
      if (hour < 2 || hour >= 8) return list;
      return list.map((e) => (e.id === 102 ? { ...e, phase: 'CODING', startTimeSeconds: lieStart, relativeTimeSeconds: t - lieStart } : e));
    });
    expect(brokenPromises(world, truth, () => ({ episodeEnd: T0 + 8 * HOUR + 2 }))).toEqual([]);
  });

  it('one reply lists a contest a day later: the move later lands at once, its undo too; reminders fire once, within the promise', () => {
    const truth = UPCOMING();
    const world = worldWith(truth);
    world.run(T0, 100, (t, hour) => {
      const list = honestList(truth, t);
      return hour === 4
        ? list.map((e) =>
            e.id === 101 ? { ...e, startTimeSeconds: e.startTimeSeconds + DAY, relativeTimeSeconds: t - e.startTimeSeconds - DAY } : e,
          )
        : list;
    });
    expect(brokenPromises(world, truth, (c) => (c.id === 101 ? { episodeEnd: T0 + 5 * HOUR + 2 } : {}))).toEqual([]);
    // The undo landed at once: the 10-minute reminder fired on time.
    const a = world.fired.find((f) => f.contestId === cf(101) && f.userId === 'a')!;
    expect(a.at - (T0 + 5 * HOUR + 25 * MIN)).toBeLessThanOrEqual(10 * MIN);
  });
});

describe('at most once per start: a reminder sent for a lie is not sent again for the truth', () => {
  it('sent for its start, then three replies list the contest 3 h later (sent again for that start), then the truth: not a third time', () => {
    const truth = UPCOMING();
    const world = worldWith(truth);
    const target = 103; // T0 + 30h05: its 1-day reminder is due at T0 + 6h05
    world.run(T0, 100, (t, hour) => {
      const list = honestList(truth, t);
      if (hour < 8 || hour >= 11) return list;
      return list.map((e) =>
        e.id === target
          ? { ...e, startTimeSeconds: e.startTimeSeconds + 3 * HOUR, relativeTimeSeconds: t - e.startTimeSeconds - 3 * HOUR }
          : e,
      );
    });
    const sends = world.fired.filter((f) => f.contestId === cf(target) && f.userId === 'c');
    const start = truth.find((c) => c.id === target)!.startAt(0);
    expect(sends.map((f) => f.start)).toEqual([start, start + 3 * HOUR]);
    expect(world.remindersOf(target).find((r) => r.userId === 'c')).toMatchObject({
      paused: 'notified',
      sentStarts: new Set([start]),
      notifiedStart: start + 3 * HOUR,
    });
  });
});

describe('the review: reminders of a contest that returns, and orphans', () => {
  it('a contest deleted after its misses and re-listed under its id brings its reminders back at once, at the listed time', () => {
    const truth = UPCOMING();
    const c = truth[2]!; // 103
    c.listedAt = (t) => t < T0 + HOUR || t >= T0 + 6 * HOUR;
    const world = worldWith(truth);
    world.run(T0, 5, (t) => honestList(truth, t));
    expect(world.contests.has(cf(103))).toBe(false);
    expect(world.remindersOf(103).map((r) => r.paused)).toEqual(['vanished', 'vanished', 'vanished']);
    world.sync(honestList(truth, T0 + 6 * HOUR + 2), T0 + 6 * HOUR + 2);
    expect(world.remindersOf(103).map((r) => r.dueAt)).toEqual(USERS.map(([, m]) => c.startAt(0) - 60 * m));
    world.run(T0 + 6 * HOUR, 1, () => undefined);
    world.run(T0 + 7 * HOUR, 100, (t) => honestList(truth, t));
    expect(brokenPromises(world, truth, (x) => (x.id === 103 ? { firstShown: T0 + 6 * HOUR + 2 } : {}))).toEqual([]);
  });

  it("reminders keep a TTL: the contest's own, also when it is deleted or left unfinished past its TTL", () => {
    const truth = UPCOMING();
    truth[3]!.listedAt = (t) => t < T0 + HOUR;
    const world = worldWith(truth);
    const expiresAt = world.contests.get(cf(104))!.expiresAt;
    world.run(T0, 5, (t) => honestList(truth, t));
    expect(world.contests.has(cf(104))).toBe(false);
    expect(world.remindersOf(104).map((r) => r.expiresAt)).toEqual([expiresAt, expiresAt, expiresAt]);
    // A contest stuck unfinished: its reminders are paused when it passes its TTL, with that TTL.
    const stuck = { ...stored(contest(7, { startTimeSeconds: T0 - 8 * DAY, phase: 'PENDING_SYSTEM_TEST' })) };
    world.contests.set(cf(7), stuck);
    world.reminders.set(`${cf(7)}/z`, { contestId: cf(7), userId: 'z', minutesBefore: 10, remindAt: stuck.startTimeSeconds - 600 });
    world.sync(
      [...honestList(truth, T0 + 5 * HOUR), entryAt(fixed(7, stuck.startTimeSeconds), T0 + 5 * HOUR)].map((e) =>
        e.id === 7 ? { ...e, phase: 'PENDING_SYSTEM_TEST' as const } : e,
      ),
      T0 + 5 * HOUR,
    );
    expect(world.reminders.get(`${cf(7)}/z`)).toMatchObject({ paused: 'expired', expiresAt: stuck.expiresAt });
  });
});

describe('a lie longer than any bound after an honest postponement (F5): only late, never lost', () => {
  it('postponed 14:35 → 16:15 (shown 4 h ahead at 12:00), then an all-FINISHED lie 13:00–17:00 that converges: the reminders are due at once when the truth returns', () => {
    const oldStart = T0 + 14 * HOUR + 35 * MIN;
    const newStart = T0 + 16 * HOUR + 15 * MIN;
    const postponedAt = T0 + 11 * HOUR + 30 * MIN;
    const moved: TrueContest = { id: 501, durationSeconds: 2 * HOUR + 30 * MIN, startAt: (t) => (t >= postponedAt ? newStart : oldStart) };
    const truth = [moved, fixed(502, T0 + 30 * HOUR), fixed(503, T0 + 40 * HOUR)];
    // The same lie made fresh every hour: FINISHED, every start moved before the first lie (so it converges).
    const lieFrom = 13;
    const lieUntil = 18;
    const lied = T0 + lieFrom * HOUR - 90 * MIN;
    const lie = (t: number) =>
      honestList(truth, t).map((e) =>
        e.phase === 'FINISHED' ? e : { ...e, phase: 'FINISHED' as const, startTimeSeconds: lied, relativeTimeSeconds: t - lied },
      );
    const replyAt = (t: number, hour: number) => (hour >= lieFrom && hour < lieUntil ? lie(t) : honestList(truth, t));
    const world = new PlannerWorld();
    world.sync(honestList(truth, T0 - HOUR + 2), T0 - HOUR + 2);
    for (const [user, minutes] of [
      ['a', 10],
      ['d', 30],
      ['b', 60],
    ] as const)
      world.setReminder(501, user, minutes);
    world.run(T0, 14, (t, hour) => replyAt(t, hour));
    world.run(T0 + 14 * HOUR, 1, (t) => replyAt(t, 14));
    // Set while the lie is held: the contest pauses its reminders, so the app writes it without dueAt.
    expect(world.setReminder(501, 'soon', 123).dueAt).toBeUndefined();
    world.run(T0 + 15 * HOUR, 20, (t, hour) => replyAt(t, hour + 15));
    const episodeEnd = T0 + lieUntil * HOUR + 2;
    const problems = world.remindersOf(501).flatMap((r) => promiseBroken(world.fired, r, (t) => moved.startAt(t), { episodeEnd }));
    expect(problems).toEqual([]);
    // All four sent once, for the true start, late: at the first notifier pass after the truth returned.
    const sends = world.fired.filter((f) => f.contestId === cf(501));
    expect(sends.map((f) => f.userId).sort()).toEqual(['a', 'b', 'd', 'soon']);
    expect(sends.every((f) => f.start === newStart && f.at > episodeEnd && f.at <= episodeEnd + 10 * MIN)).toBe(true);
  });

  it('postponed 14:35 → 16:15 (shown ahead at 12:00), then "started 5 minutes ago" at 13:00 and 14:00: the reminders never fall back to 14:35', () => {
    const oldStart = T0 + 14 * HOUR + 35 * MIN;
    const newStart = T0 + 16 * HOUR + 15 * MIN;
    const postponedAt = T0 + 11 * HOUR + 30 * MIN;
    const moved: TrueContest = { id: 501, durationSeconds: 2 * HOUR, startAt: (t) => (t >= postponedAt ? newStart : oldStart) };
    const truth = [moved, fixed(502, T0 + 30 * HOUR), fixed(503, T0 + 40 * HOUR)];
    const replyAt = (t: number, hour: number) =>
      hour === 13 || hour === 14
        ? honestList(truth, t).map((e) =>
            e.id === 501 ? { ...e, phase: 'CODING' as const, startTimeSeconds: t - 5 * MIN, relativeTimeSeconds: 5 * MIN } : e,
          )
        : honestList(truth, t);
    const world = new PlannerWorld();
    world.sync(honestList(truth, T0 - HOUR + 2), T0 - HOUR + 2);
    for (const [user, minutes] of [
      ['a', 10],
      ['d', 30],
      ['b', 60],
    ] as const)
      world.setReminder(501, user, minutes);
    world.run(T0, 30, (t, hour) => replyAt(t, hour));
    const problems = world
      .remindersOf(501)
      .flatMap((r) => promiseBroken(world.fired, r, (t) => moved.startAt(t), { episodeEnd: T0 + 15 * HOUR + 2 }));
    expect(problems).toEqual([]);
    const sends = world.fired.filter((f) => f.contestId === cf(501));
    expect(sends.map((f) => f.userId).sort()).toEqual(['a', 'b', 'd']);
    expect(sends.every((f) => f.start === newStart && f.at >= newStart - 60 * MIN - 10 * MIN)).toBe(true);
  });
});

describe('the truth returns to a start replies showed ahead, minutes before it (a later lie confirmed in between)', () => {
  it('15:05 shown for days; 10:00–14:00 a fresh "9.5 h later" lie (confirmed by its second reply); 15:00 the truth, 5 min ahead: every reminder is sent for 15:05 within 70 minutes of the episode end', () => {
    const start = T0 + 15 * HOUR + 5 * MIN;
    const later = start + 9 * HOUR + 35 * MIN;
    const truth = [fixed(601, start, 2 * HOUR + 30 * MIN), fixed(602, T0 + 40 * HOUR), fixed(603, T0 + 60 * HOUR)];
    const replyAt = (t: number, hour: number) =>
      hour >= 10 && hour < 15
        ? honestList(truth, t).map((e) => (e.id === 601 ? { ...e, startTimeSeconds: later, relativeTimeSeconds: t - later } : e))
        : honestList(truth, t);
    const world = new PlannerWorld();
    world.sync(honestList(truth, T0 - HOUR + 2), T0 - HOUR + 2);
    for (const [user, minutes] of [
      ['a', 10],
      ['d', 30],
      ['b', 60],
      ['e', 180],
    ] as const)
      world.setReminder(601, user, minutes);
    world.run(T0, 30, replyAt);
    const episodeEnd = T0 + 15 * HOUR + 2;
    const problems = world.remindersOf(601).flatMap((r) => promiseBroken(world.fired, r, () => start, { episodeEnd }));
    expect(problems).toEqual([]);
  });
});

describe('the truth returns to a start replies showed ahead, after it began (a later lie confirmed in between)', () => {
  it('14:35 shown for days; 13:00 and 14:00 a fresh "16 h later" lie (confirmed by its second reply); 15:00 the truth, started 25 min ago: every reminder is sent for 14:35 within 70 minutes of the episode end', () => {
    const start = T0 + 14 * HOUR + 35 * MIN;
    const later = start + 16 * HOUR + 17 * MIN;
    const truth = [fixed(611, start), fixed(612, T0 + 40 * HOUR), fixed(613, T0 + 60 * HOUR)];
    const replyAt = (t: number, hour: number) =>
      hour === 13 || hour === 14
        ? honestList(truth, t).map((e) => (e.id === 611 ? { ...e, startTimeSeconds: later, relativeTimeSeconds: t - later } : e))
        : honestList(truth, t);
    const world = new PlannerWorld();
    world.sync(honestList(truth, T0 - HOUR + 2), T0 - HOUR + 2);
    for (const [user, minutes] of [
      ['a', 10],
      ['d', 30],
      ['b', 60],
    ] as const)
      world.setReminder(611, user, minutes);
    world.run(T0, 30, replyAt);
    const episodeEnd = T0 + 15 * HOUR + 2;
    const problems = world.remindersOf(611).flatMap((r) => promiseBroken(world.fired, r, () => start, { episodeEnd }));
    expect(problems).toEqual([]);
  });
});

describe('the truth moves while a lie that converged is shown (simulated seed 5, contest 2200)', () => {
  it('14:35 confirmed; from 10:00 six fresh replies move every upcoming start 2.7 h before 10:00 (converged at 12:00); at 13:00 the truth postpones the round by a day: no reminder fires for 14:35', () => {
    const start = T0 + 14 * HOUR + 35 * MIN;
    const postponed = start + DAY + 50 * MIN;
    const moved: TrueContest = { id: 621, durationSeconds: 2 * HOUR, startAt: (t) => (t >= T0 + 13 * HOUR ? postponed : start) };
    const truth = [moved, fixed(622, T0 + 40 * HOUR), fixed(623, T0 + 60 * HOUR)];
    const lied = T0 + 10 * HOUR - 2 * HOUR - 42 * MIN;
    const replyAt = (t: number, hour: number) =>
      hour >= 10 && hour < 16
        ? honestList(truth, t).map((e) => (e.startTimeSeconds > t ? { ...e, startTimeSeconds: lied, relativeTimeSeconds: t - lied } : e))
        : honestList(truth, t);
    const world = new PlannerWorld();
    world.sync(honestList(truth, T0 - HOUR + 2), T0 - HOUR + 2);
    for (const [user, minutes] of [
      ['a', 5],
      ['b', 10],
      ['c', 60],
    ] as const)
      world.setReminder(621, user, minutes);
    world.run(T0, 48, replyAt);
    const episodeEnd = T0 + 16 * HOUR + 2;
    const problems = world.remindersOf(621).flatMap((r) => promiseBroken(world.fired, r, (t) => moved.startAt(t), { episodeEnd }));
    expect(problems).toEqual([]);
  });
});

describe('the truth returns to a start replies showed ahead, after the contest finished (a later lie confirmed in between)', () => {
  it('14:35 shown for days; 13:00–17:00 a fresh "16 h later" lie (confirmed by its second reply); 18:00 the truth, FINISHED at 14:35: every reminder is sent for 14:35 within 70 minutes of the episode end', () => {
    const start = T0 + 14 * HOUR + 35 * MIN;
    const later = start + 16 * HOUR + 17 * MIN;
    const truth = [fixed(631, start), fixed(632, T0 + 40 * HOUR), fixed(633, T0 + 60 * HOUR)];
    const replyAt = (t: number, hour: number) =>
      hour >= 13 && hour < 18
        ? honestList(truth, t).map((e) =>
            e.id === 631 ? { ...e, phase: 'BEFORE' as const, startTimeSeconds: later, relativeTimeSeconds: t - later } : e,
          )
        : honestList(truth, t);
    const world = new PlannerWorld();
    world.sync(honestList(truth, T0 - HOUR + 2), T0 - HOUR + 2);
    for (const [user, minutes] of [
      ['a', 10],
      ['b', 60],
    ] as const)
      world.setReminder(631, user, minutes);
    world.run(T0, 30, replyAt);
    const episodeEnd = T0 + 18 * HOUR + 2;
    const problems = world.remindersOf(631).flatMap((r) => promiseBroken(world.fired, r, () => start, { episodeEnd }));
    expect(problems).toEqual([]);
  });
});
