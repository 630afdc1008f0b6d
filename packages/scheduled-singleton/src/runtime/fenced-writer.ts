/**
 * Fenced writes on DynamoDB: a job's data actions (its outbox puts first) go out in
 * `TransactWriteItems` of at most 100 actions and 4 MB, each led by the lease action, so every
 * transaction commits only while the run holds the lease (the package README, "What it
 * guarantees"). Contention is retried with a fresh lease action inside
 * a bounded budget; a refused lease action is a LeaseLostError; a data action refused by its own
 * condition is a FencedWriteError naming it.
 */
import { TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { cancellationCodes, describe, isCancelledAt } from './aws-errors.js';
import { ContentionError, FencedWriteError, LeaseLostError } from './errors.js';
import type { FencedWriterPort, TransactAction, Turn, WriterResult } from './ports.js';
import { COMMIT_CONTENTION_BUDGET, retryContention, retryOptions, type RetrySettings } from './retry.js';

export const MAX_TRANSACTION_ACTIONS = 100;
/** Data actions per transaction: the lease action takes the hundredth place. */
export const MAX_WRITES_PER_TRANSACTION = MAX_TRANSACTION_ACTIONS - 1;

/** Reported after every committed transaction (the chaos checker reads these from the logs). */
export interface CommitInfo {
  sentAtMs: number;
  committedAtMs: number;
  actions: readonly TransactAction[];
}

/** Contention retries take RetrySettings (its budget defaults to COMMIT_CONTENTION_BUDGET here). */
export interface FencedWriterOptions extends RetrySettings {
  now: () => number;
  /**
   * Told of every committed transaction.
   * @default none
   */
  onCommit?: (info: CommitInfo) => void;
}

export class DynamoFencedWriter implements FencedWriterPort {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly options: FencedWriterOptions,
  ) {}

  /**
   * Commits `outbox` then `actions` in order, packed into transactions of at most 99 actions and
   * about 4 MB. `fence(last)` gives the lease action of each transaction (fresh `:now`; `last` for
   * the final one) or throws LeaseLostError. An outbox put refused by its condition is an event
   * already written (by an earlier attempt of the same change): dropped, counted, not a failure.
   * Each transaction, its contention retries included, runs in `turn` (the run's renewals take
   * turns with it).
   */
  async commit(
    actions: readonly TransactAction[],
    fence: (last: boolean) => TransactAction,
    signal?: AbortSignal,
    outbox: readonly TransactAction[] = [],
    turn: Turn = (transaction) => transaction(),
  ): Promise<WriterResult> {
    const chunks = packTransactions([
      ...outbox.map((action) => ({ action, outbox: true })),
      ...actions.map((action) => ({ action, outbox: false })),
    ]);
    let duplicateEvents = 0;
    let transactions = 0;
    for (const [index, chunk] of chunks.entries()) {
      const last = index === chunks.length - 1;
      const committed = await this.commitOne(chunk, { fence: () => fence(last), turn }, last, signal);
      duplicateEvents += committed.duplicates;
      if (committed.sent) transactions += 1;
    }
    return outbox.length > 0 ? { transactions, duplicateEvents } : { transactions };
  }

  /**
   * One fenced transaction, less the outbox puts found already written. Retrying one whose answer
   * was lost must be harmless: the job's actions are expected to be idempotent (whole-item puts,
   * deletes, conditional updates), and its outbox puts are then found written.
   */
  private async commitOne(
    chunk: readonly Packed[],
    lease: { fence: () => TransactAction; turn: Turn },
    last: boolean,
    signal?: AbortSignal,
  ): Promise<{ sent: boolean; duplicates: number }> {
    let pending = [...chunk];
    for (;;) {
      // Every outbox put already written and nothing else to write: only the last transaction
      // still goes, alone with its lease action (it may mark the interval done).
      if (pending.length === 0 && !last) return { sent: false, duplicates: chunk.length };
      const entries = pending;
      const refused = await lease.turn(() => this.send(entries, lease.fence, signal));
      if (refused.length === 0) return { sent: true, duplicates: chunk.length - pending.length };
      pending = pending.filter((_, position) => !refused.includes(position));
    }
  }

  /**
   * Sends one transaction. Returns the positions of the outbox puts refused by their condition
   * when only those were refused (nothing was written); throws for anything else.
   */
  private async send(entries: readonly Packed[], fence: () => TransactAction, signal?: AbortSignal): Promise<number[]> {
    const { now } = this.options;
    const items = entries.map((entry) => entry.action);
    const isOutboxPut = (position: number) => entries[position]?.outbox === true;
    let check: TransactAction | undefined;
    let sentAtMs = 0;
    try {
      await retryContention(
        async () => {
          signal?.throwIfAborted();
          check = fence();
          sentAtMs = now();
          await this.doc.send(new TransactWriteCommand({ TransactItems: [check, ...items] }), { abortSignal: signal });
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
      const failed = reasons.flatMap((code, index) => (index > 0 && code === 'ConditionalCheckFailed' ? [index - 1] : []));
      // Only outbox puts refused: those events are written already; the caller sends the rest again.
      if (failed.length > 0 && failed.every(isOutboxPut)) return failed;
      const refusedAt = failed.filter((position) => !isOutboxPut(position));
      if (refusedAt.length > 0) {
        // The job's data actions its own condition refused (outbox puts found written are not refusals).
        const refused = refusedAt.map((position) => items[position]!);
        throw new FencedWriteError(
          `a write was refused by its condition (${describeAction(refused[0])}` +
            `${refused.length > 1 ? ` and ${refused.length - 1} more` : ''}): the item changed during the run; the next run redoes it`,
          { cause: error, refused },
        );
      }
      throw new FencedWriteError(`could not write to DynamoDB: ${describe(error)}${reasons.length ? ` [${reasons.join(', ')}]` : ''}`, {
        cause: error,
      });
    }
    this.options.onCommit?.({ sentAtMs, committedAtMs: now(), actions: items });
    return [];
  }
}

/** An action of the commit, and whether it is an outbox put. */
interface Packed {
  action: TransactAction;
  outbox: boolean;
}

/** DynamoDB's cap on a transaction's total size. */
export const MAX_TRANSACTION_BYTES = 4 * 1024 * 1024;
/** What packing fills a transaction up to: room is left for the lease action and DynamoDB's own accounting. */
export const TRANSACTION_BYTE_BUDGET = MAX_TRANSACTION_BYTES - 256 * 1024;

/** The size of an action as packing counts it: its JSON text (an upper bound of DynamoDB's item size for these shapes). */
export function actionBytes(action: TransactAction): number {
  return Buffer.byteLength(JSON.stringify(action), 'utf8');
}

/** Actions in order, in transactions of at most 99 actions and TRANSACTION_BYTE_BUDGET bytes. */
function packTransactions(entries: readonly Packed[]): Packed[][] {
  const chunks: Packed[][] = [];
  let current: Packed[] = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = actionBytes(entry.action);
    if (current.length > 0 && (current.length === MAX_WRITES_PER_TRANSACTION || bytes + size > TRANSACTION_BYTE_BUDGET)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

function describeAction(action: TransactAction | undefined): string {
  if (action === undefined) return 'unknown';
  const [kind, body] = Object.entries(action)[0] ?? ['unknown', {}];
  const { TableName, Key } = body as { TableName?: string; Key?: unknown };
  return `${kind} ${TableName ?? ''} ${JSON.stringify(Key ?? {})}`;
}
