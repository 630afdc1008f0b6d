/**
 * One contest sync: the work function of the single-execution module. The module takes the lease,
 * keeps it, fences the writes and releases it (lambda/single-execution/); this file fetches, plans
 * and writes the contests, and turns the module's outcome into the result the console shows.
 * Everything it touches comes in as a parameter (clock, lease, writer, store, Codeforces), so tests
 * drive it with real or fake parts. The handler adds event parsing, logging and metrics around it.
 */
import type { FetchContestsResult } from './codeforces/client.js';
import { CodeforcesError } from './codeforces/errors.js';
import { announce } from './contests/announcements.js';
import { judgeReply, SKEW_SECONDS, type ReplyVerdict } from './contests/judge.js';
import { REPLY_CLOCK_ID, type ContestItem, type ReminderItem, type ReplyClockItem } from './contests/model.js';
import { DEFAULT_PLAN_SETTINGS, planContests, type ContestPlan, type HeldChange, type PlanSettings } from './contests/plan.js';
import { contestsToDoubt, doubtUpdates, planReminders, type ReminderUpdate } from './contests/reminders.js';
import { RUN_PK_PREFIX } from './contract.js';
import type { Invocation } from './events.js';
import { failurePhase } from './phases.js';
import {
  RunDeadlineError,
  FencedWriteError,
  describe,
  runExclusively,
  runUnfenced,
  type CommitOptions,
  type CommitResult,
  type FencedWriterPort,
  type HeldLease,
  type LeasePort,
  type LeaseTiming,
  type OutboxEvent,
  type OutboxSettings,
  type Sleep,
  type TransactAction,
  type WorkContext,
} from './single-execution/index.js';
import type { StoreChanges } from './store/dynamo-store.js';
import { emptyCounts, type RunCounts, type RunSummary } from './summary.js';

export interface StorePort {
  /** Every item of the Contests table: the contests and the reply clock. */
  scanContests(signal?: AbortSignal): Promise<(ContestItem | ReplyClockItem)[]>;
  remindersOf(contestId: number, signal?: AbortSignal): Promise<ReminderItem[]>;
  actionsFor(changes: StoreChanges, updatedAt: string): TransactAction[];
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
  /**
   * Where the sync's contest events go (docs/events.md): set in the stack. Without it the sync
   * publishes nothing and records nothing as published.
   */
  outbox?: OutboxSettings;
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
  /** Undefined when the reply was stale (nothing judged). */
  plan?: ContestPlan;
  verdict: ReplyVerdict;
  changes: StoreChanges;
  /** The contest events of the changes (written with them unless a dry run). */
  events: OutboxEvent[];
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
    deadline && !(error instanceof RunDeadlineError)
      ? describe(new RunDeadlineError('the run reached its deadline before Lambda timeout'))
      : describe(error);

  // A dry run writes nothing, so it takes no lease: it never makes a scheduled tick skip.
  if (invocation.dryRun) {
    const dry = await runUnfenced(context, (work) => contestWork(deps, work, counts, false, invocation.acceptHeld === true), deps);
    if (dry.outcome === 'failed') {
      return finish({ outcome: 'failed', reason: failurePhase(dry.error), dryRun: true, error: errorText(dry.error, dry.deadline) });
    }
    return finish({ outcome: 'succeeded', dryRun: true, ...judgedOf(dry.value), changes: describeChanges(dry.value) });
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
      ...(deps.outbox !== undefined ? { outbox: deps.outbox } : {}),
      runRecordPrefix: RUN_PK_PREFIX,
      ...(deps.log !== undefined ? { log: deps.log } : {}),
      ...(deps.onAcquired !== undefined ? { onAcquired: deps.onAcquired } : {}),
      ...(deps.onHeartbeat !== undefined ? { onHeartbeat: deps.onHeartbeat } : {}),
    },
    {
      record: ({ value, error, heartbeats }) => ({
        dryRun: false,
        counts: { ...counts, heartbeats },
        ...(value !== undefined ? judgedOf(value) : {}),
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
      return finish({ outcome: 'succeeded', fence: outcome.fence, ...judgedOf(outcome.value) });
    case 'failed': {
      counts.heartbeats = outcome.heartbeats;
      const fence = outcome.fence !== undefined ? { fence: outcome.fence } : {};
      if (outcome.reason === 'work') {
        return finish({
          outcome: 'failed',
          reason: failurePhase(outcome.error),
          ...fence,
          error: errorText(outcome.error, outcome.deadline),
        });
      }
      return finish({ outcome: 'failed', reason: outcome.reason, ...fence, error: describe(outcome.error) });
    }
  }
}

/**
 * The contest work, as gather, judge, act: fetch the reply and read what is stored; judge the
 * reply (stale or not) and each contest (plan.ts); read the reminders the plan names and judge each
 * (reminders.ts); then, under the lease unless a dry run, write it all in one fenced commit.
 */
async function contestWork(deps: SyncDeps, work: WorkContext, counts: RunCounts, write: boolean, acceptHeld: boolean): Promise<Synced> {
  const { now } = deps;
  const settings = deps.planSettings ?? DEFAULT_PLAN_SETTINGS;

  // Gather: the reply and the stored contests (with the reply clock).
  let fetched: FetchContestsResult;
  try {
    fetched = await fetchReply(deps, work, counts);
  } catch (error) {
    // Codeforces failed: no current evidence. When in doubt, delay (then fail as before).
    if (write && error instanceof CodeforcesError && !work.signal.aborted) await doubtOnFailure(deps, work, counts, settings);
    throw error;
  }
  work.signal.throwIfAborted();
  const { contests: stored, replyMadeAt, withdrawn } = splitClock(await deps.store.scanContests(work.signal));

  // Judge the reply: a stale one is never applied.
  const nowMs = now();
  const verdict = judgeReply(fetched.contests, replyMadeAt, Math.floor(nowMs / 1000));
  if (verdict.stale) {
    counts.repliesStale = 1;
    const changes = await doubt(deps, work, stored, counts, settings);
    if (write) {
      const actions = deps.store.actionsFor(changes, new Date(nowMs).toISOString());
      if (actions.length > 0) {
        const options = { final: true, handoff: changes.contestPuts.map(({ contestId }) => String(contestId)) };
        counts.transactions = (await commitDroppingRaced(work, actions, changes.reminderUpdates.length, options, counts)).transactions;
      }
      work.keep([...work.handoff]);
    }
    return { verdict, changes, events: [] };
  }

  const appliedAt = verdict.madeAt ?? Math.floor(nowMs / 1000);

  // Judge each contest.
  const lastSeenMs = replyMadeAt !== undefined ? replyMadeAt * 1000 : work.lastSucceededMs;
  const plan = planContests({
    fetched: fetched.contests,
    listedIds: new Set(fetched.listedIds),
    stored,
    nowMs,
    ...(lastSeenMs !== undefined ? { lastSeenMs } : {}),
    acceptHeld,
    settings,
  });
  counts.contestsUnchanged = plan.unchanged;
  counts.contestsVanished = plan.vanished.length;
  counts.contestsRestored = plan.restored.length;
  counts.contestsHeld = plan.held.length;
  counts.contestsAccepted = plan.accepted.length;

  // Gather the reminders whose contests changed, and those an earlier run handed over (the app
  // may have written one against the state that run replaced); judge each.
  const after = contestsAfter(plan, stored);
  const toCheck = new Set(plan.remindersToCheck);
  const handedOver = [...work.handoff].map(Number).filter((id) => Number.isSafeInteger(id) && !toCheck.has(id));
  counts.contestsRechecked = handedOver.length;
  const reminderUpdates: ReminderUpdate[] = [];
  const nowSeconds = Math.floor(now() / 1000);
  for (const contestId of [...toCheck, ...handedOver]) {
    const reminders = await deps.store.remindersOf(contestId, work.signal);
    reminderUpdates.push(...planReminders(contestId, after.get(contestId), reminders, settings, nowSeconds));
  }
  const changes: StoreChanges = {
    reminderUpdates,
    contestPuts: [...plan.upserts, ...plan.bookkeeping, ...plan.vanished],
    contestDeletes: plan.cancelled,
    // Recorded with the run's writes, or alone once it is newer by more than the skew (every hourly
    // run), so that the same reply served again later is known stale.
    // An undated reply that is not stale is dated by our own fetch: the clock the delivery job
    // reads for freshness (docs/tables.md, "The notifier") keeps moving while replies are applied.
    ...(appliedAt !== replyMadeAt ? { replyMadeAt: appliedAt } : {}),
  };
  countReminders(counts, reminderUpdates);

  // What users hear of it: the contest events, and each put recording what it publishes
  // (contests/announcements.ts). Without an outbox nothing is published or recorded.
  const announced = announce({
    stored,
    puts: changes.contestPuts,
    deletes: changes.contestDeletes,
    withdrawn,
    nowSeconds,
    ...(replyMadeAt !== undefined ? { clockBefore: replyMadeAt } : {}),
  });
  const publishing = deps.outbox !== undefined;
  if (publishing) {
    changes.contestPuts = announced.puts;
    if (announced.withdrawnChanged) changes.replyMadeAt = appliedAt;
  }
  // The register travels with the clock (one Put): kept as read when nothing is published.
  changes.withdrawn = publishing ? announced.withdrawn : withdrawn;
  const events = publishing || !write ? announced.events : [];

  // Act: one fenced commit, with the events; the contests whose reminders changed state are
  // handed over, so the next run reads them again.
  if (!write) return { plan, verdict, changes, events };
  const clockOnly =
    changes.reminderUpdates.length + changes.contestPuts.length + changes.contestDeletes.length + events.length === 0 &&
    !(publishing && announced.withdrawnChanged);
  const clockFresh = replyMadeAt === undefined || appliedAt > replyMadeAt + SKEW_SECONDS;
  const actions = clockOnly && !clockFresh ? [] : deps.store.actionsFor(changes, new Date(nowMs).toISOString());
  if (actions.length > 0) {
    // A contest new to the table had no state the app could have written a reminder against.
    const storedIds = new Set(stored.map(({ contestId }) => contestId));
    const handoff = [...toCheck].filter((id) => storedIds.has(id)).map(String);
    const written = await commitDroppingRaced(
      work,
      actions,
      changes.reminderUpdates.length,
      { final: true, handoff, ...(events.length > 0 ? { events } : {}) },
      counts,
    );
    counts.transactions = written.transactions;
    counts.eventsPublished = written.events.written;
    counts.eventsDuplicate = written.events.duplicates;
  }
  counts.contestsWritten = plan.upserts.length;
  counts.contestsRemoved = changes.contestDeletes.length;
  return { plan, verdict, changes, events };
}

/**
 * No current evidence (a stale reply, Codeforces failing): pause the reminders due before the next
 * sync could see a change, with their contests (reminders.ts, `doubtUpdates`).
 */
async function doubt(
  deps: SyncDeps,
  work: WorkContext,
  stored: readonly ContestItem[],
  counts: RunCounts,
  settings: PlanSettings,
): Promise<StoreChanges> {
  const nowSeconds = Math.floor(deps.now() / 1000);
  const changes = emptyChanges();
  if (!settings.firingRule) return changes;
  const updatedAt = new Date(deps.now()).toISOString();
  for (const contest of contestsToDoubt(stored)) {
    const updates = doubtUpdates(
      contest.contestId,
      await deps.store.remindersOf(contest.contestId, work.signal),
      nowSeconds,
      settings.doubtSeconds,
    );
    if (updates.length === 0) continue;
    changes.reminderUpdates.push(...updates);
    changes.contestPuts.push({ ...contest, remindersPaused: 'held', updatedAt });
  }
  countReminders(counts, changes.reminderUpdates);
  return changes;
}

/** At most this many times a commit is sent again without the reminder updates a race refused. */
export const RACED_COMMIT_ATTEMPTS = 4;

/**
 * The run's commit, where a reminder update refused by its own condition does not fail the run:
 * the row changed after the sync read it (the delivery job claimed it, the app changed or deleted
 * it). Such updates (the first `reminderActions` of `actions`, as the store orders them) are
 * dropped, their contests handed over so the next run reads their reminders again, and the rest
 * is sent again. Everything else refused, or a race that keeps coming back, fails the run as before.
 * Sending again what a first transaction already wrote is harmless: every action is idempotent and
 * the outbox finds its events written.
 */
async function commitDroppingRaced(
  work: WorkContext,
  actions: TransactAction[],
  reminderActions: number,
  options: CommitOptions,
  counts: RunCounts,
): Promise<CommitResult> {
  const reminders = new Set(actions.slice(0, reminderActions));
  let pending = actions;
  const handoff = new Set(options.handoff ?? []);
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work.commit(pending, { ...options, handoff: [...handoff] });
    } catch (error) {
      if (!(error instanceof FencedWriteError) || error.refused.length === 0 || attempt >= RACED_COMMIT_ATTEMPTS) throw error;
      const refused = new Set(error.refused);
      if (![...refused].every((action) => reminders.has(action as TransactAction))) throw error;
      for (const action of refused) handoff.add(String((action as TransactAction).Update?.Key?.contestId));
      counts.remindersRaced += refused.size;
      pending = pending.filter((action) => !refused.has(action));
    }
  }
}

/** The doubt of a failed fetch, written without marking the interval done (the run still fails). */
async function doubtOnFailure(deps: SyncDeps, work: WorkContext, counts: RunCounts, settings: PlanSettings): Promise<void> {
  try {
    const { contests } = splitClock(await deps.store.scanContests(work.signal));
    const changes = await doubt(deps, work, contests, counts, settings);
    const actions = deps.store.actionsFor(changes, new Date(deps.now()).toISOString());
    if (actions.length > 0)
      await commitDroppingRaced(
        work,
        actions,
        changes.reminderUpdates.length,
        { handoff: changes.contestPuts.map(({ contestId }) => String(contestId)) },
        counts,
      );
  } catch {
    // Best effort: the run fails for Codeforces whatever happens here, and the next one tries again.
  }
}

async function fetchReply(deps: SyncDeps, work: WorkContext, counts: RunCounts): Promise<FetchContestsResult> {
  // Leave part of the remaining time for reading and writing DynamoDB.
  const storeReserveMs = Math.min(10_000, Math.max(0, (work.deadline - deps.now()) / 3));
  let fetched: FetchContestsResult;
  try {
    fetched = await deps.fetchContests({ signal: work.signal, deadline: work.deadline - storeReserveMs });
  } catch (error) {
    if (error instanceof CodeforcesError) counts.codeforcesAttempts = error.attempts;
    throw error;
  }
  counts.contestsFetched = fetched.contests.length;
  counts.contestsInvalid = fetched.invalid;
  counts.codeforcesAttempts = fetched.attempts;
  counts.codeforcesLatencyMs = fetched.latencyMs;
  return fetched;
}

/** The Contests table's items: the contests, and the reply clock (the sync's own item). */
function splitClock(items: readonly (ContestItem | ReplyClockItem)[]): {
  contests: ContestItem[];
  replyMadeAt?: number;
  withdrawn: Record<string, unknown>;
} {
  const contests: ContestItem[] = [];
  let replyMadeAt: number | undefined;
  let withdrawn: Record<string, unknown> = {};
  for (const item of items) {
    if (item.contestId === REPLY_CLOCK_ID) {
      const clock = item as ReplyClockItem;
      if (typeof clock.replyMadeAt === 'number' && Number.isFinite(clock.replyMadeAt)) replyMadeAt = clock.replyMadeAt;
      if (clock.withdrawn !== null && typeof clock.withdrawn === 'object') withdrawn = clock.withdrawn;
    } else contests.push(item as ContestItem);
  }
  return { contests, ...(replyMadeAt !== undefined ? { replyMadeAt } : {}), withdrawn };
}

function emptyChanges(): StoreChanges {
  return { reminderUpdates: [], contestPuts: [], contestDeletes: [] };
}

function countReminders(counts: RunCounts, updates: readonly ReminderUpdate[]): void {
  for (const update of updates) {
    if (update.set.remindAt !== undefined) counts.remindersMoved += 1;
    if (update.set.dueAt !== undefined) counts.remindersDue += 1;
    else if (update.set.paused !== undefined) counts.remindersPaused += 1;
  }
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

/** The stale reply, held and accepted changes as the result, the summary line and the run record name them (only when there are any). */
function judgedOf({ plan, verdict }: Synced): Pick<RunSummary, 'held' | 'accepted' | 'stale'> {
  const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
  if (verdict.stale) return { stale: { madeAt: iso(verdict.madeAt), newestApplied: iso(verdict.newestApplied) } };
  if (plan === undefined) return {};
  const listed = (changes: readonly HeldChange[]) =>
    changes
      .slice(0, HELD_LISTED)
      .map(({ contestId, kind, since, replies }) => ({ contestId, kind, since: new Date(since * 1000).toISOString(), replies }));
  return {
    ...(plan.held.length > 0 ? { held: listed(plan.held) } : {}),
    ...(plan.accepted.length > 0 ? { accepted: listed(plan.accepted) } : {}),
  };
}

/** A dry run lists at most this many writes and cancellations (plus their totals): the result stays small. */
export const DRY_RUN_LISTED = 50;

function describeChanges({ plan, changes, events }: Synced): RunSummary['changes'] {
  if (plan === undefined) {
    return {
      write: [],
      writeTotal: 0,
      cancel: [],
      cancelTotal: 0,
      vanish: [],
      vanishTotal: 0,
      moveReminders: 0,
      pauseReminders: 0,
      dueReminders: 0,
      events: [],
      eventsTotal: 0,
    };
  }
  return {
    write: plan.upserts
      .slice(0, DRY_RUN_LISTED)
      .map(({ contestId, name, startTimeSeconds, phase }) => ({ contestId, name, startTimeSeconds, phase })),
    writeTotal: plan.upserts.length,
    cancel: plan.cancelled.slice(0, DRY_RUN_LISTED),
    cancelTotal: plan.cancelled.length,
    vanish: plan.vanished.slice(0, DRY_RUN_LISTED).map(({ contestId }) => contestId),
    vanishTotal: plan.vanished.length,
    moveReminders: changes.reminderUpdates.filter((u) => u.set.remindAt !== undefined).length,
    pauseReminders: changes.reminderUpdates.filter((u) => u.set.dueAt === undefined && u.set.paused !== undefined).length,
    dueReminders: changes.reminderUpdates.filter((u) => u.set.dueAt !== undefined).length,
    events: events.slice(0, DRY_RUN_LISTED).map(({ detailType, detail }) => ({ detailType, contestId: Number(detail.contestId) })),
    eventsTotal: events.length,
  };
}
