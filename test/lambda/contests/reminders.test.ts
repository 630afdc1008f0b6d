import { describe, expect, it } from 'vitest';
import type { ContestItem, ReminderItem } from '../../../lambda/contests/model.js';
import { gateOf, remindersPausedOf, withGate } from '../../../lambda/contests/gate.js';
import { followContest, planReminders } from '../../../lambda/contests/reminders.js';
import { bucketOf, contestKeyOf } from '../../../lambda/reminders/table.js';
import { cf } from '../../support/ids.js';

const key = (userId: string) => contestKeyOf(cf(7), userId);

const T = 1_800_000_000;
const contest = (overrides: Partial<ContestItem> = {}): ContestItem => ({
  contestId: cf(7),
  platform: 'codeforces',
  platformId: '7',
  name: 'Round 7',
  type: 'CF',
  phase: 'BEFORE',
  startTimeSeconds: T,
  durationSeconds: 7200,
  url: 'https://codeforces.com/contest/7',
  updatedAt: 'x',
  expiresAt: T + 9 * 86_400,
  confirmedStart: T,
  ...overrides,
});
const reminder = (overrides: Partial<ReminderItem> = {}): ReminderItem => ({
  contestId: cf(7),
  userId: 'u',
  minutesBefore: 10,
  remindAt: T - 600,
  ...overrides,
  contestKey: key(overrides.userId ?? 'u'),
});
const settings = { dueShards: 1, finishedRetentionSeconds: 7 * 86_400 };
const NOW = T - 86_400;

describe('gateOf: due only when every current piece of evidence says so', () => {
  it('due at the confirmed start; at a later unconfirmed start at once; at the confirmed one while a move earlier awaits confirmation', () => {
    expect(gateOf(contest(), NOW)).toEqual({ due: true, start: T });
    const later = contest({
      startTimeSeconds: T + 3600,
      pending: { held: false, kind: 'reschedule', said: `listed@${T + 3600}`, replies: 1, since: NOW },
    });
    expect(gateOf(later, NOW)).toEqual({ due: true, start: T + 3600 });
    const earlier = contest({
      startTimeSeconds: T - 3600,
      pending: { held: false, kind: 'reschedule', said: `listed@${T - 3600}`, replies: 1, since: NOW },
    });
    expect(gateOf(earlier, NOW)).toEqual({ due: true, start: T });
    expect(remindersPausedOf(earlier, gateOf(earlier, NOW))).toBe('unconfirmed');
  });

  it('a start not shown ahead never counts, and leaves no evidence for the confirmed start either: paused (started)', () => {
    const past = contest({
      startTimeSeconds: NOW - 300,
      phase: 'CODING',
      pending: { held: false, said: `listed@${NOW - 300}`, replies: 1, since: NOW },
    });
    expect(gateOf(past, NOW)).toEqual({ due: false, reason: 'started' });
    expect(gateOf({ ...past, confirmedStart: 0 }, NOW)).toEqual({ due: false, reason: 'started' });
  });

  it('paused at once by a held drop or finish, a vanished or deleted contest, a finish elsewhere, an expired one', () => {
    expect(gateOf(contest({ pending: { held: true, kind: 'drop', said: 'missing', replies: 1, since: NOW } }), NOW)).toEqual({
      due: false,
      reason: 'held',
    });
    expect(gateOf(contest({ pending: { held: true, kind: 'finish', said: `listed@${T}`, replies: 1, since: NOW } }), NOW)).toEqual({
      due: false,
      reason: 'held',
    });
    expect(gateOf(contest({ vanishedAt: NOW, missingSyncs: 1 }), NOW)).toEqual({ due: false, reason: 'vanished' });
    expect(gateOf(undefined, NOW)).toEqual({ due: false, reason: 'vanished' });
    expect(gateOf(contest({ phase: 'FINISHED', startTimeSeconds: T - 99 }), NOW)).toEqual({ due: false, reason: 'finished' });
    expect(gateOf(contest({ phase: 'FINISHED' }), NOW)).toEqual({ due: true, start: T });
    expect(gateOf(contest({ phase: 'PENDING_SYSTEM_TEST' }), T + 10 * 86_400)).toEqual({ due: false, reason: 'expired' });
  });
});

describe('planReminders', () => {
  it('makes due, pauses, keeps remindAt and expiresAt true, and never re-arms the start it was sent for', () => {
    const updates = planReminders(
      cf(7),
      contest(),
      [
        reminder({ userId: 'a' }),
        reminder({ userId: 'b', notifiedAt: NOW, notifiedStart: T }),
        reminder({ userId: 'c', minutesBefore: Number.NaN }),
      ],
      settings,
      NOW,
    );
    expect(updates).toEqual([
      {
        contestId: cf(7),
        contestKey: key('a'),
        userId: 'a',
        minutesBefore: 10,
        set: { expiresAt: T + 9 * 86_400, dueAt: T - 600, dueShard: 0, dueStart: T },
        remove: [],
      },
      {
        contestId: cf(7),
        contestKey: key('b'),
        userId: 'b',
        minutesBefore: 10,
        notifiedStart: T,
        set: { expiresAt: T + 9 * 86_400, paused: 'notified' },
        remove: [],
      },
    ]);
    const due = reminder({ dueAt: T - 600, dueShard: 0, dueStart: T, expiresAt: T + 9 * 86_400 });
    expect(planReminders(cf(7), contest(), [due], settings, NOW)).toEqual([]);
    expect(planReminders(cf(7), undefined, [due], settings, NOW)).toEqual([
      {
        contestId: cf(7),
        contestKey: key('u'),
        userId: 'u',
        minutesBefore: 10,
        set: { paused: 'vanished' },
        remove: ['dueAt', 'dueShard', 'dueStart'],
      },
    ]);
  });

  it("a due row's byDue shard is its user's bucket mod the setting: one round's rows spread over every delivery job", () => {
    const users = Array.from({ length: 64 }, (_, i) => `user-${i}`);
    const updates = planReminders(
      cf(7),
      contest(),
      users.map((userId) => reminder({ userId })),
      { ...settings, dueShards: 4 },
      NOW,
    );
    expect(updates.map((u) => u.set.dueShard)).toEqual(users.map((userId) => bucketOf(userId) % 4));
    expect(new Set(updates.map((u) => u.set.dueShard))).toEqual(new Set([0, 1, 2, 3]));
    // Each update names the row's own bucket key: the contest's reminders are spread over 16 partition keys.
    expect(updates.every((u) => u.contestKey === key(u.userId))).toBe(true);
    expect(new Set(updates.map((u) => u.contestKey)).size).toBeGreaterThan(8);
  });

  it('a contest re-listed at the start its paused reminders were kept at: the reminders confirm the start, the contest is written with it first, then they are due, even once started', () => {
    const relisted = contest({ confirmedStart: 0, phase: 'CODING', startTimeSeconds: T });
    expect(gateOf(relisted, T + 60)).toEqual({ due: false, reason: 'started' });
    const kept = reminder({ paused: 'vanished', expiresAt: T + 9 * 86_400 });
    const following = followContest(
      'gate',
      { contestId: cf(7), contest: relisted, reminders: [kept] },
      { ...settings, doubtSeconds: 4200 },
      T + 60,
    );
    expect(following.contest).toMatchObject({ confirmedStart: T, dueStart: T });
    expect(following.contest?.remindersPaused).toBeUndefined();
    expect(following.updates).toEqual([
      {
        contestId: cf(7),
        contestKey: key('u'),
        userId: 'u',
        minutesBefore: 10,
        set: { dueAt: T - 600, dueShard: 0, dueStart: T },
        remove: ['paused'],
      },
    ]);
    // Kept at another start, or not kept for a vanished contest: nothing is confirmed.
    expect(
      followContest(
        'gate',
        { contestId: cf(7), contest: relisted, reminders: [reminder({ paused: 'vanished', remindAt: T - 7200 })] },
        { ...settings, doubtSeconds: 4200 },
        T + 60,
      ).contest,
    ).toBeUndefined();
    expect(
      followContest(
        'gate',
        { contestId: cf(7), contest: relisted, reminders: [reminder({ paused: 'held' })] },
        { ...settings, doubtSeconds: 4200 },
        T + 60,
      ).contest,
    ).toBeUndefined();
  });

  it('every contest the sync writes carries its gate: dueStart while its reminders may fire, remindersPaused while not', () => {
    expect(withGate(contest(), NOW)).toMatchObject({ dueStart: T });
    expect(withGate(contest(), NOW).remindersPaused).toBeUndefined();
    const held = withGate(contest({ pending: { held: true, kind: 'drop', said: 'missing', replies: 1, since: NOW } }), NOW);
    expect(held).toMatchObject({ remindersPaused: 'held' });
    expect(held.dueStart).toBeUndefined();
    expect(withGate(contest({ vanishedAt: NOW, dueStart: T }), NOW).dueStart).toBeUndefined();
  });
});
