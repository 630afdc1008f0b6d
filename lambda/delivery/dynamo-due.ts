/**
 * The I/O of reminder delivery (docs/delivery.md): one Query page of the byDue index, the contests
 * of the rows (one BatchGetItem per 100), and the claim of a row — a conditional Update that
 * commits, fenced by the lease, in the same transaction as the row's ReminderDue outbox item and
 * the ConditionCheck of its bucket key's gate (the rule). The decisions are lambda/delivery/due.ts's.
 */
import { BatchGetCommand, QueryCommand, type BatchGetCommandOutput, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { FencedWriteError, type CommitOptions, type CommitResult, type TransactAction } from '@contest-sync/scheduled-singleton';
import { claimCheck, type DueRow, type RawRow, type ReminderDueEvent } from './due.js';

/** The sparse GSI of due reminders on the Reminders table (partition `dueShard`, sort `dueAt`). */
export const DUE_INDEX = 'byDue';
/**
 * What delivery reads of a contest: the rule's `dueStart`, the event's name and URL, and (of the
 * items `clock#<platform>`, the sync's reply clocks) `replyMadeAt`. Nothing else: whether the contest is vanished, paused
 * or moved is what its `dueStart` says (docs/delivery.md, "The rule").
 */
const CONTEST_ATTRIBUTES = ['contestId', '#name', '#url', 'dueStart', 'replyMadeAt'];
/** BatchGetItem takes at most 100 keys. */
const BATCH_GET_KEYS = 100;
/** Rounds of UnprocessedKeys (throttled keys) before a contest read gives up. */
const BATCH_GET_ROUNDS = 5;

export interface DueTables {
  reminders: string;
  contests: string;
}

/** A read of the tables failed (the run fails; the rows stay due for the next one). */
export class DeliveryReadError extends Error {
  override readonly name = 'DeliveryReadError';
}

export interface DuePage {
  rows: RawRow[];
  /** Where the next page starts, if the index has more due rows. */
  next?: Record<string, unknown>;
}

export class DynamoDueStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly tables: DueTables,
  ) {}

  /** One Query page: the rows of the job's `shard` due at `nowSeconds` or earlier, oldest first. Never a Scan. */
  async duePage(shard: number, nowSeconds: number, start: Record<string, unknown> | undefined, signal?: AbortSignal): Promise<DuePage> {
    const page = await this.doc.send(
      new QueryCommand({
        TableName: this.tables.reminders,
        IndexName: DUE_INDEX,
        KeyConditionExpression: 'dueShard = :shard AND dueAt <= :now',
        ExpressionAttributeValues: { ':shard': shard, ':now': nowSeconds },
        ...(start !== undefined ? { ExclusiveStartKey: start } : {}),
      }),
      { abortSignal: signal },
    );
    return { rows: (page.Items ?? []) as RawRow[], ...(page.LastEvaluatedKey !== undefined ? { next: page.LastEvaluatedKey } : {}) };
  }

  /** The contests of `ids` (at most 100 per request; throttled keys retried a few rounds); `clock#<platform>` is a source's reply clock. */
  async contests(ids: readonly string[], signal?: AbortSignal): Promise<Map<string, Record<string, unknown>>> {
    const found = new Map<string, Record<string, unknown>>();
    for (let offset = 0; offset < ids.length; offset += BATCH_GET_KEYS) {
      let keys: Record<string, unknown>[] | undefined = ids.slice(offset, offset + BATCH_GET_KEYS).map((contestId) => ({ contestId }));
      for (let round = 1; keys !== undefined && keys.length > 0; round += 1) {
        if (round > BATCH_GET_ROUNDS)
          throw new DeliveryReadError(`could not read ${keys.length} contests: still unprocessed after ${BATCH_GET_ROUNDS} rounds`);
        const out: BatchGetCommandOutput = await this.doc.send(
          new BatchGetCommand({
            RequestItems: {
              [this.tables.contests]: {
                Keys: keys,
                ConsistentRead: true,
                ProjectionExpression: CONTEST_ATTRIBUTES.join(', '),
                ExpressionAttributeNames: { '#name': 'name', '#url': 'url' },
              },
            },
          }),
          { abortSignal: signal },
        );
        for (const item of out.Responses?.[this.tables.contests] ?? []) found.set(String(item.contestId), item);
        keys = out.UnprocessedKeys?.[this.tables.contests]?.Keys;
      }
    }
    return found;
  }

  /**
   * The claim of a row: it commits only if the row is still due as read (same due time, start,
   * lead time and intent: `attribute_not_exists(intent)` for a row written before intents) and
   * not yet sent for this start (`notifiedStart`, nor any earlier one in `sentStarts`, which the
   * sync keeps). It marks the row sent for the start and takes it out of the index, in the
   * transaction that writes its event and checks its gate (gateCheck).
   */
  claim(row: DueRow, nowSeconds: number): TransactAction {
    const intent = row.intent === undefined ? 'attribute_not_exists(intent)' : 'intent = :intent';
    return {
      Update: {
        TableName: this.tables.reminders,
        Key: { contestKey: row.contestKey, userId: row.userId },
        UpdateExpression: 'SET notifiedAt = :now, notifiedStart = :start, paused = :notified REMOVE dueAt, dueShard, dueStart',
        ConditionExpression: `dueAt = :seen AND dueStart = :start AND minutesBefore = :mb AND ${intent} AND (attribute_not_exists(notifiedStart) OR notifiedStart <> :start) AND NOT contains(sentStarts, :start)`,
        ExpressionAttributeValues: {
          ':now': nowSeconds,
          ':start': row.dueStart,
          ':seen': row.dueAt,
          ':mb': row.minutesBefore,
          ':notified': 'notified',
          ...(row.intent !== undefined ? { ':intent': row.intent } : {}),
        },
      },
    };
  }

  /** THE RULE at commit time: the gate of the bucket key `contestKey` is still `dueStart` (one per key per transaction). */
  gateCheck(contestKey: string, dueStart: number): TransactAction {
    return claimCheck(this.tables.contests, contestKey, dueStart);
  }
}

/** A claim and its event, as packed into one transaction (with its gate's check). */
export interface Claim {
  /** The row's bucket key (= row.contestKey): claims are packed by it, each key's claims sharing its gate's check (packClaims). */
  contestKey: string;
  row: DueRow;
  event: ReminderDueEvent;
  action: TransactAction;
  bytes: number;
}

export interface BatchOutcome {
  delivered: number;
  /**
   * Rows whose claim was refused: the row changed or was claimed meanwhile (the app, the sync,
   * another run), or its gate's check failed (the contest moved or paused since it was read:
   * every claim under that key in the transaction is lost).
   */
  lost: number;
  /** Events already in the outbox (an earlier attempt of the same claim): not written again. */
  duplicates: number;
  transactions: number;
  /** Transactions refused because of lost rows, sent again without them. */
  retries: number;
  /** Gate ConditionChecks in the transactions that committed (the rule's cost: one per bucket key per transaction). */
  gateChecks: number;
}

type Commit = (actions: readonly TransactAction[], options?: CommitOptions) => Promise<CommitResult>;
/** The ConditionCheck of a bucket key's gate at the start its claims were read against. */
type GateCheck = (contestKey: string, dueStart: number) => TransactAction;

/**
 * One batch of claims, committed as one fenced transaction with their events and one
 * ConditionCheck per bucket key (THE RULE: its gate's `dueStart` is still the claims'). DynamoDB cancels a
 * whole transaction when one condition fails and names every action that failed (one reason per
 * action); the package hands those back (FencedWriteError.refused). A refused claim loses its row;
 * a refused gate check loses every claim under that key in the batch (the contest moved or
 * paused since it was read: those rows stay due for the sync to put right). The lost claims are
 * dropped with their events, and the rest is sent again (with the checks of the keys still in
 * it), until it commits or nothing is left. Each retry drops at least one row, so a batch of n
 * costs at most n transactions, and one lost row or contest never fails the others. A lease lost,
 * contention beyond the package's budget or any other error is thrown: the run fails and the rows
 * not yet claimed stay due.
 */
export async function commitClaims(commit: Commit, batch: readonly Claim[], gateCheck: GateCheck): Promise<BatchOutcome> {
  let pending = [...batch];
  const outcome: BatchOutcome = { delivered: 0, lost: 0, duplicates: 0, transactions: 0, retries: 0, gateChecks: 0 };
  while (pending.length > 0) {
    const checks = new Map<string, TransactAction>();
    for (const { row } of pending) if (!checks.has(row.contestKey)) checks.set(row.contestKey, gateCheck(row.contestKey, row.dueStart));
    try {
      const result = await commit([...checks.values(), ...pending.map((claim) => claim.action)], {
        events: pending.map((claim) => claim.event),
      });
      outcome.delivered += pending.length;
      outcome.duplicates += result.events.duplicates;
      outcome.transactions += result.transactions;
      outcome.gateChecks += checks.size;
      return outcome;
    } catch (error) {
      if (!(error instanceof FencedWriteError) || error.refused.length === 0) throw error;
      const refused = new Set(error.refused);
      const movedKeys = new Set([...checks].flatMap(([contestKey, check]) => (refused.has(check) ? [contestKey] : [])));
      const kept = pending.filter((claim) => !refused.has(claim.action) && !movedKeys.has(claim.row.contestKey));
      if (kept.length === pending.length) throw error; // refused something that is not one of our claims or checks
      outcome.lost += pending.length - kept.length;
      outcome.retries += 1;
      pending = kept;
    }
  }
  return outcome;
}
