/**
 * Reads of the Contests and Reminders tables, and the write actions a sync's changes become. The
 * writes themselves go out fenced by the lease through the single-execution module's commit
 * (docs/design.md, lease rule 5), in an order that is safe to stop at any point and redo.
 */
import { QueryCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ContestItem, ReminderItem } from '../contests/model.js';
import type { ReminderMove } from '../contests/plan.js';
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
  reminderDeletes: { contestId: number; userId: string }[];
  reminderMoves: ReminderMove[];
  contestPuts: ContestItem[];
  contestDeletes: number[];
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

  /** Every stored contest, strongly consistent (the table is small: TTL keeps it to weeks). */
  async scanContests(signal?: AbortSignal): Promise<ContestItem[]> {
    return this.read('scan the contests', async () => {
      const items: ContestItem[] = [];
      let start: Record<string, unknown> | undefined;
      do {
        const page = await this.doc.send(
          new ScanCommand({ TableName: this.tables.contests, ConsistentRead: true, ExclusiveStartKey: start }),
          { abortSignal: signal },
        );
        items.push(...((page.Items ?? []) as ContestItem[]));
        start = page.LastEvaluatedKey;
      } while (start !== undefined);
      return items;
    }, signal);
  }

  async remindersOf(contestId: number, signal?: AbortSignal): Promise<ReminderItem[]> {
    return this.read(`read the reminders of contest ${contestId}`, async () => {
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
    }, signal);
  }

  /**
   * The write actions of `changes`, in an order that is safe to stop at any point and redo:
   * reminders first (deleted or moved), then contests (written, then deleted). A run that stops
   * half-way leaves stored contests unchanged for what it did not reach, so the next run plans it
   * again. Every action is idempotent, so a retried transaction is harmless.
   */
  actionsFor(changes: StoreChanges): TransactAction[] {
    return [
      ...changes.reminderDeletes.map((key) => ({ Delete: { TableName: this.tables.reminders, Key: key } })),
      ...changes.reminderMoves.map((move) => this.moveAction(move)),
      ...changes.contestPuts.map((item) => ({ Put: { TableName: this.tables.contests, Item: item } })),
      ...changes.contestDeletes.map((contestId) => ({ Delete: { TableName: this.tables.contests, Key: { contestId } } })),
    ];
  }

  /** The contest ids a committed transaction put and deleted (logged for the chaos checker). */
  contestsIn(actions: readonly TransactAction[]): { contestsPut: number[]; contestsDeleted: number[] } {
    return {
      contestsPut: actions.flatMap((a) => (a.Put?.TableName === this.tables.contests ? [Number(a.Put.Item?.contestId)] : [])),
      contestsDeleted: actions.flatMap((a) => (a.Delete?.TableName === this.tables.contests ? [Number(a.Delete.Key?.contestId)] : [])),
    };
  }

  private moveAction(move: ReminderMove): TransactAction {
    return {
      Update: {
        TableName: this.tables.reminders,
        Key: { contestId: move.contestId, userId: move.userId },
        UpdateExpression: move.clearNotified ? 'SET remindAt = :at REMOVE notifiedAt' : 'SET remindAt = :at',
        // Do not resurrect a reminder the app deleted, nor undo a change of minutesBefore.
        ConditionExpression: 'attribute_exists(userId) AND minutesBefore = :mb',
        ExpressionAttributeValues: { ':at': move.remindAt, ':mb': move.minutesBefore },
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
