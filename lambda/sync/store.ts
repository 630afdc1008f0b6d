/**
 * Reads of the Contests and Reminders tables, and the write actions a sync's judgement becomes.
 * The writes themselves go out fenced by the lease through the package's commit (docs/design.md,
 * lease rule 5), in the order lambda/sync/act.ts gives them. Every action is idempotent, so a
 * retried transaction is harmless.
 */
import { QueryCommand, ScanCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { ContestWrite } from '../contests/judge.js';
import { replyClockId, type ContestItem, type ReminderItem, type ReplyClockItem } from '../contests/model.js';
import type { ShardRecord } from '../contests/retired-shards.js';
import { contestKeys, dueShardOf } from '../reminders/table.js';
import { GATE_PREFIX, gateItems } from '../contests/bucket-gates.js';
import type { ReminderUpdate } from '../contests/reminders.js';
import {
  COMMIT_CONTENTION_BUDGET,
  describe,
  retryContention,
  retryOptions,
  type RetrySettings,
  type TransactAction,
} from '@contest-sync/scheduled-singleton';

/** A read of Contests or Reminders failed (the `store` phase wherever it happens). */
export class StoreError extends Error {
  override readonly name = 'StoreError';
}

export interface StoreTables {
  contests: string;
  reminders: string;
}

/** Contention (throttling, 5xx) on a read is retried with these; defaults: real sleep, Math.random. */
export type StoreOptions = RetrySettings;

/** The sparse GSI of due reminders (partition `dueShard`, sort `dueAt`): the sync reads it only to sweep retired shards. */
export const DUE_INDEX = 'byDue';
/** A contest's reminders are read with one Query per bucket key, this many at a time (each listens on the run's signal). */
export const BUCKET_READS_IN_FLIGHT = 4;

/** A row found in a retired `byDue` partition, as the sweep read it. */
export interface RetiredRow {
  contestKey: string;
  userId: string;
  dueShard: number;
}

/** The clock as a run writes it: the reply it applied, the register, and the byDue setting it ensured. */
export interface ClockWrite {
  replyMadeAt: number;
  withdrawn: Readonly<Record<string, unknown>>;
  shards: ShardRecord;
}

export class DynamoContestStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tables: StoreTables,
    private readonly options: StoreOptions = {},
  ) {}

  /**
   * The items of one platform in the Contests table — its contests and its reply clock —,
   * strongly consistent (a Scan with a filter: the table holds weeks of contests of every platform,
   * a few hundred items, and a GSI could not be read strongly consistently).
   */
  async scanContests(platform: string, signal?: AbortSignal): Promise<(ContestItem | ReplyClockItem)[]> {
    return this.read(
      'scan the contests',
      async () => {
        const items: (ContestItem | ReplyClockItem)[] = [];
        let start: Record<string, unknown> | undefined;
        do {
          const page = await this.doc.send(
            new ScanCommand({
              TableName: this.tables.contests,
              ConsistentRead: true,
              FilterExpression: 'platform = :platform OR contestId = :clock',
              ExpressionAttributeValues: { ':platform': platform, ':clock': replyClockId(platform) },
              ExclusiveStartKey: start,
            }),
            { abortSignal: signal },
          );
          items.push(...((page.Items ?? []) as (ContestItem | ReplyClockItem)[]));
          start = page.LastEvaluatedKey;
        } while (start !== undefined);
        return items;
      },
      signal,
    );
  }

  /**
   * A contest's reminders, strongly consistent: one Query per bucket key (REMINDER_BUCKETS of
   * them, BUCKET_READS_IN_FLIGHT at a time), each to its last page.
   */
  async remindersOf(contestId: string, signal?: AbortSignal): Promise<ReminderItem[]> {
    const keys = contestKeys(contestId);
    return this.read(
      `read the reminders of contest ${contestId}`,
      async () => {
        const items: ReminderItem[] = [];
        for (let at = 0; at < keys.length; at += BUCKET_READS_IN_FLIGHT) {
          const pages = await Promise.all(
            keys.slice(at, at + BUCKET_READS_IN_FLIGHT).map((key) =>
              this.queryAll(
                {
                  TableName: this.tables.reminders,
                  KeyConditionExpression: 'contestKey = :key',
                  ExpressionAttributeValues: { ':key': key },
                  ConsistentRead: true,
                },
                signal,
              ),
            ),
          );
          for (const page of pages) items.push(...(page as unknown as ReminderItem[]));
        }
        return items;
      },
      signal,
    );
  }

  /**
   * The rows of one platform in a retired `byDue` partition (retired-shards.ts), every page; the
   * index is eventually consistent, which is why the following run sweeps once more.
   */
  async retiredRows(shard: number, platform: string, signal?: AbortSignal): Promise<RetiredRow[]> {
    return this.read(
      `read byDue partition ${shard}`,
      async () =>
        (
          await this.queryAll(
            {
              TableName: this.tables.reminders,
              IndexName: DUE_INDEX,
              KeyConditionExpression: 'dueShard = :shard',
              FilterExpression: 'begins_with(contestId, :platform)',
              ExpressionAttributeValues: { ':shard': shard, ':platform': `${platform}:` },
              ProjectionExpression: 'contestKey, userId, dueShard',
            },
            signal,
          )
        ).flatMap((item) =>
          typeof item.contestKey === 'string' && typeof item.userId === 'string' && typeof item.dueShard === 'number'
            ? [{ contestKey: item.contestKey, userId: item.userId, dueShard: item.dueShard }]
            : [],
        ),
      signal,
    );
  }

  private async queryAll(input: QueryCommandInput, signal?: AbortSignal): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.doc.send(new QueryCommand({ ...input, ExclusiveStartKey: start }), { abortSignal: signal });
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    return items;
  }

  /** A contest write of the judgement: the whole item put, or deleted. Idempotent. */
  /**
   * A contest's put or delete, and when its gate changes, every bucket gate as the contest leaves
   * it (contests/bucket-gates.ts): put with its `dueStart`, or deleted when it has none. The caller
   * commits them in one transaction.
   */
  contestActions(write: ContestWrite): TransactAction[] {
    const TableName = this.tables.contests;
    const contest: TransactAction =
      'delete' in write ? { Delete: { TableName, Key: { contestId: write.delete } } } : { Put: { TableName, Item: write.put } };
    if (write.gateChanged !== true) return [contest];
    const gates = gateItems('delete' in write ? write.delete : write.put);
    const gateActions: TransactAction[] =
      'put' in gates
        ? gates.put.map((Item) => ({ Put: { TableName, Item } }))
        : gates.delete.map((contestId) => ({ Delete: { TableName, Key: { contestId } } }));
    return [contest, ...gateActions];
  }

  /**
   * The platform's reply clock (`clock#<platform>`): the newest applied reply, the register of
   * withdrawn contests, and the byDue setting the run ensured (retired-shards.ts).
   */
  clockAction(platform: string, clock: ClockWrite, updatedAt: string): TransactAction {
    const withdrawn = Object.keys(clock.withdrawn).length > 0 ? { withdrawn: clock.withdrawn } : {};
    const item: ReplyClockItem = {
      contestId: replyClockId(platform),
      replyMadeAt: clock.replyMadeAt,
      updatedAt,
      ...withdrawn,
      ...(clock.shards.dueShards !== undefined ? { dueShards: clock.shards.dueShards } : {}),
      ...(clock.shards.retiredDueShards !== undefined ? { retiredDueShards: clock.shards.retiredDueShards } : {}),
    };
    return { Put: { TableName: this.tables.contests, Item: item } };
  }

  /** The contest ids a committed transaction put and deleted (logged for the chaos checker); bucket gates are not contests. */
  contestsIn(actions: readonly TransactAction[]): { contestsPut: string[]; contestsDeleted: string[] } {
    const id = (value: unknown): string[] => (typeof value === 'string' && !value.startsWith(GATE_PREFIX) ? [value] : []);
    return {
      contestsPut: actions.flatMap((a) => (a.Put?.TableName === this.tables.contests ? id(a.Put.Item?.contestId) : [])),
      contestsDeleted: actions.flatMap((a) => (a.Delete?.TableName === this.tables.contests ? id(a.Delete.Key?.contestId) : [])),
    };
  }

  /**
   * A row of a retired partition moved into its current one (its bucket mod `dueShards`),
   * conditional on the row as read: still in that partition and still due. Moving changes only
   * which delivery job reads it, never when or whether it fires; a row changed meanwhile (claimed,
   * paused, moved by the sync or set again by the app) was written into a current partition or
   * out of the index, and the move is dropped.
   */
  shardMoveAction(row: RetiredRow, dueShards: number): TransactAction {
    return {
      Update: {
        TableName: this.tables.reminders,
        Key: { contestKey: row.contestKey, userId: row.userId },
        UpdateExpression: 'SET dueShard = :shard',
        ConditionExpression: 'dueShard = :seen AND attribute_exists(dueAt)',
        ExpressionAttributeValues: { ':shard': dueShardOf(row.userId, dueShards), ':seen': row.dueShard },
      },
    };
  }

  /**
   * A reminder brought to its contest's gate. Conditional on the row as read: it still exists (the
   * app may cancel it), it is the same intent (the app may set it again: `intent`, and
   * `minutesBefore` for a row written before intents) and the notifier has not sent it since
   * (`notifiedStart`), so the sync never re-arms a sent reminder nor times a newer intent by an older read.
   */
  reminderAction(update: ReminderUpdate): TransactAction {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':mb': update.minutesBefore };
    const sets = Object.entries(update.set).map(([key, value]) => {
      names[`#${key}`] = key;
      values[`:${key}`] = value;
      return `#${key} = :${key}`;
    });
    for (const key of update.remove) names[`#${key}`] = key;
    const clauses = [
      ...(sets.length > 0 ? [`SET ${sets.join(', ')}`] : []),
      ...(update.remove.length > 0 ? [`REMOVE ${update.remove.map((key) => `#${key}`).join(', ')}`] : []),
    ];
    let notified = 'attribute_not_exists(notifiedStart)';
    if (update.notifiedStart !== undefined) {
      values[':ns'] = update.notifiedStart;
      notified = 'notifiedStart = :ns';
    }
    let intent = 'attribute_not_exists(intent)';
    if (update.intent !== undefined) {
      values[':intent'] = update.intent;
      intent = 'intent = :intent';
    }
    return {
      Update: {
        TableName: this.tables.reminders,
        Key: { contestKey: update.contestKey, userId: update.userId },
        UpdateExpression: clauses.join(' '),
        ConditionExpression: `attribute_exists(userId) AND minutesBefore = :mb AND ${intent} AND ${notified}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    };
  }

  /** A read, with contention (throttling, 5xx past the SDK's own retries) retried like a write. */
  private async read<T>(what: string, step: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    try {
      return await retryContention(step, retryOptions(this.options, COMMIT_CONTENTION_BUDGET, signal));
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw new StoreError(`could not ${what}: ${describe(error)}`, { cause: error });
    }
  }
}
