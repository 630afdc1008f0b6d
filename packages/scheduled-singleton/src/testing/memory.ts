/**
 * The lease and the fenced writer in memory, for unit tests of a job: the same rules as
 * `DynamoLease` and `DynamoFencedWriter` (one contract test runs on both), with no DynamoDB.
 *
 * - acquire: free (no holder) or expired by `expiresAtMs <= now` (the injected clock), and for an
 *   interval within the ledger's retention, not in the ledger; every acquisition increments the
 *   fence; a repeated acquisition by the holder itself is its own;
 * - renew: only the holder of this fence, unexpired (else LeaseLostError);
 * - release: only the holder of this fence (expired or not); records `lastRun` and the run record;
 *   marks the interval done; removes the handoff entries the run dealt with; with the work's last
 *   writes (`actions`, `outbox`), only while held and unexpired, recorded as one more transaction;
 * - fenced commit: each transaction of at most 99 actions commits only if its lease action still
 *   holds (holder, fence, unexpired), with what the action records on the lease item (the interval
 *   done, the handoff); else LeaseLostError and nothing of it is recorded.
 *
 * Outbox puts (a commit's events) are written once per key: one already there is dropped and
 * counted, as `attribute_not_exists` does on DynamoDB; `events()` lists what was published.
 *
 * The job's own actions are recorded, not evaluated: their conditions and update expressions are
 * DynamoDB's (run the job on DynamoDB Local for those).
 */
import { OUTBOX_ITEM } from '../contract.js';
import { LeaseLostError, LeaseUnavailableError } from '../runtime/errors.js';
import { MAX_WRITES_PER_TRANSACTION } from '../runtime/fenced-writer.js';
import type { CoordinationConfig, CoordinationPorts, CoordinationStore } from '../runtime/coordination.js';
import type {
  AcquireResult,
  FenceExtras,
  FencedWriterPort,
  HeldLease,
  InvocationSource,
  LeasePort,
  ReleaseOptions,
  RunRecord,
  TransactAction,
  Turn,
  WriterResult,
} from '../runtime/ports.js';
import { ledgerRetentionMs, rememberDone, slotOf, withinRetention } from '../runtime/ledger.js';
import { OWNED_CONDITION, explainLoss, explainRefusal, type LeaseItem } from '../runtime/record.js';
import type { LeaseTiming } from '../runtime/timing.js';

/** The lease item as the in-memory store keeps it (the attributes DynamoLease writes). */
export interface MemoryLeaseItem {
  pk: string;
  holder?: string;
  expiresAtMs?: number;
  fence: number;
  ledger: Set<number>;
  handoff: Set<string>;
  acquiredAtMs?: number;
  renewedAtMs?: number;
  releasedAtMs?: number;
  source?: string;
  interval?: string;
  lastRun?: Record<string, unknown>;
}

/** One committed fenced transaction. */
export interface MemoryTransaction {
  /** The lease key and fence it was fenced by. */
  readonly key: string;
  readonly runId: string;
  readonly fence: number;
  readonly committedAtMs: number;
  /** The job's actions, as given to `commit`. */
  readonly actions: readonly TransactAction[];
  /** What the transaction recorded on the lease item besides (the interval done, the handoff). */
  readonly extras: FenceExtras;
}

export interface MemoryLeaseOptions {
  key: string;
  timing: LeaseTiming;
  now: () => number;
  /**
   * How long succeeded intervals are remembered.
   * @default ledgerRetentionMs(60): for an hourly schedule, as DynamoLease's
   */
  ledgerRetentionMs?: number;
  /**
   * The store the lease item, run records and transactions live in.
   * @default a new MemoryCoordination
   */
  store?: MemoryCoordination;
}

const MEMORY_TABLE = '(memory)';

/** A lease action this store issued: what it checks and records, evaluated when committed. */
interface IssuedFence {
  lease: MemoryLease;
  runId: string;
  fence: number;
  ledger?: Set<number>;
  extras: FenceExtras;
}

export class MemoryLease implements LeasePort {
  readonly key: string;
  readonly store: MemoryCoordination;
  private readonly timing: LeaseTiming;
  private readonly now: () => number;
  private readonly retentionMs: number;

  constructor(options: MemoryLeaseOptions) {
    this.key = options.key;
    this.timing = options.timing;
    this.now = options.now;
    this.retentionMs = options.ledgerRetentionMs ?? ledgerRetentionMs(60);
    this.store = options.store ?? new MemoryCoordination();
  }

  private item(): MemoryLeaseItem {
    return this.store.leaseItemFor(this.key);
  }

  async acquire(runId: string, source: InvocationSource, interval: string | undefined, signal?: AbortSignal): Promise<AcquireResult> {
    await roundTrip();
    refuseAborted(signal, 'could not acquire the lease');
    const now = this.now();
    const item = this.item();
    const free = item.holder === undefined || (item.expiresAtMs ?? 0) <= now;
    // An interval older than the retention is not deduplicated (DynamoLease tests only the window).
    const dedupe = interval !== undefined && withinRetention(interval, now, this.retentionMs);
    const done = dedupe && item.ledger.has(slotOf(interval));
    if (free && !done) {
      const expiresAtMs = now + this.timing.durationMs;
      Object.assign(item, { holder: runId, expiresAtMs, acquiredAtMs: now, renewedAtMs: now, source, fence: item.fence + 1 });
      if (interval !== undefined) item.interval = interval;
      else delete item.interval;
      return { acquired: true, lease: held(runId, item, expiresAtMs) };
    }
    // A repeated acquisition (its first answer lost) finds this very run holding the lease.
    if (item.holder === runId && item.expiresAtMs !== undefined) return { acquired: true, lease: held(runId, item, item.expiresAtMs) };
    return { acquired: false, ...explainRefusal(asLeaseItem(item), now, dedupe ? interval : undefined) };
  }

  async renew(lease: HeldLease, signal?: AbortSignal): Promise<HeldLease> {
    await roundTrip();
    signal?.throwIfAborted();
    const now = this.now();
    const item = this.item();
    if (!owned(item, lease.runId, lease.fence, now)) {
      throw new LeaseLostError(`lease lost: ${explainLoss(lease.runId, asLeaseItem(item), now)}`, lease.runId, lease.fence);
    }
    const expiresAtMs = now + this.timing.durationMs;
    Object.assign(item, { expiresAtMs, renewedAtMs: now });
    this.store.renewals.push({ key: this.key, runId: lease.runId, fence: lease.fence, renewedAtMs: now, expiresAtMs });
    return { ...lease, expiresAtMs };
  }

  async release(lease: HeldLease, options: ReleaseOptions = {}, signal?: AbortSignal): Promise<boolean> {
    await roundTrip();
    signal?.throwIfAborted();
    const now = this.now();
    const item = this.item();
    const carried = [...(options.outbox ?? []), ...(options.actions ?? [])];
    // Carrying the work's last writes, the release is a fenced write: held and unexpired.
    if (carried.length > 0 ? !owned(item, lease.runId, lease.fence, now) : item.holder !== lease.runId || item.fence !== lease.fence)
      return false;
    if (carried.length > 0) this.store.recordRelease(this.key, lease, now, options);
    Object.assign(item, { expiresAtMs: now, releasedAtMs: now });
    if (options.doneInterval !== undefined) item.ledger = rememberDone(lease.ledger, options.doneInterval, now, this.retentionMs);
    if (options.lastRun !== undefined) item.lastRun = { ...options.lastRun };
    delete item.holder;
    for (const entry of options.resolved ?? []) item.handoff.delete(entry);
    if (options.runRecord !== undefined) this.store.runRecords.set(options.runRecord.pk, { ...options.runRecord });
    return true;
  }

  async releaseLanded(lease: HeldLease, signal?: AbortSignal): Promise<boolean> {
    await roundTrip();
    signal?.throwIfAborted();
    const lastRun = this.item().lastRun;
    return lastRun?.runId === lease.runId && Number(lastRun.fence) === lease.fence;
  }

  /**
   * The lease action of a fenced transaction, shaped as DynamoLease's (a ConditionCheck on the
   * lease item under the ownership condition); MemoryFencedWriter evaluates it when it commits.
   */
  fenceCheck(lease: HeldLease, extras: FenceExtras = {}): TransactAction {
    const now = this.now();
    const action: TransactAction = {
      ConditionCheck: {
        TableName: MEMORY_TABLE,
        Key: { pk: this.key },
        ConditionExpression: OWNED_CONDITION,
        ExpressionAttributeValues: { ':runId': lease.runId, ':fence': lease.fence, ':now': now },
      },
    };
    const ledger = extras.doneInterval === undefined ? undefined : rememberDone(lease.ledger, extras.doneInterval, now, this.retentionMs);
    this.store.issue(action, { lease: this, runId: lease.runId, fence: lease.fence, ...(ledger ? { ledger } : {}), extras: { ...extras } });
    return action;
  }

  /** Evaluates an issued lease action now: commits its records, or throws LeaseLostError. */
  commitFence(issued: IssuedFence, actions: readonly TransactAction[]): void {
    const now = this.now();
    const item = this.item();
    if (!owned(item, issued.runId, issued.fence, now)) {
      throw new LeaseLostError(
        'lease lost: a fenced write was refused because this run no longer holds the lease',
        issued.runId,
        issued.fence,
      );
    }
    if (issued.ledger !== undefined) item.ledger = issued.ledger;
    for (const entry of issued.extras.handoff ?? []) item.handoff.add(entry);
    this.store.transactions.push({
      key: this.key,
      runId: issued.runId,
      fence: issued.fence,
      committedAtMs: now,
      actions: [...actions],
      extras: issued.extras,
    });
  }

  /**
   * Another run takes the lease over (as after this one froze past its expiry): the next fenced
   * write, renewal or release of the current holder is refused.
   */
  takeOver(runId = 'another-run'): void {
    const item = this.item();
    const now = this.now();
    Object.assign(item, {
      holder: runId,
      fence: item.fence + 1,
      expiresAtMs: now + this.timing.durationMs,
      acquiredAtMs: now,
      renewedAtMs: now,
    });
  }
}

export class MemoryFencedWriter implements FencedWriterPort {
  constructor(private readonly store: MemoryCoordination) {}

  /**
   * Outbox puts first, then the actions, 99 per transaction; an outbox put whose key the store
   * already holds is dropped and counted (`attribute_not_exists`), as DynamoFencedWriter does.
   */
  async commit(
    actions: readonly TransactAction[],
    fence: (last: boolean) => TransactAction,
    signal?: AbortSignal,
    outbox: readonly TransactAction[] = [],
    turn: Turn = (transaction) => transaction(),
  ): Promise<WriterResult> {
    await roundTrip();
    const all = [...outbox.map((action) => ({ action, outbox: true })), ...actions.map((action) => ({ action, outbox: false }))];
    let transactions = 0;
    let duplicateEvents = 0;
    for (let offset = 0; offset < all.length; offset += MAX_WRITES_PER_TRANSACTION) {
      signal?.throwIfAborted();
      const last = offset + MAX_WRITES_PER_TRANSACTION >= all.length;
      const chunk = all.slice(offset, offset + MAX_WRITES_PER_TRANSACTION);
      const fresh = chunk.filter((entry) => !(entry.outbox && this.store.outbox.has(outboxKeyOf(entry.action))));
      duplicateEvents += chunk.length - fresh.length;
      if (fresh.length === 0 && !last) continue;
      await turn(async () => {
        await roundTrip(); // each transaction answers asynchronously, as a network call does
        const check = fence(last);
        const issued = this.store.issued(check);
        if (issued === undefined) throw new Error('MemoryFencedWriter: the lease action was not issued by a MemoryLease of this store');
        issued.lease.commitFence(
          issued,
          fresh.map((entry) => entry.action),
        );
      });
      for (const entry of fresh)
        if (entry.outbox) this.store.outbox.set(outboxKeyOf(entry.action), entry.action.Put!.Item as Record<string, unknown>);
      transactions += 1;
    }
    return outbox.length > 0 ? { transactions, duplicateEvents } : { transactions };
  }
}

function outboxKeyOf(action: TransactAction): string {
  return String((action.Put?.Item as Record<string, unknown> | undefined)?.[OUTBOX_ITEM.key]);
}

/**
 * An in-memory coordination store: pass it as the wrapper's `coordination` (testJob does), then
 * read what the runs left: the lease item, the run records, the committed transactions.
 */
export class MemoryCoordination implements CoordinationStore {
  /** Lease items by key. */
  readonly leases = new Map<string, MemoryLeaseItem>();
  /** Run records by key (`<prefix><interval>`, `<prefix><source>#<runId>`). */
  readonly runRecords = new Map<string, RunRecord>();
  /** Every committed fenced transaction, in order. */
  readonly transactions: MemoryTransaction[] = [];
  /** The outbox items the job's events became, by key, in the order written (each id once). */
  readonly outbox = new Map<string, Record<string, unknown>>();
  /** Every confirmed renewal, in order. */
  readonly renewals: { key: string; runId: string; fence: number; renewedAtMs: number; expiresAtMs: number }[] = [];
  private readonly issuedFences = new WeakMap<TransactAction, IssuedFence>();
  private opened: MemoryLease | undefined;

  open(config: CoordinationConfig): CoordinationPorts {
    const lease = new MemoryLease({
      key: config.key,
      timing: config.timing,
      now: config.now,
      ledgerRetentionMs: config.ledgerRetentionMs,
      store: this,
    });
    this.opened = lease;
    return { lease, writer: new MemoryFencedWriter(this) };
  }

  /** The lease the wrapper opened last (to take it over in a test). */
  get lease(): MemoryLease {
    if (this.opened === undefined) throw new Error('MemoryCoordination: no job has opened this store yet (invoke the handler first)');
    return this.opened;
  }

  /** The lease item of `key` (default: the opened lease's), created free on first use. */
  leaseItemFor(key: string): MemoryLeaseItem {
    let item = this.leases.get(key);
    if (item === undefined) {
      item = { pk: key, fence: 0, ledger: new Set(), handoff: new Set() };
      this.leases.set(key, item);
    }
    return item;
  }

  /** The job's committed actions, in order (only those of `table` if given). */
  actions(table?: string): TransactAction[] {
    const all = this.transactions.flatMap((t) => t.actions);
    return table === undefined ? all : all.filter((action) => tableOf(action) === table);
  }

  /** The items the job's committed `Put` actions wrote, in order (only those of `table` if given). */
  puts(table?: string): Record<string, unknown>[] {
    return this.actions(table).flatMap((action) => (action.Put !== undefined ? [action.Put.Item as Record<string, unknown>] : []));
  }

  /** The job's published events, in the order written: source, detail-type and detail (with `eventId`). */
  events(): { id: string; source: string; detailType: string; detail: Record<string, unknown> }[] {
    return [...this.outbox.values()].map((item) => ({
      id: String(item[OUTBOX_ITEM.eventId]),
      source: String(item[OUTBOX_ITEM.source]),
      detailType: String(item[OUTBOX_ITEM.detailType]),
      detail: JSON.parse(String(item[OUTBOX_ITEM.detail])) as Record<string, unknown>,
    }));
  }

  /**
   * A release that carried the work's last writes: one more transaction (its extras: the interval
   * it marks done), its outbox puts written once per key as a commit's are.
   * @internal
   */
  recordRelease(key: string, lease: HeldLease, now: number, options: ReleaseOptions): void {
    const fresh = (options.outbox ?? []).filter((action) => !this.outbox.has(outboxKeyOf(action)));
    for (const action of fresh) this.outbox.set(outboxKeyOf(action), action.Put!.Item as Record<string, unknown>);
    this.transactions.push({
      key,
      runId: lease.runId,
      fence: lease.fence,
      committedAtMs: now,
      actions: [...(options.actions ?? [])],
      extras: options.doneInterval !== undefined ? { doneInterval: options.doneInterval } : {},
    });
  }

  /** @internal */
  issue(action: TransactAction, issued: IssuedFence): void {
    this.issuedFences.set(action, issued);
  }

  /** @internal */
  issued(action: TransactAction): IssuedFence | undefined {
    return this.issuedFences.get(action);
  }
}

function tableOf(action: TransactAction): string | undefined {
  const body = Object.values(action)[0] as { TableName?: string } | undefined;
  return body?.TableName;
}

function owned(item: MemoryLeaseItem, runId: string, fence: number, now: number): boolean {
  return item.holder === runId && item.fence === fence && (item.expiresAtMs ?? 0) > now;
}

function held(runId: string, item: MemoryLeaseItem, expiresAtMs: number): HeldLease {
  return { runId, fence: item.fence, expiresAtMs, ledger: new Set(item.ledger), handoff: new Set(item.handoff) };
}

function asLeaseItem(item: MemoryLeaseItem): LeaseItem {
  return { ...item, ledger: new Set(item.ledger), handoff: new Set(item.handoff) };
}

/**
 * Every call answers asynchronously, as a network call does (other runs may act in between); a
 * microtask, so that a test's fake timers do not hold it.
 */
function roundTrip(): Promise<void> {
  return Promise.resolve();
}

function refuseAborted(signal: AbortSignal | undefined, what: string): void {
  if (signal?.aborted)
    throw new LeaseUnavailableError(`${what}: ${String((signal.reason as Error | undefined)?.message ?? signal.reason)}`, {
      cause: signal.reason,
    });
}
