/**
 * The act step of a sync (docs/design.md, "One sync: gather, judge, act"): the judgement's writes,
 * fenced by the lease, in this order —
 *   1. the contests, each put in one transaction with the events it publishes and, when its gate
 *      changes, its bucket gates (contests/bucket-gates.ts), each delete with the reply clock as
 *      read carrying the register that remembers the deleted contest;
 *   2. the reminders of the contests whose gate changed, read after (1) committed and brought to
 *      their contest in batches (a reminder the app writes meanwhile is written against the
 *      contest as (1) left it, so it is right already);
 *   3. the rows a lowered DUE_SHARDS left in retired `byDue` partitions, moved into their current
 *      one (only when the reply clock records a higher setting: contests/retired-shards.ts);
 *   4. the reply clock (with the events its register tells, and the setting it ensured), marking
 *      the interval done — in the last transaction of (1) when nothing else follows and it fits,
 *      in the release when it is the run's only write.
 * A run that stops anywhere leaves the contests it followed handed over to the next run, which
 * reads their reminders again. A dry run reads what (2) would read and writes nothing.
 */
import {
  FencedWriteError,
  MAX_WRITES_PER_TRANSACTION,
  actionBytes,
  type CommitOptions,
  type TransactAction,
  type WorkContext,
} from '@contest-sync/scheduled-singleton';
import { followContest, type ReminderUpdate } from '../contests/reminders.js';
import { gateChanged } from '../contests/bucket-gates.js';
import type { ContestWrite, Judgement } from '../contests/judge.js';
import type { PlanSettings } from '../contests/plan.js';
import type { ReminderItem } from '../contests/model.js';
import type { Source } from '../sources/source.js';
import type { ClockWrite as ClockItem, RetiredRow } from './store.js';

/**
 * What acting needs of the run: its fenced commit, what it leaves to the release, and whether it
 * may write.
 */
export type ActJob = Pick<WorkContext, 'signal' | 'deadline' | 'commit' | 'keep' | 'releaseWith'> & { dryRun: boolean };

/** What acting writes through. */
export interface ActDeps {
  /** The reminders' reads and the write actions (store/dynamo-store.ts). */
  store: {
    remindersOf(contestId: string, signal?: AbortSignal): Promise<ReminderItem[]>;
    /** The contest's write, and its bucket gates' when its gate changes: one transaction. */
    contestActions(write: ContestWrite): TransactAction[];
    reminderAction(update: ReminderUpdate): TransactAction;
    clockAction(platform: string, clock: ClockItem, updatedAt: string): TransactAction;
    retiredRows(shard: number, platform: string, signal?: AbortSignal): Promise<RetiredRow[]>;
    shardMoveAction(row: RetiredRow, dueShards: number): TransactAction;
  };
  /** The platform the run keeps: its reply clock, and its rows in retired shards. */
  source: Pick<Source, 'platform'>;
  now: () => number;
  settings: PlanSettings;
}

/** What the act step did. */
export interface Acted {
  /** Reminder updates planned (written unless a dry run or refused by a race). */
  reminderUpdates: ReminderUpdate[];
  /** Reminder updates refused because the row changed after it was read (a claim, the app). */
  raced: number;
  transactions: number;
  eventsPublished: number;
  eventsDuplicate: number;
  /** Followed contests left to the next run: the deadline came first, or a race refused an update. */
  unfinished: string[];
  /** Rows moved out of retired byDue partitions (and moves dropped because the row changed meanwhile). */
  resharded: number;
  reshardRaced: number;
  /** The retired partitions were not all swept (the deadline came): the clock keeps them for the next run. */
  sweepUnfinished: boolean;
}

export function emptyActed(): Acted {
  return {
    reminderUpdates: [],
    raced: 0,
    transactions: 0,
    eventsPublished: 0,
    eventsDuplicate: 0,
    unfinished: [],
    resharded: 0,
    reshardRaced: 0,
    sweepUnfinished: false,
  };
}

/**
 * Contest writes per transaction at most: a put and its event are two actions, the lease check the
 * hundredth; a write that changes its gate adds its 16 bucket gates, so fewer fit (packContestWrites
 * counts the actions).
 */
export const CONTEST_WRITES_PER_TRANSACTION = 45;
/** The bytes of a transaction's contest writes at most (DynamoDB's limit is 4 MB). */
const CONTEST_BATCH_BYTES = 1024 * 1024;
/** Reminder updates per transaction (the lease check takes the hundredth action). */
export const REMINDER_UPDATES_PER_TRANSACTION = 99;
/** Following stops starting a new contest this long before the run's deadline; the rest is handed over. */
export const FOLLOW_STOP_BEFORE_DEADLINE_MS = 3_000;
/** At most this many times a batch is sent again without the reminder updates a race refused. */
export const RACED_COMMIT_ATTEMPTS = 4;

/**
 * What it did accumulates in `acted` as it goes (a run that fails half-way reports what it did).
 * `final`: the run's last write marks its interval done (a run that failed writes its doubt
 * without it, so that its interval is retried).
 */
export async function act(job: ActJob, deps: ActDeps, judgement: Judgement, acted: Acted, final = true): Promise<Acted> {
  const alone = judgement.follow.length === 0 && judgement.retired.sweep.length === 0;
  const rider = alone ? clockWrite(job, deps, judgement, final, acted) : undefined;
  const clockRode = await commitContests(job, deps, judgement, acted, rider);
  await followReminders(job, deps, judgement, acted);
  await sweepRetired(job, deps, judgement, acted);
  if (!clockRode) await commitClock(job, deps, judgement, final, acted);
  if (!job.dryRun) job.keep([...judgement.kept, ...acted.unfinished]);
  return acted;
}

/**
 * 1. The contests, each with its events, in transactions that never split a contest from its
 * events; every one hands the contests whose reminders follow over, so a run that stops before (2)
 * leaves them to the next (what an earlier run handed over stays handed over unless read again).
 */
async function commitContests(job: ActJob, deps: ActDeps, judgement: Judgement, acted: Acted, clock?: ClockWrite): Promise<boolean> {
  if (job.dryRun || judgement.contests.length === 0) return false;
  const handoff = judgement.follow.filter(({ contestId }) => !judgement.rechecked.includes(contestId)).map(({ contestId }) => contestId);
  const batches = packContestWrites(judgement.contests.map((write) => ({ write, actions: deps.store.contestActions(write) })));
  let rode = false;
  for (const [index, batch] of batches.entries()) {
    const own = batch.flatMap(({ write }) => ('put' in write ? write.events : []));
    const size = batch.reduce((sum, { actions }) => sum + actions.length, 0) + own.length;
    // The clock rides with the last one when the whole stays within a transaction's 99 actions.
    const fits = clock !== undefined && size + 1 + clock.events.length <= MAX_WRITES_PER_TRANSACTION;
    const rider = index === batches.length - 1 && fits ? clock : undefined;
    rode = rider !== undefined;
    const events = [...own, ...(rider?.events ?? [])];
    // A delete commits with the register that remembers the contest (unless the whole clock rides along).
    const register = rider === undefined && batch.some(({ write }) => 'delete' in write) ? registerAtDelete(deps, judgement) : undefined;
    const actions = [
      ...batch.flatMap(({ actions }) => actions),
      ...(rider === undefined ? [] : [rider.action]),
      ...(register === undefined ? [] : [register]),
    ];
    const options: CommitOptions = { handoff, ...(events.length > 0 ? { events } : {}), ...(rider?.final === true ? { final: true } : {}) };
    await commit(job, actions, options, acted);
  }
  return rode;
}

interface ContestWriteActions {
  write: ContestWrite;
  actions: TransactAction[];
}

/**
 * The contest writes in order, in batches that each commit as one transaction: at most
 * CONTEST_WRITES_PER_TRANSACTION writes and 99 actions (each write's contest and gates, and its
 * events), and CONTEST_BATCH_BYTES — so a contest never commits apart from its gates or events.
 */
function packContestWrites(writes: readonly ContestWriteActions[]): ContestWriteActions[][] {
  const batches: ContestWriteActions[][] = [];
  let current: ContestWriteActions[] = [];
  let count = 0;
  let bytes = 0;
  for (const one of writes) {
    const size = one.actions.length + ('put' in one.write ? one.write.events.length : 0);
    const weight = one.actions.reduce((sum, action) => sum + actionBytes(action), 0);
    const full = current.length >= CONTEST_WRITES_PER_TRANSACTION || count + size > MAX_WRITES_PER_TRANSACTION;
    if (current.length > 0 && (full || bytes + weight > CONTEST_BATCH_BYTES)) {
      batches.push(current);
      current = [];
      count = 0;
      bytes = 0;
    }
    current.push(one);
    count += size;
    bytes += weight;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/**
 * The reply clock as read, with the register as the run's deletes leave it and nothing told yet:
 * the delete of a contest whose start was published and the register entry that keeps its start
 * and its event sequence are one fenced transaction, so a run stopped between the delete and its
 * clock cannot make a contest listed again start its events at 0 (ids it already used).
 */
function registerAtDelete(deps: ActDeps, judgement: Judgement): TransactAction | undefined {
  const atDelete = judgement.clock?.atDelete;
  if (atDelete === undefined) return undefined;
  return deps.store.clockAction(deps.source.platform, atDelete, new Date(deps.now()).toISOString());
}

/** 2. Each followed contest's reminders, read now and brought to it (the firing rule, or doubt). */
async function followReminders(job: ActJob, deps: ActDeps, judgement: Judgement, acted: Acted): Promise<void> {
  const nowSeconds = Math.floor(deps.now() / 1000);
  for (const [index, { contestId, contest }] of judgement.follow.entries()) {
    if (!job.dryRun && deps.now() >= job.deadline - FOLLOW_STOP_BEFORE_DEADLINE_MS) {
      acted.unfinished.push(...judgement.follow.slice(index).map((f) => f.contestId));
      return;
    }
    const reminders = await deps.store.remindersOf(contestId, job.signal);
    const following = followContest(judgement.rule, { contestId, contest, reminders }, deps.settings, nowSeconds);
    const { updates } = following;
    acted.reminderUpdates.push(...updates);
    if (job.dryRun) continue;
    if (following.contest !== undefined) {
      const put = { ...following.contest, updatedAt: new Date(deps.now()).toISOString() };
      const gate = gateChanged(contest, put) ? { gateChanged: true as const } : {};
      await commit(job, deps.store.contestActions({ put, events: [], ...gate }), {}, acted);
    }
    for (let offset = 0; offset < updates.length; offset += REMINDER_UPDATES_PER_TRANSACTION) {
      await commitDroppingRaced(job, updates.slice(offset, offset + REMINDER_UPDATES_PER_TRANSACTION), deps, acted);
    }
  }
}

/**
 * 3. The rows of this platform in retired byDue partitions, each moved into its current one
 * (batches of 99, each move conditional on the row as read: one refused is dropped). Stops at the
 * same margin before the deadline as following; what is left is swept again by the next run.
 */
async function sweepRetired(job: ActJob, deps: ActDeps, judgement: Judgement, acted: Acted): Promise<void> {
  if (job.dryRun) return;
  for (const shard of judgement.retired.sweep) {
    if (deps.now() >= job.deadline - FOLLOW_STOP_BEFORE_DEADLINE_MS) {
      acted.sweepUnfinished = true;
      return;
    }
    const rows = await deps.store.retiredRows(shard, deps.source.platform, job.signal);
    for (let offset = 0; offset < rows.length; offset += REMINDER_UPDATES_PER_TRANSACTION) {
      const moves = rows
        .slice(offset, offset + REMINDER_UPDATES_PER_TRANSACTION)
        .map((row) => deps.store.shardMoveAction(row, deps.settings.dueShards));
      const refused = await commitDroppingRefused(job, moves, acted);
      acted.resharded += moves.length - refused.length;
      acted.reshardRaced += refused.length;
    }
  }
}

/**
 * 3. The reply clock, last: it records the reply as applied, tells what its register tells, hands
 * over the contests left unfinished, and marks the interval done (a run that wrote nothing marks
 * it in the release). When it is the run's only write (an unchanged hourly sync) and tells
 * nothing, it rides in the release: the same fenced transaction that frees the lease, writes the
 * run record and marks the interval done, or none of it — one request fewer
 * (docs/performance.md). A run that failed (`final` false) commits it now, as its doubt.
 */
async function commitClock(job: ActJob, deps: ActDeps, judgement: Judgement, final: boolean, acted: Acted): Promise<void> {
  const wrote = acted.transactions > 0 || acted.unfinished.length > 0;
  const clock = clockWrite(job, deps, judgement, final, acted);
  if (clock === undefined || !(judgement.clock?.required === true || wrote)) return;
  if (final && !wrote && clock.events.length === 0) {
    job.releaseWith([clock.action]);
    return;
  }
  const handoff = acted.unfinished.map(String);
  const options: CommitOptions = {
    final,
    ...(handoff.length > 0 ? { handoff } : {}),
    ...(clock.events.length > 0 ? { events: clock.events } : {}),
  };
  await commit(job, [clock.action], options, acted);
}

interface ClockWrite {
  action: TransactAction;
  events: NonNullable<CommitOptions['events']>;
  final: boolean;
}

function clockWrite(job: ActJob, deps: ActDeps, judgement: Judgement, final: boolean, acted: Acted): ClockWrite | undefined {
  const { clock } = judgement;
  if (job.dryRun || clock === undefined) return undefined;
  // A sweep the deadline cut short leaves the retired partitions recorded for the next run.
  const shards = acted.sweepUnfinished ? judgement.retired.unfinished : clock.shards;
  const action = deps.store.clockAction(deps.source.platform, { ...clock, shards }, new Date(deps.now()).toISOString());
  return { action, events: [...clock.events], final };
}

async function commit(job: ActJob, actions: TransactAction[], options: CommitOptions, acted: Acted): Promise<void> {
  const written = await job.commit(actions, options);
  acted.transactions += written.transactions;
  acted.eventsPublished += written.events.written;
  acted.eventsDuplicate += written.events.duplicates;
}

/**
 * One batch of reminder updates, where an update refused by its own condition does not fail the
 * run: the row changed after it was read (the delivery job claimed it, the app changed or deleted
 * it). Such updates are dropped, their contests handed over so the next run reads their reminders
 * again, and the rest is sent again (commitDroppingRefused).
 */
async function commitDroppingRaced(job: ActJob, updates: readonly ReminderUpdate[], deps: ActDeps, acted: Acted): Promise<void> {
  const byAction = new Map(updates.map((update) => [deps.store.reminderAction(update), update]));
  const refused = await commitDroppingRefused(job, [...byAction.keys()], acted);
  for (const action of refused) {
    const { contestId } = byAction.get(action)!;
    if (!acted.unfinished.includes(contestId)) acted.unfinished.push(contestId);
  }
  acted.raced += refused.length;
}

/**
 * A batch of row updates, each conditional on the row as read: the updates refused by their own
 * condition are dropped and the rest is sent again; returns the refused ones. Anything else
 * refused, or a race that keeps coming back, fails the run. Sending again what a transaction
 * already wrote is harmless: every update is conditional on the row as read and sets what it sets.
 */
async function commitDroppingRefused(job: ActJob, actions: readonly TransactAction[], acted: Acted): Promise<TransactAction[]> {
  let pending = [...actions];
  const dropped: TransactAction[] = [];
  for (let attempt = 1; pending.length > 0; attempt += 1) {
    try {
      await commit(job, pending, {}, acted);
      return dropped;
    } catch (error) {
      if (!(error instanceof FencedWriteError) || error.refused.length === 0 || attempt >= RACED_COMMIT_ATTEMPTS) throw error;
      const refused = new Set<unknown>(error.refused);
      if (!error.refused.every((action) => pending.includes(action as TransactAction))) throw error;
      dropped.push(...pending.filter((action) => refused.has(action)));
      pending = pending.filter((action) => !refused.has(action));
    }
  }
  return dropped;
}
