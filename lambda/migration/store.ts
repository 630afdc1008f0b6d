/**
 * Where the migration reads and what it writes (docs/runbook.md, "Upgrading to qualified keys"):
 * the marker item, pages of a table (consistent Scans), the copies' actions, and the barrier's
 * leases. I/O only: what an item becomes is items.ts, what the marker says is marker.ts.
 */
import { BatchGetCommand, GetCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoLease, leaseTiming, type Sleep, type TransactAction } from '@contest-sync/scheduled-singleton';
import { ENV } from '../contract.js';
import { MigrationStateError } from './errors.js';
import { migrationGate, NO_GATE, type MigrationGate } from './gate.js';
import { MIGRATION_MARKER_PK } from './keys.js';
import { parseMarker, type MigrationMarker } from './marker.js';
import type { Item } from './items.js';
import { gateItems } from '../contests/bucket-gates.js';
import type { ContestItem } from '../contests/model.js';
import { REMINDER_BUCKETS } from '../reminders/table.js';

/** The tables of an upgrade: the previous release's (read), this release's (written), Coordination (the marker). */
export interface MigrationTables {
  legacyContests: string;
  legacyReminders: string;
  contests: string;
  reminders: string;
  coordination: string;
}

export interface Page {
  items: Item[];
  /** The Scan's LastEvaluatedKey: where the next page starts; undefined after the last page. */
  next?: Record<string, unknown>;
}

/** A transaction holds 100 actions: the lease check, the marker, and this many copies. */
export const PAGE_ITEMS = 98;

export interface MigrationStore {
  readMarker(signal?: AbortSignal): Promise<MigrationMarker | undefined>;
  /** One page of a table, strongly consistent, from `cursor`. */
  scanPage(table: string, cursor: Record<string, unknown> | undefined, limit: number, signal?: AbortSignal): Promise<Page>;
  /** The items of `keys` that exist, strongly consistent (any number of keys). */
  getItems(table: string, keys: readonly Item[], signal?: AbortSignal): Promise<Item[]>;
}

/** BatchGetItem takes at most 100 keys; what it leaves unprocessed is asked again, at most this often. */
const BATCH_GET_KEYS = 100;
const BATCH_GET_ATTEMPTS = 8;

export function dynamoMigrationStore(doc: DynamoDBDocumentClient, tables: Pick<MigrationTables, 'coordination'>): MigrationStore {
  return {
    async readMarker(signal) {
      const answer = await doc.send(
        new GetCommand({ TableName: tables.coordination, Key: { pk: MIGRATION_MARKER_PK }, ConsistentRead: true }),
        { abortSignal: signal },
      );
      return parseMarker(answer.Item);
    },
    async scanPage(table, cursor, limit, signal) {
      const answer = await doc.send(
        new ScanCommand({
          TableName: table,
          ConsistentRead: true,
          Limit: limit,
          ...(cursor === undefined ? {} : { ExclusiveStartKey: cursor }),
        }),
        { abortSignal: signal },
      );
      return { items: answer.Items ?? [], ...(answer.LastEvaluatedKey === undefined ? {} : { next: answer.LastEvaluatedKey }) };
    },
    async getItems(table, keys, signal) {
      const found: Item[] = [];
      for (let at = 0; at < keys.length; at += BATCH_GET_KEYS) {
        let pending: Item[] = keys.slice(at, at + BATCH_GET_KEYS);
        for (let attempt = 1; pending.length > 0; attempt += 1) {
          if (attempt > BATCH_GET_ATTEMPTS)
            throw new Error(`BatchGetItem left ${pending.length} keys of ${table} unprocessed ${BATCH_GET_ATTEMPTS} times`);
          if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
          const answer = await doc.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: pending, ConsistentRead: true } } }), {
            abortSignal: signal,
          });
          found.push(...(answer.Responses?.[table] ?? []));
          pending = (answer.UnprocessedKeys?.[table]?.Keys ?? []) as Item[];
        }
      }
      return found;
    },
  };
}

/** The marker as an item of Coordination (a whole-item put: the fence decides who writes it). */
export const markerPut = (coordination: string, marker: MigrationMarker): TransactAction => ({
  Put: { TableName: coordination, Item: { pk: MIGRATION_MARKER_PK, ...marker } },
});

/** A contest's copy: a whole-item put (nothing else writes the new Contests table before the migration is done). */
export const contestPut = (table: string, item: Item): TransactAction => ({ Put: { TableName: table, Item: item } });

/**
 * A contest's copy with its bucket gates (lambda/contests/bucket-gates.ts), as the sync would have
 * written them with it: each bucket's gate holding its `dueStart` (none when it has none), so that
 * delivery's claims of its reminders find their gates once the copy is done.
 */
export function contestCopy(table: string, item: Item): TransactAction[] {
  if (typeof item.dueStart !== 'number') return [contestPut(table, item)];
  const gates = gateItems(item as unknown as ContestItem);
  return [contestPut(table, item), ...('put' in gates ? gates.put.map((gate) => contestPut(table, gate)) : [])];
}

/** Contests a page copies: each is its put and its REMINDER_BUCKETS gates, all in the page's one transaction. */
export const CONTEST_PAGE_ITEMS = Math.floor(PAGE_ITEMS / (1 + REMINDER_BUCKETS));

/** A reminder's copy: never over a row already there (a copy that landed before, claimed since). */
export const reminderPut = (table: string, item: Item): TransactAction => ({
  Put: { TableName: table, Item: item, ConditionExpression: 'attribute_not_exists(contestKey)' },
});

/** The barrier's leases: each delivery shard's, taken and released once. */
export interface ShardLeases {
  /** Resolves true once every lease was taken and released; false if `untilMs` came first. */
  takeEach(runId: string, untilMs: number, signal: AbortSignal): Promise<boolean>;
}

/**
 * The delivery shards' leases in Coordination (the package's own lease: its acquire increments
 * the fence, so a delivery run of the previous release still in flight, or frozen, writes nothing
 * more). A shard whose lease is held is waited for until its holder releases it or it lapses.
 */
export function dynamoShardLeases(options: {
  doc: DynamoDBDocumentClient;
  table: string;
  keys: readonly string[];
  now: () => number;
  sleep: Sleep;
}): ShardLeases {
  const timing = leaseTiming(30);
  return {
    async takeEach(runId, untilMs, signal) {
      for (const key of options.keys) {
        const lease = new DynamoLease({ doc: options.doc, table: options.table, key, timing, now: options.now });
        for (;;) {
          const taken = await lease.acquire(runId, 'migration', undefined, signal);
          if (taken.acquired) {
            await lease.release(taken.lease, {}, signal);
            break;
          }
          const waitMs = Math.min(Math.max(250, (taken.reason === 'lease-held' ? (taken.expiresAtMs ?? 0) : 0) - options.now()), 5_000);
          if (options.now() + waitMs >= untilMs) return false;
          await options.sleep(waitMs, signal);
        }
      }
      return true;
    },
  };
}

/**
 * The upgrade's gate of a function (the HTTP API's reminder writes), from its environment: closed
 * until the marker says `done` where the stack names the previous release's tables, open (no
 * request) where it does not — local runs, tests, and the releases after the upgrade.
 */
export function environmentGate(env: NodeJS.ProcessEnv, doc: DynamoDBDocumentClient): MigrationGate {
  if (!env[ENV.legacyContestsTable] && !env[ENV.legacyRemindersTable]) return NO_GATE;
  const coordination = env[ENV.coordinationTable];
  if (!coordination) throw new MigrationStateError(`${ENV.coordinationTable} is not set: the upgrade's gate reads its marker there`);
  const store = dynamoMigrationStore(doc, { coordination });
  return migrationGate(async (signal) => (await store.readMarker(signal))?.state);
}
