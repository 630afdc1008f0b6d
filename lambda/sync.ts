/**
 * One run: take the lease, fetch, plan, write under the fence, release. Everything it touches
 * comes in as a parameter (clock, lease, store, Codeforces), so tests drive it with real or fake
 * parts. The handler adds event parsing, logging and metrics around it.
 */
import type { FetchContestsResult } from './codeforces/client.js';
import { CodeforcesError } from './codeforces/errors.js';
import { planContests, planRecheck, planReminderMoves, type ContestPlan, type PlanSettings } from './contests/plan.js';
import type { Invocation } from './events.js';
import type { AcquireResult, FenceExtras, ReleaseOptions, RunRecord } from './lease/dynamo-lease.js';
import { describe } from './dynamo-errors.js';
import { LeaseLostError } from './lease/errors.js';
import { Heartbeat } from './lease/heartbeat.js';
import type { HeldLease, InvocationSource } from './lease/record.js';
import type { LeaseTiming } from './lease/timing.js';
import type { StoreChanges, TransactAction, WriteCounts } from './store/dynamo-store.js';
import type { ContestItem, ReminderItem } from './contests/model.js';
import { emptyCounts, type FailurePhase, type RunCounts, type RunSummary } from './summary.js';
import { RUN_PK_PREFIX } from './contract.js';
import { ContentionError, realSleep, type Sleep } from './dynamo-retry.js';

export interface LeasePort {
  acquire(runId: string, source: InvocationSource, interval: string | undefined, signal?: AbortSignal): Promise<AcquireResult>;
  renew(lease: HeldLease, signal?: AbortSignal): Promise<HeldLease>;
  release(lease: HeldLease, options: ReleaseOptions, signal?: AbortSignal): Promise<boolean>;
  releaseLanded(lease: HeldLease, signal?: AbortSignal): Promise<boolean>;
  fenceCheck(lease: HeldLease, extras?: FenceExtras): TransactAction;
}

export interface StorePort {
  scanContests(signal?: AbortSignal): Promise<ContestItem[]>;
  remindersOf(contestId: number, signal?: AbortSignal): Promise<ReminderItem[]>;
  apply(changes: StoreChanges, fence: (last: boolean) => TransactAction, signal?: AbortSignal): Promise<WriteCounts>;
}

export interface SyncLog {
  info(message: string, extra?: Record<string, unknown>): void;
  warn(message: string, extra?: Record<string, unknown>): void;
}

export interface SyncDeps {
  lease: LeasePort;
  store: StorePort;
  fetchContests(options: { signal: AbortSignal; deadline: number }): Promise<FetchContestsResult>;
  now: () => number;
  /** Waits between release attempts whose outcome was unknown; default: a real timer. */
  sleep?: Sleep;
  timing: LeaseTiming;
  planSettings?: PlanSettings;
  log?: SyncLog;
  /** Called once the lease is held (the handler adds the fence to every log line). */
  onAcquired?: (lease: HeldLease) => void;
  /** Called on every confirmed renewal. */
  onHeartbeat?: (lease: HeldLease) => void;
}

export interface RunContext {
  runId: string;
  /** Lambda's `getRemainingTimeInMillis()`. */
  remainingMs(): number;
}

/** Kept after success: how long a run record stays in Coordination. */
const RUN_RECORD_TTL_SECONDS = 30 * 24 * 3600;

class PhaseError extends Error {
  constructor(
    readonly phase: FailurePhase,
    readonly original: unknown,
  ) {
    super(describe(original), { cause: original });
  }
}

class RunDeadlineError extends Error {
  override readonly name = 'RunDeadlineError';
}

export async function runSync(invocation: Invocation, deps: SyncDeps, context: RunContext): Promise<RunSummary> {
  const { lease: leasePort, timing, now } = deps;
  const startedAt = now();
  const counts = emptyCounts();
  const base = { runId: context.runId, source: invocation.source, interval: invocation.interval, counts };
  const finish = (summary: Omit<RunSummary, 'durationMs' | 'runId' | 'source' | 'counts'>): RunSummary => ({
    ...base,
    ...summary,
    durationMs: now() - startedAt,
  });

  // The run's own deadline: stop early enough before Lambda's timeout to release cleanly.
  const runDeadline = startedAt + context.remainingMs() - timing.stopMarginMs;

  // A dry run writes nothing, so it takes no lease: it never makes a scheduled tick skip.
  if (invocation.dryRun) {
    const controller = new AbortController();
    const deadlineTimer = setTimeout(
      () => controller.abort(new RunDeadlineError('the run reached its deadline before Lambda timeout')),
      Math.max(0, runDeadline - now()),
    );
    try {
      const done = await work(deps, { signal: controller.signal, runDeadline, counts, recheck: new Set() });
      return finish({ outcome: 'succeeded', dryRun: true, changes: describeChanges(done.plan, done.changes) });
    } catch (error) {
      const failure = classify(error, controller.signal);
      return finish({ outcome: 'failed', reason: failure.phase, dryRun: true, error: failure.message });
    } finally {
      clearTimeout(deadlineTimer);
    }
  }

  const dedupe = invocation.interval !== undefined && !invocation.force;
  let acquired: AcquireResult;
  try {
    acquired = await leasePort.acquire(
      context.runId,
      invocation.source,
      dedupe ? invocation.interval : undefined,
      AbortSignal.timeout(Math.max(1, runDeadline - now())),
    );
  } catch (error) {
    return finish({ outcome: 'failed', reason: 'lease', error: describe(error) });
  }
  if (!acquired.acquired) {
    if (acquired.reason === 'already-done') return finish({ outcome: 'skipped', reason: 'already-done' });
    return finish({
      outcome: 'skipped',
      reason: 'lease-held',
      holder: acquired.holder,
      ...(acquired.expiresAtMs !== undefined ? { holderExpiresAt: new Date(acquired.expiresAtMs).toISOString() } : {}),
      ...(acquired.contention !== undefined ? { detail: acquired.contention } : {}),
    });
  }

  const held = acquired.lease;
  deps.onAcquired?.(held);
  const controller = new AbortController();
  const heartbeat = new Heartbeat({
    renewer: leasePort,
    lease: held,
    timing,
    now,
    controller,
    onRenewed: (renewed) => deps.onHeartbeat?.(renewed),
    onRenewError: (error) => deps.log?.warn('lease renewal failed; retrying', { error: describe(error) }),
  });
  heartbeat.start();
  const deadlineTimer = setTimeout(
    () => controller.abort(new RunDeadlineError('the run reached its deadline before Lambda timeout')),
    Math.max(0, runDeadline - now()),
  );

  // A scheduled interval is marked done in the same transaction as the run's last data write, so
  // that a crash between that write and the release cannot make a retry sync the interval again.
  const doneInterval = invocation.interval;
  let touched: readonly number[] = [];
  let failure: PhaseError | undefined;
  let done: WorkDone | undefined;
  try {
    done = await work(deps, {
      signal: controller.signal,
      runDeadline,
      counts,
      recheck: held.recheck,
      fence: (last, recheck) => {
        controller.signal.throwIfAborted();
        touched = recheck;
        return leasePort.fenceCheck(heartbeat.current, {
          recheck,
          ...(last && doneInterval !== undefined ? { doneInterval } : {}),
        });
      },
    });
  } catch (error) {
    failure = classify(error, controller.signal);
  } finally {
    clearTimeout(deadlineTimer);
    await heartbeat.stop();
    counts.heartbeats = heartbeat.count;
  }

  const current = heartbeat.current;
  const fence = current.fence;
  if (failure?.phase === 'lease-lost') {
    return finish({ outcome: 'failed', reason: 'lease-lost', fence, error: failure.message });
  }

  const succeeded = failure === undefined;
  const outcome = succeeded ? 'succeeded' : 'failed';
  const record: RunRecord = {
    // One record per scheduled interval (its latest attempt); console and deploy runs, even for an
    // interval, get their own.
    pk:
      invocation.source === 'schedule' && invocation.interval !== undefined
        ? `${RUN_PK_PREFIX}${invocation.interval}`
        : `${RUN_PK_PREFIX}${invocation.source}#${context.runId}`,
    runId: context.runId,
    fence,
    source: invocation.source,
    outcome,
    dryRun: false,
    startedAtMs: startedAt,
    finishedAtMs: now(),
    counts: { ...counts },
    ttl: Math.ceil(now() / 1000) + RUN_RECORD_TTL_SECONDS,
    ...(invocation.interval !== undefined ? { interval: invocation.interval } : {}),
    ...(failure !== undefined ? { reason: failure.phase, error: failure.message } : {}),
  };
  const markDone = succeeded && doneInterval !== undefined;
  // Contests the previous run asked to check again and that this run found in order.
  const rechecked = succeeded ? [...held.recheck].filter((id) => !touched.includes(id)) : [];
  let released: boolean;
  try {
    // Whatever is left of Lambda's time (the work stopped `stopMarginMs` early to leave it).
    const releaseSignal = AbortSignal.timeout(Math.max(250, context.remainingMs() - 250));
    released = await releaseWithRetry(
      leasePort,
      current,
      {
        ...(markDone ? { doneInterval } : {}),
        // The lease item's summary of this run (what releaseLanded reads back), taken from the record.
        lastRun: { runId: record.runId, outcome, fence, interval: invocation.interval ?? null, finishedAtMs: record.finishedAtMs },
        runRecord: record,
        rechecked,
      },
      releaseSignal,
      deps.sleep ?? realSleep,
    );
  } catch (error) {
    // The lease lapses on its own within its duration. A scheduled interval whose last data write
    // did not mark it done is not done: report the failure, so that a retry runs.
    deps.log?.warn('could not release the lease; it will lapse', { error: describe(error) });
    if (markDone && done?.committedDone !== true) {
      return finish({ outcome: 'failed', reason: 'lease', fence, error: `release failed: ${describe(error)}` });
    }
    released = true;
  }
  if (!released && done?.committedDone !== true) {
    return finish({
      outcome: 'failed',
      reason: 'lease-lost',
      fence,
      error: 'lease lost before release: another run holds it now',
    });
  }
  if (failure !== undefined) {
    return finish({ outcome: 'failed', reason: failure.phase, fence, error: failure.message });
  }
  return finish({ outcome: 'succeeded', fence });
}

interface WorkDone {
  plan: ContestPlan;
  changes: StoreChanges;
  /** The last data transaction committed with the interval marked done. */
  committedDone: boolean;
}

interface WorkOptions {
  signal: AbortSignal;
  runDeadline: number;
  counts: RunCounts;
  /** Contests whose reminders the previous run asked to check again. */
  recheck: ReadonlySet<number>;
  /**
   * The lease action of each data transaction (absent: a dry run, nothing is written). `recheck`
   * lists the contests whose reminders this run touches, recorded with every write.
   */
  fence?: (last: boolean, recheck: readonly number[]) => TransactAction;
}

async function work(deps: SyncDeps, options: WorkOptions): Promise<WorkDone> {
  const { now } = deps;
  const { signal, runDeadline, counts } = options;
  // Leave part of the remaining time for reading and writing DynamoDB.
  const storeReserveMs = Math.min(10_000, Math.max(0, (runDeadline - now()) / 3));
  let fetched: FetchContestsResult;
  try {
    fetched = await deps.fetchContests({ signal, deadline: runDeadline - storeReserveMs });
  } catch (error) {
    if (error instanceof CodeforcesError) counts.codeforcesAttempts = error.attempts;
    throw new PhaseError('codeforces', error);
  }
  counts.contestsFetched = fetched.contests.length;
  counts.contestsInvalid = fetched.invalid;
  counts.codeforcesAttempts = fetched.attempts;
  counts.codeforcesLatencyMs = fetched.latencyMs;

  const inPhase = async <T>(phase: FailurePhase, step: () => Promise<T>): Promise<T> => {
    try {
      signal.throwIfAborted();
      return await step();
    } catch (error) {
      throw new PhaseError(phase, error);
    }
  };

  const stored = await inPhase('store', () => deps.store.scanContests(signal));
  const plan = await inPhase('codeforces', async () =>
    planContests({
      fetched: fetched.contests,
      listedIds: new Set(fetched.listedIds),
      stored,
      nowMs: now(),
      ...(deps.planSettings !== undefined ? { settings: deps.planSettings } : {}),
    }),
  );
  counts.contestsUnchanged = plan.unchanged;
  counts.contestsVanished = plan.vanished.length;
  counts.contestsRestored = plan.restored.length;

  // Contests whose reminders this run acts on: the next run checks them again. A contest first
  // stored already finished had no reminders to race with (the app only sees stored contests).
  const storedIds = new Set(stored.map(({ contestId }) => contestId));
  const touched = new Set<number>([
    ...plan.finished.filter((contestId) => storedIds.has(contestId)),
    ...plan.cancelled,
    ...plan.rescheduled.map(({ contestId }) => contestId),
  ]);
  const changes = await inPhase('store', async () => {
    const reminderDeletes: StoreChanges['reminderDeletes'] = [];
    for (const contestId of [...plan.finished, ...plan.cancelled]) {
      for (const reminder of await deps.store.remindersOf(contestId, signal)) {
        reminderDeletes.push({ contestId, userId: reminder.userId });
      }
    }
    const reminderMoves = [];
    for (const { contestId, startTimeSeconds } of plan.rescheduled) {
      reminderMoves.push(...planReminderMoves(await deps.store.remindersOf(contestId, signal), startTimeSeconds, now()));
    }
    // Contests an earlier run changed: the app may have written a reminder against the old state.
    const after = contestsAfter(plan, stored);
    for (const contestId of options.recheck) {
      if (touched.has(contestId)) continue;
      counts.contestsRechecked += 1;
      const fix = planRecheck(contestId, after.get(contestId), await deps.store.remindersOf(contestId, signal), now());
      if (fix.deletes.length + fix.moves.length > 0) touched.add(contestId);
      reminderDeletes.push(...fix.deletes);
      reminderMoves.push(...fix.moves);
    }
    return {
      reminderDeletes,
      reminderMoves,
      contestPuts: [...plan.upserts, ...plan.vanished],
      contestDeletes: plan.cancelled,
    };
  });

  if (options.fence === undefined) return { plan, changes, committedDone: false };
  const fence = options.fence;
  const recheck = [...touched];
  const written = await inPhase('store', () => deps.store.apply(changes, (last) => fence(last, recheck), signal));
  counts.contestsWritten = plan.upserts.length;
  counts.contestsRemoved = written.contestsDeleted;
  counts.remindersMoved = written.remindersMoved;
  counts.remindersDeleted = written.remindersDeleted;
  counts.transactions = written.transactions;
  return { plan, changes, committedDone: written.transactions > 0 };
}

/** Each contest as this run leaves it: written, marked vanished, untouched, or (absent) deleted. */
function contestsAfter(plan: ContestPlan, stored: readonly ContestItem[]): Map<number, ContestItem> {
  const after = new Map(stored.map((item) => [item.contestId, item]));
  for (const item of [...plan.upserts, ...plan.vanished]) after.set(item.contestId, item);
  for (const contestId of plan.cancelled) after.delete(contestId);
  return after;
}

/** Why the work stopped: a lost lease wins over whatever error the abort caused. */
function classify(error: unknown, signal: AbortSignal): PhaseError {
  if (signal.aborted && signal.reason instanceof LeaseLostError) return new PhaseError('lease-lost', signal.reason);
  const original = error instanceof PhaseError ? error.original : error;
  if (original instanceof LeaseLostError) return new PhaseError('lease-lost', original);
  if (signal.aborted && signal.reason instanceof RunDeadlineError) {
    return new PhaseError(error instanceof PhaseError ? error.phase : 'store', signal.reason);
  }
  if (error instanceof PhaseError) return error;
  return new PhaseError('store', error);
}

/**
 * Release, retrying errors within `signal`'s time. A refusal after an attempt whose outcome was
 * unknown is checked by reading the lease back: that attempt may have been the one that landed.
 */
async function releaseWithRetry(
  lease: LeasePort,
  held: HeldLease,
  options: ReleaseOptions,
  signal: AbortSignal,
  sleep: Sleep,
): Promise<boolean> {
  let uncertain = false;
  for (let attempt = 1; ; attempt += 1) {
    try {
      const released = await lease.release(held, options, signal);
      if (released || !uncertain) return released;
      return await lease.releaseLanded(held, signal);
    } catch (error) {
      if (attempt >= 3 || signal.aborted) throw error;
      // Contention was already retried inside release; anything else may have landed.
      uncertain = uncertain || !(error instanceof ContentionError);
      await sleep(50 * attempt, signal);
    }
  }
}

/** A dry run lists at most this many writes and cancellations (plus their totals): the result stays small. */
export const DRY_RUN_LISTED = 50;

function describeChanges(plan: ContestPlan | undefined, changes: StoreChanges | undefined): RunSummary['changes'] {
  const upserts = plan?.upserts ?? [];
  const cancelled = plan?.cancelled ?? [];
  const vanished = plan?.vanished ?? [];
  return {
    write: upserts.slice(0, DRY_RUN_LISTED).map(({ contestId, name, startTimeSeconds, phase }) => ({ contestId, name, startTimeSeconds, phase })),
    writeTotal: upserts.length,
    cancel: cancelled.slice(0, DRY_RUN_LISTED),
    cancelTotal: cancelled.length,
    vanish: vanished.slice(0, DRY_RUN_LISTED).map(({ contestId }) => contestId),
    vanishTotal: vanished.length,
    moveReminders: changes?.reminderMoves.length ?? 0,
    deleteReminders: changes?.reminderDeletes.length ?? 0,
  };
}
