/**
 * `npm run migrate -- verify` (docs/runbook.md, "Check the copy"): every item of the previous
 * release's tables against its copy, read-only. Right after the migration, every copy is the same;
 * later, the copies of rows this release changed since (sent, moved, set again, cancelled) differ
 * in what it changed: the report counts the differences by attribute.
 */
import { contestToNew, differences, reminderToNew, type Item } from './items.js';
import { MigrationItemError } from './errors.js';
import { PAGE_ITEMS, type MigrationStore, type MigrationTables } from './store.js';

export interface TableReport {
  /** Items in the previous release's table. */
  legacy: number;
  /** Copies equal to the item. */
  same: number;
  /** Copies that differ, and how many differ in each attribute. */
  differ: number;
  attributes: Record<string, number>;
  /** Items without a copy. */
  missing: number;
  /** Items the migration refuses (cannot be carried to the new key). */
  refused: number;
  /** The first differing, missing or refused items: their new key and what differs. */
  examples: { key: string; kind: 'differs' | 'missing' | 'refused'; attributes?: string[] }[];
}

export interface VerifyReport {
  contests: TableReport;
  reminders: TableReport;
}

const EXAMPLES = 20;
const emptyReport = (): TableReport => ({ legacy: 0, same: 0, differ: 0, attributes: {}, missing: 0, refused: 0, examples: [] });

export async function verifyCopy(deps: {
  store: MigrationStore;
  tables: MigrationTables;
  /** The DUE_SHARDS the copy was made under (the marker's). */
  dueShards: number;
  signal?: AbortSignal;
}): Promise<VerifyReport> {
  const { store, tables, dueShards, signal } = deps;
  return {
    contests: await verifyTable(store, tables.legacyContests, tables.contests, (item) => contestToNew(item), ['contestId'], signal),
    reminders: await verifyTable(
      store,
      tables.legacyReminders,
      tables.reminders,
      (item) => reminderToNew(item, dueShards),
      ['contestKey', 'userId'],
      signal,
    ),
  };
}

async function verifyTable(
  store: MigrationStore,
  legacyTable: string,
  table: string,
  expected: (legacy: Item) => Item,
  keyNames: readonly string[],
  signal?: AbortSignal,
): Promise<TableReport> {
  const report = emptyReport();
  const keyOf = (item: Item) => keyNames.map((name) => String(item[name])).join(' ');
  const example = (entry: TableReport['examples'][number]) => {
    if (report.examples.length < EXAMPLES) report.examples.push(entry);
  };
  let cursor: Record<string, unknown> | undefined;
  do {
    const page = await store.scanPage(legacyTable, cursor, PAGE_ITEMS, signal);
    cursor = page.next;
    report.legacy += page.items.length;
    const wanted: Item[] = [];
    for (const item of page.items) {
      try {
        wanted.push(expected(item));
      } catch (error) {
        if (!(error instanceof MigrationItemError)) throw error;
        report.refused += 1;
        example({ key: JSON.stringify([item.contestId ?? null, item.userId ?? null]).slice(0, 120), kind: 'refused' });
      }
    }
    const copies = new Map(
      (
        await store.getItems(
          table,
          wanted.map((item) => Object.fromEntries(keyNames.map((name) => [name, item[name]]))),
          signal,
        )
      ).map((copy) => [keyOf(copy), copy]),
    );
    for (const want of wanted) {
      const copy = copies.get(keyOf(want));
      if (copy === undefined) {
        report.missing += 1;
        example({ key: keyOf(want), kind: 'missing' });
        continue;
      }
      const differ = differences(want, copy);
      if (differ.length === 0) {
        report.same += 1;
        continue;
      }
      report.differ += 1;
      for (const name of differ) report.attributes[name] = (report.attributes[name] ?? 0) + 1;
      example({ key: keyOf(want), kind: 'differs', attributes: differ });
    }
  } while (cursor !== undefined);
  return report;
}
