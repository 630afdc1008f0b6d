/**
 * One item to the other key and back (lambda/migration/items.ts), on every row the previous
 * release left in its tables (test/fixtures/upgrade/) and on what it must refuse.
 */
import { describe, expect, it } from 'vitest';
import { MigrationItemError } from '../../../lambda/migration/errors.js';
import { contestToLegacy, contestToNew, differences, reminderToLegacy, reminderToNew, type Item } from '../../../lambda/migration/items.js';
import { bucketOf, REMINDER_BUCKETS } from '../../../lambda/migration/keys.js';
import { documentItems, loadUpgradeFixture } from '../../support/upgrade-fixture.js';

const fixture = loadUpgradeFixture();
const contests = documentItems(fixture, 'contests');
const reminders = documentItems(fixture, 'reminders');
const without = (item: Item, ...names: string[]) => Object.fromEntries(Object.entries(item).filter(([name]) => !names.includes(name)));

describe('the previous release rows the fixture holds', () => {
  it('has every shape the upgrade must carry', () => {
    const has = (predicate: (row: Item) => boolean) => reminders.some(predicate);
    expect(has((r) => typeof r.intent === 'string')).toBe(true);
    expect(has((r) => r.intent === undefined)).toBe(true);
    expect(has((r) => r.dueAt !== undefined && r.notifiedStart === undefined)).toBe(true);
    expect(has((r) => r.paused === 'notified' && r.notifiedStart !== undefined)).toBe(true);
    expect(has((r) => r.sentStarts instanceof Set && r.dueAt !== undefined)).toBe(true);
    expect(has((r) => r.paused === 'vanished' && r.intent === undefined)).toBe(true);
    expect(contests.some((c) => c.vanishedAt !== undefined)).toBe(true);
    expect(contests.some((c) => c.pending !== undefined)).toBe(true);
    expect(contests.some((c) => c.confirmedBefore !== undefined)).toBe(true);
    expect(contests.find((c) => c.contestId === 0)?.withdrawn).toBeDefined();
  });
});

describe('a contest', () => {
  it('is keyed by its qualified id and gains platformId; every other attribute is kept', () => {
    for (const legacy of contests.filter((c) => c.contestId !== 0)) {
      const copy = contestToNew(legacy);
      expect(copy.contestId).toBe(`codeforces:${String(legacy.contestId)}`);
      expect(copy.platformId).toBe(String(legacy.contestId));
      expect(without(copy, 'contestId', 'platformId')).toEqual(without(legacy, 'contestId'));
      expect(contestToLegacy(copy)).toEqual(legacy);
    }
  });

  it('the reply clock becomes clock#codeforces, its withdrawn register keyed by qualified ids', () => {
    const legacy = contests.find((c) => c.contestId === 0)!;
    const copy = contestToNew(legacy);
    const D = fixture.state.contests.D;
    expect(copy.contestId).toBe('clock#codeforces');
    expect(copy.platform).toBeUndefined(); // never in the app's index
    expect(copy.withdrawn).toEqual({ [`codeforces:${D}`]: (legacy.withdrawn as Record<string, unknown>)[String(D)] });
    expect(without(copy, 'contestId', 'withdrawn')).toEqual(without(legacy, 'contestId', 'withdrawn'));
    expect(contestToLegacy(copy)).toEqual(legacy);
  });

  it('refuses what is not a legacy Codeforces contest, and leaves other platforms out of a rollback', () => {
    const legacy = contests.find((c) => c.contestId !== 0)!;
    for (const contestId of ['2120', -1, 2.5, Number.MAX_SAFE_INTEGER + 2, undefined]) {
      expect(() => contestToNew({ ...legacy, contestId })).toThrow(MigrationItemError);
    }
    expect(() => contestToNew({ ...legacy, platform: 'atcoder' })).toThrow(/platform is not codeforces/);
    expect(() => contestToNew({ contestId: 0, withdrawn: { abc: {} } })).toThrow(/withdrawn register key/);
    expect(() => contestToNew({ contestId: 0, withdrawn: ['2120'] })).toThrow(/not a map/);
    expect(contestToLegacy({ ...legacy, contestId: 'atcoder:abc199', platform: 'atcoder' })).toBeUndefined();
    expect(contestToLegacy({ contestId: 'clock#atcoder' })).toBeUndefined();
    expect(contestToLegacy({ ...legacy, contestId: 'codeforces:02120' })).toBeUndefined();
    expect(contestToLegacy({ contestId: 'clock#codeforces', withdrawn: { 'atcoder:abc1': {} } })).toEqual({ contestId: 0 });
  });
});

describe('a reminder', () => {
  it.each([1, 4, 16])('keeps intent, lead, due and sent state; its due shard is its bucket mod DUE_SHARDS=%i', (dueShards) => {
    for (const legacy of reminders) {
      const copy = reminderToNew(legacy, dueShards);
      const bucket = bucketOf(legacy.userId as string);
      const contestId = `codeforces:${String(legacy.contestId)}`;
      expect(copy.contestKey).toBe(`${contestId}#${String(bucket).padStart(2, '0')}`);
      expect(copy.contestId).toBe(contestId);
      expect(copy.dueShard).toBe(legacy.dueShard === undefined ? undefined : bucket % dueShards);
      expect(without(copy, 'contestKey', 'contestId', 'dueShard')).toEqual(without(legacy, 'contestId', 'dueShard'));
      // Back under the previous release's setting (1 shard): the row as it was.
      expect(reminderToLegacy(copy, 1)).toEqual(legacy);
    }
  });

  it('back under a larger setting: the legacy shard contestId mod DUE_SHARDS, while due only', () => {
    const due = reminders.find((r) => r.dueShard !== undefined)!;
    const sent = reminders.find((r) => r.paused === 'notified')!;
    expect(reminderToLegacy(reminderToNew(due, 4), 4)?.dueShard).toBe((due.contestId as number) % 4);
    expect(reminderToLegacy(reminderToNew(sent, 4), 4)).not.toHaveProperty('dueShard');
  });

  it('spreads one round over the buckets by user', () => {
    const ofRound = reminders.filter((r) => r.contestId === fixture.state.contests.A).map((r) => bucketOf(r.userId as string));
    expect(new Set(ofRound).size).toBeGreaterThan(4);
    expect(Math.max(...ofRound)).toBeLessThan(REMINDER_BUCKETS);
    expect(bucketOf('user-sent')).toBe(12); // the first byte of SHA-256 mod 16: stable across releases
  });

  it('refuses a row without a legacy contest id or a user, and leaves other platforms out of a rollback', () => {
    const legacy = reminders[0]!;
    expect(() => reminderToNew({ ...legacy, contestId: 0 }, 1)).toThrow(MigrationItemError);
    expect(() => reminderToNew({ ...legacy, contestId: 'codeforces:2120' }, 1)).toThrow(MigrationItemError);
    for (const userId of [undefined, '', 7, 'x'.repeat(1025)]) expect(() => reminderToNew({ ...legacy, userId }, 1)).toThrow(/userId/);
    expect(reminderToLegacy({ ...reminderToNew(legacy, 1), contestId: 'atcoder:abc199' }, 1)).toBeUndefined();
  });
});

describe('differences', () => {
  it('names the attributes whose values differ, sets and maps compared by value', () => {
    const a = { s: new Set([1, 2]), m: { x: [1, { y: 2 }] }, n: 1, only: 'a' };
    expect(differences(a, { s: new Set([2, 1]), m: { x: [1, { y: 2 }] }, n: 1, only: 'a' })).toEqual([]);
    expect(differences(a, { s: new Set([1]), m: { x: [1, { y: 3 }] }, n: '1', extra: true })).toEqual(['extra', 'm', 'n', 'only', 's']);
  });
});
