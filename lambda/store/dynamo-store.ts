/**
 * Reads of the Contests and Reminders tables, and the write actions a sync's changes become. The
 * writes themselves go out fenced by the lease through the single-execution module's commit
 * (docs/design.md, lease rule 5), in an order that is safe to stop at any point and redo.
 */
import { QueryCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { REPLY_CLOCK_ID, type ContestItem, type ReminderItem, type ReplyClockItem } from '../contests/model.js';
import type { ReminderUpdate } from '../contests/reminders.js';
import {
  COMMIT_CONTENTION_BUDGET,
  describe,
  retryContention,
  retryOptions,
  type RetrySettings,
  type TransactAction,
} from '../single-execution/index.js';

/** A read of Contests or Reminders failed (the `store` phase wherever it happens). */
export class StoreError extends Error {
  override readonly name = 'StoreError';
}

export interface StoreChanges {
  /** The firing rule's state of reminders (never a delete: the sync never deletes a reminder). */
  reminderUpdates: ReminderUpdate[];
  contestPuts: ContestItem[];
  contestDeletes: number[];
  /** When the reply this run applied was made: recorded in the reply clock, last. */
  replyMadeAt?: number;
  /** With `replyMadeAt`: the reply clock's register of withdrawn, deleted contests (kept whole: the clock is one Put). */
  withdrawn?: Readonly<Record<string, unknown>>;
}

export interface StoreTables {
  contests: string;
  reminders: string;
}

/** Contention (throttling, 5xx) on a read is retried with these; defaults: real sleep, Math.random. */
export type StoreOptions = RetrySettings;

export class DynamoContestStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tables: StoreTables,
    private readonly options: StoreOptions = {},
  ) {}

  /** Every item of the Contests table (the reply clock too), strongly consistent (the table is small: TTL keeps it to weeks). */
  async scanContests(signal?: AbortSignal): Promise<(ContestItem | ReplyClockItem)[]> {
    return this.read(
      'scan the contests',
      async () => {
        const items: (ContestItem | ReplyClockItem)[] = [];
        let start: Record<string, unknown> | undefined;
        do {
          const page = await this.doc.send(
            new ScanCommand({ TableName: this.tables.contests, ConsistentRead: true, ExclusiveStartKey: start }),
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

  async remindersOf(contestId: number, signal?: AbortSignal): Promise<ReminderItem[]> {
    return this.read(
      `read the reminders of contest ${contestId}`,
      async () => {
        const items: ReminderItem[] = [];
        let start: Record<string, unknown> | undefined;
        do {
          const page = await this.doc.send(
            new QueryCommand({
              TableName: this.tables.reminders,
              KeyConditionExpression: 'contestId = :id',
              ExpressionAttributeValues: { ':id': contestId },
              ConsistentRead: true,
              ExclusiveStartKey: start,
            }),
            { abortSignal: signal },
          );
          items.push(...((page.Items ?? []) as ReminderItem[]));
          start = page.LastEvaluatedKey;
        } while (start !== undefined);
        return items;
      },
      signal,
    );
  }

  /**
   * The write actions of `changes`, in an order that is safe to stop at any point and redo:
   * reminders first, then contests (written, then deleted), then the reply clock. A run that stops
   * half-way leaves stored contests unchanged for what it did not reach, so the next run plans it
   * again, and the reply is not recorded as applied. Every action is idempotent, so a retried
   * transaction is harmless.
   */
  actionsFor(changes: StoreChanges, updatedAt: string): TransactAction[] {
    const clock: ReplyClockItem | undefined =
      changes.replyMadeAt !== undefined
        ? {
            contestId: REPLY_CLOCK_ID,
            replyMadeAt: changes.replyMadeAt,
            updatedAt,
            ...(changes.withdrawn !== undefined && Object.keys(changes.withdrawn).length > 0 ? { withdrawn: changes.withdrawn } : {}),
          }
        : undefined;
    const writes = [
      ...changes.reminderUpdates.map((update) => this.reminderAction(update)),
      ...changes.contestPuts.map((item) => ({ Put: { TableName: this.tables.contests, Item: item } })),
      ...changes.contestDeletes.map((contestId) => ({ Delete: { TableName: this.tables.contests, Key: { contestId } } })),
    ];
    return clock === undefined ? writes : [...writes, { Put: { TableName: this.tables.contests, Item: clock } }];
  }

  /** The contest ids a committed transaction put and deleted (logged for the chaos checker). */
  contestsIn(actions: readonly TransactAction[]): { contestsPut: number[]; contestsDeleted: number[] } {
    return {
      contestsPut: actions.flatMap((a) => (a.Put?.TableName === this.tables.contests ? [Number(a.Put.Item?.contestId)] : [])),
      contestsDeleted: actions.flatMap((a) => (a.Delete?.TableName === this.tables.contests ? [Number(a.Delete.Key?.contestId)] : [])),
    };
  }

  /**
   * A reminder brought to its contest's gate. Conditional: the reminder still exists (the app may
   * delete it), its minutesBefore is unchanged (the app may change it) and the notifier has not
   * sent it since it was read (`notifiedStart` as read), so the sync never re-arms a sent reminder.
   */
  private reminderAction(update: ReminderUpdate): TransactAction {
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
    return {
      Update: {
        TableName: this.tables.reminders,
        Key: { contestId: update.contestId, userId: update.userId },
        UpdateExpression: clauses.join(' '),
        ConditionExpression: `attribute_exists(userId) AND minutesBefore = :mb AND ${notified}`,
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
