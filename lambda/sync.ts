/**
 * One run: take the lease, fetch, plan, write under the fence, release. Everything it touches
 * comes in as a parameter (clock, lease, store, Codeforces), so tests drive it with real or fake
 * parts. The handler adds event parsing, logging and metrics around it.
 */
import type { FetchContestsResult } from './codeforces/client.js';
import { CodeforcesError } from './codeforces/errors.js';
import { planContests, planReminderMoves, type ContestPlan, type PlanSettings } from './contests/plan.js';
import type { Invocation } from './events.js';
import type { AcquireResult, RunRecord } from './lease/dynamo-lease.js';
import { describe } from './dynamo-errors.js';
import { LeaseLostError } from './lease/errors.js';
import { Heartbeat } from './lease/heartbeat.js';
import type { HeldLease, InvocationSource } from './lease/record.js';
import type { LeaseTiming } from './lease/timing.js';
import type { StoreChanges, TransactAction, WriteCounts } from './store/dynamo-store.js';
import type { ContestItem, ReminderItem } from './contests/model.js';
import { emptyCounts, type FailurePhase, type RunCounts, type RunSummary } from './summary.js';
import { RUN_PK_PREFIX } from './contract.js';

export interface LeasePort {
  acquire(runId: string, source: InvocationSource, interval: string | undefined, signal?: AbortSignal): Promise<AcquireResult>;
  renew(lease: HeldLease, signal?: AbortSignal): Promise<HeldLease>;
  release(
    lease: HeldLease,
    options: { doneInterval?: string; lastRun?: Record<string, unknown>; runRecord?: RunRecord },
    signal?: AbortSignal,
  ): Promise<boolean>;
  releaseLanded(lease: HeldLease, signal?: AbortSignal): Promise<boolean>;
  fenceCheck(lease: HeldLease): TransactAction;
}

export interface StorePort {
  scanContests(signal?: AbortSignal): Promise<ContestItem[]>;
  remindersOf(contestId: number, signal?: AbortSignal): Promise<ReminderItem[]>;
  apply(changes: StoreChanges, fence: () => TransactAction, signal?: AbortSignal): Promise<WriteCounts>;
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
      holderExpiresAt: new Date(acquired.expiresAtMs).toISOString(),
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

  let failure: PhaseError | undefined;
  let plan: ContestPlan | undefined;
  let changes: StoreChanges | undefined;
  try {
    ({ plan, changes } = await work(invocation, deps, controller.signal, runDeadline, counts, heartbeat));
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
    // interval, get their own so that a dry run never hides what the schedule did.
    pk:
      invocation.source === 'schedule' && invocation.interval !== undefined
        ? `${RUN_PK_PREFIX}${invocation.interval}`
        : `${RUN_PK_PREFIX}${invocation.source}#${context.runId}`,
    runId: context.runId,
    fence,
    source: invocation.source,
    outcome,
    dryRun: invocation.dryRun,
    startedAtMs: startedAt,
    finishedAtMs: now(),
    counts: { ...counts },
    ttl: Math.ceil(now() / 1000) + RUN_RECORD_TTL_SECONDS,
    ...(invocation.interval !== undefined ? { interval: invocation.interval } : {}),
    ...(failure !== undefined ? { reason: failure.phase, error: failure.message } : {}),
  };
  const markDone = succeeded && !invocation.dryRun && invocation.interval !== undefined;
  let released: boolean;
  try {
    // Whatever is left of Lambda's time (the work stopped `stopMarginMs` early to leave it).
    const releaseSignal = AbortSignal.timeout(Math.max(250, context.remainingMs() - 250));
    released = await releaseWithRetry(
      leasePort,
      current,
      {
        ...(markDone ? { doneInterval: invocation.interval } : {}),
        // The lease item's summary of this run (what releaseLanded reads back), taken from the record.
        lastRun: { runId: record.runId, outcome, fence, interval: invocation.interval ?? null, finishedAtMs: record.finishedAtMs },
        runRecord: record,
      },
      releaseSignal,
    );
  } catch (error) {
    // The lease lapses on its own within its duration; the interval is not marked done, so a retry runs.
    deps.log?.warn('could not release the lease; it will lapse', { error: describe(error) });
    if (succeeded && markDone) {
      return finish({ outcome: 'failed', reason: 'lease', fence, error: `release failed: ${describe(error)}` });
    }
    released = true;
  }
  if (!released) {
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
  return finish({
    outcome: 'succeeded',
    fence,
    ...(invocation.dryRun ? { dryRun: true, changes: describeChanges(plan, changes) } : {}),
  });
}

async function work(
  invocation: Invocation,
  deps: SyncDeps,
  signal: AbortSignal,
  runDeadline: number,
  counts: RunCounts,
  heartbeat: Heartbeat,
): Promise<{ plan: ContestPlan; changes: StoreChanges }> {
  const { now } = deps;
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
    return { reminderDeletes, reminderMoves, contestPuts: plan.upserts, contestDeletes: plan.cancelled };
  });

  if (invocation.dryRun) return { plan, changes };

  const written = await inPhase('store', () =>
    deps.store.apply(
      changes,
      () => {
        signal.throwIfAborted();
        return deps.lease.fenceCheck(heartbeat.current);
      },
      signal,
    ),
  );
  counts.contestsWritten = written.contestsWritten;
  counts.contestsRemoved = written.contestsDeleted;
  counts.remindersMoved = written.remindersMoved;
  counts.remindersDeleted = written.remindersDeleted;
  counts.transactions = written.transactions;
  return { plan, changes };
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
  options: Parameters<LeasePort['release']>[1],
  signal: AbortSignal,
): Promise<boolean> {
  let uncertain = false;
  for (let attempt = 1; ; attempt += 1) {
    try {
      const released = await lease.release(held, options, signal);
      if (released || !uncertain) return released;
      return await lease.releaseLanded(held, signal);
    } catch (error) {
      if (attempt >= 3 || signal.aborted) throw error;
      uncertain = true;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

/** A dry run lists at most this many writes and cancellations (plus their totals): the result stays small. */
export const DRY_RUN_LISTED = 50;

function describeChanges(plan: ContestPlan | undefined, changes: StoreChanges | undefined): RunSummary['changes'] {
  const upserts = plan?.upserts ?? [];
  const cancelled = plan?.cancelled ?? [];
  return {
    write: upserts.slice(0, DRY_RUN_LISTED).map(({ contestId, name, startTimeSeconds, phase }) => ({ contestId, name, startTimeSeconds, phase })),
    writeTotal: upserts.length,
    cancel: cancelled.slice(0, DRY_RUN_LISTED),
    cancelTotal: cancelled.length,
    moveReminders: changes?.reminderMoves.length ?? 0,
    deleteReminders: changes?.reminderDeletes.length ?? 0,
  };
}
