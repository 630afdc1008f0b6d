/**
 * One contest sync: the work function of the single-execution module. The module takes the lease,
 * keeps it, fences the writes and releases it (lambda/single-execution/); this file fetches, plans
 * and writes the contests, and turns the module's outcome into the result the console shows.
 * Everything it touches comes in as a parameter (clock, lease, writer, store, Codeforces), so tests
 * drive it with real or fake parts. The handler adds event parsing, logging and metrics around it.
 */
import type { FetchContestsResult } from './codeforces/client.js';
import { CodeforcesError } from './codeforces/errors.js';
import type { ContestItem, ReminderItem } from './contests/model.js';
import { DEFAULT_PLAN_SETTINGS, planContests, planRecheck, planReminderMoves, type ContestPlan, type HeldChange, type PlanSettings } from './contests/plan.js';
import { RUN_PK_PREFIX } from './contract.js';
import type { Invocation } from './events.js';
import { failurePhase } from './phases.js';
import {
  RunDeadlineError,
  describe,
  runExclusively,
  runUnfenced,
  type FencedWriterPort,
  type HeldLease,
  type LeasePort,
  type LeaseTiming,
  type Sleep,
  type TransactAction,
  type WorkContext,
} from './single-execution/index.js';
import type { StoreChanges } from './store/dynamo-store.js';
import { emptyCounts, type RunCounts, type RunSummary } from './summary.js';

export interface StorePort {
  scanContests(signal?: AbortSignal): Promise<ContestItem[]>;
  remindersOf(contestId: number, signal?: AbortSignal): Promise<ReminderItem[]>;
  actionsFor(changes: StoreChanges): TransactAction[];
}

export interface SyncLog {
  info(message: string, extra?: Record<string, unknown>): void;
  warn(message: string, extra?: Record<string, unknown>): void;
}

export interface SyncDeps {
  lease: LeasePort;
  writer: FencedWriterPort;
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

interface Synced {
  plan: ContestPlan;
  changes: StoreChanges;
}

export async function runSync(invocation: Invocation, deps: SyncDeps, context: RunContext): Promise<RunSummary> {
  const { now } = deps;
  const startedAt = now();
  const counts = emptyCounts();
  const base = { runId: context.runId, source: invocation.source, interval: invocation.interval, counts };
  const finish = (summary: Omit<RunSummary, 'durationMs' | 'runId' | 'source' | 'counts'>): RunSummary => ({
    ...base,
    ...summary,
    durationMs: now() - startedAt,
  });
  /** The text of a failure: the deadline, when the error is what the deadline's abort caused. */
  const errorText = (error: unknown, deadline: boolean): string =>
    deadline && !(error instanceof RunDeadlineError) ? describe(new RunDeadlineError('the run reached its deadline before Lambda timeout')) : describe(error);

  // A dry run writes nothing, so it takes no lease: it never makes a scheduled tick skip.
  if (invocation.dryRun) {
    const dry = await runUnfenced(context, (work) => contestWork(deps, work, counts, false, invocation.acceptHeld === true), deps);
    if (dry.outcome === 'failed') {
      return finish({ outcome: 'failed', reason: failurePhase(dry.error), dryRun: true, error: errorText(dry.error, dry.deadline) });
    }
    return finish({ outcome: 'succeeded', dryRun: true, ...heldOf(dry.value.plan), changes: describeChanges(dry.value.plan, dry.value.changes) });
  }

  const outcome = await runExclusively(
    {
      runId: context.runId,
      source: invocation.source,
      ...(invocation.interval !== undefined ? { interval: invocation.interval } : {}),
      force: invocation.force,
      remainingMs: () => context.remainingMs(),
    },
    (work) => contestWork(deps, work, counts, true, invocation.acceptHeld === true),
    {
      lease: deps.lease,
      writer: deps.writer,
      timing: deps.timing,
      now,
      ...(deps.sleep !== undefined ? { sleep: deps.sleep } : {}),
      runRecordPrefix: RUN_PK_PREFIX,
      ...(deps.log !== undefined ? { log: deps.log } : {}),
      ...(deps.onAcquired !== undefined ? { onAcquired: deps.onAcquired } : {}),
      ...(deps.onHeartbeat !== undefined ? { onHeartbeat: deps.onHeartbeat } : {}),
    },
    {
      record: ({ value, error, heartbeats }) => ({
        dryRun: false,
        counts: { ...counts, heartbeats },
        ...(value !== undefined ? heldOf(value.plan) : {}),
        ...(error !== undefined ? { reason: failurePhase(error), error: describe(error) } : {}),
      }),
    },
  );

  switch (outcome.outcome) {
    case 'skipped':
      return finish(
        outcome.reason === 'already-done'
          ? { outcome: 'skipped', reason: 'already-done' }
          : {
              outcome: 'skipped',
              reason: 'lease-held',
              holder: outcome.holder,
              ...(outcome.holderExpiresAt !== undefined ? { holderExpiresAt: outcome.holderExpiresAt } : {}),
              ...(outcome.detail !== undefined ? { detail: outcome.detail } : {}),
            },
      );
    case 'succeeded':
      counts.heartbeats = outcome.heartbeats;
      return finish({ outcome: 'succeeded', fence: outcome.fence, ...heldOf(outcome.value.plan) });
    case 'failed': {
      counts.heartbeats = outcome.heartbeats;
      const fence = outcome.fence !== undefined ? { fence: outcome.fence } : {};
      if (outcome.reason === 'work') {
        return finish({ outcome: 'failed', reason: failurePhase(outcome.error), ...fence, error: errorText(outcome.error, outcome.deadline) });
      }
      return finish({ outcome: 'failed', reason: outcome.reason, ...fence, error: describe(outcome.error) });
    }
  }
}

/** The contest work: fetch, read, plan, and (under the lease, unless a dry run) write. */
async function contestWork(deps: SyncDeps, work: WorkContext, counts: RunCounts, write: boolean, acceptHeld: boolean): Promise<Synced> {
  const { now } = deps;
  const { signal } = work;
  // Leave part of the remaining time for reading and writing DynamoDB.
  const storeReserveMs = Math.min(10_000, Math.max(0, (work.deadline - now()) / 3));
  let fetched: FetchContestsResult;
  try {
    fetched = await deps.fetchContests({ signal, deadline: work.deadline - storeReserveMs });
  } catch (error) {
    if (error instanceof CodeforcesError) counts.codeforcesAttempts = error.attempts;
    throw error;
  }
  counts.contestsFetched = fetched.contests.length;
  counts.contestsInvalid = fetched.invalid;
  counts.codeforcesAttempts = fetched.attempts;
  counts.codeforcesLatencyMs = fetched.latencyMs;

  signal.throwIfAborted();
  const stored = await deps.store.scanContests(signal);
  const settings = deps.planSettings ?? DEFAULT_PLAN_SETTINGS;
  const plan = planContests({
    fetched: fetched.contests,
    listedIds: new Set(fetched.listedIds),
    stored,
    nowMs: now(),
    ...(work.lastSucceededMs !== undefined ? { lastSyncMs: work.lastSucceededMs } : {}),
    acceptHeld,
    settings,
  });
  counts.contestsUnchanged = plan.unchanged;
  counts.contestsVanished = plan.vanished.length;
  counts.contestsRestored = plan.restored.length;
  counts.contestsHeld = plan.held.length;
  counts.contestsAccepted = plan.accepted.length;

  // Contests whose reminders this run acts on: handed over so the next run checks them again.
  const touched = new Set<number>([...plan.reminderDeletes, ...plan.reminderMoves.map(({ contestId }) => contestId)]);
  const reminderDeletes: StoreChanges['reminderDeletes'] = [];
  for (const contestId of plan.reminderDeletes) {
    for (const reminder of await deps.store.remindersOf(contestId, signal)) reminderDeletes.push({ contestId, userId: reminder.userId });
  }
  const reminderMoves = [];
  for (const { contestId, startTimeSeconds, confirmed } of plan.reminderMoves) {
    const policy = { confirmed, nearSeconds: settings.nearSeconds };
    reminderMoves.push(...planReminderMoves(await deps.store.remindersOf(contestId, signal), startTimeSeconds, now(), policy));
  }
  // Contests an earlier run changed: the app may have written a reminder against the old state.
  const after = contestsAfter(plan, stored);
  for (const entry of work.handoff) {
    const contestId = Number(entry);
    // Reminders this run already reads and changes above are not changed twice in one transaction.
    if (!Number.isSafeInteger(contestId) || touched.has(contestId)) continue;
    counts.contestsRechecked += 1;
    const state = after.get(contestId);
    const fix = planRecheck(contestId, state, await deps.store.remindersOf(contestId, signal), now(), settings.nearSeconds);
    // A contest in its grace period, or whose change awaits confirmation, keeps what it cannot
    // settle yet: it is checked again once it is back, gone or confirmed.
    if (fix.deletes.length + fix.moves.length > 0 || state?.vanishedAt !== undefined || state?.pending !== undefined) touched.add(contestId);
    reminderDeletes.push(...fix.deletes);
    reminderMoves.push(...fix.moves);
  }
  const changes: StoreChanges = {
    reminderDeletes,
    reminderMoves,
    contestPuts: [...plan.upserts, ...plan.bookkeeping, ...plan.vanished],
    contestDeletes: plan.cancelled,
  };

  if (!write) return { plan, changes };
  const actions = deps.store.actionsFor(changes);
  const handoff = [...touched].map(String);
  if (actions.length > 0) {
    const written = await work.commit(actions, { final: true, handoff });
    counts.transactions = written.transactions;
  } else {
    // Nothing to write: what was handed over and is not settled yet stays for the next run.
    work.keep(handoff);
  }
  counts.contestsWritten = plan.upserts.length;
  counts.contestsRemoved = changes.contestDeletes.length;
  counts.remindersMoved = changes.reminderMoves.length;
  counts.remindersDeleted = changes.reminderDeletes.length;
  return { plan, changes };
}

/** Each contest as this run leaves it: written, marked vanished, untouched, or (absent) deleted. */
function contestsAfter(plan: ContestPlan, stored: readonly ContestItem[]): Map<number, ContestItem> {
  const after = new Map(stored.map((item) => [item.contestId, item]));
  for (const item of [...plan.upserts, ...plan.bookkeeping, ...plan.vanished]) after.set(item.contestId, item);
  for (const contestId of plan.cancelled) after.delete(contestId);
  return after;
}

/** The summary, the result and the run record list at most this many held and accepted changes. */
export const HELD_LISTED = 50;

/** Held and accepted changes as the result, the summary line and the run record name them (only when there are any). */
function heldOf(plan: ContestPlan): Pick<RunSummary, 'held' | 'accepted'> {
  const listed = (changes: readonly HeldChange[]) =>
    changes.slice(0, HELD_LISTED).map(({ contestId, kind, since, replies }) => ({ contestId, kind, since: new Date(since * 1000).toISOString(), replies }));
  return {
    ...(plan.held.length > 0 ? { held: listed(plan.held) } : {}),
    ...(plan.accepted.length > 0 ? { accepted: listed(plan.accepted) } : {}),
  };
}

/** A dry run lists at most this many writes and cancellations (plus their totals): the result stays small. */
export const DRY_RUN_LISTED = 50;

function describeChanges(plan: ContestPlan, changes: StoreChanges): RunSummary['changes'] {
  return {
    write: plan.upserts.slice(0, DRY_RUN_LISTED).map(({ contestId, name, startTimeSeconds, phase }) => ({ contestId, name, startTimeSeconds, phase })),
    writeTotal: plan.upserts.length,
    cancel: plan.cancelled.slice(0, DRY_RUN_LISTED),
    cancelTotal: plan.cancelled.length,
    vanish: plan.vanished.slice(0, DRY_RUN_LISTED).map(({ contestId }) => contestId),
    vanishTotal: plan.vanished.length,
    moveReminders: changes.reminderMoves.length,
    deleteReminders: changes.reminderDeletes.length,
  };
}
