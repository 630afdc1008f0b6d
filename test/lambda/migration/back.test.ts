/** The rollback (lambda/migration/back.ts): the new tables' Codeforces items under the previous keys, on tables in memory. */
import { describe, expect, it } from 'vitest';
import { rollBack } from '../../../lambda/migration/back.js';
import { contestToNew, reminderToNew } from '../../../lambda/migration/items.js';
import { migrate } from '../../../lambda/migration/migrate.js';
import { documentItems } from '../../support/upgrade-fixture.js';
import { fixture, keyOf, TABLES, world } from './memory.js';

const byKey = (table: string, items: Record<string, unknown>[]) =>
  [...items].sort((a, b) => keyOf(table, a).localeCompare(keyOf(table, b)));

describe('back', () => {
  it('after a finished migration: what this release changed is carried back, a cancelled reminder and a deleted contest too', async () => {
    const w = world();
    await migrate(w.run('run-1'), w.deps);
    const legacyBefore = byKey(TABLES.legacyReminders, w.items(TABLES.legacyReminders));
    // This release: a reminder sent, one cancelled, one set by a new user; a contest deleted; another platform's contest.
    const [sent, cancelled] = w.items(TABLES.reminders).filter((row) => row.dueAt !== undefined && row.intent !== undefined);
    const { dueAt: _dueAt, dueShard: _dueShard, dueStart: _dueStart, ...rest } = sent!;
    const claimed = { ...rest, paused: 'notified', notifiedStart: sent!.dueStart, notifiedAt: 1 };
    w.tables.get(TABLES.reminders)!.set(keyOf(TABLES.reminders, sent!), claimed);
    w.tables.get(TABLES.reminders)!.delete(keyOf(TABLES.reminders, cancelled!));
    const added = reminderToNew({ ...legacyBefore[0]!, userId: 'new-user', intent: 'fresh-intent' }, 4);
    w.tables.get(TABLES.reminders)!.set(keyOf(TABLES.reminders, added), added);
    const vanished = documentItems(fixture, 'contests').find((c) => c.contestId === fixture.state.contests.C)!;
    w.tables.get(TABLES.contests)!.delete(keyOf(TABLES.contests, contestToNew(vanished)));
    const other = { contestId: 'atcoder:abc199', platform: 'atcoder', platformId: 'abc199' };
    w.tables.get(TABLES.contests)!.set(keyOf(TABLES.contests, other), other);

    const dry = await rollBack(undefined, { store: w.deps.store, tables: TABLES, dueShards: 1, now: w.now });
    expect(dry).toMatchObject({
      deletesOrphans: true,
      contests: { written: 12, deleted: 1, other: 1 },
      reminders: { written: 38, deleted: 1 },
    });
    expect(byKey(TABLES.legacyReminders, w.items(TABLES.legacyReminders))).toEqual(legacyBefore); // a dry run writes nothing

    const report = await rollBack({ commit: w.run('back').commit }, { store: w.deps.store, tables: TABLES, dueShards: 1, now: w.now });
    expect(report).toMatchObject(dry);
    const legacy = new Map(w.items(TABLES.legacyReminders).map((row) => [JSON.stringify([row.contestId, row.userId]), row]));
    expect(legacy.size).toBe(38);
    const at = (row: Record<string, unknown>) => legacy.get(JSON.stringify([Number(String(row.contestId).split(':')[1]), row.userId]));
    expect(at(claimed)).toMatchObject({ paused: 'notified', notifiedStart: sent!.dueStart, intent: sent!.intent });
    expect(at(claimed)).not.toHaveProperty('dueAt');
    expect(at(cancelled!)).toBeUndefined();
    expect(at(added)).toMatchObject({ intent: 'fresh-intent', dueShard: 0 });
    expect(at(added)).not.toHaveProperty('contestKey');
    expect(w.items(TABLES.legacyContests).map((c) => c.contestId)).not.toContain(fixture.state.contests.C);
    expect(w.marker()).toMatchObject({ state: 'rolled-back' });
    // Idempotent, and the next upgrade copies again.
    expect(
      await rollBack({ commit: w.run('back-2').commit }, { store: w.deps.store, tables: TABLES, dueShards: 1, now: w.now }),
    ).toMatchObject({
      deletesOrphans: false,
      reminders: { written: 38, deleted: 0 },
    });
    expect(await migrate(w.run('run-2'), w.deps)).toMatchObject({ state: 'done', copied: { reminders: 0, existing: 38 } });
  });

  it('before the migration is done, a legacy row without a copy is kept (it may not be copied yet)', async () => {
    const w = world();
    const report = await rollBack({ commit: w.run('back').commit }, { store: w.deps.store, tables: TABLES, dueShards: 1, now: w.now });
    expect(report).toMatchObject({ deletesOrphans: false, contests: { written: 0, deleted: 0 }, reminders: { written: 0, deleted: 0 } });
    expect(w.items(TABLES.legacyReminders)).toHaveLength(38);
  });
});
