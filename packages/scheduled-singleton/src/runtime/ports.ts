/**
 * The ports of the single-execution module: what it needs from a lease store (`LeasePort`), what a
 * fenced write looks like (`TransactAction`), and what a job's work may call (`WorkContext`). The
 * DynamoDB adapters (`DynamoLease`, `DynamoFencedWriter`) implement them; tests may stand in for
 * them. See the package README.
 */
import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';

/** One action of a DynamoDB `TransactWriteItems` (document-client form). */
export type TransactAction = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Who invoked a run (recorded as is), e.g. `schedule`, `deploy`, `console`. */
export type InvocationSource = string;

/** A lease this run holds, as DynamoDB last confirmed it. */
export interface HeldLease {
  readonly runId: string;
  readonly fence: number;
  /** Last expiry DynamoDB confirmed for this holder (epoch ms). */
  readonly expiresAtMs: number;
  /** The interval ledger: slots (epoch minutes) of the intervals that succeeded, within retention. */
  readonly ledger: ReadonlySet<number>;
  /** What earlier runs handed over to the next one (see `WorkContext.handoff`). */
  readonly handoff: ReadonlySet<string>;
}

export type AcquireRefusal =
  | {
      reason: 'lease-held';
      holder: string;
      expiresAtMs?: number;
      fence: number | undefined;
      /** Set when no holder was read: DynamoDB contention outlasted the retry budget. */
      contention?: string;
    }
  | { reason: 'already-done'; interval: string };

export type AcquireResult = { acquired: true; lease: HeldLease } | ({ acquired: false } & AcquireRefusal);

/** What a fenced write also records on the lease item, in the same transaction. */
export interface FenceExtras {
  /**
   * The interval this run stands for: marked done with the run's last data write.
   * @default none
   */
  doneInterval?: string;
  /**
   * Handed over to the next runs.
   * @default none
   */
  handoff?: readonly string[];
}

export interface RunRecord {
  /** Coordination key of the record. */
  pk: string;
  [attribute: string]: unknown;
}

export interface ReleaseOptions {
  /**
   * The interval to mark done with the release (a run that succeeded without a final commit).
   * @default none
   */
  doneInterval?: string;
  /**
   * The lease item's summary of this run (what `releaseLanded` reads back).
   * @default none
   */
  lastRun?: Record<string, unknown>;
  /**
   * The run record, written in the release's transaction.
   * @default none
   */
  runRecord?: RunRecord;
  /**
   * Handed-over entries this run dealt with: removed from the handoff.
   * @default none
   */
  resolved?: readonly string[];
  /**
   * The work's last writes (`WorkContext.releaseWith`), committed in the release's own transaction
   * with the run record, and only while the lease is held and unexpired (a fenced write). One of
   * them refused by its own condition is a FencedWriteError: nothing is written, the lease is not
   * released. They fit one transaction with the release and the run record (`MAX_RELEASE_WRITES`).
   * @default none
   */
  actions?: readonly TransactAction[];
  /**
   * The outbox puts of the events published with `actions` (an event already written is dropped,
   * as in any commit).
   * @default none
   */
  outbox?: readonly TransactAction[];
}

export interface LeasePort {
  acquire(runId: string, source: InvocationSource, interval: string | undefined, signal?: AbortSignal): Promise<AcquireResult>;
  renew(lease: HeldLease, signal?: AbortSignal): Promise<HeldLease>;
  release(lease: HeldLease, options: ReleaseOptions, signal?: AbortSignal): Promise<boolean>;
  /** After a release whose answer was lost and whose retry was refused: did ours land? */
  releaseLanded(lease: HeldLease, signal?: AbortSignal): Promise<boolean>;
  /** The lease action of a fenced transaction (a ConditionCheck, or an Update carrying extras). */
  fenceCheck(lease: HeldLease, extras?: FenceExtras): TransactAction;
}

/**
 * A side effect the job declares with its writes (an effectively-once event): it becomes an outbox
 * item in the same fenced transaction, and reaches the EventBridge bus with `detail.eventId = id`.
 */
export interface OutboxEvent {
  /**
   * Derived from the logical change, never random: the same change, retried or run twice, has the
   * same id and is written once (e.g. `contest-rescheduled#2051#1767200000`). Unique per source.
   */
  readonly id: string;
  /** The event's `detail-type` on the bus, e.g. `ReminderDue`. */
  readonly detailType: string;
  /** The event's `detail` (a JSON object); the package adds `eventId`. */
  readonly detail: Readonly<Record<string, unknown>>;
}

export interface CommitOptions {
  /**
   * This is the work's last write: the run's interval is marked done in its last transaction.
   * @default false
   */
  final?: boolean;
  /**
   * Entries to hand over, recorded on the lease item with every transaction of this commit (and of
   * the run's later commits), so that a run that stops before it dealt with them leaves them to the
   * next run; a run that succeeds removes them at its release unless it keeps them (`keep`).
   * @default none
   */
  handoff?: readonly string[];
  /**
   * Events published with these writes. A commit whose actions and events fit one transaction
   * (`MAX_WRITES_PER_TRANSACTION` together, 4 MB) is atomic with them; a larger one is split, the
   * events' transactions first, so a crash between two of them can only publish early, never lose
   * one. An event whose id is already in the outbox is not written again (counted as a duplicate).
   * Refused before anything is written (OutboxEventError) if an event cannot be delivered.
   * @default none
   */
  events?: readonly OutboxEvent[];
}

/** What a commit did. */
export interface CommitResult {
  transactions: number;
  events: {
    /** Outbox items written by this commit. */
    written: number;
    /** Events whose id was already in the outbox (an earlier attempt of the same change): not written again. */
    duplicates: number;
  };
}

/** What the writer reports of a commit; `duplicateEvents` counts outbox puts refused as already written. */
export interface WriterResult {
  transactions: number;
  duplicateEvents?: number;
}

/**
 * Runs one fenced transaction — its lease action built, sent, and its contention retries — in the
 * run's turn on its lease item: the run's renewals take turns with its transactions, so a renewal
 * waits for one transaction at most, however large the commit.
 */
export type Turn = <R>(transaction: () => Promise<R>) => Promise<R>;

/**
 * Writes fenced transactions (at most 99 actions each, plus the lease action). `outbox` holds the
 * outbox puts (conditional on `attribute_not_exists`): written first, and one refused by its
 * condition is an event already written, dropped from the transaction, not a failure. Each
 * transaction (`fence(last)` called, the transaction sent, its contention retries) runs inside
 * `turn`: call `fence` there, so the lease action is built from the lease as last renewed.
 */
export interface FencedWriterPort {
  commit(
    actions: readonly TransactAction[],
    fence: (last: boolean) => TransactAction,
    signal?: AbortSignal,
    outbox?: readonly TransactAction[],
    turn?: Turn,
  ): Promise<WriterResult>;
}

/** What a job's work function receives. */
export interface WorkContext {
  readonly runId: string;
  /** Aborted when the lease is lost or the run's deadline comes: pass it to every I/O call. */
  readonly signal: AbortSignal;
  /** Epoch ms (by the injected clock) at which `signal` aborts for the deadline. */
  readonly deadline: number;
  readonly fence: number;
  /**
   * What earlier runs handed over (e.g. items to check again). If the work succeeds, every entry
   * counts as dealt with — those it received and those its own commits recorded (`handoff` of
   * `commit`, which a crash leaves to the next run) — except those it keeps.
   */
  readonly handoff: ReadonlySet<string>;
  /**
   * Leaves `entries` to the next runs: entries this run received, or recorded with a commit, stay
   * on the lease item after its release (a run with nothing to write still keeps what it could not
   * settle yet).
   */
  readonly keep: (entries: readonly string[]) => void;
  /**
   * Start (epoch ms) of the latest interval the ledger holds as succeeded, if any: a lower bound of
   * when the job last succeeded on schedule.
   */
  readonly lastSucceededMs?: number;
  /**
   * Commits `actions` fenced by the lease: each transaction commits only while this run holds it.
   * Throws LeaseLostError if it no longer does. `options.events` are published with the writes.
   */
  readonly commit: (actions: readonly TransactAction[], options?: CommitOptions) => Promise<CommitResult>;
  /**
   * Leaves the run's last writes to its release: `actions` (and `options.events`) are committed in
   * the release's own transaction — with the lease freed, the run record and the interval marked
   * done — so that a run whose last write is small makes no request of its own for it. Nothing is
   * written now: the writes land only if the work then returns successfully and the lease is still
   * held at the release (unexpired). A release that DynamoDB refuses for one of them (its own
   * condition) fails the run (reason `work`, a FencedWriteError with `refused`); the lease is then
   * released without them and the interval is not marked done, so a retry runs it. A lost lease
   * fails the run `lease-lost` and writes none of them. Call it again to add more; together they
   * fit one transaction (`MAX_RELEASE_WRITES` actions and outbox puts), or it throws
   * FencedWriteError and keeps none of this call's. A dry run's throws UnfencedWriteError.
   */
  readonly releaseWith: (actions: readonly TransactAction[], options?: Pick<CommitOptions, 'events'>) => void;
}
