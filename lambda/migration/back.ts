/**
 * `npm run migrate -- back` (docs/runbook.md, "Rolling back"): the new tables' Codeforces items
 * written under the previous release's keys, so that the previous release, deployed again, goes on
 * from what this one did — the reminders users set, changed and cancelled through it, what it sent,
 * the contests as it last synced them. Under the sync's lease, every write fenced:
 *
 * 1. every Codeforces item of the new tables is put into the previous release's table (whole, over
 *    what is there); an item of another platform has no legacy key and is counted `other`; the
 *    bucket gates are this release's copies of its contests' `dueStart` and are left out;
 * 2. after a finished migration, a legacy item whose copy is gone (a reminder cancelled, a contest
 *    deleted since) is deleted too; before it is done, a missing copy may just not be made yet, so
 *    nothing is deleted; an item the migration refuses to carry is never deleted;
 * 3. the marker is left `rolled-back`: the next upgrade copies again.
 *
 * Idempotent: run again, it writes the same. Without a run (a dry run), it only counts.
 */
import type { TransactAction } from '@contest-sync/scheduled-singleton';
import { MigrationItemError } from './errors.js';
import { contestToLegacy, contestToNew, reminderToLegacy, reminderToNew, type Item } from './items.js';
import { rolledBack, type MigrationMarker } from './marker.js';
import type { MigrationRun } from './migrate.js';
import { markerPut, PAGE_ITEMS, type MigrationStore, type MigrationTables } from './store.js';
import { GATE_PREFIX } from '../contests/bucket-gates.js';

export interface BackCounts {
  /** Items put into the previous release's table. */
  written: number;
  /** Legacy items deleted: their copy is gone. */
  deleted: number;
  /** Items of other platforms: no legacy key, left out. */
  other: number;
}

export interface BackReport {
  contests: BackCounts;
  reminders: BackCounts;
  /** Whether legacy items without a copy were deleted (only after a finished migration). */
  deletesOrphans: boolean;
  marker?: MigrationMarker;
}

export interface BackDeps {
  store: MigrationStore;
  tables: MigrationTables;
  /** The previous release's DUE_SHARDS: a due row's legacy shard is contestId mod this. */
  dueShards: number;
  now: () => number;
  signal?: AbortSignal;
}

/** Rules 1-3; with `run` undefined, a dry run: counted, nothing written. */
export async function rollBack(run: Pick<MigrationRun, 'commit'> | undefined, deps: BackDeps): Promise<BackReport> {
  const marker = await deps.store.readMarker(deps.signal);
  const deletesOrphans = marker?.state === 'done';
  const contests = await backTable(run, deps, deletesOrphans, {
    from: deps.tables.contests,
    to: deps.tables.legacyContests,
    toLegacy: contestToLegacy,
    toNew: contestToNew,
    key: (item) => JSON.stringify([item.contestId]),
    legacyKey: (item) => ({ contestId: item.contestId }),
    derived: (item) => String(item.contestId).startsWith(GATE_PREFIX),
  });
  const reminders = await backTable(run, deps, deletesOrphans, {
    from: deps.tables.reminders,
    to: deps.tables.legacyReminders,
    toLegacy: (item) => reminderToLegacy(item, deps.dueShards),
    toNew: (item) => reminderToNew(item, deps.dueShards),
    key: (item) => JSON.stringify([item.contestId, item.userId]),
    legacyKey: (item) => ({ contestId: item.contestId, userId: item.userId }),
  });
  const after = rolledBack(marker, deps.now());
  if (run !== undefined) await run.commit([markerPut(deps.tables.coordination, after)]);
  return { contests, reminders, deletesOrphans, ...(run === undefined ? {} : { marker: after }) };
}

interface TableBack {
  from: string;
  to: string;
  toLegacy: (item: Item) => Item | undefined;
  toNew: (legacy: Item) => Item;
  /** A legacy item's key, as text. */
  key: (legacy: Item) => string;
  legacyKey: (legacy: Item) => Item;
  /** Items this release derives from others (the bucket gates): not carried back, not counted. */
  derived?: (item: Item) => boolean;
}

async function backTable(
  run: Pick<MigrationRun, 'commit'> | undefined,
  deps: BackDeps,
  deletesOrphans: boolean,
  table: TableBack,
): Promise<BackCounts> {
  const counts: BackCounts = { written: 0, deleted: 0, other: 0 };
  const copied = new Set<string>();
  await eachPage(deps, table.from, async (items) => {
    const actions: TransactAction[] = [];
    for (const item of items) {
      if (table.derived?.(item) === true) continue;
      const legacy = table.toLegacy(item);
      if (legacy === undefined) {
        counts.other += 1;
        continue;
      }
      copied.add(table.key(legacy));
      actions.push({ Put: { TableName: table.to, Item: legacy } });
    }
    if (run !== undefined && actions.length > 0) await run.commit(actions);
    counts.written += actions.length;
  });
  if (!deletesOrphans) return counts;
  await eachPage(deps, table.to, async (items) => {
    const actions: TransactAction[] = items
      .filter((legacy) => !copied.has(table.key(legacy)) && carried(table, legacy))
      .map((legacy) => ({ Delete: { TableName: table.to, Key: table.legacyKey(legacy) } }));
    if (run !== undefined && actions.length > 0) await run.commit(actions);
    counts.deleted += actions.length;
  });
  return counts;
}

/** Whether the migration carries the item at all (one it refuses is never deleted by a rollback). */
function carried(table: TableBack, legacy: Item): boolean {
  try {
    table.toNew(legacy);
    return true;
  } catch (error) {
    if (error instanceof MigrationItemError) return false;
    throw error;
  }
}

async function eachPage(deps: BackDeps, table: string, onPage: (items: Item[]) => Promise<void>): Promise<void> {
  let cursor: Record<string, unknown> | undefined;
  do {
    const page = await deps.store.scanPage(table, cursor, PAGE_ITEMS + 1, deps.signal);
    await onPage(page.items);
    cursor = page.next;
  } while (cursor !== undefined);
}
