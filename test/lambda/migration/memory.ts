/**
 * Tables in memory for the migration's tests: they evaluate what the copies rely on (a Scan's
 * pages and cursor, `attribute_not_exists`, a transaction refused whole with the actions its
 * conditions refused), with a clock that moves as a run waits and commits.
 */
import { FencedWriteError } from '@contest-sync/scheduled-singleton';
import type { TransactAction } from '@contest-sync/scheduled-singleton';
import type { Item } from '../../../lambda/migration/items.js';
import { MIGRATION_MARKER_PK } from '../../../lambda/migration/keys.js';
import { parseMarker } from '../../../lambda/migration/marker.js';
import type { MigrationDeps, MigrationRun } from '../../../lambda/migration/migrate.js';
import type { MigrationStore, MigrationTables, ShardLeases } from '../../../lambda/migration/store.js';
import { documentItems, loadUpgradeFixture } from '../../support/upgrade-fixture.js';

export const fixture = loadUpgradeFixture();
export const TABLES: MigrationTables = {
  legacyContests: 'legacy-contests',
  legacyReminders: 'legacy-reminders',
  contests: 'contests',
  reminders: 'reminders',
  coordination: 'coordination',
};
const KEYS: Record<string, string[]> = {
  'legacy-contests': ['contestId'],
  'legacy-reminders': ['contestId', 'userId'],
  contests: ['contestId'],
  reminders: ['contestKey', 'userId'],
  coordination: ['pk'],
};
export const keyOf = (table: string, item: Item) => JSON.stringify(KEYS[table]!.map((name) => item[name]));

/** Tables in memory, a clock, the barrier's leases, and the commits the runs made. */
export function world(options: { legacyReminders?: Item[]; commitMs?: number } = {}) {
  let now = Date.parse('2026-12-02T16:10:00Z');
  const tables = new Map<string, Map<string, Item>>(Object.keys(KEYS).map((name) => [name, new Map()]));
  const put = (table: string, item: Item) => tables.get(table)!.set(keyOf(table, item), structuredClone(item));
  for (const item of documentItems(fixture, 'contests')) put(TABLES.legacyContests, item);
  for (const item of options.legacyReminders ?? documentItems(fixture, 'reminders')) put(TABLES.legacyReminders, item);
  const commits: TransactAction[][] = [];
  const leasesTakenAt: number[] = [];
  /** Throws once after applying the Nth commit (the answer lost), if set. */
  let loseAnswerOf: number | undefined;
  const store: MigrationStore = {
    readMarker: async () => parseMarker(tables.get(TABLES.coordination)!.get(keyOf(TABLES.coordination, { pk: MIGRATION_MARKER_PK }))),
    scanPage: async (table, cursor, limit) => {
      const keys = [...tables.get(table)!.keys()].sort();
      const from = cursor === undefined ? 0 : keys.indexOf(keyOf(table, cursor)) + 1;
      const items = keys.slice(from, from + limit).map((key) => structuredClone(tables.get(table)!.get(key)!));
      const last = items.at(-1);
      const more = from + limit < keys.length && last !== undefined;
      return { items, ...(more ? { next: Object.fromEntries(KEYS[table]!.map((name) => [name, last[name]])) } : {}) };
    },
    getItems: async (table, keys) =>
      keys.flatMap((key): Item[] => {
        const item = tables.get(table)!.get(keyOf(table, key));
        return item === undefined ? [] : [structuredClone(item)];
      }),
  };
  const handoffs: (readonly string[])[] = [];
  const commit: MigrationRun['commit'] = async (actions, commitOptions) => {
    if (commitOptions?.handoff !== undefined) handoffs.push(commitOptions.handoff);
    now += options.commitMs ?? 50;
    const refused = actions.filter((action) => {
      if (action.Put === undefined) return false;
      const { TableName, Item, ConditionExpression } = action.Put;
      return ConditionExpression === 'attribute_not_exists(contestKey)' && tables.get(TableName!)!.has(keyOf(TableName!, Item!));
    });
    if (refused.length > 0) throw new FencedWriteError('a write was refused by its condition', { refused });
    for (const action of actions) {
      if (action.Put !== undefined) put(action.Put.TableName!, action.Put.Item!);
      else if (action.Delete !== undefined)
        tables.get(action.Delete.TableName!)!.delete(keyOf(action.Delete.TableName!, action.Delete.Key!));
    }
    commits.push([...actions]);
    if (loseAnswerOf === commits.length) throw new Error('socket hang up after the write was applied');
    return { transactions: 1, events: { written: 0, duplicates: 0 } };
  };
  const shardLeases: ShardLeases = {
    takeEach: async () => {
      leasesTakenAt.push(now);
      return true;
    },
  };
  const deps: MigrationDeps = {
    store,
    shardLeases,
    tables: TABLES,
    dueShards: 4,
    now: () => now,
    sleep: async (ms) => {
      now += ms;
    },
  };
  const kept: string[][] = [];
  const run = (runId: string, remainingMs = 100_000, handoff: string[] = []): MigrationRun => ({
    runId,
    signal: new AbortController().signal,
    deadline: now + remainingMs,
    commit,
    handoff: new Set(handoff),
    keep: (entries) => void kept.push([...entries]),
  });
  return {
    tables,
    commits,
    handoffs,
    kept,
    leasesTakenAt,
    deps,
    run,
    items: (table: string) => [...tables.get(table)!.values()],
    marker: () => parseMarker(tables.get(TABLES.coordination)!.get(keyOf(TABLES.coordination, { pk: MIGRATION_MARKER_PK }))),
    now: () => now,
    loseAnswerOf: (n: number) => {
      loseAnswerOf = n;
    },
  };
}
