/**
 * The lease on DynamoDB: one conditional UpdateItem to acquire, ownership-conditioned renew and
 * release, and the lease action that fences every data write. The decisions are pure functions apart.
 * Contention (conflicts, throttling, 5xx) is retried within a small budget (retry.ts).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { ContentionError, LeaseLostError, LeaseUnavailableError } from './errors.js';
import {
  OWNED_CONDITION,
  RELEASE_CONDITION,
  acquireCondition,
  explainLoss,
  explainRefusal,
  leaseTtlSeconds,
  rememberDone,
  ledgerRetentionMs,
  slotOf,
  type LeaseItem,
} from './record.js';
import type { LeaseTiming } from './timing.js';
import { describe, isCancelledAt } from './aws-errors.js';
import { LEASE_CONTENTION_BUDGET, retryContention, retryOptions, type ContentionBudget, type Sleep } from './retry.js';
import type { AcquireResult, FenceExtras, HeldLease, InvocationSource, LeasePort, ReleaseOptions, TransactAction } from './ports.js';

export interface LeaseStoreOptions {
  doc: DynamoDBDocumentClient;
  table: string;
  timing: LeaseTiming;
  now: () => number;
  /** The partition key of the job's lease item, e.g. `lease#contest-sync`. */
  key: string;
  /**
   * How long succeeded intervals are remembered.
   * @default ledgerRetentionMs(60): for an hourly schedule
   */
  ledgerRetentionMs?: number;
  /**
   * Contention (conflicts, throttling, 5xx) is retried with these: the wait between attempts...
   * @default a real timer
   */
  sleep?: Sleep;
  /**
   * ...its jitter...
   * @default Math.random
   */
  random?: () => number;
  /**
   * ...and the attempts and waits.
   * @default LEASE_CONTENTION_BUDGET (4 attempts, at most ~0.7 s of waiting)
   */
  budget?: ContentionBudget;
  /**
   * Told of each contention retry (the handler logs it; the chaos checker counts it).
   * @default none
   */
  onContention?: (operation: 'acquire' | 'renew' | 'release', reason: string, attempt: number) => void;
}

export class DynamoLease implements LeasePort {
  private readonly doc: DynamoDBDocumentClient;
  private readonly table: string;
  private readonly timing: LeaseTiming;
  private readonly now: () => number;
  readonly key: string;
  private readonly options: LeaseStoreOptions;
  private readonly retentionMs: number;

  constructor(options: LeaseStoreOptions) {
    this.doc = options.doc;
    this.table = options.table;
    this.timing = options.timing;
    this.now = options.now;
    this.key = options.key;
    this.options = options;
    this.retentionMs = options.ledgerRetentionMs ?? ledgerRetentionMs(60);
  }

  /** Runs one lease write, retrying contention within the lease budget. */
  private withRetry<T>(operation: 'acquire' | 'renew' | 'release', send: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const { sleep, random, budget, onContention } = this.options;
    const settings = {
      ...(sleep !== undefined ? { sleep } : {}),
      ...(random !== undefined ? { random } : {}),
      ...(budget !== undefined ? { budget } : {}),
      ...(onContention !== undefined
        ? { onContention: (reason: string, attempt: number) => onContention(operation, reason, attempt) }
        : {}),
    };
    return retryContention(send, retryOptions(settings, LEASE_CONTENTION_BUDGET, signal));
  }

  /** One conditional write. A refused contender learns holder and expiry from the write itself. */
  async acquire(runId: string, source: InvocationSource, interval: string | undefined, signal?: AbortSignal): Promise<AcquireResult> {
    const now = this.now();
    const expiresAtMs = now + this.timing.durationMs;
    const values: Record<string, unknown> = {
      ':runId': runId,
      ':now': now,
      ':exp': expiresAtMs,
      ':ttl': leaseTtlSeconds(expiresAtMs),
      ':source': source,
      ':one': 1,
    };
    let update = 'SET holder = :runId, expiresAtMs = :exp, acquiredAtMs = :now, renewedAtMs = :now, #ttl = :ttl, #source = :source';
    if (interval !== undefined) {
      values[':interval'] = interval;
      values[':slot'] = slotOf(interval);
      update += ', #interval = :interval ADD fence :one';
    } else {
      update += ' REMOVE #interval ADD fence :one';
    }
    try {
      const out = await this.withRetry(
        'acquire',
        () =>
          this.doc.send(
            new UpdateCommand({
              TableName: this.table,
              Key: { pk: this.key },
              UpdateExpression: update,
              ConditionExpression: acquireCondition(interval !== undefined),
              ExpressionAttributeNames: { '#ttl': 'ttl', '#source': 'source', '#interval': 'interval' },
              ExpressionAttributeValues: values,
              ReturnValues: 'ALL_NEW',
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
            { abortSignal: signal },
          ),
        signal,
      );
      return { acquired: true, lease: heldFrom(runId, out.Attributes as LeaseItem, expiresAtMs) };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        const old = oldItem(error);
        // The SDK (or our contention retry) repeated a write whose first attempt landed but whose
        // answer was lost: the "holder" refusing us is this very run. That is our acquisition.
        if (old?.holder === runId && old.fence !== undefined && old.expiresAtMs !== undefined) {
          return { acquired: true, lease: heldFrom(runId, old, old.expiresAtMs) };
        }
        return { acquired: false, ...explainRefusal(old, now, interval) };
      }
      // Contention that outlasted the budget: another run is busy with the lease item. Skip; never fail.
      if (error instanceof ContentionError) {
        return { acquired: false, reason: 'lease-held', holder: 'unknown', fence: undefined, contention: error.message };
      }
      throw new LeaseUnavailableError(`could not acquire the lease: ${describe(error)}`, { cause: error });
    }
  }

  /**
   * Extend the lease. Resolves with the new confirmed expiry; throws LeaseLostError when DynamoDB
   * says this run no longer holds it (taken over or already expired). Any other error leaves the
   * outcome unknown (the write may have landed): the caller retries, which is safe because renew
   * is idempotent for the owner.
   */
  async renew(lease: HeldLease, signal?: AbortSignal): Promise<HeldLease> {
    const now = this.now();
    const expiresAtMs = now + this.timing.durationMs;
    try {
      await this.withRetry(
        'renew',
        () =>
          this.doc.send(
            new UpdateCommand({
              TableName: this.table,
              Key: { pk: this.key },
              UpdateExpression: 'SET expiresAtMs = :exp, renewedAtMs = :now, #ttl = :ttl',
              ConditionExpression: OWNED_CONDITION,
              ExpressionAttributeNames: { '#ttl': 'ttl' },
              ExpressionAttributeValues: {
                ':runId': lease.runId,
                ':fence': lease.fence,
                ':now': now,
                ':exp': expiresAtMs,
                ':ttl': leaseTtlSeconds(expiresAtMs),
              },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
            { abortSignal: signal },
          ),
        signal,
      );
      return { ...lease, expiresAtMs };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        throw new LeaseLostError(`lease lost: ${explainLoss(lease.runId, oldItem(error), now)}`, lease.runId, lease.fence);
      }
      throw error;
    }
  }

  /**
   * Free the lease if this run still holds it; never touches a lease someone else holds. On
   * success of a scheduled interval, remembers it as done in the same write, and writes the run
   * record in the same transaction. Returns false when the lease had already passed to another run.
   */
  async release(lease: HeldLease, options: ReleaseOptions = {}, signal?: AbortSignal): Promise<boolean> {
    const now = this.now();
    const values: Record<string, unknown> = { ':runId': lease.runId, ':fence': lease.fence, ':now': now };
    let set = 'SET expiresAtMs = :now, releasedAtMs = :now';
    if (options.doneInterval !== undefined) {
      values[':done'] = rememberDone(lease.ledger, options.doneInterval, now, this.retentionMs);
      set += ', ledger = :done';
    }
    if (options.lastRun !== undefined) {
      values[':lastRun'] = options.lastRun;
      set += ', lastRun = :lastRun';
    }
    let update = `${set} REMOVE holder`;
    if (options.resolved !== undefined && options.resolved.length > 0) {
      values[':resolved'] = new Set(options.resolved);
      update += ' DELETE handoff :resolved';
    }
    const write = {
      TableName: this.table,
      Key: { pk: this.key },
      UpdateExpression: update,
      ConditionExpression: RELEASE_CONDITION,
      ExpressionAttributeValues: values,
    };
    try {
      await this.withRetry(
        'release',
        async () => {
          if (options.runRecord === undefined) {
            await this.doc.send(new UpdateCommand(write), { abortSignal: signal });
          } else {
            await this.doc.send(
              new TransactWriteCommand({
                TransactItems: [{ Update: write }, { Put: { TableName: this.table, Item: options.runRecord } }],
              }),
              { abortSignal: signal },
            );
          }
        },
        signal,
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException || isCancelledAt(error, 0)) return false;
      throw error;
    }
  }

  /**
   * Whether this run's release landed, read back after a release whose outcome was unknown was
   * followed by a refusal: the release records the run as `lastRun` in the same write.
   */
  async releaseLanded(lease: HeldLease, signal?: AbortSignal): Promise<boolean> {
    const out = await this.withRetry(
      'release',
      () => this.doc.send(new GetCommand({ TableName: this.table, Key: { pk: this.key }, ConsistentRead: true }), { abortSignal: signal }),
      signal,
    );
    const lastRun = (out.Item as (LeaseItem & { lastRun?: { runId?: string; fence?: number } }) | undefined)?.lastRun;
    return lastRun?.runId === lease.runId && Number(lastRun.fence) === lease.fence;
  }

  /**
   * The lease action that makes a transaction commit only while this run holds the lease: a
   * ConditionCheck, or, when the write also records something on the lease item (the interval
   * done with the run's last data write, what to hand over), an Update under the same
   * condition, since one transaction cannot touch an item twice.
   */
  fenceCheck(lease: HeldLease, extras: FenceExtras = {}): TransactAction {
    const now = this.now();
    const values: Record<string, unknown> = { ':runId': lease.runId, ':fence': lease.fence, ':now': now };
    const clauses: string[] = [];
    if (extras.doneInterval !== undefined) {
      values[':done'] = rememberDone(lease.ledger, extras.doneInterval, now, this.retentionMs);
      clauses.push('SET ledger = :done');
    }
    if (extras.handoff !== undefined && extras.handoff.length > 0) {
      values[':handoff'] = new Set(extras.handoff);
      clauses.push('ADD handoff :handoff');
    }
    const target = {
      TableName: this.table,
      Key: { pk: this.key },
      ConditionExpression: OWNED_CONDITION,
      ExpressionAttributeValues: values,
    };
    if (clauses.length === 0) return { ConditionCheck: target };
    return { Update: { ...target, UpdateExpression: clauses.join(' ') } };
  }
}

function heldFrom(runId: string, item: LeaseItem, expiresAtMs: number): HeldLease {
  return {
    runId,
    fence: Number(item.fence),
    expiresAtMs,
    ledger: new Set([...(item.ledger ?? [])].map(Number)),
    handoff: new Set(item.handoff ?? []),
  };
}

function oldItem(error: ConditionalCheckFailedException): LeaseItem | undefined {
  const raw = error.Item;
  return raw === undefined ? undefined : (unmarshall(raw) as LeaseItem);
}
