/**
 * Reads and fenced writes of the Contests and Reminders tables. Every write goes out in a
 * TransactWriteItems whose first action is the lease ConditionCheck, so it commits only while
 * this run holds the lease (docs/design.md, lease rule 5). A transaction holds at most 100 actions:
 * 99 writes and the check.
 */
import {
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  type DynamoDBDocumentClient,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { ContestItem, ReminderItem } from '../contests/model.js';
import type { ReminderMove } from '../contests/plan.js';
import { cancellationCodes, describe, isCancelledAt } from '../dynamo-errors.js';
import { COMMIT_CONTENTION_BUDGET, ContentionError, realSleep, retryContention, type ContentionBudget, type Sleep } from '../dynamo-retry.js';
import { LeaseLostError } from '../lease/errors.js';

export const MAX_TRANSACTION_ACTIONS = 100;
const MAX_WRITES_PER_TRANSACTION = MAX_TRANSACTION_ACTIONS - 1;

export class StoreError extends Error {
  override readonly name = 'StoreError';
}

export type TransactAction = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * Produces the lease action of a transaction (fresh `:now` each time) or throws LeaseLostError.
 * `last` is true for the run's last data transaction (the caller marks its interval done there).
 */
export type Fence = (last: boolean) => TransactAction;

export interface StoreChanges {
  reminderDeletes: { contestId: number; userId: string }[];
  reminderMoves: ReminderMove[];
  contestPuts: ContestItem[];
  contestDeletes: number[];
}

export interface WriteCounts {
  transactions: number;
  contestsWritten: number;
  contestsDeleted: number;
  remindersMoved: number;
  remindersDeleted: number;
}

export interface StoreTables {
  contests: string;
  reminders: string;
}

/** Reported after every committed transaction (the chaos checker reads these from the logs). */
export interface CommitInfo {
  sentAtMs: number;
  committedAtMs: number;
  actions: number;
  contestsPut: number[];
  contestsDeleted: number[];
}

export class DynamoContestStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tables: StoreTables,
    private readonly options: {
      onCommit?: (info: CommitInfo) => void;
      now?: () => number;
      /** Contention retries of a data transaction; defaults: real sleep, Math.random, COMMIT_CONTENTION_BUDGET. */
      sleep?: Sleep;
      random?: () => number;
      budget?: ContentionBudget;
      onContention?: (reason: string, attempt: number) => void;
    } = {},
  ) {}

  /** Every stored contest, strongly consistent (the table is small: TTL keeps it to weeks). */
  async scanContests(signal?: AbortSignal): Promise<ContestItem[]> {
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
  }

  async remindersOf(contestId: number, signal?: AbortSignal): Promise<ReminderItem[]> {
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
  }

  /**
   * Writes in an order that is safe to stop at any point and redo: reminders first (deleted or
   * moved), then contests (written, then cancelled ones deleted). A run that stops half-way
   * leaves stored contests unchanged for what it did not reach, so the next run plans it again.
   */
  async apply(changes: StoreChanges, fence: Fence, signal?: AbortSignal): Promise<WriteCounts> {
    const actions: TransactAction[] = [
      ...changes.reminderDeletes.map((key) => ({ Delete: { TableName: this.tables.reminders, Key: key } })),
      ...changes.reminderMoves.map((move) => this.moveAction(move)),
      ...changes.contestPuts.map((item) => ({ Put: { TableName: this.tables.contests, Item: item } })),
      ...changes.contestDeletes.map((contestId) => ({ Delete: { TableName: this.tables.contests, Key: { contestId } } })),
    ];
    let transactions = 0;
    for (let offset = 0; offset < actions.length; offset += MAX_WRITES_PER_TRANSACTION) {
      const chunk = actions.slice(offset, offset + MAX_WRITES_PER_TRANSACTION);
      await this.commit(chunk, () => fence(offset + MAX_WRITES_PER_TRANSACTION >= actions.length), signal);
      transactions += 1;
    }
    return {
      transactions,
      contestsWritten: changes.contestPuts.length,
      contestsDeleted: changes.contestDeletes.length,
      remindersMoved: changes.reminderMoves.length,
      remindersDeleted: changes.reminderDeletes.length,
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

  /**
   * One fenced transaction. Contention (a conflict with another transaction, throttling, a 5xx) is
   * retried with a fresh lease check inside COMMIT_CONTENTION_BUDGET: every action is idempotent
   * (puts of whole items, deletes, reminder moves conditioned on minutesBefore), so a retry of a
   * transaction whose answer was lost is harmless.
   */
  private async commit(chunk: TransactAction[], fence: () => TransactAction, signal?: AbortSignal): Promise<void> {
    const now = this.options.now ?? Date.now;
    let check: TransactAction | undefined;
    let sentAtMs = 0;
    try {
      await retryContention(
        async () => {
          signal?.throwIfAborted();
          check = fence();
          sentAtMs = now();
          await this.doc.send(new TransactWriteCommand({ TransactItems: [check, ...chunk] }), { abortSignal: signal });
        },
        {
          budget: this.options.budget ?? COMMIT_CONTENTION_BUDGET,
          sleep: this.options.sleep ?? realSleep,
          random: this.options.random ?? Math.random,
          ...(signal !== undefined ? { signal } : {}),
          ...(this.options.onContention !== undefined ? { onContention: this.options.onContention } : {}),
        },
      );
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (isCancelledAt(error, 0)) {
        const lease = check?.ConditionCheck ?? check?.Update;
        const held = (lease?.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
        throw new LeaseLostError(
          'lease lost: a fenced write was refused because this run no longer holds the lease',
          String(held[':runId']),
          Number(held[':fence']),
          { cause: error },
        );
      }
      const reasons = cancellationCodes(error instanceof ContentionError ? error.cause : error);
      const failedAt = reasons.findIndex((code) => code === 'ConditionalCheckFailed');
      if (failedAt > 0) {
        throw new StoreError(
          `a write was refused by its condition (${describeAction(chunk[failedAt - 1])}): ` +
            'the app changed it during the sync; the next run redoes it',
          { cause: error },
        );
      }
      throw new StoreError(`could not write to DynamoDB: ${describe(error)}${reasons.length ? ` [${reasons.join(', ')}]` : ''}`, {
        cause: error,
      });
    }
    this.options.onCommit?.({
      sentAtMs,
      committedAtMs: now(),
      actions: chunk.length,
      contestsPut: chunk.flatMap((a) => (a.Put?.TableName === this.tables.contests ? [Number(a.Put.Item?.contestId)] : [])),
      contestsDeleted: chunk.flatMap((a) => (a.Delete?.TableName === this.tables.contests ? [Number(a.Delete.Key?.contestId)] : [])),
    });
  }
}

function describeAction(action: TransactAction | undefined): string {
  if (action === undefined) return 'unknown';
  const [kind, body] = Object.entries(action)[0] ?? ['unknown', {}];
  const { TableName, Key } = body as { TableName?: string; Key?: unknown };
  return `${kind} ${TableName ?? ''} ${JSON.stringify(Key ?? {})}`;
}
