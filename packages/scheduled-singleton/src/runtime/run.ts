/**
 * The entry point of the module: run a job's work once, exclusively, under the lease.
 *
 *   acquire ─► hold (heartbeat, deadline, fenced commits) ─► settle (release + run record)
 *
 * `runExclusively` takes the lease in one conditional write (or says why not: `lease-held` with the
 * holder, `already-done` for an interval that succeeded), keeps it by heartbeat while the work
 * runs, gives the work an AbortSignal that fires when the lease is lost or the run's deadline comes,
 * commits the work's writes fenced by the lease (the interval marked done with the last one), and
 * releases with a run record — and with the work's last writes, if it left them to the release. It never throws for an expected failure: the outcome says what
 * happened. See the package README.
 */
import { describe } from './aws-errors.js';
import {
  FencedWriteError,
  LeaseLostError,
  LeaseUnavailableError,
  OutboxEventError,
  RunDeadlineError,
  UnfencedWriteError,
} from './errors.js';
import { MAX_WRITES_PER_TRANSACTION, TRANSACTION_BYTE_BUDGET, actionBytes } from './fenced-writer.js';
import { Heartbeat } from './heartbeat.js';
import type {
  CommitOptions,
  FencedWriterPort,
  HeldLease,
  InvocationSource,
  LeasePort,
  OutboxEvent,
  ReleaseOptions,
  RunRecord,
  Sleep,
  TransactAction,
  WorkContext,
} from './ports.js';
import { outboxPuts, type OutboxSettings } from './outbox.js';
import { realSleep } from './retry.js';
import type { LeaseTiming } from './timing.js';

export interface ExclusiveRun {
  runId: string;
  source: InvocationSource;
  /**
   * The scheduled interval this run stands for: deduplicated (unless `force`) and marked done.
   * @default none: a run without an interval (not deduplicated, marks nothing done)
   */
  interval?: string;
  /**
   * Run `interval` even if it already succeeded.
   * @default false
   */
  force?: boolean;
  /** Lambda's `getRemainingTimeInMillis()`. */
  remainingMs(): number;
}

export interface ExclusiveDeps {
  lease: LeasePort;
  writer: FencedWriterPort;
  timing: LeaseTiming;
  now: () => number;
  /**
   * Waits between release attempts whose outcome was unknown.
   * @default a real timer
   */
  sleep?: Sleep;
  /** Run records: `<prefix><interval>` for scheduled runs, `<prefix><source>#<runId>` otherwise. */
  runRecordPrefix: string;
  /**
   * How long a run record is kept (its `ttl`).
   * @default 30 days
   */
  runRecordTtlSeconds?: number;
  /**
   * Where warnings go (a renewal that failed and is retried, a release that could not be made).
   * @default none
   */
  log?: { warn(message: string, extra?: Record<string, unknown>): void };
  /**
   * Called once the lease is held.
   * @default none
   */
  onAcquired?: (lease: HeldLease) => void;
  /**
   * Called on every confirmed renewal.
   * @default none
   */
  onHeartbeat?: (lease: HeldLease) => void;
  /**
   * Where the work's events go (`commit(actions, { events })`).
   * @default none: a commit with events fails (OutboxEventError)
   */
  outbox?: OutboxSettings;
}

/** What the work left behind, for the run record (`heartbeats` counted by the module). */
export interface Settled<T> {
  value?: T;
  error?: unknown;
  heartbeats: number;
}

export interface ExclusiveOptions<T> {
  /**
   * Extra attributes of the run record (counts, the failure's phase and text).
   * @default none
   */
  record?: (settled: Settled<T>) => Record<string, unknown>;
}

export type ExclusiveOutcome<T> =
  | { outcome: 'succeeded'; fence: number; value: T; heartbeats: number }
  | { outcome: 'skipped'; reason: 'already-done' }
  | { outcome: 'skipped'; reason: 'lease-held'; holder: string; holderExpiresAt?: string; detail?: string }
  /** The lease could not be taken (DynamoDB unusable, not contention) or released after a success. */
  | { outcome: 'failed'; reason: 'lease'; error: unknown; fence?: number; heartbeats: number }
  | { outcome: 'failed'; reason: 'lease-lost'; error: unknown; fence: number; heartbeats: number }
  /** The work threw. `deadline`: the run's deadline had come (the error may be the abort it caused). */
  | { outcome: 'failed'; reason: 'work'; error: unknown; deadline: boolean; fence: number; heartbeats: number; value?: undefined };

const DEFAULT_RUN_RECORD_TTL_SECONDS = 30 * 24 * 3600;

/** Actions and outbox puts a release can carry (`releaseWith`): the release update and the run record take the other two places. */
export const MAX_RELEASE_WRITES = MAX_WRITES_PER_TRANSACTION - 1;
/** Bytes of the release's transaction kept for the run record (its extras are bounded texts and counts). */
const RUN_RECORD_RESERVE_BYTES = 64 * 1024;

export async function runExclusively<T>(
  run: ExclusiveRun,
  work: (context: WorkContext) => Promise<T>,
  deps: ExclusiveDeps,
  options: ExclusiveOptions<T> = {},
): Promise<ExclusiveOutcome<T>> {
  const startedAt = deps.now();
  // The run's own deadline: stop early enough before Lambda's timeout to release cleanly.
  const deadline = startedAt + run.remainingMs() - deps.timing.stopMarginMs;
  const acquired = await acquire(run, deps, deadline);
  if (!acquired.held) return acquired.outcome;
  const held = await hold(run, work, deps, acquired.lease, deadline);
  return settle(run, deps, options, held, startedAt);
}

type Acquired = { held: true; lease: HeldLease } | { held: false; outcome: ExclusiveOutcome<never> };

/** Takes the lease in one conditional write, or says why not (held, already done, DynamoDB unusable). */
async function acquire(run: ExclusiveRun, deps: ExclusiveDeps, deadline: number): Promise<Acquired> {
  const dedupe = run.interval !== undefined && !run.force;
  let acquired;
  try {
    acquired = await deps.lease.acquire(
      run.runId,
      run.source,
      dedupe ? run.interval : undefined,
      AbortSignal.timeout(Math.max(1, deadline - deps.now())),
    );
  } catch (error) {
    return { held: false, outcome: { outcome: 'failed', reason: 'lease', error, heartbeats: 0 } };
  }
  if (acquired.acquired) {
    deps.onAcquired?.(acquired.lease);
    return { held: true, lease: acquired.lease };
  }
  if (acquired.reason === 'already-done') return { held: false, outcome: { outcome: 'skipped', reason: 'already-done' } };
  return {
    held: false,
    outcome: {
      outcome: 'skipped',
      reason: 'lease-held',
      holder: acquired.holder,
      ...(acquired.expiresAtMs !== undefined ? { holderExpiresAt: new Date(acquired.expiresAtMs).toISOString() } : {}),
      ...(acquired.contention !== undefined ? { detail: acquired.contention } : {}),
    },
  };
}

/** What holding the lease through the work left behind, for settle(). */
interface Held<T> {
  /** The lease as acquired (what earlier runs handed over) and as last confirmed. */
  received: HeldLease;
  current: HeldLease;
  heartbeats: number;
  failed: boolean;
  value?: T;
  failure?: unknown;
  /** Why the work's signal aborted, if it did (LeaseLostError, RunDeadlineError). */
  abortReason: unknown;
  /** The handed-over entries a successful run removes at its release. */
  resolved: () => string[];
  /** The interval was marked done with the work's last fenced write. */
  markedDone: boolean;
  /** The writes the work left to the release (`releaseWith`), if any. */
  riding?: Riding;
}

/** What the work left to its release: actions, and the events published with them. */
interface Riding {
  actions: TransactAction[];
  events: OutboxEvent[];
}

/** Keeps the lease by heartbeat while the work runs, with a deadline, and fences its commits. */
async function hold<T>(
  run: ExclusiveRun,
  work: (context: WorkContext) => Promise<T>,
  deps: ExclusiveDeps,
  lease: HeldLease,
  deadline: number,
): Promise<Held<T>> {
  const controller = new AbortController();
  const turns = new Turns();
  const heartbeat = startHeartbeat(deps, lease, { deadline, controller, turns });
  const deadlineTimer = setTimeout(
    () => controller.abort(new RunDeadlineError('the run reached its deadline before Lambda timeout')),
    Math.max(0, deadline - deps.now()),
  );
  const fenced = fencedContext(run, deps, lease, heartbeat, controller.signal, deadline, turns);
  const held: Omit<Held<T>, 'current' | 'heartbeats' | 'abortReason' | 'markedDone' | 'riding'> = {
    received: lease,
    failed: false,
    resolved: fenced.resolved,
  };
  try {
    held.value = await work(fenced.context);
    // The work returned although its signal had aborted (it ignored the deadline or the lost
    // lease): not a success, since what it committed after the signal was refused.
    if (controller.signal.aborted) {
      held.failed = true;
      held.failure = lateReturn(controller.signal.reason, deps.now() - deadline);
    }
  } catch (error) {
    held.failed = true;
    held.failure = error;
  } finally {
    clearTimeout(deadlineTimer);
    await heartbeat.stop();
  }
  return {
    ...held,
    current: heartbeat.current,
    heartbeats: heartbeat.count,
    abortReason: controller.signal.reason,
    markedDone: fenced.markedDone(),
    ...(fenced.riding() !== undefined ? { riding: fenced.riding() } : {}),
  };
}

/**
 * Renews the lease every lease/3 while the work runs. The lease item is in every fenced
 * transaction, and DynamoDB refuses a plain write (the renewal) to an item an in-flight transaction
 * holds: a run that commits back to back would starve its own heartbeat and lose the lease. So
 * renewals and transactions take turns — each transaction, not each commit: a renewal waits for
 * one transaction at most, and a commit of any size keeps the lease (the package README, "What it
 * guarantees"). A transaction that starts past half the renewal period renews first in its turn, so
 * a transaction may take up to the renew deadline minus half the period (1.5 s of a 3 s lease),
 * not only the deadline minus the period (1 s).
 */
function startHeartbeat(
  deps: ExclusiveDeps,
  lease: HeldLease,
  run: { deadline: number; controller: AbortController; turns: Turns },
): Heartbeat {
  const heartbeat = new Heartbeat({
    renewer: { renew: (held, signal) => run.turns.run(() => deps.lease.renew(held, signal)) },
    lease,
    timing: deps.timing,
    now: deps.now,
    // No renewal is sent at or after the deadline: a run that ignores its signal lets the lease lapse.
    stopAtMs: run.deadline,
    controller: run.controller,
    onRenewed: (renewed) => deps.onHeartbeat?.(renewed),
    onRenewError: (error) => deps.log?.warn('lease renewal failed; retrying', { error: describe(error) }),
  });
  heartbeat.start();
  return heartbeat;
}

/** The WorkContext of a held lease: every commit fenced by it, the interval marked done with the last. */
function fencedContext(
  run: ExclusiveRun,
  deps: ExclusiveDeps,
  held: HeldLease,
  heartbeat: Heartbeat,
  signal: AbortSignal,
  deadline: number,
  turns: Turns,
) {
  // Entries this run's commits wrote to the lease item (so that a crash leaves them to the next
  // run), and entries it leaves to the next run whatever happens (`keep`).
  const recorded = new Set<string>();
  const kept = new Set<string>();
  let markedDone = false;
  let riding: Riding | undefined;
  const context: WorkContext = {
    runId: run.runId,
    signal,
    deadline,
    fence: held.fence,
    handoff: held.handoff,
    keep: (entries) => {
      for (const entry of entries) if (held.handoff.has(entry) || recorded.has(entry)) kept.add(entry);
    },
    ...(held.ledger.size > 0 ? { lastSucceededMs: Math.max(...held.ledger) * 60_000 } : {}),
    commit: async (actions, commitOptions: CommitOptions = {}) => {
      // Every event is checked before anything is written: nothing half-written, nothing undeliverable.
      const events = commitOptions.events ?? [];
      if (events.length > 0 && deps.outbox === undefined) {
        throw new OutboxEventError('this job has no outbox: give ScheduledSingletonJob an `outbox` to publish events');
      }
      const outbox =
        events.length > 0 && deps.outbox !== undefined
          ? outboxPuts(events, deps.outbox, { runId: run.runId, fence: held.fence, nowMs: deps.now() })
          : [];
      for (const entry of commitOptions.handoff ?? []) recorded.add(entry);
      const handoff = [...recorded];
      // The interval is marked done in the same transaction as the run's last data write, so a
      // crash between that write and the release cannot make a retry run the interval again.
      const doneInterval = commitOptions.final === true ? run.interval : undefined;
      const fence = (last: boolean) => {
        signal.throwIfAborted();
        return deps.lease.fenceCheck(heartbeat.current, { handoff, ...(last && doneInterval !== undefined ? { doneInterval } : {}) });
      };
      // Each transaction in its own turn, its lease action built there from the lease as last renewed.
      // A transaction that starts past half the renewal period renews first, in its own turn: the
      // renewal never waits behind a whole transaction at the end of its period.
      const written = await deps.writer.commit(actions, fence, signal, outbox, (transaction) =>
        turns.run(async () => {
          await heartbeat.renewBeforeTurn((lease, renewSignal) => deps.lease.renew(lease, renewSignal));
          return transaction();
        }),
      );
      if (doneInterval !== undefined && written.transactions > 0) markedDone = true;
      const duplicates = written.duplicateEvents ?? 0;
      return { transactions: written.transactions, events: { written: outbox.length - duplicates, duplicates } };
    },
    releaseWith: (actions, options = {}) => {
      riding = ridingWith(riding, actions, options.events ?? [], { run, deps, fence: held.fence });
    },
  };
  // What a successful run dealt with: what it received and what it recorded, but what it keeps.
  const resolved = () => [...new Set([...held.handoff, ...recorded])].filter((entry) => !kept.has(entry));
  return { context, resolved, markedDone: () => markedDone, riding: () => riding };
}

/**
 * What the release carries after one more `releaseWith`: checked now (the events as a commit checks
 * them, everything within one transaction beside the release and the run record), so that a
 * mistake fails the work where it was made, and keeps none of this call's writes.
 */
function ridingWith(
  riding: Riding | undefined,
  actions: readonly TransactAction[],
  events: readonly OutboxEvent[],
  at: { run: ExclusiveRun; deps: ExclusiveDeps; fence: number },
): Riding {
  const next = { actions: [...(riding?.actions ?? []), ...actions], events: [...(riding?.events ?? []), ...events] };
  const outbox = ridingOutbox(next.events, at.deps, at.run.runId, at.fence);
  const writes = [...next.actions, ...outbox];
  const bytes = writes.reduce((sum, action) => sum + actionBytes(action), 0);
  if (writes.length > MAX_RELEASE_WRITES || bytes > TRANSACTION_BYTE_BUDGET - RUN_RECORD_RESERVE_BYTES) {
    throw new FencedWriteError(
      `the release can carry at most ${MAX_RELEASE_WRITES} writes and events in one transaction (${TRANSACTION_BYTE_BUDGET - RUN_RECORD_RESERVE_BYTES} bytes): ` +
        `got ${writes.length} (${bytes} bytes); commit the rest`,
    );
  }
  return next;
}

/** The outbox puts of the events the release carries (a job without an outbox cannot publish). */
function ridingOutbox(events: readonly OutboxEvent[], deps: ExclusiveDeps, runId: string, fence: number): TransactAction[] {
  if (events.length === 0) return [];
  if (deps.outbox === undefined) {
    throw new OutboxEventError('this job has no outbox: give ScheduledSingletonJob an `outbox` to publish events');
  }
  return outboxPuts(events, deps.outbox, { runId, fence, nowMs: deps.now() });
}

/**
 * Releases the lease with the run record (and the writes the work left to it), and tells what the
 * run's outcome is. Writes the release carried but DynamoDB refused (their own condition) fail the
 * run: it is settled again as a failure of the work, released without them.
 */
async function settle<T>(
  run: ExclusiveRun,
  deps: ExclusiveDeps,
  options: ExclusiveOptions<T>,
  held: Held<T>,
  startedAt: number,
): Promise<ExclusiveOutcome<T>> {
  const { heartbeats, current, failed, failure } = held;
  const fence = current.fence;
  // A lost lease wins over whatever error the abort caused.
  const lost = held.abortReason instanceof LeaseLostError ? held.abortReason : failure instanceof LeaseLostError ? failure : undefined;
  if (failed && lost !== undefined) return { outcome: 'failed', reason: 'lease-lost', error: lost, fence, heartbeats };

  const record = runRecord(run, deps, options, held, startedAt);
  const markDone = !failed && run.interval !== undefined;
  // What the work left to the release goes only with a success.
  const riding = failed ? undefined : held.riding;
  let released: boolean;
  try {
    // Whatever is left of Lambda's time (the work stopped `stopMarginMs` early to leave it).
    const releaseOptions: ReleaseOptions = {
      ...(markDone ? { doneInterval: run.interval } : {}),
      // The lease item's summary of this run (what releaseLanded reads back), taken from the record.
      lastRun: { runId: run.runId, outcome: record.outcome, fence, interval: run.interval ?? null, finishedAtMs: record.finishedAtMs },
      runRecord: record,
      // What the previous runs handed over is dealt with once the work succeeded.
      resolved: failed ? [] : held.resolved(),
      ...(riding !== undefined ? { actions: riding.actions, outbox: ridingOutbox(riding.events, deps, run.runId, fence) } : {}),
    };
    released = await releaseWithRetry(
      deps.lease,
      current,
      releaseOptions,
      AbortSignal.timeout(Math.max(250, run.remainingMs() - 250)),
      deps.sleep ?? realSleep,
    );
  } catch (error) {
    if (riding !== undefined && error instanceof FencedWriteError && error.refused.length > 0) {
      return settle(run, deps, options, { ...held, failed: true, failure: error, riding: undefined }, startedAt);
    }
    // The lease lapses on its own within its duration. An interval whose last data write did not
    // mark it done is not done, and writes left to the release are not written: report the
    // failure, so that a retry runs.
    deps.log?.warn('could not release the lease; it will lapse', { error: describe(error) });
    if (riding !== undefined || (markDone && !held.markedDone)) {
      return {
        outcome: 'failed',
        reason: 'lease',
        error: new LeaseUnavailableError(`release failed: ${describe(error)}`, { cause: error }),
        fence,
        heartbeats,
      };
    }
    released = true;
  }
  // Refused: the lease had passed on (or lapsed, for a release carrying writes, which must hold it).
  if (!released && (!held.markedDone || riding !== undefined)) {
    const error = new LeaseLostError('lease lost before release: another run holds it now, or it lapsed', run.runId, fence);
    return { outcome: 'failed', reason: 'lease-lost', error, fence, heartbeats };
  }
  if (failed) return { outcome: 'failed', reason: 'work', ...workFailure(failure, held.abortReason), fence, heartbeats };
  return { outcome: 'succeeded', fence, value: held.value as T, heartbeats };
}

/**
 * The failure of work that threw, and whether the deadline had come (the error is then usually the
 * AbortError of the call the work passed its signal to; the wrapper reports the RunDeadlineError).
 */
function workFailure(failure: unknown, abortReason: unknown): { error: unknown; deadline: boolean } {
  return { error: failure, deadline: abortReason instanceof RunDeadlineError };
}

/** What a work that returned after its signal aborted is reported with. */
function lateReturn(reason: unknown, lateMs: number): unknown {
  if (!(reason instanceof RunDeadlineError)) return reason;
  return new RunDeadlineError(
    `the work returned ${Math.max(0, Math.round(lateMs))} ms after the run's deadline without stopping at its signal: not a success (what it committed after the deadline was refused)`,
    { cause: reason },
  );
}

/** The run record: `<prefix><interval>` for a scheduled run, `<prefix><source>#<runId>` otherwise. */
function runRecord<T>(
  run: ExclusiveRun,
  deps: ExclusiveDeps,
  options: ExclusiveOptions<T>,
  held: Held<T>,
  startedAt: number,
): RunRecord & { outcome: string; finishedAtMs: number } {
  const finishedAtMs = deps.now();
  const scheduled = run.source === 'schedule' && run.interval !== undefined;
  return {
    pk: scheduled ? `${deps.runRecordPrefix}${run.interval}` : `${deps.runRecordPrefix}${run.source}#${run.runId}`,
    runId: run.runId,
    fence: held.current.fence,
    source: run.source,
    outcome: held.failed ? 'failed' : 'succeeded',
    startedAtMs: startedAt,
    finishedAtMs,
    ttl: Math.ceil(finishedAtMs / 1000) + (deps.runRecordTtlSeconds ?? DEFAULT_RUN_RECORD_TTL_SECONDS),
    ...(run.interval !== undefined ? { interval: run.interval } : {}),
    ...options.record?.({ ...(held.failed ? { error: held.failure } : { value: held.value }), heartbeats: held.heartbeats }),
  };
}

/**
 * The work without the lease, for runs that write nothing (a dry run): the same deadline and
 * signal; `commit` refuses.
 */
export async function runUnfenced<T>(
  run: Pick<ExclusiveRun, 'runId' | 'remainingMs'>,
  work: (context: WorkContext) => Promise<T>,
  deps: Pick<ExclusiveDeps, 'timing' | 'now'>,
): Promise<{ outcome: 'succeeded'; value: T } | { outcome: 'failed'; error: unknown; deadline: boolean }> {
  const deadline = deps.now() + run.remainingMs() - deps.timing.stopMarginMs;
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new RunDeadlineError('the run reached its deadline before Lambda timeout')),
    Math.max(0, deadline - deps.now()),
  );
  try {
    const value = await work({
      runId: run.runId,
      signal: controller.signal,
      deadline,
      fence: 0,
      handoff: new Set(),
      keep: () => undefined,
      commit: () => Promise.reject(new UnfencedWriteError('a run without the lease cannot write')),
      releaseWith: () => {
        throw new UnfencedWriteError('a run without the lease cannot write');
      },
    });
    if (controller.signal.aborted)
      return { outcome: 'failed', error: lateReturn(controller.signal.reason, deps.now() - deadline), deadline: true };
    return { outcome: 'succeeded', value };
  } catch (error) {
    return { outcome: 'failed', ...workFailure(error, controller.signal.reason) };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Release, retrying errors within `signal`'s time. A refusal is checked by reading the lease back:
 * an earlier attempt — ours, or one the SDK repeated after a dropped connection — may have been the
 * one that landed. (A refusal is rare: only a run that outlived its lease meets one.)
 */
async function releaseWithRetry(
  lease: LeasePort,
  held: HeldLease,
  options: ReleaseOptions,
  signal: AbortSignal,
  sleep: Sleep,
): Promise<boolean> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      if (await lease.release(held, options, signal)) return true;
      return await lease.releaseLanded(held, signal);
    } catch (error) {
      // A write the release carried was refused by its own condition: it would be refused again.
      if (attempt >= 3 || signal.aborted || (error instanceof FencedWriteError && error.refused.length > 0)) throw error;
      await sleep(50 * attempt, signal);
    }
  }
}

/**
 * One at a time, in the order asked: the run's writes to its lease item (renewals, fenced
 * transactions) never overlap, so that its own transaction never makes its own renewal conflict
 * (TransactionConflictException), and a renewal asked for during a transaction goes next.
 */
class Turns {
  private last: Promise<unknown> = Promise.resolve();

  run<R>(task: () => Promise<R>): Promise<R> {
    const turn = this.last.then(task, task);
    this.last = turn.catch(() => undefined);
    return turn;
  }
}
