/**
 * The migration's run (lambda/migration/migrate.ts) on tables in memory (./memory.ts). DynamoDB
 * itself: test/multiprocess/upgrade.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { contestToNew, reminderToNew, type Item } from '../../../lambda/migration/items.js';
import { MIGRATION_MARKER_PK } from '../../../lambda/migration/keys.js';
import { rolledBack } from '../../../lambda/migration/marker.js';
import { migrate } from '../../../lambda/migration/migrate.js';
import { documentItems } from '../../support/upgrade-fixture.js';
import { gatesOf } from '../../support/contests.js';
import { fixture, keyOf, TABLES, world } from './memory.js';
const expectedContests = () => documentItems(fixture, 'contests').map((item) => contestToNew(item));
const byKey = (table: string, items: Item[]) => [...items].sort((a, b) => keyOf(table, a).localeCompare(keyOf(table, b)));

describe('the migration run', () => {
  it('copies the contests, waits for the barrier, copies the reminders, and is done', async () => {
    const w = world();
    const startedAt = w.now();
    const progress = await migrate(w.run('run-1'), w.deps);
    expect(progress).toMatchObject({
      state: 'done',
      phase: 'done',
      copied: { contests: 13, reminders: 38, existing: 0, refused: 0 },
      total: { contests: 13, reminders: 38, existing: 0, refused: 0 },
    });
    // Each contest with its bucket gates, as the sync would have written them (the claims check them).
    const contests = expectedContests();
    expect(byKey(TABLES.contests, w.items(TABLES.contests))).toEqual(byKey(TABLES.contests, [...contests, ...contests.flatMap(gatesOf)]));
    expect(contests.flatMap(gatesOf).length).toBe(16 * contests.filter((contest) => typeof contest.dueStart === 'number').length);
    const expected = documentItems(fixture, 'reminders').map((item) => reminderToNew(item, 4));
    expect(byKey(TABLES.reminders, w.items(TABLES.reminders))).toEqual(byKey(TABLES.reminders, expected));
    // The barrier: 30 s past the start, before the first reminder was copied.
    expect(w.leasesTakenAt).toHaveLength(1);
    expect(w.leasesTakenAt[0]).toBeGreaterThanOrEqual(startedAt + 30_000);
    const firstReminderCommit = w.commits.findIndex((actions) => actions.some((a) => a.Put?.TableName === TABLES.reminders));
    const lastContestCommit = w.commits.findLastIndex((actions) => actions.some((a) => a.Put?.TableName === TABLES.contests));
    expect(firstReminderCommit).toBeGreaterThan(lastContestCommit);
    // Every commit carries the marker, and fits one transaction with the lease check.
    for (const actions of w.commits) {
      expect(actions.at(-1)?.Put?.Item?.pk).toBe(MIGRATION_MARKER_PK);
      expect(actions.length).toBeLessThanOrEqual(99);
    }
    expect(w.marker()).toMatchObject({ state: 'done', runs: 1, barrierAtMs: w.leasesTakenAt[0] });
    // Done is final: the next run reads the marker and writes nothing.
    const commits = w.commits.length;
    expect(await migrate(w.run('run-2'), w.deps)).toMatchObject({ state: 'done', copied: { contests: 0, reminders: 0 } });
    expect(w.commits).toHaveLength(commits);
  });

  it('stops before its deadline and the next run goes on from the cursor: every row copied once', async () => {
    const many = Array.from({ length: 1000 }, (_, i) => ({ ...documentItems(fixture, 'reminders')[i % 38]!, userId: `bulk-${i}` }));
    const w = world({ legacyReminders: many, commitMs: 1_000 });
    // 31 s of the barrier, then about 5 pages of reminders in the first run.
    const first = await migrate(w.run('run-1', 31_000 + 3_000 + 8_000), w.deps);
    expect(first).toMatchObject({ state: 'copying', phase: 'reminders', unfinished: 'deadline' });
    expect(first.copied.reminders).toBeGreaterThan(0);
    expect(first.copied.reminders).toBeLessThan(1000);
    const second = await migrate(w.run('run-2', 1_000_000), w.deps);
    expect(second).toMatchObject({ state: 'done', total: { reminders: 1000, existing: 0 } });
    expect(first.copied.reminders + second.copied.reminders).toBe(1000);
    expect(w.items(TABLES.reminders)).toHaveLength(1000);
    expect(w.leasesTakenAt).toHaveLength(1); // the barrier once: the second run resumed past it
    expect(w.marker()).toMatchObject({ runs: 2 });
  });

  it('a commit whose answer was lost fails the run; the next run finds the page written and never overwrites a row changed since', async () => {
    const w = world();
    // Commits: the start, 3 pages of contests (13 items, 5 a page: each with its 16 gates), the barrier, then the reminders' page: its answer is lost.
    w.loseAnswerOf(6);
    await expect(migrate(w.run('run-1'), w.deps)).rejects.toThrow(/socket hang up/);
    expect(w.marker()).toMatchObject({ phase: 'done' }); // the page and the marker landed together
    // The new code claimed one of the copied rows meanwhile; a migration started over must keep it.
    const claimed = w.items(TABLES.reminders).find((row) => row.dueAt !== undefined)!;
    w.tables
      .get(TABLES.reminders)!
      .set(keyOf(TABLES.reminders, claimed), { ...claimed, notifiedStart: claimed.dueStart, paused: 'notified' });
    w.tables.get(TABLES.coordination)!.set(keyOf(TABLES.coordination, { pk: MIGRATION_MARKER_PK }), {
      pk: MIGRATION_MARKER_PK,
      ...rolledBack(w.marker(), w.now()),
    });
    const again = await migrate(w.run('run-2'), w.deps);
    expect(again).toMatchObject({ state: 'done', copied: { contests: 13, reminders: 0, existing: 38 } });
    expect(w.tables.get(TABLES.reminders)!.get(keyOf(TABLES.reminders, claimed))).toMatchObject({ paused: 'notified' });
  });

  it("keeps the sync's handoff through unfinished runs and hands it on under qualified ids with the copy's last commit", async () => {
    const w = world();
    w.deps.shardLeases = { takeEach: async () => false };
    await migrate(w.run('run-1', 60_000, ['2125']), w.deps);
    expect(w.kept).toEqual([['2125']]);
    expect(w.handoffs).toEqual([]);
    w.deps.shardLeases = { takeEach: async () => true };
    await migrate(w.run('run-2', 100_000, ['2125']), w.deps);
    expect(w.handoffs).toEqual([['codeforces:2125']]);
    expect(w.kept.slice(1)).toEqual([['codeforces:2125']]); // the legacy entry is resolved by the release
  });

  it('refuses and counts a row it cannot carry, and copies the rest', async () => {
    const rows = documentItems(fixture, 'reminders');
    const refused: string[] = [];
    const w = world({ legacyReminders: [...rows, { contestId: 'abc', userId: 'hand-written' }] });
    const progress = await migrate(w.run('run-1'), { ...w.deps, onRefused: (table, problem) => refused.push(`${table}: ${problem}`) });
    expect(progress).toMatchObject({ state: 'done', total: { reminders: 38, refused: 1 } });
    expect(refused).toEqual(['reminders: reminders item refused: contestId is not a positive whole number']);
  });

  it('waits for the delivery shards: a barrier not passed before the deadline is taken again by the next run', async () => {
    const w = world();
    let free = false;
    w.deps.shardLeases = { takeEach: async () => free };
    expect(await migrate(w.run('run-1', 60_000), w.deps)).toMatchObject({ phase: 'barrier', unfinished: 'deadline' });
    expect(w.items(TABLES.reminders)).toHaveLength(0);
    free = true;
    expect(await migrate(w.run('run-2', 60_000), w.deps)).toMatchObject({ state: 'done', total: { reminders: 38 } });
  });
});
