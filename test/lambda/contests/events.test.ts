import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CodeforcesContest } from '../../../lambda/sources/codeforces/schema.js';
import { listedContest } from '../../../lambda/sources/codeforces/source.js';
import { DEFAULT_PLAN_SETTINGS, toItem } from '../../../lambda/contests/plan.js';
import {
  WITHDRAWN_TOLD_AFTER_SECONDS,
  announce,
  changeOf,
  contestEventId,
  publishedAfter,
  publishedOf,
  viewOf,
} from '../../../lambda/contests/events.js';
import { CONTEST_EVENT } from '../../../lambda/contests/event-schemas.js';
import type { ContestItem } from '../../../lambda/contests/model.js';
import { DAY, HOUR, MIN, PlannerWorld, cf, honestList, type TrueContest } from './replay.js';
import { platformIdOf } from '../../../lambda/sources/ids.js';

const T0 = Date.parse('2026-12-01T00:00:00Z') / 1000;
const fixed = (id: number, start: number): TrueContest => ({ id, durationSeconds: 2 * HOUR, startAt: () => start });
const upcoming = (): TrueContest[] => [
  fixed(101, T0 + 30 * HOUR),
  fixed(102, T0 + 40 * HOUR),
  fixed(103, T0 + 50 * HOUR),
  fixed(104, T0 + 60 * HOUR),
  fixed(90, T0 - 3 * DAY),
];

function entry(id: number, start: number, overrides: Partial<CodeforcesContest> = {}): CodeforcesContest {
  return {
    id,
    name: `Round ${id}`,
    type: 'CF',
    phase: 'BEFORE',
    frozen: false,
    durationSeconds: 7200,
    startTimeSeconds: start,
    relativeTimeSeconds: -HOUR,
    ...overrides,
  };
}
const item = (overrides: Partial<ContestItem> = {}): ContestItem => ({
  ...toItem(listedContest(entry(7, T0 + DAY)), DEFAULT_PLAN_SETTINGS, 'x'),
  confirmedStart: T0 + DAY,
  ...overrides,
});

/** What each contest's users heard, in order: `<type> <from?>→<to?>` per contest (by its Codeforces id). */
function heard(world: PlannerWorld): Record<string, string[]> {
  const byContest: Record<string, string[]> = {};
  for (const { detailType, detail } of world.events) {
    const d = detail as { contestId: string; startTimeSeconds: number; previousStartTimeSeconds?: number };
    const line =
      detailType === CONTEST_EVENT.rescheduled
        ? `${detailType} ${d.previousStartTimeSeconds! - T0}→${d.startTimeSeconds - T0}`
        : `${detailType} ${d.startTimeSeconds - T0}`;
    (byContest[platformIdOf(d.contestId)] ??= []).push(line);
  }
  return byContest;
}

describe('the view of a contest: what the evidence agrees on', () => {
  it('scheduled only when upcoming, confirmed, nothing held, awaited or paused', () => {
    expect(viewOf(item())).toEqual({ kind: 'scheduled', start: T0 + DAY });
    expect(viewOf(item({ confirmedStart: 0 }))).toEqual({ kind: 'undecided' });
    expect(viewOf(item({ confirmedStart: T0 + 2 * DAY }))).toEqual({ kind: 'undecided' });
    expect(viewOf(item({ pending: { held: true, kind: 'drop', said: 'missing', replies: 1, since: T0 } }))).toEqual({ kind: 'undecided' });
    expect(viewOf(item({ pending: { held: false, kind: 'reschedule', said: 'listed@1', replies: 1, since: T0 } }))).toEqual({
      kind: 'undecided',
    });
    expect(viewOf(item({ remindersPaused: 'held' }))).toEqual({ kind: 'undecided' });
    expect(viewOf(item({ phase: 'CODING' }))).toEqual({ kind: 'undecided' });
  });

  it('a stored contest that misses replies is undecided: a withdrawal is told only of a deleted one, later (the register)', () => {
    expect(viewOf(item({ vanishedAt: T0, missingSyncs: 1 }))).toEqual({ kind: 'undecided' });
    expect(viewOf(item({ vanishedAt: T0, missingSyncs: 2 }))).toEqual({ kind: 'undecided' });
  });

  it(`a deleted contest is told withdrawn when missing ${WITHDRAWN_TOLD_AFTER_SECONDS / 3600} h or at its start, whichever first; once`, () => {
    const gone = item({
      published: T0 + 3 * DAY,
      startTimeSeconds: T0 + 3 * DAY,
      confirmedStart: T0 + 3 * DAY,
      vanishedAt: T0,
      missingSyncs: 2,
    });
    const deleted = announce({ stored: [{ ...gone, publishedSeq: 1 }], puts: [], deletes: [cf(7)], nowSeconds: T0 + 2 * HOUR });
    expect(deleted.events).toEqual([]);
    expect(deleted.withdrawn).toEqual({
      [cf(7)]: {
        since: T0,
        start: T0 + 3 * DAY,
        told: false,
        name: 'Round 7',
        url: 'https://codeforces.com/contest/7',
        seq: 1,
        platform: 'codeforces',
      },
    });
    expect(deleted.withdrawnChanged).toBe(true);
    const early = announce({
      stored: [],
      puts: [],
      deletes: [],
      withdrawn: deleted.withdrawn,
      nowSeconds: T0 + DAY - 1,
    });
    expect(early.events).toEqual([]);
    expect(early.withdrawnChanged).toBe(false);
    const told = announce({
      stored: [],
      puts: [],
      deletes: [],
      withdrawn: deleted.withdrawn,
      nowSeconds: T0 + DAY,
    });
    expect(told.events.map((e) => [e.detailType, e.detail.startTimeSeconds])).toEqual([[CONTEST_EVENT.withdrawn, T0 + 3 * DAY]]);
    expect(announce({ stored: [], puts: [], deletes: [], withdrawn: told.withdrawn, nowSeconds: T0 + DAY + HOUR }).events).toEqual([]);
    // A start before the day is over: told at the start.
    const soon = announce({ stored: [{ ...gone, published: T0 + 5 * HOUR }], puts: [], deletes: [cf(7)], nowSeconds: T0 + 2 * HOUR });
    expect(announce({ stored: [], puts: [], deletes: [], withdrawn: soon.withdrawn, nowSeconds: T0 + 5 * HOUR }).events).toHaveLength(1);
    expect(told.events[0]!.detail).toMatchObject({
      contestId: cf(7),
      contest: 'codeforces:7',
      sequence: 2,
      name: 'Round 7',
      url: 'https://codeforces.com/contest/7',
    });
    expect(told.events[0]!.id).toBe(contestEventId(cf(7), 2));
    expect(told.withdrawn[cf(7)]).toMatchObject({ told: true, seq: 2 });
    // Stored again (a run wrote its put, then stopped before the clock): not withdrawn, never told.
    expect(announce({ stored: [item()], puts: [], deletes: [], withdrawn: deleted.withdrawn, nowSeconds: T0 + DAY }).events).toEqual([]);
    // Malformed entries are dropped, never believed.
    expect(announce({ stored: [], puts: [], deletes: [], withdrawn: { 8: 'x', 9: { since: 'y' } }, nowSeconds: T0 }).withdrawn).toEqual({});
  });

  it('each change of view publishes one event; an undecided view publishes nothing and forgets nothing', () => {
    const s = (start: number) => ({ kind: 'scheduled', start }) as const;
    expect(changeOf('none', s(5))).toEqual({ type: CONTEST_EVENT.announced, to: 5 });
    expect(changeOf(5, s(5))).toBeUndefined();
    expect(changeOf(5, s(9))).toEqual({ type: CONTEST_EVENT.rescheduled, from: 5, to: 9 });
    expect(changeOf(5, { kind: 'withdrawn' })).toEqual({ type: CONTEST_EVENT.withdrawn, from: 5 });
    expect(changeOf('withdrawn', { kind: 'withdrawn' })).toBeUndefined();
    // Never announced: its withdrawal is no news, and its later listing is an announcement.
    expect(changeOf('none', { kind: 'withdrawn' })).toBeUndefined();
    expect(publishedAfter('none', { kind: 'withdrawn' })).toBe('none');
    expect(changeOf('withdrawn', s(9))).toEqual({ type: CONTEST_EVENT.back, to: 9 });
    expect(changeOf(5, { kind: 'undecided' })).toBeUndefined();
    expect(publishedAfter(5, { kind: 'undecided' })).toBe(5);
  });

  it('an item written before contest events counts its view as published: an upgrade announces nothing', () => {
    expect(publishedOf(item())).toBe(T0 + DAY);
    expect(publishedOf(item({ vanishedAt: T0, missingSyncs: 2 }))).toBe('none');
    expect(publishedOf(undefined)).toBe('none');
    const legacy = item();
    expect(announce({ stored: [legacy], puts: [{ ...legacy, updatedAt: 'y' }], deletes: [], nowSeconds: T0 }).events).toEqual([]);
  });

  it("a Codeforces contest's event ids are what they were before ids were qualified (its number); another platform's name the qualified id", () => {
    const digest = (named: unknown[]) => `contest:${createHash('sha256').update(JSON.stringify(named)).digest('hex').slice(0, 32)}`;
    expect(contestEventId(cf(7), 2)).toBe(digest([7, 2]));
    expect(contestEventId('atcoder:7', 2)).toBe(digest(['atcoder:7', 2]));
    expect(contestEventId('atcoder:abc199', 1)).toBe(digest(['atcoder:abc199', 1]));
    expect(contestEventId('atcoder:7', 2)).not.toBe(contestEventId(cf(7), 2));
  });

  it('ids name the change that was published: the contest and its number; rewrites between change nothing, the next change is another', () => {
    const input = {
      stored: [item({ published: T0 + DAY, publishedSeq: 1 })],
      puts: [item({ startTimeSeconds: T0 + 2 * DAY, confirmedStart: T0 + 2 * DAY })],
      deletes: [],
      nowSeconds: T0,
    };
    const first = announce(input);
    expect(first.events).toHaveLength(1);
    expect(first.events[0]!.id).toBe(contestEventId(cf(7), 2));
    expect(first.events[0]!.id).toMatch(/^contest:[0-9a-f]{32}$/);
    // A retry, later, after rewrites that published nothing (a doubt pause, a hold, a vanish marker): the same id.
    expect(announce({ ...input, nowSeconds: T0 + 5 }).events).toEqual(first.events);
    const rewritten = item({ published: T0 + DAY, publishedSeq: 1, updatedAt: 'y', remindersPaused: 'held' });
    expect(announce({ ...input, stored: [rewritten], nowSeconds: T0 + 3 * HOUR }).events.map((e) => e.id)).toEqual([first.events[0]!.id]);
    // The change published, the next one is number 3.
    const after = first.puts[0]!;
    expect(after).toMatchObject({ published: T0 + 2 * DAY, publishedSeq: 2 });
    const back = announce({ stored: [after], puts: [item({ publishedSeq: 2 })], deletes: [], nowSeconds: T0 + HOUR });
    expect(back.events.map((e) => [e.detailType, e.id])).toEqual([[CONTEST_EVENT.rescheduled, contestEventId(cf(7), 3)]]);
    expect(first.events[0]!.detail).toEqual({
      contestId: cf(7),
      contest: 'codeforces:7',
      platform: 'codeforces',
      platformId: '7',
      sequence: 2,
      name: 'Round 7',
      url: 'https://codeforces.com/contest/7',
      previousStartTimeSeconds: T0 + DAY,
      previousStartTime: new Date((T0 + DAY) * 1000).toISOString(),
      startTimeSeconds: T0 + 2 * DAY,
      startTime: new Date((T0 + 2 * DAY) * 1000).toISOString(),
      durationSeconds: 7200,
    });
  });
});

describe('the register stays small', () => {
  it('keeps at most 200 entries, those not yet told first, names cut to 60 characters: under 64 KB whatever the names', () => {
    const name = '竞'.repeat(512);
    const register = Object.fromEntries(
      Array.from({ length: 600 }, (_, i) => [String(1000 + i), { since: T0 - i, start: T0 + DAY, told: i % 2 === 0, name }]),
    );
    const { withdrawn } = announce({ stored: [], puts: [], deletes: [], withdrawn: register, nowSeconds: T0 });
    const entries = Object.values(withdrawn);
    expect(entries).toHaveLength(200);
    expect(entries.every((e) => !e.told)).toBe(true);
    expect(entries.every((e) => e.name.length === 60)).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(withdrawn))).toBeLessThan(64 * 1024);
  });
});

describe('contest events over hours of replies (the model, then announce, as lambda/sync.ts)', () => {
  it('honest replies: each upcoming contest announced once, at its first listing; a finished one never; nothing more as they run and finish', () => {
    const truth = upcoming();
    const world = new PlannerWorld();
    world.run(T0, 100, (t) => honestList(truth, t));
    expect(heard(world)).toEqual({
      101: ['ContestAnnounced 108000'],
      102: ['ContestAnnounced 144000'],
      103: ['ContestAnnounced 180000'],
      104: ['ContestAnnounced 216000'],
    });
    expect(world.events.every(({ at }) => at === T0 + 2)).toBe(true);
  });

  it('an honest postponement is published once, when the second reply confirms it (not on the first)', () => {
    const movedAt = T0 + 5 * HOUR + 30 * MIN;
    const truth = [
      { ...fixed(101, 0), startAt: (t: number) => (t >= movedAt ? T0 + 54 * HOUR : T0 + 30 * HOUR) },
      fixed(102, T0 + 40 * HOUR),
    ];
    const world = new PlannerWorld();
    world.run(T0, 30, (t) => honestList(truth, t));
    expect(heard(world)[101]).toEqual(['ContestAnnounced 108000', 'ContestRescheduled 108000→194400']);
    expect(world.events.find((e) => e.detailType === CONTEST_EVENT.rescheduled)!.at).toBe(T0 + 7 * HOUR + 2);
  });

  it('a start said once and taken back publishes nothing (the undo lands before any agreement)', () => {
    const truth = upcoming();
    const world = new PlannerWorld();
    world.run(T0, 30, (t, hour) =>
      honestList(truth, t).map((e) => (hour === 4 && e.id === 101 ? { ...e, startTimeSeconds: e.startTimeSeconds + 6 * HOUR } : e)),
    );
    expect(heard(world)[101]).toEqual(['ContestAnnounced 108000']);
  });

  const lies: Record<string, (truth: TrueContest[], t: number) => CodeforcesContest[]> = {
    'all FINISHED': (truth, t) => honestList(truth, t).map((e) => ({ ...e, phase: 'FINISHED' })),
    'starts moved into the past': (truth, t) =>
      honestList(truth, t).map((e) => (e.startTimeSeconds > t ? { ...e, startTimeSeconds: t - HOUR, relativeTimeSeconds: HOUR } : e)),
    'a partial list': (truth, t) => honestList(truth, t).filter((e) => e.id % 2 === 0),
    'everything a day later': (truth, t) =>
      honestList(truth, t).map((e) => (e.startTimeSeconds > t ? { ...e, startTimeSeconds: e.startTimeSeconds + DAY } : e)),
  };
  for (const [name, lie] of Object.entries(lies)) {
    it(`${name}, in one reply: nothing published`, () => {
      const truth = upcoming();
      const world = new PlannerWorld();
      world.run(T0, 20, (t, hour) => (hour === 3 ? lie(truth, t) : honestList(truth, t)));
      expect(world.events.map(({ detailType }) => detailType)).toEqual(Array(4).fill(CONTEST_EVENT.announced));
    });

    for (const repeats of [3, 6]) {
      it(`${name}, ${repeats} replies in a row: at most what it changed and its undo, each once; users end on the truth`, () => {
        const truth = upcoming();
        const world = new PlannerWorld();
        world.run(T0, 20, (t, hour) => (hour >= 3 && hour < 3 + repeats ? lie(truth, t) : honestList(truth, t)));
        expect(new Set(world.events.map(({ id }) => id)).size).toBe(world.events.length);
        for (const c of truth.filter(({ id }) => id !== 90)) {
          const lines = heard(world)[c.id]!;
          // Never a start no two replies agreed on: only the true start, or the lie's own start, repeated.
          expect(lines[0]).toBe(`ContestAnnounced ${c.startAt(0) - T0}`);
          expect(lines.length).toBeLessThanOrEqual(3);
          // What users hold last is the truth.
          const last = lines.at(-1)!;
          expect(last.endsWith(`${c.startAt(0) - T0}`)).toBe(true);
          expect(last.startsWith(CONTEST_EVENT.withdrawn)).toBe(false);
        }
      });
    }
  }

  for (const [name, backAt, heardOf] of [
    ['never listed again: told withdrawn a day after its first miss', undefined, ['ContestAnnounced 180000', 'ContestWithdrawn 180000']],
    ['back within the day: nothing told at all (its reminders were paused meanwhile)', T0 + 20 * HOUR, ['ContestAnnounced 180000']],
    ['back after it was told: told back', T0 + 40 * HOUR, ['ContestAnnounced 180000', 'ContestWithdrawn 180000', 'ContestBack 180000']],
  ] as const) {
    it(`an honest withdrawal, ${name}`, () => {
      const goneAt = T0 + 3 * HOUR + 30 * MIN;
      const truth = upcoming();
      truth[2]!.listedAt = (t) => t < goneAt || (backAt !== undefined && t >= backAt);
      const world = new PlannerWorld();
      world.run(T0, 48, (t) => honestList(truth, t));
      expect(heard(world)[103]).toEqual(heardOf);
      const withdrawn = world.events.find((e) => e.detailType === CONTEST_EVENT.withdrawn);
      // The first miss is the sync at 4 h; told by the first sync a day later.
      if (withdrawn !== undefined) expect(withdrawn.at).toBe(T0 + 28 * HOUR + 2);
      if (backAt !== undefined) expect(world.withdrawn).toEqual({});
    });
  }

  it('a withdrawn contest whose start comes first is told at its start', () => {
    const truth = [fixed(101, T0 + 10 * HOUR + 30 * MIN), fixed(102, T0 + 40 * HOUR)];
    truth[0]!.listedAt = (t) => t < T0 + 3 * HOUR + 30 * MIN;
    const world = new PlannerWorld();
    world.run(T0, 14, (t) => honestList(truth, t));
    expect(heard(world)[101]).toEqual([`ContestAnnounced ${10 * HOUR + 30 * MIN}`, `ContestWithdrawn ${10 * HOUR + 30 * MIN}`]);
    expect(world.events.find((e) => e.detailType === CONTEST_EVENT.withdrawn)!.at).toBe(T0 + 11 * HOUR + 2);
  });

  it('a held mass postponement is published when it is accepted, once per contest', () => {
    const movedAt = T0 + 4 * HOUR + 30 * MIN;
    const truth = upcoming().map((c) =>
      c.id === 90 ? c : { ...c, startAt: (t: number) => (t >= movedAt ? c.startAt(0) + DAY : c.startAt(0)) },
    );
    const world = new PlannerWorld();
    const results = world.run(T0, 12, (t) => honestList(truth, t));
    expect(results[5]!.plan!.held.length).toBeGreaterThan(0);
    for (const c of truth.filter(({ id }) => id !== 90)) {
      expect(heard(world)[c.id]).toEqual([
        `ContestAnnounced ${c.startAt(0) - T0}`,
        `ContestRescheduled ${c.startAt(0) - T0}→${c.startAt(0) + DAY - T0}`,
      ]);
    }
  });
});

describe('a round listed again under a new id (same platform, name and start)', () => {
  const start = T0 + 3 * DAY;
  const NAME = 'Codeforces Round 1000 (Div. 2)';
  /** The round as a reply made at `t` lists it. */
  const round = (id: number, t: number, name = NAME, at = start) => entry(id, at, { name, relativeTimeSeconds: t - at });

  it('is told withdrawn at the first reply that shows it, naming the round that replaced it; its reminder is never sent', () => {
    const world = new PlannerWorld();
    world.sync([round(7, T0)], T0);
    world.setReminder(7, 'alice', 30);
    world.sync([round(8, T0 + HOUR)], T0 + HOUR);
    const withdrawn = world.events.filter((e) => e.detailType === CONTEST_EVENT.withdrawn);
    expect(withdrawn.map((e) => [e.detail.contestId, e.detail.replacedBy, e.detail.startTimeSeconds, e.detail.sequence])).toEqual([
      [cf(7), cf(8), start, 2],
    ]);
    expect(withdrawn[0]!.at).toBe(T0 + HOUR); // days before the start, in time to set the reminder again
    expect(heard(world)).toEqual({ 7: [`ContestAnnounced ${3 * DAY}`, `ContestWithdrawn ${3 * DAY}`], 8: [`ContestAnnounced ${3 * DAY}`] });
    // Deleted after its misses, and its start passing: nothing more is told of it, and its reminder is never sent.
    for (let hour = 2; hour < 3 * 24; hour += 1) {
      world.sync([round(8, T0 + hour * HOUR)], T0 + hour * HOUR);
      world.notify(T0 + hour * HOUR + 10);
    }
    world.notify(start - 60);
    expect(world.contests.has(cf(7))).toBe(false);
    expect(heard(world)[7]).toHaveLength(2);
    expect(world.fired.filter((f) => f.contestId === cf(7))).toEqual([]);
    // Listed again after all: back, under the next number.
    const back = new PlannerWorld();
    back.sync([round(7, T0)], T0);
    back.sync([round(8, T0 + HOUR)], T0 + HOUR);
    back.sync([round(7, T0 + 2 * HOUR), round(8, T0 + 2 * HOUR)], T0 + 2 * HOUR);
    expect(heard(back)[7]).toEqual([`ContestAnnounced ${3 * DAY}`, `ContestWithdrawn ${3 * DAY}`, `ContestBack ${3 * DAY}`]);
  });

  it('is no evidence with another name, another start, or two candidates: the miss waits as any miss does', () => {
    const t = T0 + HOUR;
    for (const list of [[round(8, t, 'Codeforces Round 1001 (Div. 2)')], [round(8, t, NAME, start + HOUR)], [round(8, t), round(9, t)]]) {
      const world = new PlannerWorld();
      world.sync([round(7, T0)], T0);
      world.sync(list, t);
      expect(world.events.filter((e) => e.detailType === CONTEST_EVENT.withdrawn)).toEqual([]);
    }
  });
});
