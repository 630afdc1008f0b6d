/** The pure decisions of reminder delivery: rows believed, the rule, event ids, sizes, packing, shards. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_DUE_SHARDS } from '../../../lambda/contract.js';
import { REMINDER_BUCKETS, bucketOf, contestKeyOf, dueShardOf } from '../../../lambda/reminders/table.js';
import { cf } from '../../support/ids.js';
import {
  GATE_CHECK_BYTES,
  MAX_CLAIMS_PER_TRANSACTION,
  MAX_DATA_ACTIONS,
  TRANSACTION_BYTE_BUDGET,
  ROW_LIMITS,
  claimCheck,
  contestAgrees,
  contestView,
  gatesOf,
  claimBytes,
  deliverable,
  itemBytes,
  packClaims,
  reminderDueEvent,
  reminderDueId,
  validRow,
  type ContestView,
  type DueRow,
} from '../../../lambda/delivery/due.js';

const START = 1_900_000_000;
const CF2051 = cf(2051);
const row = (overrides: Record<string, unknown> = {}) => ({
  contestId: CF2051,
  contestKey: contestKeyOf(typeof overrides.contestId === 'string' ? overrides.contestId : CF2051, String(overrides.userId ?? 'alice')),
  userId: 'alice',
  minutesBefore: 60,
  remindAt: START - 3600,
  dueAt: START - 3600,
  dueShard: 0,
  dueStart: START,
  ...overrides,
});
const contest: ContestView = {
  contestId: CF2051,
  platform: 'codeforces',
  name: 'Codeforces Round 2051',
  url: 'https://codeforces.com/contest/2051',
  dueStart: START,
};
const INTENT = 'b3JkZXItb2YtaW50ZW50MQ';
const valid = (overrides: Record<string, unknown> = {}): DueRow => {
  const result = validRow(row(overrides));
  if (!result.ok) throw new Error(`expected a valid row, got ${result.reason}`);
  return result.row;
};

describe('validRow', () => {
  it('believes a row with every attribute present and sane', () => {
    expect(valid()).toMatchObject({
      contestId: CF2051,
      contestKey: contestKeyOf(CF2051, 'alice'),
      userId: 'alice',
      minutesBefore: 60,
      dueAt: START - 3600,
      dueStart: START,
    });
    expect(valid().bytes).toBe(itemBytes(row()));
  });

  it.each([
    ['contestId', { contestId: 2051 }],
    ['contestId', { contestId: '2051' }],
    ['contestId', { contestId: 'topcoder:2051' }],
    ['contestId', { contestId: 'codeforces:' }],
    ['contestId', { contestId: 'codeforces:a b' }],
    ['contestKey', { contestKey: undefined }],
    ['contestKey', { contestKey: `${CF2051}#99` }],
    ['contestKey', { contestKey: contestKeyOf(cf(2052), 'alice') }],
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
    ['intent', { intent: '' }],
    ['intent', { intent: 7 }],
    ['intent', { intent: 'i'.repeat(ROW_LIMITS.maxIntentChars + 1) }],
    ['intent', { intent: null }],
    ['notifiedStart', { notifiedStart: 'yesterday' }],
    ['already-notified', { notifiedStart: START }],
    ['already-notified', { notifiedStart: START + 600, sentStarts: new Set([START - 86_400, START]) }],
  ])('refuses a row with a missing or absurd attribute: %s %j', (reason, overrides) => {
    expect(validRow(row(overrides))).toMatchObject({ ok: false, reason });
  });

  it('believes a row of any known platform whose id is not a number', () => {
    expect(valid({ contestId: 'atcoder:abc199' })).toMatchObject({
      contestId: 'atcoder:abc199',
      contestKey: contestKeyOf('atcoder:abc199', 'alice'),
    });
  });

  it('a row notified for an earlier start is due again for the new one', () => {
    expect(validRow(row({ notifiedStart: START - 86_400 })).ok).toBe(true);
  });

  it('reads the intent (up to 64 characters), and a row without one as written before intents', () => {
    expect(valid({ intent: INTENT }).intent).toBe(INTENT);
    expect(valid({ intent: 'i'.repeat(ROW_LIMITS.maxIntentChars) }).intent).toHaveLength(64);
    expect(valid()).not.toHaveProperty('intent');
  });
});

describe("contestAgrees: the rule (a row may fire only at its contest's dueStart)", () => {
  it("delivers a row due at the contest's dueStart", () => {
    expect(contestAgrees(valid(), contest)).toEqual({ ok: true });
  });
  it.each([
    ['contest-missing', undefined],
    // The sync removed dueStart: held change, vanished, started, expired, or not written since the upgrade.
    ['contest-paused', { contestId: CF2051, platform: 'codeforces', name: 'n', url: 'u' }],
    // The contest moved: the row is due at the old start (a row the app wrote while the sync moved it).
    ['contest-moved', { ...contest, dueStart: START + 7200 }],
    ['contest-moved', { ...contest, dueStart: START - 600 }],
  ])('defers (no claim) when the contest does not let the row fire at its start: %s', (reason, stored) => {
    expect(contestAgrees(valid(), stored)).toEqual({ ok: false, reason });
  });
  it('reads a contest item: its dueStart, name and URL; nothing when it lacks what an event needs', () => {
    expect(contestView({ ...contest, platform: 'codeforces', phase: 'BEFORE', startTimeSeconds: START, vanishedAt: 1 })).toEqual(contest);
    expect(contestView({ ...contest, name: undefined })).toBeUndefined();
    expect(contestView({ ...contest, url: 7 })).toBeUndefined();
    expect(contestView(undefined)).toBeUndefined();
  });
  it('reads a dueStart that is not a whole number as none: no reminder of it fires', () => {
    for (const dueStart of [String(START), START + 0.5, null]) {
      const view = contestView({ ...contest, dueStart });
      expect(view).not.toHaveProperty('dueStart');
      expect(contestAgrees(valid(), view)).toEqual({ ok: false, reason: 'contest-paused' });
    }
  });
  it("checks the contest's dueStart again when the claims commit, on the bucket key's gate: one ConditionCheck per key", () => {
    expect(claimCheck('contests', `${CF2051}#07`, START)).toEqual({
      ConditionCheck: {
        TableName: 'contests',
        Key: { contestId: `gate#${CF2051}#07` },
        ConditionExpression: 'dueStart = :dueStart',
        ExpressionAttributeValues: { ':dueStart': START },
      },
    });
  });
});

describe('reminderDueId and the event', () => {
  const legacy = (contestId: number, userId: string, start: number) =>
    `reminder-due:${createHash('sha256')
      .update(JSON.stringify([contestId, userId, start]))
      .digest('hex')
      .slice(0, 32)}`;

  it('names the intent and the start: the same intent and start give the same id, a new intent or start a new one', () => {
    const id = reminderDueId(cf(2051), 'alice', INTENT, START);
    expect(id).toMatch(/^reminder-due:[0-9a-f]{32}$/);
    expect(reminderDueId(cf(2051), 'alice', INTENT, START)).toBe(id);
    expect(
      `reminder-due:${createHash('sha256')
        .update(JSON.stringify([2051, 'alice', INTENT, START]))
        .digest('hex')
        .slice(0, 32)}`,
    ).toBe(id);
    expect(reminderDueEvent(valid({ intent: INTENT, dueAt: START - 600, minutesBefore: 10 }), contest).id).toBe(id);
    expect(
      new Set([
        id,
        reminderDueId(cf(2051), 'alice', 'another-intent', START),
        reminderDueId(cf(2051), 'alice', INTENT, START + 60),
        reminderDueId(cf(2051), 'bob', INTENT, START),
        reminderDueId(cf(2052), 'alice', INTENT, START),
        reminderDueId(cf(2051), 'alice', undefined, START),
      ]).size,
    ).toBe(6);
    // No separator trick: ("1", "2#3") and ("12", "#3") differ; nor does an intent shift into the user id.
    expect(reminderDueId(cf(1), '2#3', INTENT, START)).not.toBe(reminderDueId(cf(12), '#3', INTENT, START));
    expect(reminderDueId(cf(2051), 'alice', 'x', START)).not.toBe(reminderDueId(cf(2051), 'alicex', undefined, START));
    expect(reminderDueId(cf(2051), 'u'.repeat(1024), 'i'.repeat(64), START).length).toBe(id.length);
  });

  it("a Codeforces contest's ids are what they were before ids were qualified (its number); another platform's name its qualified id", () => {
    // The hash above is of [2051, …]: the number, as the release before qualified ids made it.
    const atcoder = reminderDueId('atcoder:2051', 'alice', INTENT, START);
    expect(atcoder).toBe(
      `reminder-due:${createHash('sha256')
        .update(JSON.stringify(['atcoder:2051', 'alice', INTENT, START]))
        .digest('hex')
        .slice(0, 32)}`,
    );
    expect(atcoder).not.toBe(reminderDueId(CF2051, 'alice', INTENT, START));
    const event = reminderDueEvent(valid({ contestId: 'atcoder:2051' }), { ...contest, contestId: 'atcoder:2051', platform: 'atcoder' });
    expect(event.detail).toMatchObject({ contestId: 'atcoder:2051', contest: 'atcoder:2051', platform: 'atcoder', platformId: '2051' });
  });

  it('keeps the id it always had for a row written before intents: (contestId, userId, dueStart)', () => {
    expect(reminderDueId(cf(2051), 'alice', undefined, START)).toBe(legacy(2051, 'alice', START));
    expect(reminderDueEvent(valid(), contest).id).toBe(legacy(2051, 'alice', START));
  });

  it('carries the contest (platform-qualified), user, lead time, start, name and URL; never the intent', () => {
    expect(reminderDueEvent(valid({ intent: INTENT }), contest)).toEqual({
      id: reminderDueId(cf(2051), 'alice', INTENT, START),
      detailType: 'ReminderDue',
      detail: {
        contestId: 'codeforces:2051',
        contest: 'codeforces:2051',
        platform: 'codeforces',
        platformId: '2051',
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
    expect(typical * MAX_CLAIMS_PER_TRANSACTION + MAX_CLAIMS_PER_TRANSACTION * GATE_CHECK_BYTES).toBeLessThan(TRANSACTION_BYTE_BUDGET);
    const largest = claimBytes(valid(), 256 * 1024);
    expect(largest).toBeGreaterThan(2 * 256 * 1024);
    // Packed by these bytes, a batch of the largest holds at most 3 claims: well within 4 MB.
    expect(packClaims(Array.from({ length: 10 }, () => ({ contestKey: `${cf(1)}#00`, bytes: largest }))).map((b) => b.length)).toEqual([
      3, 3, 3, 1,
    ]);
  });
});

const claimsOf = (perContest: readonly number[], bytes = 300) =>
  perContest.flatMap((count, c) => Array.from({ length: count }, (_, i) => ({ contestKey: `${cf(1000 + c)}#00`, bytes, i })));
/** The actions a batch takes besides the lease check: 2 per claim, 1 per bucket key. */
const actionsOf = (batch: readonly { contestKey: string }[]) => 2 * batch.length + gatesOf(batch);
const bytesOf = (batch: readonly { contestKey: string; bytes: number }[]) =>
  batch.reduce((sum, c) => sum + c.bytes, 0) + gatesOf(batch) * GATE_CHECK_BYTES;

describe('packClaims', () => {
  it('packs 49 claims of one contest per transaction: 49 × 2 + its check + the lease check = 100 actions', () => {
    const batches = packClaims(claimsOf([20_000]));
    expect(MAX_CLAIMS_PER_TRANSACTION * 2 + 1 + 1).toBe(100);
    expect(MAX_DATA_ACTIONS).toBe(99);
    expect(batches).toHaveLength(Math.ceil(20_000 / 49));
    expect(batches.every((b) => b.length <= 49 && actionsOf(b) <= MAX_DATA_ACTIONS)).toBe(true);
    expect(batches.flat()).toHaveLength(20_000);
  });

  it('counts a check per contest: claims of many contests fit fewer per transaction, never more than 99 actions', () => {
    // 33 contests of one claim each: 33 × 3 = 99 actions.
    expect(packClaims(claimsOf(Array.from({ length: 40 }, () => 1))).map((b) => b.length)).toEqual([33, 7]);
    for (const shape of [[3, 1, 60, 2, 2, 2, 45], Array.from({ length: 50 }, (_, i) => (i % 7) + 1), [48, 1, 1]]) {
      const batches = packClaims(claimsOf(shape));
      expect(batches.flat()).toHaveLength(shape.reduce((a, b) => a + b, 0));
      for (const batch of batches) expect(actionsOf(batch), JSON.stringify(shape)).toBeLessThanOrEqual(MAX_DATA_ACTIONS);
    }
  });

  it("groups each contest's claims (in the order contests first appear), so that they share one check; a contest that does not fit goes on in the next", () => {
    const mixed = [1, 2, 1, 3, 2, 1].map((c, i) => ({ contestKey: `${cf(c)}#00`, bytes: 100, i }));
    expect(packClaims(mixed).map((b) => b.map((c) => c.i))).toEqual([[0, 2, 5, 1, 4, 3]]);
    // Two contests of 30: 30 × 2 + 1 = 61 actions, then 38 left: 18 claims of the second (37 actions), 12 in the next.
    const batches = packClaims(claimsOf([30, 30]));
    expect(batches.map((b) => b.length)).toEqual([48, 12]);
    expect(batches.map((b) => gatesOf(b))).toEqual([2, 1]);
  });

  it('keeps every transaction within the byte budget, checks included, in order', () => {
    const claims = [100, 200, 300, 50, 400, 10].map((bytes, i) => ({ contestKey: `${cf(1)}#00`, bytes, i }));
    const budget = GATE_CHECK_BYTES + 500;
    const batches = packClaims(claims, 49, budget);
    expect(batches.map((b) => b.map((c) => c.i))).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
    ]);
    expect(batches.every((b) => bytesOf(b) <= budget)).toBe(true);
    const spread = packClaims(claimsOf([1, 1, 1], 100), 49, 2 * GATE_CHECK_BYTES + 200);
    expect(spread.map((b) => b.length)).toEqual([2, 1]);
  });

  it('gives an oversized claim a transaction of its own', () => {
    const budget = GATE_CHECK_BYTES + 500;
    expect(
      packClaims(
        [10, 900, 10].map((bytes) => ({ contestKey: `${cf(1)}#00`, bytes })),
        49,
        budget,
      ).map((b) => b.length),
    ).toEqual([1, 1, 1]);
  });

  it("checks each bucket key's gate once: one contest's claims under three keys take three checks, in one transaction when they fit", () => {
    const keys = [0, 7, 15].map((bucket) => `${cf(1)}#${String(bucket).padStart(2, '0')}`);
    const claims = Array.from({ length: 30 }, (_, i) => ({ contestKey: keys[i % 3]!, bytes: 100, i }));
    const batches = packClaims(claims);
    expect(batches.map((b) => b.length)).toEqual([30]);
    expect(gatesOf(batches[0]!)).toBe(3);
    expect(actionsOf(batches[0]!)).toBe(63);
    // Grouped by key in the order keys first appear.
    expect(batches[0]!.map((c) => c.contestKey)).toEqual([
      ...Array(10).fill(keys[0]),
      ...Array(10).fill(keys[1]),
      ...Array(10).fill(keys[2]),
    ]);
  });

  it('takes fewer claims per transaction when asked (the bench compares 1), never more than 49', () => {
    expect(packClaims(claimsOf([5]), 1).map((b) => b.length)).toEqual([1, 1, 1, 1, 1]);
    expect(() => packClaims(claimsOf([5]), 50)).toThrow(RangeError);
  });
});

describe('dueShardOf', () => {
  it("is the row's bucket mod dueShards: one round's rows over every shard, each below the setting", () => {
    expect(MAX_DUE_SHARDS).toBe(REMINDER_BUCKETS);
    const users = Array.from({ length: 200 }, (_, i) => `user-${i}`);
    expect(users.map((u) => dueShardOf(u, 1))).toEqual(users.map(() => 0));
    for (let dueShards = 1; dueShards <= MAX_DUE_SHARDS; dueShards += 1) {
      const shards = new Set(users.map((u) => dueShardOf(u, dueShards)));
      expect(shards).toEqual(new Set(Array.from({ length: dueShards }, (_, i) => i)));
      expect(users.every((u) => dueShardOf(u, dueShards) === bucketOf(u) % dueShards)).toBe(true);
    }
  });

  it("a user's bucket is the first byte of SHA-256 of the user id mod 16, the same for every contest; its key two digits", () => {
    const first = createHash('sha256').update('alice').digest()[0]! % 16;
    expect(bucketOf('alice')).toBe(first);
    expect(contestKeyOf(CF2051, 'alice')).toBe(`codeforces:2051#${String(first).padStart(2, '0')}`);
    expect(contestKeyOf('atcoder:abc199', 'alice').endsWith(`#${String(first).padStart(2, '0')}`)).toBe(true);
  });
});
