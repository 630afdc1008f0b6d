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
  /** The interval this run stands for: marked done with the run's last data write. */
  doneInterval?: string;
  /** Handed over to the next runs. */
  handoff?: readonly string[];
}

export interface RunRecord {
  /** Coordination key of the record. */
  pk: string;
  [attribute: string]: unknown;
}

export interface ReleaseOptions {
  doneInterval?: string;
  lastRun?: Record<string, unknown>;
  runRecord?: RunRecord;
  /** Handed-over entries this run dealt with: removed from the handoff. */
  resolved?: readonly string[];
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

export interface CommitOptions {
  /** This is the work's last write: the run's interval is marked done in its last transaction. */
  final?: boolean;
  /** Entries to hand over to the next runs, recorded with every transaction of this commit. */
  handoff?: readonly string[];
}

/** Writes fenced transactions (at most 99 actions each, plus the lease action). */
export interface FencedWriterPort {
  commit(actions: readonly TransactAction[], fence: (last: boolean) => TransactAction, signal?: AbortSignal): Promise<{ transactions: number }>;
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
   * counts as dealt with, except those this run hands over again.
   */
  readonly handoff: ReadonlySet<string>;
  /**
   * Hands `entries` over to the next runs without a write: entries this run received stay on the
   * lease item (a run with nothing to write still keeps what it could not settle yet).
   */
  readonly keep: (entries: readonly string[]) => void;
  /**
   * Start (epoch ms) of the latest interval the ledger holds as succeeded, if any: a lower bound of
   * when the job last succeeded on schedule.
   */
  readonly lastSucceededMs?: number;
  /**
   * Commits `actions` fenced by the lease: each transaction commits only while this run holds it.
   * Throws LeaseLostError if it no longer does.
   */
  readonly commit: (actions: readonly TransactAction[], options?: CommitOptions) => Promise<{ transactions: number }>;
}
