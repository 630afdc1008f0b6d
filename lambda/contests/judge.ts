/**
 * The judge step of a sync (docs/design.md, "One sync: gather, judge, act"), pure: from what the
 * run gathered — a source's reply, the stored contests, the reply clock, what an earlier run handed
 * over — to what it must write. One module, in five parts, each a set of named rules, one function
 * each:
 *   1. the judgement: a stale reply has its own small judge (`judgeStale`: when in doubt, delay);
 *      an applied one goes through the contests, the events, and names the contests whose reminders
 *      must follow and the reply clock to write;
 *   2. the contests (`planContests`, numbered steps over rules that take one context): what a
 *      reply changes of each stored contest — held, shown, vanished, deleted (docs/design.md, "A
 *      reply is evidence");
 *   3. the evidence: when a reply was made and whether it is stale, what is plausible, mass
 *      changes, evidence repeated by consecutive replies, starts shown ahead;
 *   4. the gate: whether a contest's reminders may fire, and at which start (docs/design.md, "The
 *      firing rule"), written on every contest item as `dueStart`;
 *   5. the events: what users are told of a contest (docs/events.md, "Contest events").
 * What a contest's reminders then look like is lambda/contests/reminders.ts's.
 */
import { createHash } from 'node:crypto';
import type { OutboxEvent } from '../single-execution/index.js';
import { CONTEST_EVENT, type ContestEventType } from './event-schemas.js';
import { DEFAULTS } from '../contract.js';
import {
  COMPARED_FIELDS,
  type ContestItem,
  type ListedContest,
  type PauseReason,
  type Pending,
  type Published,
  type ReplyDating,
  type SourceReply,
} from './model.js';

// =============================================================================================
// 1. The judgement
// =============================================================================================

/** What the run knows before it judges (gathered by lambda/sync/gather.ts). */
export interface Evidence {
  reply: SourceReply;
  stored: ContestItem[];
  /** The reply clock as read: when the newest applied reply was made, and the register of withdrawn contests. */
  clock: { replyMadeAt?: number; withdrawn: Readonly<Record<string, unknown>> };
  /** Contests an earlier run handed over: their reminders are read again. */
  handedOver: readonly number[];
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

/** One contest write, with the events it publishes: they commit in one transaction. */
export type ContestWrite = { put: ContestItem; events: OutboxEvent[] } | { delete: number };

/** A contest whose reminders must follow it, as this run leaves it (undefined: deleted). */
export interface Followed {
  contestId: number;
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
  clock?: { replyMadeAt: number; withdrawn: Readonly<Record<string, unknown>>; events: OutboxEvent[]; required: boolean };
  /** Handed-over contests read again although nothing else named them. */
  rechecked: number[];
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
  return {
    ...(verdict !== undefined ? { verdict } : {}),
    contests: [],
    follow: doubted.map((contest) => ({ contestId: contest.contestId, contest })),
    rule: 'doubt',
    ...(replyMadeAt !== undefined ? { clock: { replyMadeAt, withdrawn, events: [], required: false } } : {}),
    rechecked: [],
    kept: evidence.handedOver.map(String),
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
  const contests = contestWrites(written, plan.cancelled, events);
  const follow = followed(plan, written, evidence);
  // An undated reply that is not stale is dated by our own fetch: the clock delivery reads for
  // freshness keeps moving while replies are applied.
  const appliedAt = verdict.madeAt ?? nowSeconds;
  const registerEvents = events.filter((event) => !written.some((item) => item.contestId === event.detail.contestId));
  const withdrawn = options.publishing ? announced.withdrawn : clock.withdrawn;
  const registerChanged = options.publishing && announced.withdrawnChanged;
  const anything = contests.length + registerEvents.length > 0 || registerChanged;
  const clockFresh = clock.replyMadeAt === undefined || appliedAt > clock.replyMadeAt + SKEW_SECONDS;
  return {
    verdict,
    plan,
    contests,
    follow,
    rule: 'gate',
    // Recorded with the run's writes, or alone once it is newer by more than the skew (every
    // hourly run), so that the same reply served again later is known stale.
    clock: { replyMadeAt: appliedAt, withdrawn, events: registerEvents, required: anything || clockFresh },
    rechecked: follow.map(({ contestId }) => contestId).filter((id) => !plan.remindersToCheck.includes(id)),
    kept: plan.remindersToCheck.filter((id) => stored.some((item) => item.contestId === id)).map(String),
  };
}

/** Each put with the events of its contest (they commit together), then the deletes. */
function contestWrites(puts: readonly ContestItem[], deletes: readonly number[], events: readonly OutboxEvent[]): ContestWrite[] {
  const eventsOf = (contestId: number) => events.filter((event) => event.detail.contestId === contestId);
  return [...puts.map((put) => ({ put, events: eventsOf(put.contestId) })), ...deletes.map((contestId) => ({ delete: contestId }))];
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
  const handedOver = evidence.handedOver.filter((id) => Number.isSafeInteger(id) && !named.has(id));
  return [...named, ...handedOver].map((contestId) => ({ contestId, contest: after.get(contestId) }));
}

// =============================================================================================
// 2. The contests
// =============================================================================================

export interface PlanSettings extends JudgeSettings {
  /** How long finished contests stay stored (their TTL, and their reminders', is end + this). */
  finishedRetentionSeconds: number;
  /**
   * A stored unfinished contest missing from a valid reply is marked vanished, and deleted (its
   * reminders paused, kept until their TTL) when it has been missing from this many consecutive
   * successful syncs.
   */
  missingSyncsBeforeDelete: number;
  /** Partitions of the Reminders table's `byDue` index: a due reminder's `dueShard` is contestId mod this. */
  dueShards: number;
  /**
   * false: the firing rule off (reminders due at the shown start, whatever the evidence): only for
   * showing that the simulated year's checker and the tests bite.
   */
  firingRule: boolean;
  /** While the upstream gives no current evidence, reminders due within this many seconds are paused: one period + 10 min. */
  doubtSeconds: number;
}

/** A held mass change (drop, reschedule, earlier) is shown when this many consecutive replies say it. */
export const MASS_ACCEPT_AFTER_REPLIES = 2;

const isMass = (kind: HeldKind): boolean => kind === 'drop' || kind === 'reschedule' || kind === 'earlier';

export const DEFAULT_PLAN_SETTINGS: PlanSettings = {
  finishedRetentionSeconds: 7 * 24 * 3600,
  missingSyncsBeforeDelete: 3,
  plausibility: true,
  massMinCount: 3,
  massMaxShare: 0.5,
  acceptHeldAfterReplies: 3,
  dueShards: DEFAULTS.dueShards,
  firingRule: true,
  doubtSeconds: 3600 + 600,
};

/** A change not shown (or, in `accepted`, shown now after being held). */
export interface HeldChange {
  contestId: number;
  kind: HeldKind;
  /** Epoch seconds of the first reply that said it. */
  since: number;
  /** Consecutive replies that said it, this one included. */
  replies: number;
}

export interface ContestPlan {
  /** New or changed contests, written as listed (restored ones included). */
  upserts: ContestItem[];
  /** Stored contests rewritten only for the sync's own state (evidence, firing rule); the app sees no change. */
  bookkeeping: ContestItem[];
  unchanged: number;
  /** Stored unfinished contests missing from the list: marked vanished (or still missing). */
  vanished: ContestItem[];
  /** Vanished contests that came back (listed, even if their entry was invalid). */
  restored: number[];
  /** Contests missing from `missingSyncsBeforeDelete` consecutive syncs: deleted (reminders paused, kept). */
  cancelled: number[];
  /** Changes held by this reply: the stored contest is shown as it was. */
  held: HeldChange[];
  /** Held changes shown now: repeated by enough consecutive replies, or accepted by an operator. */
  accepted: HeldChange[];
  /**
   * Contests whose reminders must follow this run: their firing state, start or TTL changed, they
   * were deleted, or they are new (reminders of an earlier listing under the same id come back).
   */
  remindersToCheck: number[];
}

export function toItem(contest: ListedContest, settings: Pick<PlanSettings, 'finishedRetentionSeconds'>, updatedAt: string): ContestItem {
  return { ...contest, updatedAt, expiresAt: contest.startTimeSeconds + contest.durationSeconds + settings.finishedRetentionSeconds };
}

export function sameContest(a: ContestItem, b: ContestItem): boolean {
  return COMPARED_FIELDS.every((field) => a[field] === b[field]);
}

export interface PlanInput {
  /** Valid, scheduled contests the reply lists. */
  fetched: readonly ListedContest[];
  /** Ids of every entry the reply listed (valid or not): an invalid entry is no miss. */
  listedIds: ReadonlySet<number>;
  /** Every contest item in the Contests table (the reply clock excluded). */
  stored: readonly ContestItem[];
  nowMs: number;
  /** When the newest reply seen before was made (default: now, which judges strictest). */
  lastSeenMs?: number;
  /** An operator accepts every held change now. */
  acceptHeld?: boolean;
  settings?: PlanSettings;
}

/** What every rule decides against: one context per reply. */
export interface PlanContext {
  settings: PlanSettings;
  nowSeconds: number;
  /** When the newest reply seen before was made: the rules ask what could have happened since. */
  lastSeenSeconds: number;
  /** The ISO time every item written carries. */
  updatedAt: string;
  acceptHeld: boolean;
}

/** What the reply says of one stored contest. */
type Listing = { kind: 'valid'; item: ContestItem } | { kind: 'invalid' } | { kind: 'missing' };

/** A stored contest whose listing differs from what is stored (or that is missing), being judged. */
interface Change {
  stored: ContestItem;
  listed: ContestItem | undefined;
  /** Lands at once: the return to the confirmed start. */
  undo: boolean;
  /** Implausible on its own. */
  kind?: HeldKind;
  /** Part of a possible mass change of this kind. */
  mass?: MassKind;
}

/** What becomes of one contest: written (as new or changed, as bookkeeping, as vanished), deleted, or left. */
interface Write {
  act: 'write';
  as: 'upserts' | 'bookkeeping' | 'vanished';
  before: ContestItem | undefined;
  item: ContestItem;
  restored?: boolean;
  held?: HeldChange;
  accepted?: HeldChange;
}
interface Delete {
  act: 'delete';
  contestId: number;
  accepted?: HeldChange;
}
type Outcome = { act: 'unchanged' } | Write | Delete;

export function planContests(input: PlanInput): ContestPlan {
  const ctx = planContext(input);
  const fetched = new Map(input.fetched.map((contest) => [contest.contestId, toItem(contest, ctx.settings, ctx.updatedAt)]));
  const stored = new Set(input.stored.map(({ contestId }) => contestId));
  // 1. New contests: shown as listed (one entry per id: the last listed wins).
  const outcomes = [...fetched.values()].filter((item) => !stored.has(item.contestId)).flatMap((item) => newContest(item, ctx));
  // 2. What the reply says of each stored contest; what needs no judging is settled here.
  const changes: Change[] = [];
  for (const before of input.stored) {
    const settled = settle(before, listingOf(before, fetched, input.listedIds), ctx);
    if ('act' in settled) outcomes.push(settled);
    else changes.push(settled);
  }
  // 3. Judge each change alone, then each kind of change across the reply.
  const massive = judgeChanges(changes, input.stored, ctx);
  // 4. Act on each change: hold it, or show it.
  outcomes.push(...changes.map((change) => decide(change, massive(change.mass), ctx)));
  // 5. The firing rule's state on every item written, and the contests whose reminders follow.
  return assemble(outcomes, ctx);
}

function planContext(input: PlanInput): PlanContext {
  return {
    settings: input.settings ?? DEFAULT_PLAN_SETTINGS,
    nowSeconds: Math.floor(input.nowMs / 1000),
    lastSeenSeconds: Math.floor(Math.min(input.lastSeenMs ?? input.nowMs, input.nowMs) / 1000),
    updatedAt: new Date(input.nowMs).toISOString(),
    acceptHeld: input.acceptHeld === true,
  };
}

function without<K extends keyof ContestItem>(item: ContestItem, ...keys: K[]): ContestItem {
  const copy = { ...item };
  for (const key of keys) delete copy[key];
  return copy;
}

/** Rewritten for the sync's own state (evidence, firing rule): the app sees no change. */
function keep(before: ContestItem, item: ContestItem, pending?: Pending): Write {
  return { act: 'write', as: 'bookkeeping', before, item: { ...without(item, 'pending'), ...(pending !== undefined ? { pending } : {}) } };
}

/**
 * newContest: shown as listed; its start is confirmed if it was shown ahead. Past its TTL
 * (finished long ago, or left unfinished for years) it is not stored, or it would expire at once
 * and be inserted again after every TTL deletion.
 */
function newContest(item: ContestItem, ctx: PlanContext): Outcome[] {
  if (item.expiresAt <= ctx.nowSeconds) return [];
  const confirmedStart = shownAhead(item.startTimeSeconds, ctx.nowSeconds) ? item.startTimeSeconds : 0;
  return [{ act: 'write', as: 'upserts', before: undefined, item: { ...item, confirmedStart } }];
}

function listingOf(before: ContestItem, fetched: ReadonlyMap<number, ContestItem>, listedIds: ReadonlySet<number>): Listing {
  const item = fetched.get(before.contestId);
  if (item !== undefined) return { kind: 'valid', item };
  return listedIds.has(before.contestId) ? { kind: 'invalid' } : { kind: 'missing' };
}

/** settle: a stored contest whose listing needs no judging gets its outcome; the others become a change. */
function settle(before: ContestItem, listing: Listing, ctx: PlanContext): Outcome | Change {
  if (listing.kind === 'invalid') return invalidListing(before);
  if (listing.kind === 'missing') return missingListing(before, ctx);
  const listed = listing.item;
  const stuck = expiredUnfinished(before, listed, ctx);
  if (stuck !== undefined) return stuck;
  if (sameContest(before, listed) && before.vanishedAt === undefined) return agrees(before, listed, ctx);
  return { stored: before, listed, undo: isUndo(before, listed) };
}

/**
 * invalidListing: listed with an entry that cannot be believed: it exists, so it is no miss (a run
 * of misses is broken) and a vanished one is back, as stored; nothing in the entry is acted on.
 */
function invalidListing(before: ContestItem): Outcome {
  if (before.vanishedAt !== undefined) return { ...keep(before, without(before, 'vanishedAt', 'missingSyncs')), restored: true };
  if (before.pending?.said === 'missing') return keep(before, before);
  return { act: 'unchanged' };
}

/**
 * missingListing: finished contests leave the list only by Codeforces' own clean-up (TTL removes
 * them here); one in its grace period and still missing has one more miss; any other is a change.
 */
function missingListing(before: ContestItem, ctx: PlanContext): Outcome | Change {
  if (before.phase === 'FINISHED') return { act: 'unchanged' };
  if (before.vanishedAt !== undefined) return missedAgain(before, (before.missingSyncs ?? 1) + 1, before.vanishedAt, ctx);
  return { stored: before, listed: undefined, undo: false };
}

/**
 * expiredUnfinished: past its TTL and still unfinished (Codeforces keeps some in
 * PENDING_SYSTEM_TEST for years): left as it is until its TTL removes it, once marked so that its
 * reminders get the same TTL. One that finally finishes still gets its final phase.
 */
function expiredUnfinished(before: ContestItem, listed: ContestItem, ctx: PlanContext): Outcome | undefined {
  if (listed.expiresAt > ctx.nowSeconds || listed.phase === 'FINISHED') return undefined;
  if (before.remindersPaused === 'expired' || before.phase === 'FINISHED') return { act: 'unchanged' };
  return keep(before, before);
}

/**
 * agrees: the reply agrees with what is stored: a start awaiting confirmation is confirmed, held
 * evidence is forgotten, a pause for doubt (a stale reply, an outage) ends.
 */
function agrees(before: ContestItem, listed: ContestItem, ctx: PlanContext): Outcome {
  const pending = before.pending;
  const gated = withGate(before, ctx.nowSeconds, ctx.settings.firingRule);
  // Unchanged, unless its gate as stored is not the one its evidence gives (a pause for doubt ends; an item written before `dueStart`).
  const settled = gated.remindersPaused === before.remindersPaused && gated.dueStart === before.dueStart;
  if (pending === undefined && before.confirmedStart !== undefined && settled) return { act: 'unchanged' };
  const said = evidenceOf(listed);
  const confirmedStart = confirmStart(before, listed.startTimeSeconds, false, ctx);
  // Still unconfirmed (the evidence before was another claim): the next reply confirms it.
  const awaiting =
    confirmedStart !== listed.startTimeSeconds &&
    pending !== undefined &&
    pending.said !== said &&
    shownAhead(listed.startTimeSeconds, ctx.nowSeconds);
  const awaitedStart = awaitedStartAfter(before, listed.startTimeSeconds, confirmedStart, awaiting);
  const item = { ...without(before, 'awaitedStart'), confirmedStart, ...(awaitedStart !== undefined ? { awaitedStart } : {}) };
  return keep(before, item, awaiting ? { held: false, kind: 'confirm', said, replies: 1, since: ctx.nowSeconds } : undefined);
}

/**
 * judgeChanges: each change alone (implausible: its kind), then the plausible changes of stored
 * upcoming contests by kind across the reply. Returns whether a mass kind is a mass change.
 */
function judgeChanges(changes: Change[], stored: readonly ContestItem[], ctx: PlanContext): (kind: MassKind | undefined) => boolean {
  const upcoming = stored.filter((item) => item.phase !== 'FINISHED' && item.vanishedAt === undefined);
  const upcomingIds = new Set(upcoming.map(({ contestId }) => contestId));
  const massCount: Record<MassKind, number> = { drop: 0, reschedule: 0, earlier: 0 };
  for (const change of changes) {
    if (change.listed !== undefined) change.kind = implausibility(change.stored, change.listed, ctx.nowSeconds, ctx.lastSeenSeconds);
    if (change.undo) {
      if (change.kind === 'start-in-past') delete change.kind;
      continue;
    }
    if (change.kind !== undefined || !upcomingIds.has(change.stored.contestId)) continue;
    change.mass = massKindOf(change.stored, change.listed);
    if (change.mass !== undefined) massCount[change.mass] += 1;
  }
  return (kind) => kind !== undefined && isMassChange(massCount[kind], upcoming.length, ctx.settings);
}

/**
 * decide: hold the change, or show it. Held evidence that this reply repeats stays held until it
 * converges, whatever the rest of the reply looks like now (the share of a mass change moves as
 * contests come and go). A mass change may be honest (a mass postponement near the start): shown
 * once a second reply repeats it; what cannot be honest is held until acceptHeldAfterReplies.
 */
function decide(change: Change, mass: boolean, ctx: PlanContext): Outcome {
  const { stored: before, listed } = change;
  const evidence = nextEvidence(before.pending, evidenceOf(listed), ctx.nowSeconds);
  const stillHeld = !change.undo && before.pending?.held === true && evidence.replies > 1 ? (before.pending.kind as HeldKind) : undefined;
  const holdKind = ctx.settings.plausibility ? (change.kind ?? (mass ? change.mass : stillHeld)) : undefined;
  let accepted: HeldChange | undefined;
  let byOperator = false;
  if (holdKind !== undefined) {
    const held: HeldChange = { contestId: before.contestId, kind: holdKind, since: evidence.since, replies: evidence.replies };
    const needed = isMass(holdKind)
      ? Math.min(MASS_ACCEPT_AFTER_REPLIES, ctx.settings.acceptHeldAfterReplies)
      : ctx.settings.acceptHeldAfterReplies;
    const converged = evidence.replies >= needed;
    if (!converged && !ctx.acceptHeld) return { ...hold(before, listed, { held: true, kind: holdKind, ...evidence }, ctx), held };
    byOperator = !converged;
    accepted = held;
  }
  const outcome =
    listed === undefined ? missedAgain(before, evidence.replies, evidence.since, ctx) : show(before, listed, evidence, byOperator, ctx);
  return accepted !== undefined ? { ...outcome, accepted } : outcome;
}

/**
 * hold: shown as stored. A listing still breaks a run of misses (a vanished contest is back, as
 * stored), and a start two replies agree on is confirmed for the firing rule even while the
 * change is held (an honest mass move near the start must not wait for the hold to end).
 */
function hold(before: ContestItem, listed: ContestItem | undefined, pending: Pending, ctx: PlanContext): Write {
  const confirmedStart = listed !== undefined ? confirmStart(before, listed.startTimeSeconds, false, ctx) : confirmedStartOf(before);
  const outcome = keep(before, { ...without(before, 'vanishedAt', 'missingSyncs'), confirmedStart }, pending);
  return before.vanishedAt !== undefined ? { ...outcome, restored: true } : outcome;
}

/** missedAgain: missing from `misses` consecutive replies since `since`: marked vanished, or deleted. */
function missedAgain(before: ContestItem, misses: number, since: number, ctx: PlanContext): Write | Delete {
  if (misses >= ctx.settings.missingSyncsBeforeDelete) return { act: 'delete', contestId: before.contestId };
  return { act: 'write', as: 'vanished', before, item: { ...without(before, 'pending'), vanishedAt: since, missingSyncs: misses } };
}

/** show: the listed version; a new start awaits a second reply before reminders may be due at it (unless it is later). */
function show(
  before: ContestItem,
  listed: ContestItem,
  evidence: Pick<Pending, 'said' | 'replies' | 'since'>,
  acceptedByOperator: boolean,
  ctx: PlanContext,
): Write {
  const confirmedStart = confirmStart(before, listed.startTimeSeconds, acceptedByOperator, ctx);
  const awaiting =
    confirmedStart !== listed.startTimeSeconds && evidence.replies === 1 && shownAhead(listed.startTimeSeconds, evidence.since);
  const awaitedStart = awaitedStartAfter(before, listed.startTimeSeconds, confirmedStart, awaiting);
  const item: ContestItem = {
    ...listed,
    confirmedStart,
    ...(awaitedStart !== undefined ? { awaitedStart } : {}),
    ...(awaiting ? { pending: { held: false, kind: 'reschedule', ...evidence } } : {}),
  };
  return { act: 'write', as: 'upserts', before, item, ...(before.vanishedAt !== undefined ? { restored: true } : {}) };
}

/**
 * confirmStart: the confirmed start after this reply lists `start`: the start itself once two
 * consecutive replies (or an operator) say it and it was shown ahead; otherwise the confirmed
 * start stands.
 */
function confirmStart(before: ContestItem, start: number, acceptedByOperator: boolean, ctx: PlanContext): number {
  const confirmed = confirmedStartOf(before);
  if (start === confirmed) return confirmed;
  // Replies showed it ahead before (awaiting confirmation, or confirmed before a later start
  // replaced it) and this one lists it again: what came between could not refute it.
  if (shownAheadBefore(before, start)) return start;
  const previous = before.pending?.said ?? shownEvidence(before);
  const repeated = startOfEvidence(previous) === start;
  // First seen by the reply that started the evidence for it (this one, if it is new).
  const firstSeen = repeated ? (before.pending !== undefined ? before.pending.since : undefined) : ctx.nowSeconds;
  if (firstSeen === undefined) return confirmed; // shown before and already judged not shown ahead
  if ((repeated || acceptedByOperator) && shownAhead(start, firstSeen)) return start;
  return confirmed;
}

/**
 * stamp: an item as written, with the firing rule's state (`dueStart`, `remindersPaused`:
 * the gate, `withGate`) and `updatedAt`; its reminders follow when that state, its start or its
 * TTL changed, or it is new (reminders of an earlier listing under the same id come back).
 */
function stamp(before: ContestItem | undefined, item: ContestItem, ctx: PlanContext): { item: ContestItem; follow: boolean } {
  const { nowSeconds, settings } = ctx;
  const confirmedBefore = confirmedBeforeAfter(before, confirmedStartOf(item));
  const remembered = { ...without(item, 'confirmedBefore'), ...(confirmedBefore.length > 0 ? { confirmedBefore } : {}) };
  const written: ContestItem = { ...withGate(remembered, nowSeconds, settings.firingRule), updatedAt: ctx.updatedAt };
  const follow =
    before === undefined ||
    before.confirmedStart === undefined ||
    before.startTimeSeconds !== written.startTimeSeconds ||
    before.expiresAt !== written.expiresAt ||
    before.remindersPaused !== written.remindersPaused ||
    before.dueStart !== written.dueStart ||
    !sameGate(gateOf(before, nowSeconds, settings.firingRule), gateOf(written, nowSeconds, settings.firingRule));
  return { item: written, follow };
}

/** assemble: the plan, from what becomes of each contest. */
function assemble(outcomes: readonly Outcome[], ctx: PlanContext): ContestPlan {
  const plan: ContestPlan = {
    upserts: [],
    bookkeeping: [],
    unchanged: 0,
    vanished: [],
    restored: [],
    cancelled: [],
    held: [],
    accepted: [],
    remindersToCheck: [],
  };
  for (const outcome of outcomes) {
    if (outcome.act === 'unchanged') plan.unchanged += 1;
    else if (outcome.act === 'delete') {
      plan.cancelled.push(outcome.contestId);
      plan.remindersToCheck.push(outcome.contestId);
    } else {
      const { item, follow } = stamp(outcome.before, outcome.item, ctx);
      plan[outcome.as].push(item);
      if (follow) plan.remindersToCheck.push(item.contestId);
      if (outcome.restored === true) plan.restored.push(item.contestId);
      if (outcome.held !== undefined) plan.held.push(outcome.held);
    }
    if (outcome.act !== 'unchanged' && outcome.accepted !== undefined) plan.accepted.push(outcome.accepted);
  }
  return plan;
}

// =============================================================================================
// 3. The evidence
// =============================================================================================

/**
 * Why a change is held (not shown):
 * - `start-in-past`: the start moved to before the newest reply seen before, which showed the old start.
 * - `finish`: reported FINISHED before its end.
 * - `phase`: reported running before its start.
 * - `drop`, `reschedule`, `earlier`: one of many stored upcoming contests missing from the reply,
 *   moved later, or moved earlier in the same reply (a mass change of that kind).
 */
export type HeldKind = 'start-in-past' | 'finish' | 'phase' | 'drop' | 'reschedule' | 'earlier';

/** Kinds judged by their share of a reply rather than one contest alone. */
export type MassKind = Extract<HeldKind, 'drop' | 'reschedule' | 'earlier'>;

export interface JudgeSettings {
  /** Hold nothing (the guards off): only for showing that the simulated year's checker bites. */
  plausibility: boolean;
  /** A mass change of one kind: at least this many stored upcoming contests... */
  massMinCount: number;
  /** ...and more than this share of them. */
  massMaxShare: number;
  /** Evidence repeated by this many consecutive replies is accepted (held change is shown). */
  acceptHeldAfterReplies: number;
}

/** Clock skew and rounding tolerated when comparing a reply's times with ours. */
export const SKEW_SECONDS = 10 * 60;

const PHASE_ORDER: Record<string, number> = { BEFORE: 0, CODING: 1, PENDING_SYSTEM_TEST: 2, SYSTEM_TEST: 3, FINISHED: 4 };

// ---- when a reply was made ----

export type ReplyVerdict =
  | { stale: false; /** When it was made (undefined: undated); recorded once applied. */ madeAt?: number }
  | { stale: true; madeAt: number; newestApplied: number };

/**
 * A reply made before the newest reply already applied (a lagging replica, a cache), or that same
 * reply served again long after it was made, is stale: never applied. An undated reply is stale
 * when what bounds it (a contest it lists as not started, skew allowed) shows it was made before
 * the newest applied one. What is recorded as applied is never later than our own clock, so a
 * reply dated in the future cannot make honest ones stale.
 */
export function judgeReply(dating: ReplyDating, newestApplied: number | undefined, nowSeconds: number): ReplyVerdict {
  const { madeAt } = dating;
  if (madeAt === undefined) {
    const before = dating.madeBefore === undefined ? undefined : dating.madeBefore + SKEW_SECONDS;
    if (newestApplied !== undefined && before !== undefined && before < newestApplied)
      return { stale: true, madeAt: before, newestApplied };
    return { stale: false };
  }
  if (newestApplied !== undefined) {
    const older = madeAt < newestApplied;
    const servedAgain = madeAt === newestApplied && nowSeconds - madeAt > SKEW_SECONDS;
    if (older || servedAgain) return { stale: true, madeAt, newestApplied };
  }
  return { stale: false, madeAt: Math.min(madeAt, nowSeconds) };
}

// ---- one change of one contest ----

/**
 * Why a listed version of a stored contest cannot be believed now, or undefined if it can.
 * @param lastSeenSeconds when the newest reply seen before was made (it showed `stored`); the rules
 *   ask what could have happened since.
 */
export function implausibility(
  stored: ContestItem,
  listed: ContestItem,
  nowSeconds: number,
  lastSeenSeconds: number,
): HeldKind | undefined {
  const moved = listed.startTimeSeconds !== stored.startTimeSeconds;
  // The last reply showed the old start: had the contest moved to before it, that reply would
  // have shown the new start already. A real move earlier is announced ahead of the new start.
  if (moved && listed.startTimeSeconds < lastSeenSeconds - SKEW_SECONDS) return 'start-in-past';
  const order = PHASE_ORDER[listed.phase] ?? 0;
  if (order >= 1 && order <= 3 && listed.startTimeSeconds > nowSeconds + SKEW_SECONDS) return 'phase';
  if (
    listed.phase === 'FINISHED' &&
    stored.phase !== 'FINISHED' &&
    listed.startTimeSeconds + listed.durationSeconds > nowSeconds + SKEW_SECONDS
  ) {
    return 'finish';
  }
  return undefined;
}

/**
 * The undo of a change: the reply lists the contest at its confirmed start again, or at a start
 * replies showed ahead before (`shownAheadBefore`: the truth's return after a lie interrupted an
 * honest postponement, or replaced the confirmed start), running or finished — a lie that outlasts
 * the contest ends with it listed `FINISHED` there. It is never held as a start in the past or as
 * part of a mass change (the truth's return after a wrong upstream is a mass change of its own), so
 * it is shown at once; a finish before the end is still held (`finish`).
 */
export function isUndo(stored: ContestItem, listed: ContestItem | undefined): boolean {
  const confirmed = confirmedStartOf(stored);
  if (listed === undefined) return false;
  return (confirmed > 0 && listed.startTimeSeconds === confirmed) || shownAheadBefore(stored, listed.startTimeSeconds);
}

/** The mass-change kind a plausible change of a stored upcoming contest belongs to, if any. */
export function massKindOf(stored: ContestItem, listed: ContestItem | undefined): MassKind | undefined {
  if (listed === undefined) return 'drop';
  if (listed.startTimeSeconds > stored.startTimeSeconds) return 'reschedule';
  if (listed.startTimeSeconds < stored.startTimeSeconds) return 'earlier';
  return undefined;
}

/** Whether `count` changes of one kind among `upcoming` stored upcoming contests are a mass change. */
export function isMassChange(count: number, upcoming: number, settings: JudgeSettings): boolean {
  return count >= settings.massMinCount && upcoming > 0 && count / upcoming > settings.massMaxShare;
}

// ---- evidence ----

/**
 * What a reply said of a contest, as compared between replies: `listed@<start>` or `missing`. The
 * phase (BEFORE, CODING, SYSTEM_TEST, FINISHED) and the duration are not part of it, so evidence
 * keeps counting while a contest runs and finishes; a held finish is told by its kind.
 */
export function evidenceOf(listed: Pick<ContestItem, 'startTimeSeconds'> | undefined): string {
  return listed === undefined ? 'missing' : `listed@${listed.startTimeSeconds}`;
}

/** The start an evidence key names (undefined: `missing`, or a key of an older format). */
export function startOfEvidence(said: string): number | undefined {
  const match = /^listed@(-?\d+)$/.exec(said);
  return match === null ? undefined : Number(match[1]);
}

/** What the stored item shows, as evidence: what the previous replies said when nothing is pending. */
export function shownEvidence(stored: ContestItem): string {
  return stored.vanishedAt !== undefined ? 'missing' : evidenceOf(stored);
}

/** The evidence after this reply: counted on from the stored one if the reply says the same. */
export function nextEvidence(stored: Pending | undefined, said: string, nowSeconds: number): Pick<Pending, 'said' | 'replies' | 'since'> {
  if (stored !== undefined && stored.said === said) return { said, replies: stored.replies + 1, since: stored.since };
  return { said, replies: 1, since: nowSeconds };
}

// ---- starts a reminder may be due at ----

/**
 * A start shown before it began: first reported by a reply made more than the skew before it. A
 * start first reported after it began (a contest "started minutes ago") cannot be told from a lie,
 * so it never makes a reminder due.
 */
export function shownAhead(start: number, firstSeenSeconds: number): boolean {
  return start > firstSeenSeconds + SKEW_SECONDS;
}

/**
 * shownAheadBefore: a start other than the confirmed one that earlier replies showed ahead — the
 * one awaiting its second reply (`awaitedStart`), or one confirmed before another confirmed start
 * replaced it (`confirmedBefore`). A reply listing it again is the truth's return after a lie came
 * between (a later start confirmed by a fresh lie's second reply, a contest "started minutes ago"):
 * it is an undo, confirmed at once even if it is now minutes ahead or has begun, for it was not
 * first shown then. A lie does not name such a start: it moves starts (later, into the past) or
 * drops contests; a reply that repeats an old state is dated and stale, never applied.
 */
export function shownAheadBefore(stored: ContestItem, start: number): boolean {
  return start === stored.awaitedStart || (stored.confirmedBefore ?? []).includes(start);
}

/** How many replaced confirmed starts a contest keeps (`confirmedBefore`): more than honest churn reschedules a contest. */
export const CONFIRMED_BEFORE_KEPT = 4;

/**
 * confirmedBeforeAfter: the starts confirmed before, once the item is written with `confirmed`: the
 * stored confirmed start joins them when another replaces it; the confirmed one is never among them.
 */
export function confirmedBeforeAfter(stored: ContestItem | undefined, confirmed: number): number[] {
  const before = [...(stored?.confirmedBefore ?? []), ...(stored?.confirmedStart ? [stored.confirmedStart] : [])];
  const kept = before.filter((start, i) => start !== confirmed && before.indexOf(start) === i);
  return kept.slice(-CONFIRMED_BEFORE_KEPT);
}

/**
 * The start awaiting confirmation after a reply lists `listedStart` (`confirmed`: the confirmed start
 * after it): the listed start if this reply showed it ahead and it awaits a second reply; none once
 * the listed start is confirmed; otherwise the one before, for a reply listing a start no reply
 * showed ahead (or held, or missing) cannot refute it.
 */
export function awaitedStartAfter(stored: ContestItem, listedStart: number, confirmed: number, awaiting: boolean): number | undefined {
  if (awaiting) return listedStart;
  if (listedStart === confirmed) return undefined;
  return stored.awaitedStart === confirmed ? undefined : stored.awaitedStart;
}

/** The confirmed start of a stored contest (0: none); an item written before the rule: its start. */
export function confirmedStartOf(stored: ContestItem): number {
  return stored.confirmedStart ?? stored.startTimeSeconds;
}

// =============================================================================================
// 4. The gate
// =============================================================================================

/** Whether a contest's reminders may fire, and at which start. */
export type Gate = { due: true; start: number } | { due: false; reason: PauseReason };

/**
 * A reminder is due only when every current piece of evidence says so:
 * - deleted, vanished, or the latest reply reports a change that is held (a drop, a finish, a
 *   postponement, a move into the past): paused;
 * - finished at its confirmed start:
 *   due there (a reminder that never fired, say after a pause, fires late); otherwise paused;
 * - left unfinished past its TTL: paused;
 * - listed at a start no reply showed ahead (a contest "started minutes ago", a start moved into the
 *   past and shown after converging): paused (`started`), whatever the confirmed start
 *   (`listedStartCounts`);
 * - otherwise due at the later of the confirmed start and the latest reply's start: a move later
 *   lands at once, a move earlier only once confirmed (then it is the confirmed start), the undo of
 *   an unconfirmed change at once (the confirmed start is the later one again), never earlier than
 *   a start a reply showed ahead that awaits its second reply (`awaitedStart`).
 */
export function gateOf(contest: ContestItem | undefined, nowSeconds: number, firingRule = true): Gate {
  if (contest === undefined || contest.vanishedAt !== undefined) return { due: false, reason: 'vanished' };
  // The broken variant: due at whatever the contest shows, as a notifier reading remindAt would.
  if (!firingRule)
    return contest.phase === 'FINISHED' ? { due: false, reason: 'finished' } : { due: true, start: contest.startTimeSeconds };
  // Any held change is doubt: a withdrawal, a finish, a move (later or earlier, or into the past).
  if (contest.pending?.held === true) return { due: false, reason: 'held' };
  if (contest.phase !== 'FINISHED' && contest.expiresAt <= nowSeconds) return { due: false, reason: 'expired' };
  const confirmed = confirmedStartOf(contest);
  const latest = contest.startTimeSeconds;
  if (contest.phase === 'FINISHED')
    return confirmed > 0 && latest === confirmed ? { due: true, start: confirmed } : { due: false, reason: 'finished' };
  if (!listedStartCounts(contest)) return { due: false, reason: 'started' };
  return { due: true, start: Math.max(confirmed, latest, contest.awaitedStart ?? 0) };
}

/**
 * listedStartCounts: the start the latest reply lists is evidence a reminder may follow — the
 * confirmed start, or one a reply showed ahead (its evidence says when). One no reply showed ahead
 * (a contest "started minutes ago", a start moved into the past and shown once the replies that
 * said it converged) is not, and it leaves no current evidence for any other start either: the
 * replies no longer list the confirmed start, and the truth may move unseen behind them (seed 5:
 * a round postponed by a day while a converged lie was shown). When in doubt, delay: the
 * reminders are paused until a reply lists a start that counts again — the confirmed one (the
 * undo lands at once), one awaiting its second reply, or a later one — late, never early.
 */
export function listedStartCounts(contest: ContestItem): boolean {
  const latest = contest.startTimeSeconds;
  if (latest === confirmedStartOf(contest)) return true;
  const pending = contest.pending;
  return pending !== undefined && startOfEvidence(pending.said) === latest && shownAhead(latest, pending.since);
}

/** The contest's `remindersPaused`: absent while its reminders are due at the start it shows. */
export function remindersPausedOf(contest: ContestItem, gate: Gate): PauseReason | undefined {
  if (!gate.due) return gate.reason;
  if (contest.pending?.held === true) return 'held';
  return gate.start === contest.startTimeSeconds ? undefined : 'unconfirmed';
}

/**
 * A contest item with its gate written on it (docs/tables.md, "Contests, for reminders"):
 * `dueStart`, the start its reminders may fire at now (absent while they may not), which delivery's
 * claim checks, and `remindersPaused`, why not. Every contest the sync writes carries them.
 */
export function withGate(contest: ContestItem, nowSeconds: number, firingRule = true): ContestItem {
  const gate = gateOf(contest, nowSeconds, firingRule);
  const paused = remindersPausedOf(contest, gate);
  const { remindersPaused: _paused, dueStart: _dueStart, ...rest } = contest;
  return { ...rest, ...(paused !== undefined ? { remindersPaused: paused } : {}), ...(gate.due ? { dueStart: gate.start } : {}) };
}

export function sameGate(a: Gate, b: Gate): boolean {
  return a.due ? b.due && a.start === b.start : !b.due && a.reason === b.reason;
}

/**
 * When in doubt, delay: while the upstream gives no current evidence (a stale reply, Codeforces
 * failing), the truth may move unseen. The contests whose reminders may fire are the ones doubt
 * follows (reminders.ts, `followContest`: those with reminders due before the next sync could see
 * a change are paused, contest first); the next applied reply ends the pause (`agrees` sees the
 * contest's gate disagree with its evidence, and its reminders follow again).
 */
export function contestsToDoubt(contests: readonly ContestItem[]): ContestItem[] {
  return contests.filter((c) => c.remindersPaused === undefined && c.vanishedAt === undefined);
}

// =============================================================================================
// 5. The events
// =============================================================================================

/** A deleted contest is told withdrawn when it has been missing this long, or its start passed (whichever first). */
export const WITHDRAWN_TOLD_AFTER_SECONDS = 24 * 3600;

export type ContestView = { kind: 'scheduled'; start: number } | { kind: 'withdrawn' } | { kind: 'undecided' };

/** What the evidence agrees on about a stored contest as this run leaves it (a deleted one: the register, `withdrawnDue`). */
export function viewOf(contest: ContestItem): ContestView {
  if (contest.vanishedAt !== undefined) return { kind: 'undecided' };
  if (contest.pending !== undefined || contest.remindersPaused !== undefined || contest.phase !== 'BEFORE') return { kind: 'undecided' };
  const confirmed = confirmedStartOf(contest);
  return confirmed > 0 && confirmed === contest.startTimeSeconds ? { kind: 'scheduled', start: confirmed } : { kind: 'undecided' };
}

/**
 * What was last published of a stored contest. An item written before contest events has no
 * `published`: its view then counts as published (an upgrade announces nothing that did not change).
 */
export function publishedOf(stored: ContestItem | undefined): Published {
  if (stored === undefined) return 'none';
  if (stored.published !== undefined) return stored.published;
  const view = viewOf(stored);
  return view.kind === 'scheduled' ? view.start : 'none';
}

/**
 * A contest deleted after its misses, as the register in the reply clock keeps it: since when it
 * is missing, the start that was published, whether its withdrawal was told, and what the event names.
 */
export interface WithdrawnEntry {
  since: number;
  start: number;
  told: boolean;
  /** The contest's name, at most `WITHDRAWN_NAME_CHARS`. */
  name: string;
  /** The contest's URL, at most `WITHDRAWN_URL_CHARS` (empty in an entry written before it was kept). */
  url: string;
  /** The contest's `publishedSeq` (events told of it, the withdrawal once told included). */
  seq: number;
  /** The contest's platform (public ids are `<platform>:<contestId>`). */
  platform: string;
}

/** A register entry keeps at most this much of the name: the clock item stays far below 400 KB. */
export const WITHDRAWN_NAME_CHARS = 60;
/** And at most this much of the URL (a source's contest URL is far shorter). */
export const WITHDRAWN_URL_CHARS = 120;

/** Whether a deleted contest's withdrawal is told now: missing a day, or its start passed. */
export function withdrawnDue(entry: WithdrawnEntry, nowSeconds: number): boolean {
  return !entry.told && (nowSeconds >= entry.start || nowSeconds >= entry.since + WITHDRAWN_TOLD_AFTER_SECONDS);
}

/** What a contest listed again had published: its start while the withdrawal was not told, else `withdrawn`. */
export function publishedOfEntry(entry: WithdrawnEntry): Published {
  return entry.told ? 'withdrawn' : entry.start;
}

/** The event a view change publishes, if any: its type and the starts it reports. */
export function changeOf(published: Published, view: ContestView): { type: ContestEventType; from?: number; to?: number } | undefined {
  if (view.kind === 'undecided') return undefined;
  if (view.kind === 'withdrawn') return typeof published === 'number' ? { type: CONTEST_EVENT.withdrawn, from: published } : undefined;
  if (published === 'none') return { type: CONTEST_EVENT.announced, to: view.start };
  if (published === 'withdrawn') return { type: CONTEST_EVENT.back, to: view.start };
  return published !== view.start ? { type: CONTEST_EVENT.rescheduled, from: published, to: view.start } : undefined;
}

/** What `published` becomes after a view (an undecided view keeps it). */
export function publishedAfter(published: Published, view: ContestView): Published {
  if (view.kind === 'scheduled') return view.start;
  if (view.kind === 'withdrawn') return published === 'none' ? 'none' : 'withdrawn';
  return published;
}

/**
 * The event id: the contest and the event's number (`publishedSeq` + 1). A retried run, one that
 * stopped between transactions, or a later run after rewrites that published nothing, derives the
 * same id for the same change; the next change of the contest has the next number.
 */
export function contestEventId(contestId: number, sequence: number): string {
  const digest = createHash('sha256')
    .update(JSON.stringify([contestId, sequence]))
    .digest('hex');
  return `contest:${digest.slice(0, 32)}`;
}

/** Events a run tells from the register at most (they share the reply clock's transaction); the rest are told by the next runs. */
export const WITHDRAWN_TOLD_PER_RUN = 40;

/** How long the register of deleted contests remembers one (a later listing is announced anew). */
export const WITHDRAWN_KEPT_SECONDS = 30 * 24 * 3600;
/**
 * At most this many entries in the register (those not yet told first, then the newest): with
 * names cut to 60 characters the clock item stays under 64 KB, far below DynamoDB's 400 KB,
 * and cheap to read every delivery minute.
 */
export const WITHDRAWN_KEPT_MAX = 200;

export type WithdrawnRegister = Record<string, WithdrawnEntry>;

export interface Announcements {
  events: OutboxEvent[];
  /** Every contest put of the run, with `published` as this run leaves it. */
  puts: ContestItem[];
  /** The register of deleted contests as this run leaves it. */
  withdrawn: WithdrawnRegister;
  /** Whether the register differs from the one read (the clock must be written). */
  withdrawnChanged: boolean;
}

export interface AnnounceInput {
  /** The contests as stored before this run. */
  stored: readonly ContestItem[];
  /** The contests this run writes (new, changed, bookkeeping, vanished). */
  puts: readonly ContestItem[];
  /** The contests this run deletes. */
  deletes: readonly number[];
  /** The register of contests deleted after a start was published, as read (the reply clock's `withdrawn`). */
  withdrawn?: Readonly<Record<string, unknown>>;
  nowSeconds: number;
}

/** The register as read: entries that are not well-formed or are too old are dropped. */
function registerOf(read: Readonly<Record<string, unknown>> | undefined, nowSeconds: number): Map<string, WithdrawnEntry> {
  const register = new Map<string, WithdrawnEntry>();
  for (const [id, value] of Object.entries(read ?? {})) {
    const entry = value as Partial<WithdrawnEntry> | null;
    if (entry === null || typeof entry !== 'object' || typeof entry.since !== 'number' || typeof entry.start !== 'number') continue;
    if (entry.since <= nowSeconds - WITHDRAWN_KEPT_SECONDS) continue;
    register.set(id, {
      since: entry.since,
      start: entry.start,
      told: entry.told === true,
      name: String(entry.name ?? '').slice(0, WITHDRAWN_NAME_CHARS),
      url: String(entry.url ?? '').slice(0, WITHDRAWN_URL_CHARS),
      seq: typeof entry.seq === 'number' && Number.isSafeInteger(entry.seq) ? entry.seq : 0,
      // Entries written before the platform was kept were all of the first source.
      platform: typeof entry.platform === 'string' ? entry.platform.slice(0, 32) : 'codeforces',
    });
  }
  return register;
}

/**
 * The contest events of a run, its puts carrying what they publish, and the register of deleted
 * contests in the reply clock: a contest deleted after a start was published is remembered there,
 * told withdrawn when `withdrawnDue`, and published back (or moved, or nothing) if listed again.
 */
export function announce(input: AnnounceInput): Announcements {
  const stored = new Map(input.stored.map((item) => [item.contestId, item]));
  const register = registerOf(input.withdrawn, input.nowSeconds);
  // A contest stored again (a run that wrote its put but stopped before the clock) is not withdrawn.
  for (const id of [...register.keys()]) if (stored.has(Number(id))) register.delete(id);
  const events: OutboxEvent[] = [];
  const puts = input.puts.map((item) => {
    const before = stored.get(item.contestId);
    const entry = before === undefined ? register.get(String(item.contestId)) : undefined;
    const published = entry !== undefined ? publishedOfEntry(entry) : publishedOf(before);
    const seq = entry !== undefined ? entry.seq : (before?.publishedSeq ?? 0);
    const view = viewOf(item);
    const change = changeOf(published, view);
    if (change !== undefined) events.push(eventOf(item, change, seq + 1));
    // Listed again: the register forgets it once the item carries what was published.
    register.delete(String(item.contestId));
    const told = change !== undefined ? seq + 1 : seq;
    return { ...item, published: publishedAfter(published, view), ...(told > 0 ? { publishedSeq: told } : {}) };
  });
  for (const contestId of input.deletes) {
    const before = stored.get(contestId);
    if (before === undefined) continue;
    const published = publishedOf(before);
    if (published === 'none') continue; // never announced: its withdrawal is no news
    register.set(String(contestId), {
      since: before.vanishedAt ?? input.nowSeconds,
      start: typeof published === 'number' ? published : before.startTimeSeconds,
      told: published === 'withdrawn',
      name: before.name.slice(0, WITHDRAWN_NAME_CHARS),
      url: before.url.slice(0, WITHDRAWN_URL_CHARS),
      seq: before.publishedSeq ?? 0,
      platform: before.platform,
    });
  }
  const due = [...register].filter(([, entry]) => withdrawnDue(entry, input.nowSeconds)).slice(0, WITHDRAWN_TOLD_PER_RUN);
  for (const [id, entry] of due) {
    const contest = { contestId: Number(id), platform: entry.platform, name: entry.name, url: entry.url } as ContestItem;
    // The deleted contest's view is withdrawn: the same rule as every other change.
    events.push(eventOf(contest, changeOf(entry.start, { kind: 'withdrawn' })!, entry.seq + 1));
    register.set(id, { ...entry, told: true, seq: entry.seq + 1 });
  }
  const kept = [...register].sort(([, a], [, b]) => Number(a.told) - Number(b.told) || b.since - a.since).slice(0, WITHDRAWN_KEPT_MAX);
  const withdrawn = Object.fromEntries(kept.sort(([a], [b]) => Number(a) - Number(b)));
  const withdrawnChanged =
    JSON.stringify(withdrawn) !== JSON.stringify(Object.fromEntries(registerOf(input.withdrawn, Number.NEGATIVE_INFINITY)));
  return { events, puts, withdrawn, withdrawnChanged };
}

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();

/** The event of a change: `sequence` is its number among the contest's events (its id). */
function eventOf(contest: ContestItem, change: { type: ContestEventType; from?: number; to?: number }, sequence: number): OutboxEvent {
  const { contestId, platform } = contest;
  const base = { contestId, contest: `${platform}:${contestId}`, platform, sequence, name: contest.name, url: contest.url };
  const id = contestEventId(contest.contestId, sequence);
  switch (change.type) {
    case CONTEST_EVENT.withdrawn:
      return { id, detailType: change.type, detail: { ...base, startTimeSeconds: change.from!, startTime: iso(change.from!) } };
    case CONTEST_EVENT.rescheduled:
      return {
        id,
        detailType: change.type,
        detail: {
          ...base,
          previousStartTimeSeconds: change.from!,
          previousStartTime: iso(change.from!),
          startTimeSeconds: change.to!,
          startTime: iso(change.to!),
          durationSeconds: contest.durationSeconds,
        },
      };
    default:
      return {
        id,
        detailType: change.type,
        detail: {
          ...base,
          type: contest.type,
          startTimeSeconds: change.to!,
          startTime: iso(change.to!),
          durationSeconds: contest.durationSeconds,
        },
      };
  }
}
