/**
 * Fenced writes on DynamoDB: a job's data actions go out in `TransactWriteItems` of at most 100
 * actions, each led by the lease action, so every transaction commits only while the run holds
 * the lease (the package README, "What it guarantees"). Contention is retried with a fresh lease action inside
 * a bounded budget; a refused lease action is a LeaseLostError; a data action refused by its own
 * condition is a FencedWriteError naming it.
 */
import { TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { cancellationCodes, describe, isCancelledAt } from './aws-errors.js';
import { FencedWriteError, LeaseLostError } from './errors.js';
import type { FencedWriterPort, TransactAction } from './ports.js';
import { COMMIT_CONTENTION_BUDGET, ContentionError, retryContention, retryOptions, type RetrySettings } from './retry.js';

export const MAX_TRANSACTION_ACTIONS = 100;
/** Data actions per transaction: the lease action takes the hundredth place. */
export const MAX_WRITES_PER_TRANSACTION = MAX_TRANSACTION_ACTIONS - 1;

/** Reported after every committed transaction (the chaos checker reads these from the logs). */
export interface CommitInfo {
  sentAtMs: number;
  committedAtMs: number;
  actions: readonly TransactAction[];
}

/** Contention retries take RetrySettings (defaults: real sleep, Math.random, COMMIT_CONTENTION_BUDGET). */
export interface FencedWriterOptions extends RetrySettings {
  now: () => number;
  onCommit?: (info: CommitInfo) => void;
}

export class DynamoFencedWriter implements FencedWriterPort {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly options: FencedWriterOptions,
  ) {}

  /**
   * Commits `actions` in order, at most 99 per transaction. `fence(last)` gives the lease action of
   * each transaction (fresh `:now`; `last` for the final one) or throws LeaseLostError.
   */
  async commit(
    actions: readonly TransactAction[],
    fence: (last: boolean) => TransactAction,
    signal?: AbortSignal,
  ): Promise<{ transactions: number }> {
    let transactions = 0;
    for (let offset = 0; offset < actions.length; offset += MAX_WRITES_PER_TRANSACTION) {
      const chunk = actions.slice(offset, offset + MAX_WRITES_PER_TRANSACTION);
      await this.commitOne(chunk, () => fence(offset + MAX_WRITES_PER_TRANSACTION >= actions.length), signal);
      transactions += 1;
    }
    return { transactions };
  }

  /**
   * One fenced transaction. Retrying one whose answer was lost must be harmless: the job's actions
   * are expected to be idempotent (whole-item puts, deletes, conditional updates).
   */
  private async commitOne(chunk: TransactAction[], fence: () => TransactAction, signal?: AbortSignal): Promise<void> {
    const { now } = this.options;
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
        retryOptions(this.options, COMMIT_CONTENTION_BUDGET, signal),
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
        throw new FencedWriteError(
          `a write was refused by its condition (${describeAction(chunk[failedAt - 1])}): ` +
            'the item changed during the run; the next run redoes it',
          { cause: error },
        );
      }
      throw new FencedWriteError(`could not write to DynamoDB: ${describe(error)}${reasons.length ? ` [${reasons.join(', ')}]` : ''}`, {
        cause: error,
      });
    }
    this.options.onCommit?.({ sentAtMs, committedAtMs: now(), actions: chunk });
  }
}

function describeAction(action: TransactAction | undefined): string {
  if (action === undefined) return 'unknown';
  const [kind, body] = Object.entries(action)[0] ?? ['unknown', {}];
  const { TableName, Key } = body as { TableName?: string; Key?: unknown };
  return `${kind} ${TableName ?? ''} ${JSON.stringify(Key ?? {})}`;
}
