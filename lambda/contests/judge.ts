/**
 * The judgement (docs/design.md, "One sync: gather, judge, act"), pure: from what the run gathered
 * — a source's reply, the stored contests, the reply clock, what an earlier run handed over — to
 * what it must write. A stale reply has its own small judge (`judgeStale`: when in doubt, delay);
 * an applied one goes through the contests (plan.ts), the events (events.ts), and names the
 * contests whose reminders must follow and the reply clock to write. The judge's other parts, each
 * a set of named rules, one function each:
 *   plan.ts     the contests: what a reply changes of each stored contest — held, shown, vanished,
 *               deleted (docs/design.md, "A reply is evidence");
 *   evidence.ts when a reply was made and whether it is stale, what is plausible, mass changes,
 *               evidence repeated by consecutive replies, starts shown ahead;
 *   gate.ts     whether a contest's reminders may fire, and at which start (docs/design.md, "The
 *               firing rule"), written on every contest item as `dueStart`;
 *   events.ts   what users are told of a contest (docs/events.md, "Contest events").
 * What a contest's reminders then look like is lambda/contests/reminders.ts's.
 */
import type { OutboxEvent } from '@contest-sync/scheduled-singleton';
import type { ContestItem, SourceReply } from './model.js';
import { type ContestPlan, planContests, type PlanSettings } from './plan.js';
import { judgeReply, type ReplyVerdict, SKEW_SECONDS } from './evidence.js';
import { contestsToDoubt } from './gate.js';
import { gateChanged } from './bucket-gates.js';
import { announce } from './events.js';
import { retiredShards, shardRecordChanged, type RetiredShards, type ShardRecord } from './retired-shards.js';

/** What the run knows before it judges (gathered by lambda/sync/gather.ts). */
export interface Evidence {
  reply: SourceReply;
  stored: ContestItem[];
  /** The reply clock as read: when the newest applied reply was made, and the register of withdrawn contests. */
  clock: { replyMadeAt?: number; withdrawn: Readonly<Record<string, unknown>>; dueShards?: number; retiredDueShards?: number };
  /** Contests an earlier run handed over: their reminders are read again. */
  handedOver: readonly string[];
  /** The latest interval that succeeded (the judge's "last reply" before any is recorded). */
  lastSucceededMs?: number;
  nowMs: number;
}

export interface JudgeOptions {
  settings: PlanSettings;
  /** An operator accepts every held change now. */
  acceptHeld: boolean;
  /** The sync publishes contest events (it has an outbox); without, it records nothing as published. */
  publishing: boolean;
}

/**
 * One contest write, with the events it publishes: they commit in one transaction.
 * `gateChanged`: its `dueStart` changes with it, so its bucket gates are
 * written in the same transaction (bucket-gates.ts).
 */
export type ContestWrite = ({ put: ContestItem; events: OutboxEvent[] } | { delete: string }) & { gateChanged?: true };

/** A contest whose reminders must follow it, as this run leaves it (undefined: deleted). */
export interface Followed {
  contestId: string;
  contest: ContestItem | undefined;
}

export interface Judgement {
  /** The verdict on the reply (absent when the source failed: there was none). */
  verdict?: ReplyVerdict;
  /** The contest model's plan (absent for a stale reply: nothing of it was judged). */
  plan?: ContestPlan;
  /** Contest writes, in commit order. */
  contests: ContestWrite[];
  /** Contests whose reminders follow, and how: to their contest's gate, or paused for doubt. */
  follow: Followed[];
  rule: 'gate' | 'doubt';
  /**
   * The reply clock to write last (with the events the register tells): always when `required`,
   * and whenever the run wrote anything else (its last write marks the interval done).
   */
  clock?: {
    replyMadeAt: number;
    withdrawn: Readonly<Record<string, unknown>>;
    events: OutboxEvent[];
    required: boolean;
    /** The byDue setting the clock records once the retired shards are swept (retired-shards.ts). */
    shards: ShardRecord;
    /**
     * The clock as read with the register as this run's deletes leave it (announce's
     * `withdrawnAtDelete`): written in each transaction that deletes a contest, so the register
     * never loses a deleted contest's published start and event sequence.
     */
    atDelete?: { replyMadeAt: number; withdrawn: Readonly<Record<string, unknown>>; shards: ShardRecord };
  };
  /** The byDue partitions a lowered setting left behind: swept after the reminders (act step). */
  retired: RetiredShards;
  /** Handed-over contests read again although nothing else named them. */
  rechecked: string[];
  /**
   * Handed-over entries left to the next run: what a stale reply could not read, and the stored
   * contests whose gate this run changed (their reminders are read again by the next run, so a
   * reminder written against the state this run replaced is put right by it at the latest).
   */
  kept: string[];
}

export function judge(evidence: Evidence, options: JudgeOptions): Judgement {
  const nowSeconds = Math.floor(evidence.nowMs / 1000);
  const verdict = judgeReply(evidence.reply.dating, evidence.clock.replyMadeAt, nowSeconds);
  return verdict.stale ? judgeStale(evidence, verdict, options.settings) : judgeApplied(evidence, verdict, options);
}

/**
 * A stale reply (docs/design.md, "Stale replies"), or none at all (the source failed), is doubt
 * without evidence: nothing of it is applied. When in doubt, delay: the contests whose reminders
 * may fire are followed by the doubt rule (those with reminders due before the next sync could see
 * a change are paused, contest first: reminders.ts, `followContest`); the clock is written as read
 * when anything was (it carries the run's last write); what earlier runs handed over is kept.
 */
export function judgeStale(evidence: Evidence, verdict: (ReplyVerdict & { stale: true }) | undefined, settings: PlanSettings): Judgement {
  const doubted = settings.firingRule ? contestsToDoubt(evidence.stored) : [];
  const { replyMadeAt, withdrawn } = evidence.clock;
  const recorded = shardRecordOf(evidence, settings.dueShards);
  const retired = retiredShards(recorded, settings.dueShards);
  const required = shardRecordChanged(recorded, retired.after);
  return {
    ...(verdict !== undefined ? { verdict } : {}),
    contests: [],
    follow: doubted.map((contest) => ({ contestId: contest.contestId, contest })),
    rule: 'doubt',
    ...(replyMadeAt !== undefined ? { clock: { replyMadeAt, withdrawn, events: [], required, shards: retired.after } } : {}),
    retired,
    rechecked: [],
    kept: [...evidence.handedOver],
  };
}

/** An applied reply: the contest model, the contest events, the reminders that follow, the clock. */
function judgeApplied(evidence: Evidence, verdict: ReplyVerdict & { stale: false }, options: JudgeOptions): Judgement {
  const { reply, stored, clock, nowMs } = evidence;
  const nowSeconds = Math.floor(nowMs / 1000);
  const lastSeenMs = clock.replyMadeAt !== undefined ? clock.replyMadeAt * 1000 : evidence.lastSucceededMs;
  const plan = planContests({
    fetched: reply.contests,
    listedIds: reply.listedIds,
    stored,
    nowMs,
    ...(lastSeenMs !== undefined ? { lastSeenMs } : {}),
    acceptHeld: options.acceptHeld,
    settings: options.settings,
  });
  const puts = [...plan.upserts, ...plan.bookkeeping, ...plan.vanished];
  const announced = announce({
    stored,
    puts,
    deletes: plan.cancelled,
    withdrawn: clock.withdrawn,
    nowSeconds,
  });
  // Without an outbox nothing is published, and nothing recorded as published.
  const written = options.publishing ? announced.puts : puts;
  const events = options.publishing ? announced.events : [];
  const contests = contestWrites(written, plan.cancelled, events, stored);
  const follow = followed(plan, written, evidence);
  // An undated reply that is not stale is dated by our own fetch: the clock delivery reads for
  // freshness keeps moving while replies are applied.
  const appliedAt = verdict.madeAt ?? nowSeconds;
  const registerEvents = events.filter((event) => !written.some((item) => item.contestId === event.detail.contestId));
  const withdrawn = options.publishing ? announced.withdrawn : clock.withdrawn;
  const registerChanged = options.publishing && announced.withdrawnChanged;
  const anything = contests.length + registerEvents.length > 0 || registerChanged;
  const clockFresh = clock.replyMadeAt === undefined || appliedAt > clock.replyMadeAt + SKEW_SECONDS;
  const recorded = shardRecordOf(evidence, options.settings.dueShards);
  const retired = retiredShards(recorded, options.settings.dueShards);
  const shardsChanged = shardRecordChanged(recorded, retired.after);
  const atDelete =
    options.publishing && announced.withdrawnAtDelete !== undefined && clock.replyMadeAt !== undefined
      ? { replyMadeAt: clock.replyMadeAt, withdrawn: announced.withdrawnAtDelete, shards: shardsAsRead(clock) }
      : undefined;
  return {
    verdict,
    plan,
    contests,
    follow,
    rule: 'gate',
    // Recorded with the run's writes, or alone once it is newer by more than the skew (every
    // hourly run), so that the same reply served again later is known stale.
    clock: {
      replyMadeAt: appliedAt,
      withdrawn,
      events: registerEvents,
      required: anything || clockFresh || shardsChanged,
      shards: retired.after,
      ...(atDelete !== undefined ? { atDelete } : {}),
    },
    retired,
    rechecked: follow.map(({ contestId }) => contestId).filter((id) => !plan.remindersToCheck.includes(id)),
    kept: plan.remindersToCheck.filter((id) => stored.some((item) => item.contestId === id)),
  };
}

/** The byDue setting the clock recorded, as read (a clock written mid-run keeps it). */
function shardsAsRead(clock: Evidence['clock']): ShardRecord {
  return {
    ...(clock.dueShards !== undefined ? { dueShards: clock.dueShards } : {}),
    ...(clock.retiredDueShards !== undefined ? { retiredDueShards: clock.retiredDueShards } : {}),
  };
}

/**
 * What the clock records of the byDue setting. A platform with neither a reply clock nor a stored
 * contest (its first sync) has no due row in any partition, since a due row needs its stored
 * contest (docs/tables.md): the current setting is as good as ensured, and nothing is swept. A
 * clock without a record (one copied from the previous release) may have rows anywhere.
 */
function shardRecordOf(evidence: Evidence, dueShards: number): ShardRecord {
  const first = evidence.clock.replyMadeAt === undefined && evidence.stored.length === 0;
  return first ? { dueShards } : evidence.clock;
}

/** Each put with the events of its contest (they commit together), then the deletes; each marked when it changes the contest's gate. */
function contestWrites(
  puts: readonly ContestItem[],
  deletes: readonly string[],
  events: readonly OutboxEvent[],
  stored: readonly ContestItem[],
): ContestWrite[] {
  const before = new Map(stored.map((item) => [item.contestId, item]));
  const eventsOf = (contestId: string) => events.filter((event) => event.detail.contestId === contestId);
  const gate = (contestId: string, after: ContestItem | undefined) =>
    gateChanged(before.get(contestId), after) ? { gateChanged: true as const } : {};
  return [
    ...puts.map((put) => ({ put, events: eventsOf(put.contestId), ...gate(put.contestId, put) })),
    ...deletes.map((contestId) => ({ delete: contestId, ...gate(contestId, undefined) })),
  ];
}

/**
 * The contests whose reminders follow: those the plan names (their firing state, start or TTL
 * changed, deleted, new), and those an earlier run handed over (the app may have written a reminder
 * against the state that run replaced), each as this run leaves it.
 */
function followed(plan: ContestPlan, written: readonly ContestItem[], evidence: Evidence): Followed[] {
  const after = new Map(evidence.stored.map((item) => [item.contestId, item]));
  for (const item of written) after.set(item.contestId, item);
  for (const contestId of plan.cancelled) after.delete(contestId);
  const named = new Set(plan.remindersToCheck);
  const handedOver = evidence.handedOver.filter((id) => !named.has(id));
  return [...named, ...handedOver].map((contestId) => ({ contestId, contest: after.get(contestId) }));
}
