/** The pure decisions of reminder delivery: rows believed, contests agreeing, event ids, sizes, packing. */
import { describe, expect, it } from 'vitest';
import {
  MAX_CLAIMS_PER_TRANSACTION,
  TRANSACTION_BYTE_BUDGET,
  ROW_LIMITS,
  contestAgrees,
  contestView,
  claimBytes,
  deliverable,
  dueShardOf,
  itemBytes,
  packClaims,
  reminderDueEvent,
  reminderDueId,
  validRow,
  type ContestView,
  type DueRow,
} from '../../../lambda/delivery/due.js';

const START = 1_900_000_000;
const row = (overrides: Record<string, unknown> = {}) => ({
  contestId: 2051,
  userId: 'alice',
  minutesBefore: 60,
  remindAt: START - 3600,
  dueAt: START - 3600,
  dueShard: 0,
  dueStart: START,
  ...overrides,
});
const contest: ContestView = {
  contestId: 2051,
  name: 'Codeforces Round 2051',
  url: 'https://codeforces.com/contest/2051',
  startTimeSeconds: START,
  durationSeconds: 7200,
};
const valid = (overrides: Record<string, unknown> = {}): DueRow => {
  const result = validRow(row(overrides));
  if (!result.ok) throw new Error(`expected a valid row, got ${result.reason}`);
  return result.row;
};

describe('validRow', () => {
  it('believes a row with every attribute present and sane', () => {
    expect(valid()).toMatchObject({ contestId: 2051, userId: 'alice', minutesBefore: 60, dueAt: START - 3600, dueStart: START });
    expect(valid().bytes).toBe(itemBytes(row()));
  });

  it.each([
    ['contestId', { contestId: '2051' }],
    ['contestId', { contestId: -1 }],
    ['contestId', { contestId: 1.5 }],
    ['userId', { userId: undefined }],
    ['userId', { userId: '' }],
    ['userId', { userId: 7 }],
    ['userId', { userId: 'u'.repeat(ROW_LIMITS.maxUserIdBytes + 1) }],
    ['minutesBefore', { minutesBefore: undefined }],
    ['minutesBefore', { minutesBefore: -5 }],
    ['minutesBefore', { minutesBefore: 10.5 }],
    ['minutesBefore', { minutesBefore: 1e9 }],
    ['minutesBefore', { minutesBefore: 'sixty' }],
    ['dueStart', { dueStart: undefined }],
    ['dueStart', { dueStart: 12 }],
    ['dueStart', { dueStart: 9_999_999_999 }],
    ['dueAt', { dueAt: START + 2 * 24 * 3600 }],
    ['dueAt', { dueAt: START - 60 * ROW_LIMITS.maxMinutesBefore - 1 }],
    ['dueAt', { dueAt: Number.MAX_SAFE_INTEGER + 2 }],
    ['notifiedStart', { notifiedStart: 'yesterday' }],
    ['already-notified', { notifiedStart: START }],
    ['already-notified', { notifiedStart: START + 600, sentStarts: new Set([START - 86_400, START]) }],
  ])('refuses a row with a missing or absurd attribute: %s %j', (reason, overrides) => {
    expect(validRow(row(overrides))).toMatchObject({ ok: false, reason });
  });

  it('a row notified for an earlier start is due again for the new one', () => {
    expect(validRow(row({ notifiedStart: START - 86_400 })).ok).toBe(true);
  });
});

describe('contestAgrees', () => {
  it("delivers when the contest is stored and not vanished: the firing rule (dueAt, dueStart) is the sync's", () => {
    expect(contestAgrees(contest)).toEqual({ ok: true });
    // Due at the confirmed start while the contest shows an unconfirmed one: the row says when.
    expect(contestAgrees({ ...contest, startTimeSeconds: START - 3600, remindersPaused: 'unconfirmed' })).toEqual({ ok: true });
  });
  it.each([
    ['contest-missing', undefined],
    ['contest-vanished', { ...contest, vanishedAt: START - 7200 }],
  ])('waits (no claim) when the contest is gone or vanishing: %s', (reason, stored) => {
    expect(contestAgrees(stored)).toEqual({ ok: false, reason });
  });
  it('reads a contest item, or nothing when it lacks what an event needs', () => {
    expect(contestView({ ...contest, platform: 'codeforces', phase: 'BEFORE' })).toEqual(contest);
    expect(contestView({ ...contest, name: undefined })).toBeUndefined();
    expect(contestView({ ...contest, startTimeSeconds: '1' })).toBeUndefined();
    expect(contestView(undefined)).toBeUndefined();
  });
});

describe('reminderDueId and the event', () => {
  it('is a function of (contestId, userId, dueStart) only', () => {
    const id = reminderDueId(2051, 'alice', START);
    expect(id).toMatch(/^reminder-due:[0-9a-f]{32}$/);
    expect(reminderDueId(2051, 'alice', START)).toBe(id);
    expect(reminderDueEvent(valid({ dueAt: START - 600, minutesBefore: 10 }), contest).id).toBe(id);
    expect(
      new Set([id, reminderDueId(2051, 'alice', START + 60), reminderDueId(2051, 'bob', START), reminderDueId(2052, 'alice', START)]).size,
    ).toBe(4);
    // No separator trick: ("1", "2#3") and ("12", "#3") differ.
    expect(reminderDueId(1, '2#3', START)).not.toBe(reminderDueId(12, '#3', START));
    expect(reminderDueId(2051, 'u'.repeat(1024), START).length).toBe(id.length);
  });

  it("names the user's intent: a reminder cancelled and set again, or given another lead, after it was sent for a start is told again for that start (its event is not a duplicate of the first)", () => {
    // The write path stamps a new `intent` on every set that changes what the user asked (docs/tables.md).
    const first = reminderDueEvent(valid({ intent: 'AAAAAAAAAAAAAAAAAAAAAA' }), contest);
    const again = reminderDueEvent(valid({ intent: 'BBBBBBBBBBBBBBBBBBBBBB' }), contest);
    const otherLead = reminderDueEvent(valid({ intent: 'CCCCCCCCCCCCCCCCCCCCCC', dueAt: START - 600, minutesBefore: 10 }), contest);
    expect(new Set([first.id, again.id, otherLead.id]).size).toBe(3);
    // One intent, one start: one id, however often it is computed.
    expect(reminderDueEvent(valid({ intent: 'AAAAAAAAAAAAAAAAAAAAAA' }), contest).id).toBe(first.id);
  });

  it('carries contest, user, lead time, start, name and URL', () => {
    expect(reminderDueEvent(valid(), contest)).toEqual({
      id: reminderDueId(2051, 'alice', START),
      detailType: 'ReminderDue',
      detail: {
        contestId: 2051,
        userId: 'alice',
        minutesBefore: 60,
        startTimeSeconds: START,
        startTime: new Date(START * 1000).toISOString(),
        name: contest.name,
        url: contest.url,
        dueAt: START - 3600,
      },
    });
  });

  it('is deliverable unless the outbox would refuse it (EventBridge entry above 256 KB with the eventId added)', () => {
    const event = reminderDueEvent(valid(), contest);
    expect(deliverable(event, 'contest-sync')).toBe(Buffer.byteLength(JSON.stringify({ eventId: event.id, ...event.detail })));
    // 2 bytes per character: 128 Ki of them fill the entry by the name alone.
    const huge = reminderDueEvent(valid(), { ...contest, name: 'é'.repeat(128 * 1024) });
    expect(deliverable(huge, 'contest-sync')).toBeUndefined();
    const justBelow = reminderDueEvent(valid(), { ...contest, name: 'e'.repeat(255 * 1024) });
    expect(deliverable(justBelow, 'contest-sync')).toBeGreaterThan(255 * 1024);
  });

  it('counts a claim high enough that 49 of the largest deliverable events could never overflow a transaction', () => {
    const typical = claimBytes(valid(), 400);
    expect(typical * MAX_CLAIMS_PER_TRANSACTION).toBeLessThan(TRANSACTION_BYTE_BUDGET);
    const largest = claimBytes(valid(), 256 * 1024);
    expect(largest).toBeGreaterThan(2 * 256 * 1024);
    // Packed by these bytes, a batch of the largest holds at most 3 claims: well within 4 MB.
    expect(packClaims(Array.from({ length: 10 }, () => ({ bytes: largest }))).map((b) => b.length)).toEqual([3, 3, 3, 1]);
  });
});

describe('packClaims', () => {
  it('packs at most 49 claims per transaction (2 actions each, and the lease check)', () => {
    const claims = Array.from({ length: 20_000 }, () => ({ bytes: 300 }));
    const batches = packClaims(claims);
    expect(MAX_CLAIMS_PER_TRANSACTION * 2 + 1).toBeLessThanOrEqual(100);
    expect(batches).toHaveLength(Math.ceil(20_000 / 49));
    expect(batches.every((b) => b.length <= 49)).toBe(true);
    expect(batches.flat()).toHaveLength(20_000);
  });
  it('keeps every transaction within the byte budget, in order', () => {
    const claims = [100, 200, 300, 50, 400, 10].map((bytes, i) => ({ bytes, i }));
    const batches = packClaims(claims, 49, 500);
    expect(batches.map((b) => b.map((c) => c.i))).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
    ]);
    expect(batches.every((b) => b.reduce((s, c) => s + c.bytes, 0) <= 500)).toBe(true);
  });
  it('gives an oversized claim a transaction of its own', () => {
    expect(packClaims([{ bytes: 10 }, { bytes: 900 }, { bytes: 10 }], 49, 500).map((b) => b.length)).toEqual([1, 1, 1]);
  });
});

describe('dueShardOf', () => {
  it('is contestId mod dueShards', () => {
    expect([0, 1, 2, 3, 4].map((id) => dueShardOf(id, 1))).toEqual([0, 0, 0, 0, 0]);
    expect([2051, 2052, 2053, 2054].map((id) => dueShardOf(id, 4))).toEqual([3, 0, 1, 2]);
  });
});
