/**
 * Reads of the Contests and Reminders tables, and the write actions a sync's judgement becomes.
 * The writes themselves go out fenced by the lease through the package's commit (docs/design.md,
 * lease rule 5), in the order lambda/sync/act.ts gives them. Every action is idempotent, so a
 * retried transaction is harmless.
 */
import { QueryCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ContestWrite } from '../contests/judge.js';
import { REPLY_CLOCK_ID, type ContestItem, type ReminderItem, type ReplyClockItem } from '../contests/model.js';
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

  /** A contest write of the judgement: the whole item put, or deleted. Idempotent. */
  contestAction(write: ContestWrite): TransactAction {
    if ('delete' in write) return { Delete: { TableName: this.tables.contests, Key: { contestId: write.delete } } };
    return { Put: { TableName: this.tables.contests, Item: write.put } };
  }

  /** The reply clock (the Contests table's item 0): the newest applied reply and the register of withdrawn contests. */
  clockAction(clock: { replyMadeAt: number; withdrawn: Readonly<Record<string, unknown>> }, updatedAt: string): TransactAction {
    const withdrawn = Object.keys(clock.withdrawn).length > 0 ? { withdrawn: clock.withdrawn } : {};
    const item: ReplyClockItem = { contestId: REPLY_CLOCK_ID, replyMadeAt: clock.replyMadeAt, updatedAt, ...withdrawn };
    return { Put: { TableName: this.tables.contests, Item: item } };
  }

  /** The contest ids a committed transaction put and deleted (logged for the chaos checker). */
  contestsIn(actions: readonly TransactAction[]): { contestsPut: number[]; contestsDeleted: number[] } {
    return {
      contestsPut: actions.flatMap((a) => (a.Put?.TableName === this.tables.contests ? [Number(a.Put.Item?.contestId)] : [])),
      contestsDeleted: actions.flatMap((a) => (a.Delete?.TableName === this.tables.contests ? [Number(a.Delete.Key?.contestId)] : [])),
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
        Key: { contestId: update.contestId, userId: update.userId },
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
