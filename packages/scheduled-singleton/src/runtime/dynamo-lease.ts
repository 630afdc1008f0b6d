/**
 * The lease on DynamoDB: one conditional UpdateItem to acquire, ownership-conditioned renew and
 * release, and the lease action that fences every data write. The decisions are pure functions apart
 * (record.ts, ledger.ts). Contention (conflicts, throttling, 5xx) is retried within a small budget
 * (retry.ts). A release that carries the work's last writes goes out through the fenced writer, in
 * one transaction with the run record.
 */
import {
  ConditionalCheckFailedException,
  GetItemCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { ContentionError, FencedWriteError, LeaseLostError, LeaseUnavailableError } from './errors.js';
import { DynamoFencedWriter, MAX_WRITES_PER_TRANSACTION, TRANSACTION_BYTE_BUDGET, actionBytes } from './fenced-writer.js';
import {
  TOKEN_STALE_AFTER_MS,
  encodeTokens,
  ledgerRetentionMs,
  ledgerSlots,
  rememberDone,
  slotOf,
  slotToken,
  tokenTested,
  usesTokens,
  withinRetention,
} from './ledger.js';
import {
  OWNED_CONDITION,
  RELEASE_CONDITION,
  acquireCondition,
  explainLoss,
  explainRefusal,
  leaseTtlSeconds,
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
   * How long succeeded intervals are remembered: `ledgerRetentionMs(periodMinutes, maxEventAgeMs)`.
   * @default ledgerRetentionMs(60): an hourly schedule whose events are kept 2 hours
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
  /** Sends a release that carries the work's last writes (a fenced transaction). */
  private readonly writer: DynamoFencedWriter;
  /**
   * The document client as the client it wraps: the lease's own requests go out as low-level
   * commands, their few values marshalled here, without the document client's translation of each
   * request and reply (a second command and middleware stack). Same client, configuration and
   * middleware.
   */
  private readonly client: DynamoDBClient;
  private readonly itemKey: Record<string, AttributeValue>;
  /** Marshals the lease's values as the document client would, with its options. */
  private readonly values: (values: Record<string, unknown>) => Record<string, AttributeValue>;

  constructor(options: LeaseStoreOptions) {
    this.doc = options.doc;
    this.table = options.table;
    this.timing = options.timing;
    this.now = options.now;
    this.key = options.key;
    this.options = options;
    this.retentionMs = options.ledgerRetentionMs ?? ledgerRetentionMs(60);
    this.client = options.doc;
    this.itemKey = { pk: { S: options.key } };
    // A stand-in for the client (a test's) may have no configuration.
    const config = options.doc.config as DynamoDBDocumentClient['config'] | undefined;
    const marshallOptions = config?.translateConfig?.marshallOptions;
    // A copy: the document client sets convertTopLevelContainer on its own options when it sends.
    this.values = (values) => marshall(values, { ...marshallOptions, convertTopLevelContainer: false });
    const { sleep, random, onContention } = options;
    this.writer = new DynamoFencedWriter(options.doc, {
      now: options.now,
      ...(sleep !== undefined ? { sleep } : {}),
      ...(random !== undefined ? { random } : {}),
      ...(onContention !== undefined
        ? { onContention: (reason: string, attempt: number) => onContention('release', reason, attempt) }
        : {}),
    });
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

  /**
   * One conditional write. A refused contender learns holder and expiry from the write itself, or
   * that `interval` is done. An interval older than the ledger's retention is not deduplicated.
   */
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
    const names: Record<string, string> = { '#ttl': 'ttl', '#source': 'source', '#interval': 'interval' };
    let update = 'SET holder = :runId, expiresAtMs = :exp, acquiredAtMs = :now, renewedAtMs = :now, #ttl = :ttl, #source = :source';
    const dedupe = interval !== undefined && withinRetention(interval, now, this.retentionMs);
    const test = { slot: dedupe, token: dedupe && tokenTested(interval, now) };
    if (interval !== undefined) {
      values[':interval'] = interval;
      update += ', #interval = :interval ADD fence :one';
    } else {
      update += ' REMOVE #interval ADD fence :one';
    }
    if (test.slot) values[':slot'] = slotOf(interval!);
    if (test.token) {
      Object.assign(values, { ':token': slotToken(slotOf(interval!)), ':stale': now - TOKEN_STALE_AFTER_MS });
      names['#done'] = 'done';
    }
    try {
      const out = await this.withRetry(
        'acquire',
        () =>
          this.client.send(
            new UpdateItemCommand({
              TableName: this.table,
              Key: this.itemKey,
              UpdateExpression: update,
              ConditionExpression: acquireCondition(test),
              ExpressionAttributeNames: names,
              ExpressionAttributeValues: this.values(values),
              ReturnValues: 'ALL_NEW',
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
            { abortSignal: signal },
          ),
        signal,
      );
      return { acquired: true, lease: heldFrom(runId, itemOf(out.Attributes) ?? { pk: this.key }, expiresAtMs) };
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) {
        const old = oldItem(error);
        // The SDK (or our contention retry) repeated a write whose first attempt landed but whose
        // answer was lost: the "holder" refusing us is this very run. That is our acquisition.
        if (old?.holder === runId && old.fence !== undefined && old.expiresAtMs !== undefined) {
          return { acquired: true, lease: heldFrom(runId, old, old.expiresAtMs) };
        }
        return { acquired: false, ...explainRefusal(old, now, dedupe ? interval : undefined) };
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
          this.client.send(
            new UpdateItemCommand({
              TableName: this.table,
              Key: this.itemKey,
              UpdateExpression: 'SET expiresAtMs = :exp, renewedAtMs = :now, #ttl = :ttl',
              ConditionExpression: OWNED_CONDITION,
              ExpressionAttributeNames: { '#ttl': 'ttl' },
              ExpressionAttributeValues: this.values({
                ':runId': lease.runId,
                ':fence': lease.fence,
                ':now': now,
                ':exp': expiresAtMs,
                ':ttl': leaseTtlSeconds(expiresAtMs),
              }),
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
   * With `actions` (the work's last writes) the transaction also commits them, and only while the
   * lease is held and unexpired: it is then a fenced transaction (FencedWriteError when one of them
   * is refused by its own condition; nothing is written, the lease stays held).
   */
  async release(lease: HeldLease, options: ReleaseOptions = {}, signal?: AbortSignal): Promise<boolean> {
    if ((options.actions?.length ?? 0) > 0 || (options.outbox?.length ?? 0) > 0) return this.releaseCarrying(lease, options, signal);
    const write = this.releaseUpdate(lease, options, RELEASE_CONDITION);
    try {
      await this.withRetry(
        'release',
        async () => {
          const update = { ...write, Key: this.itemKey, ExpressionAttributeValues: this.values(write.ExpressionAttributeValues) };
          if (options.runRecord === undefined) {
            await this.client.send(new UpdateItemCommand(update), { abortSignal: signal });
          } else {
            await this.client.send(
              new TransactWriteItemsCommand({
                TransactItems: [{ Update: update }, { Put: { TableName: this.table, Item: this.values(options.runRecord) } }],
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
   * The release with the work's last writes and their events: one fenced transaction (the release
   * update under the ownership condition, the run record, the outbox puts, the actions), so that
   * they commit together or not at all. An outbox put already written is dropped as in any commit.
   */
  private async releaseCarrying(lease: HeldLease, options: ReleaseOptions, signal?: AbortSignal): Promise<boolean> {
    const actions = [
      ...(options.runRecord === undefined ? [] : [{ Put: { TableName: this.table, Item: options.runRecord } }]),
      ...(options.actions ?? []),
    ];
    const outbox = options.outbox ?? [];
    if (!fitsOneTransaction([...actions, ...outbox])) {
      throw new FencedWriteError(
        `the release cannot carry ${actions.length + outbox.length} writes: they must fit one transaction with it`,
      );
    }
    try {
      await this.writer.commit(actions, () => ({ Update: this.releaseUpdate(lease, options, OWNED_CONDITION) }), signal, outbox);
      return true;
    } catch (error) {
      if (error instanceof LeaseLostError) return false;
      throw error;
    }
  }

  /** The update that frees the lease (marking the interval done, recording the run, resolving the handoff). */
  private releaseUpdate(lease: HeldLease, options: ReleaseOptions, condition: string) {
    const now = this.now();
    const values: Record<string, unknown> = { ':runId': lease.runId, ':fence': lease.fence, ':now': now };
    const names: Record<string, string> = {};
    const set = ['expiresAtMs = :now', 'releasedAtMs = :now'];
    const remove = ['holder'];
    if (options.doneInterval !== undefined) {
      const done = this.doneClauses(lease.ledger, options.doneInterval, now);
      set.push(...done.set);
      remove.push(...done.remove);
      Object.assign(values, done.values);
      Object.assign(names, done.names);
    }
    if (options.lastRun !== undefined) {
      values[':lastRun'] = options.lastRun;
      set.push('lastRun = :lastRun');
    }
    let update = `SET ${set.join(', ')} REMOVE ${remove.join(', ')}`;
    if (options.resolved !== undefined && options.resolved.length > 0) {
      values[':resolved'] = new Set(options.resolved);
      update += ' DELETE handoff :resolved';
    }
    return {
      TableName: this.table,
      Key: { pk: this.key },
      UpdateExpression: update,
      ConditionExpression: condition,
      ExpressionAttributeValues: values,
      ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
    };
  }

  /**
   * What marks `interval` done: the ledger rewritten in the job's form (the compact `done` for a
   * retention the tokens cover, else the number set), the other form removed — what it held is
   * carried over, since the held lease read both.
   */
  private doneClauses(ledger: ReadonlySet<number>, interval: string, now: number) {
    const slots = rememberDone(ledger, interval, now, this.retentionMs);
    const names = { '#done': 'done' };
    if (usesTokens(this.retentionMs)) {
      return { set: ['#done = :done', 'doneAtMs = :now'], remove: ['ledger'], values: { ':done': encodeTokens(slots) }, names };
    }
    if (slots.size === 0) return { set: [], remove: ['ledger', '#done', 'doneAtMs'], values: {}, names };
    return { set: ['ledger = :done'], remove: ['#done', 'doneAtMs'], values: { ':done': slots }, names };
  }

  /**
   * Whether this run's release landed, read back after a release whose outcome was unknown was
   * followed by a refusal: the release records the run as `lastRun` in the same write.
   */
  async releaseLanded(lease: HeldLease, signal?: AbortSignal): Promise<boolean> {
    const out = await this.withRetry(
      'release',
      () =>
        this.client.send(new GetItemCommand({ TableName: this.table, Key: this.itemKey, ConsistentRead: true }), { abortSignal: signal }),
      signal,
    );
    const lastRun = itemOf(out.Item)?.lastRun;
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
    const names: Record<string, string> = {};
    const set: string[] = [];
    const remove: string[] = [];
    if (extras.doneInterval !== undefined) {
      const done = this.doneClauses(lease.ledger, extras.doneInterval, now);
      set.push(...done.set);
      remove.push(...done.remove);
      Object.assign(values, done.values);
      Object.assign(names, done.names);
    }
    const clauses = [...(set.length > 0 ? [`SET ${set.join(', ')}`] : []), ...(remove.length > 0 ? [`REMOVE ${remove.join(', ')}`] : [])];
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
    return {
      Update: {
        ...target,
        UpdateExpression: clauses.join(' '),
        ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
      },
    };
  }
}

function heldFrom(runId: string, item: LeaseItem, expiresAtMs: number): HeldLease {
  return {
    runId,
    fence: Number(item.fence),
    expiresAtMs,
    ledger: ledgerSlots(item),
    handoff: new Set(item.handoff ?? []),
  };
}

function oldItem(error: ConditionalCheckFailedException): LeaseItem | undefined {
  return itemOf(error.Item);
}

function itemOf(raw: Record<string, AttributeValue> | undefined): LeaseItem | undefined {
  return raw === undefined ? undefined : (unmarshall(raw) as LeaseItem);
}

/** Whether these writes fit one transaction beside the lease action (the fenced writer's packing). */
export function fitsOneTransaction(actions: readonly TransactAction[]): boolean {
  return (
    actions.length <= MAX_WRITES_PER_TRANSACTION && actions.reduce((sum, action) => sum + actionBytes(action), 0) <= TRANSACTION_BYTE_BUDGET
  );
}
