/**
 * The contests (docs/design.md, "A reply is evidence"), pure: what a reply changes of each stored
 * contest — held, shown, vanished, deleted. `planContests` is numbered steps over rules that take
 * one context (one function each); the evidence they weigh is evidence.ts's, the gate they stamp
 * on every item gate.ts's.
 */
import { DEFAULTS } from '../contract.js';
import { COMPARED_FIELDS, type ContestItem, type ListedContest, type Pending } from './model.js';
import {
  awaitedStartAfter,
  confirmedBeforeAfter,
  confirmedStartOf,
  evidenceOf,
  heldConverged,
  type HeldKind,
  implausibility,
  isMassChange,
  isUndo,
  type JudgeSettings,
  type MassKind,
  massKindOf,
  nextEvidence,
  scheduleImplausibility,
  shownAhead,
  shownAheadBefore,
  shownEvidence,
  startOfEvidence,
} from './evidence.js';
import { gateOf, sameGate, withGate } from './gate.js';

export interface PlanSettings extends JudgeSettings {
  /** How long finished contests stay stored (their TTL, and their reminders', is end + this). */
  finishedRetentionSeconds: number;
  /**
   * A stored unfinished contest missing from a valid reply is marked vanished, and deleted (its
   * reminders paused, kept until their TTL) when it has been missing from this many consecutive
   * successful syncs.
   */
  missingSyncsBeforeDelete: number;
  /** Partitions of the Reminders table's `byDue` index: a due reminder's `dueShard` is its bucket mod this. */
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
  moves: true,
  suspectMovesSeconds: [],
  suspectMoveHeldSeconds: 0,
  dueShards: DEFAULTS.dueShards,
  firingRule: true,
  doubtSeconds: 3600 + 600,
};

/** A change not shown (or, in `accepted`, shown now after being held). */
export interface HeldChange {
  contestId: string;
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
  restored: string[];
  /** Contests missing from `missingSyncsBeforeDelete` consecutive syncs: deleted (reminders paused, kept). */
  cancelled: string[];
  /** Changes held by this reply: the stored contest is shown as it was. */
  held: HeldChange[];
  /** Held changes shown now: repeated by enough consecutive replies, or accepted by an operator. */
  accepted: HeldChange[];
  /**
   * Contests whose reminders must follow this run: their firing state, start or TTL changed, they
   * were deleted, or they are new (reminders of an earlier listing under the same id come back).
   */
  remindersToCheck: string[];
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
  listedIds: ReadonlySet<string>;
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
  contestId: string;
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

function listingOf(before: ContestItem, fetched: ReadonlyMap<string, ContestItem>, listedIds: ReadonlySet<string>): Listing {
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
    if (change.listed !== undefined) change.kind = changeKind(change.stored, change.listed, ctx);
    if (change.undo) {
      if (change.kind === 'start-in-past' || (isDoubtedMove(change.kind) && !heldAlready(change))) delete change.kind;
      continue;
    }
    if (change.kind !== undefined || !upcomingIds.has(change.stored.contestId)) continue;
    change.mass = massKindOf(change.stored, change.listed);
    if (change.mass !== undefined) massCount[change.mass] += 1;
  }
  return (kind) => kind !== undefined && isMassChange(massCount[kind], upcoming.length, ctx.settings);
}

const isDoubtedMove = (kind: HeldKind | undefined): boolean => kind === 'suspect-move' || kind === 'move';

/**
 * heldAlready: the change repeats held evidence. A held move's start is confirmed once two replies
 * say it (`hold`), so listing it again looks like the return to the confirmed start; it is the
 * doubted move still, held until it converges. The return to a start confirmed before any doubt
 * lands at once, as every undo does.
 */
function heldAlready(change: Change): boolean {
  const pending = change.stored.pending;
  return pending?.held === true && pending.said === evidenceOf(change.listed);
}

/**
 * changeKind: why a listed version cannot be believed now, if it cannot. A suspect move is told
 * first (an upstream error's move into the past is still that error, held as long); then what
 * cannot have happened since the last reply (evidence.ts, `implausibility`); then a move on a
 * platform that does not move its rounds.
 */
function changeKind(stored: ContestItem, listed: ContestItem, ctx: PlanContext): HeldKind | undefined {
  const schedule = scheduleImplausibility(stored, listed, ctx.settings);
  if (schedule === 'suspect-move') return schedule;
  return implausibility(stored, listed, ctx.nowSeconds, ctx.lastSeenSeconds) ?? schedule;
}

/**
 * decide: hold the change, or show it. Held evidence that this reply repeats stays held until it
 * converges, whatever the rest of the reply looks like now (the share of a mass change moves as
 * contests come and go). A mass change may be honest (a mass postponement near the start): shown
 * once a second reply repeats it; what cannot be honest is held until acceptHeldAfterReplies (a
 * suspect move besides until it has lasted suspectMoveHeldSeconds).
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
    const converged = heldConverged(holdKind, evidence, needed, ctx.nowSeconds, ctx.settings);
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
