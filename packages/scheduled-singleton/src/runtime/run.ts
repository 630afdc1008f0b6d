/**
 * The entry point of the module: run a job's work once, exclusively, under the lease.
 *
 *   acquire ─► hold (heartbeat, deadline, fenced commits) ─► settle (release + run record)
 *
 * `runExclusively` takes the lease in one conditional write (or says why not: `lease-held` with the
 * holder, `already-done` for an interval that succeeded), keeps it by heartbeat while the work
 * runs, gives the work an AbortSignal that fires when the lease is lost or the run's deadline comes,
 * commits the work's writes fenced by the lease (the interval marked done with the last one), and
 * releases with a run record. It never throws for an expected failure: the outcome says what
 * happened. See README.md beside this file.
 */
import { describe } from './aws-errors.js';
import { LeaseLostError, LeaseUnavailableError, RunDeadlineError } from './errors.js';
import { Heartbeat } from './heartbeat.js';
import type {
  CommitOptions,
  FencedWriterPort,
  HeldLease,
  InvocationSource,
  LeasePort,
  ReleaseOptions,
  RunRecord,
  Sleep,
  WorkContext,
} from './ports.js';
import { realSleep } from './retry.js';
import type { LeaseTiming } from './timing.js';

export interface ExclusiveRun {
  runId: string;
  source: InvocationSource;
  /** The scheduled interval this run stands for: deduplicated (unless `force`) and marked done. */
  interval?: string;
  /** Run `interval` even if it already succeeded. */
  force?: boolean;
  /** Lambda's `getRemainingTimeInMillis()`. */
  remainingMs(): number;
}

export interface ExclusiveDeps {
  lease: LeasePort;
  writer: FencedWriterPort;
  timing: LeaseTiming;
  now: () => number;
  /** Waits between release attempts whose outcome was unknown; default: a real timer. */
  sleep?: Sleep;
  /** Run records: `<prefix><interval>` for scheduled runs, `<prefix><source>#<runId>` otherwise. */
  runRecordPrefix: string;
  /** How long a run record is kept (its `ttl`); default 30 days. */
  runRecordTtlSeconds?: number;
  log?: { warn(message: string, extra?: Record<string, unknown>): void };
  /** Called once the lease is held, and on every confirmed renewal. */
  onAcquired?: (lease: HeldLease) => void;
  onHeartbeat?: (lease: HeldLease) => void;
}

/** What the work left behind, for the run record (`heartbeats` counted by the module). */
export interface Settled<T> {
  value?: T;
  error?: unknown;
  heartbeats: number;
}

export interface ExclusiveOptions<T> {
  /** Extra attributes of the run record (counts, the failure's phase and text). */
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

export async function runExclusively<T>(
  run: ExclusiveRun,
  work: (context: WorkContext) => Promise<T>,
  deps: ExclusiveDeps,
  options: ExclusiveOptions<T> = {},
): Promise<ExclusiveOutcome<T>> {
  const { lease: leasePort, timing, now } = deps;
  const startedAt = now();
  // The run's own deadline: stop early enough before Lambda's timeout to release cleanly.
  const deadline = startedAt + run.remainingMs() - timing.stopMarginMs;
  const dedupe = run.interval !== undefined && !run.force;

  let acquired;
  try {
    acquired = await leasePort.acquire(run.runId, run.source, dedupe ? run.interval : undefined, AbortSignal.timeout(Math.max(1, deadline - now())));
  } catch (error) {
    return { outcome: 'failed', reason: 'lease', error, heartbeats: 0 };
  }
  if (!acquired.acquired) {
    if (acquired.reason === 'already-done') return { outcome: 'skipped', reason: 'already-done' };
    return {
      outcome: 'skipped',
      reason: 'lease-held',
      holder: acquired.holder,
      ...(acquired.expiresAtMs !== undefined ? { holderExpiresAt: new Date(acquired.expiresAtMs).toISOString() } : {}),
      ...(acquired.contention !== undefined ? { detail: acquired.contention } : {}),
    };
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
    Math.max(0, deadline - now()),
  );

  const handedOver = new Set<string>();
  let markedDone = false;
  const context: WorkContext = {
    runId: run.runId,
    signal: controller.signal,
    deadline,
    fence: held.fence,
    handoff: held.handoff,
    keep: (entries) => {
      for (const entry of entries) if (held.handoff.has(entry)) handedOver.add(entry);
    },
    ...(held.ledger.size > 0 ? { lastSucceededMs: Math.max(...held.ledger) * 60_000 } : {}),
    commit: async (actions, commitOptions: CommitOptions = {}) => {
      for (const entry of commitOptions.handoff ?? []) handedOver.add(entry);
      const handoff = [...handedOver];
      // The interval is marked done in the same transaction as the run's last data write, so a
      // crash between that write and the release cannot make a retry run the interval again.
      const doneInterval = commitOptions.final === true ? run.interval : undefined;
      const written = await deps.writer.commit(
        actions,
        (last) => {
          controller.signal.throwIfAborted();
          return leasePort.fenceCheck(heartbeat.current, { handoff, ...(last && doneInterval !== undefined ? { doneInterval } : {}) });
        },
        controller.signal,
      );
      if (doneInterval !== undefined && written.transactions > 0) markedDone = true;
      return written;
    },
  };

  let value: T | undefined;
  let failure: unknown;
  let failed = false;
  try {
    value = await work(context);
  } catch (error) {
    failed = true;
    failure = error;
  } finally {
    clearTimeout(deadlineTimer);
    await heartbeat.stop();
  }
  const heartbeats = heartbeat.count;
  const current = heartbeat.current;
  const fence = current.fence;

  // A lost lease wins over whatever error the abort caused.
  const lost =
    controller.signal.reason instanceof LeaseLostError ? controller.signal.reason : failure instanceof LeaseLostError ? failure : undefined;
  if (failed && lost !== undefined) return { outcome: 'failed', reason: 'lease-lost', error: lost, fence, heartbeats };

  const succeeded = !failed;
  const finishedAtMs = now();
  const record: RunRecord = {
    pk:
      run.source === 'schedule' && run.interval !== undefined
        ? `${deps.runRecordPrefix}${run.interval}`
        : `${deps.runRecordPrefix}${run.source}#${run.runId}`,
    runId: run.runId,
    fence,
    source: run.source,
    outcome: succeeded ? 'succeeded' : 'failed',
    startedAtMs: startedAt,
    finishedAtMs,
    ttl: Math.ceil(finishedAtMs / 1000) + (deps.runRecordTtlSeconds ?? DEFAULT_RUN_RECORD_TTL_SECONDS),
    ...(run.interval !== undefined ? { interval: run.interval } : {}),
    ...options.record?.({ ...(succeeded ? { value } : { error: failure }), heartbeats }),
  };
  const markDone = succeeded && run.interval !== undefined;
  let released: boolean;
  try {
    // Whatever is left of Lambda's time (the work stopped `stopMarginMs` early to leave it).
    const releaseSignal = AbortSignal.timeout(Math.max(250, run.remainingMs() - 250));
    released = await releaseWithRetry(
      leasePort,
      current,
      {
        ...(markDone ? { doneInterval: run.interval } : {}),
        // The lease item's summary of this run (what releaseLanded reads back), taken from the record.
        lastRun: { runId: run.runId, outcome: record.outcome, fence, interval: run.interval ?? null, finishedAtMs },
        runRecord: record,
        // What the previous runs handed over is dealt with once the work succeeded.
        resolved: succeeded ? [...held.handoff].filter((entry) => !handedOver.has(entry)) : [],
      },
      releaseSignal,
      deps.sleep ?? realSleep,
    );
  } catch (error) {
    // The lease lapses on its own within its duration. An interval whose last data write did not
    // mark it done is not done: report the failure, so that a retry runs.
    deps.log?.warn('could not release the lease; it will lapse', { error: describe(error) });
    if (markDone && !markedDone) {
      return { outcome: 'failed', reason: 'lease', error: new LeaseUnavailableError(`release failed: ${describe(error)}`, { cause: error }), fence, heartbeats };
    }
    released = true;
  }
  if (!released && !markedDone) {
    const error = new LeaseLostError('lease lost before release: another run holds it now', run.runId, fence);
    return { outcome: 'failed', reason: 'lease-lost', error, fence, heartbeats };
  }
  if (failed) {
    const deadlineReached = controller.signal.reason instanceof RunDeadlineError;
    return { outcome: 'failed', reason: 'work', error: failure, deadline: deadlineReached, fence, heartbeats };
  }
  return { outcome: 'succeeded', fence, value: value as T, heartbeats };
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
      commit: () => Promise.reject(new Error('a run without the lease cannot write')),
    });
    return { outcome: 'succeeded', value };
  } catch (error) {
    return { outcome: 'failed', error, deadline: controller.signal.reason instanceof RunDeadlineError };
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
      if (attempt >= 3 || signal.aborted) throw error;
      await sleep(50 * attempt, signal);
    }
  }
}
