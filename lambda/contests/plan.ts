/**
 * What a reply changes in the Contests table, decided from the fetched list, the stored items and
 * the time alone (no I/O), by the model of what a reply may change (docs/design.md, "A reply is
 * evidence"; the rules are in judge.ts, one function each). Each stored contest goes through the
 * same steps: classify what the reply says of it, judge the change alone and across the reply, then
 * either hold it, show it, mark it vanished or delete it. Every item written carries the firing
 * rule's state (`confirmedStart`, `remindersPaused`: reminders.ts), and the plan names the contests
 * whose reminders must follow.
 */
import type { CodeforcesContest } from '../codeforces/schema.js';
import {
  awaitedStartAfter,
  confirmedStartOf,
  evidenceOf,
  implausibility,
  isMassChange,
  isUndo,
  massKindOf,
  nextEvidence,
  shownAhead,
  shownEvidence,
  startOfEvidence,
  type HeldKind,
  type JudgeSettings,
  type MassKind,
} from './judge.js';
import { COMPARED_FIELDS, contestUrl, type ContestItem, type Pending } from './model.js';
import { gateOf, remindersPausedOf, sameGate } from './reminders.js';

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
  dueShards: 1,
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

export function toItem(
  contest: CodeforcesContest,
  settings: Pick<PlanSettings, 'finishedRetentionSeconds'>,
  updatedAt: string,
): ContestItem {
  return {
    contestId: contest.id,
    platform: 'codeforces',
    name: contest.name,
    type: contest.type,
    phase: contest.phase,
    startTimeSeconds: contest.startTimeSeconds,
    durationSeconds: contest.durationSeconds,
    url: contestUrl(contest.id),
    updatedAt,
    expiresAt: contest.startTimeSeconds + contest.durationSeconds + settings.finishedRetentionSeconds,
  };
}

export function sameContest(a: ContestItem, b: ContestItem): boolean {
  return COMPARED_FIELDS.every((field) => a[field] === b[field]);
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

export interface PlanInput {
  /** Valid, scheduled contests from the API. */
  fetched: readonly CodeforcesContest[];
  /** Ids of every entry the API listed (valid or not): an invalid entry is no miss. */
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

function without<K extends keyof ContestItem>(item: ContestItem, ...keys: K[]): ContestItem {
  const copy = { ...item };
  for (const key of keys) delete copy[key];
  return copy;
}

export function planContests(input: PlanInput): ContestPlan {
  const settings = input.settings ?? DEFAULT_PLAN_SETTINGS;
  const nowSeconds = Math.floor(input.nowMs / 1000);
  const lastSeenSeconds = Math.floor(Math.min(input.lastSeenMs ?? input.nowMs, input.nowMs) / 1000);
  const updatedAt = new Date(input.nowMs).toISOString();
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
  const stored = new Map(input.stored.map((item) => [item.contestId, item]));
  // One entry per id (the last listed wins): two writes of one item cannot share a transaction.
  const fetched = new Map(input.fetched.map((contest) => [contest.id, toItem(contest, settings, updatedAt)]));

  /** Writes `item` with the firing rule's state; its reminders follow if that state changed. */
  const put = (into: ContestItem[], before: ContestItem | undefined, item: ContestItem): void => {
    const gate = gateOf(item, nowSeconds, settings.firingRule);
    const paused = remindersPausedOf(item, gate);
    const written: ContestItem = {
      ...without(item, 'remindersPaused'),
      ...(paused !== undefined ? { remindersPaused: paused } : {}),
      updatedAt,
    };
    into.push(written);
    const follow =
      before === undefined ||
      before.confirmedStart === undefined ||
      before.startTimeSeconds !== written.startTimeSeconds ||
      before.expiresAt !== written.expiresAt ||
      before.remindersPaused !== written.remindersPaused ||
      !sameGate(gateOf(before, nowSeconds, settings.firingRule), gate);
    if (follow) plan.remindersToCheck.push(item.contestId);
  };
  const keep = (before: ContestItem, item: ContestItem, pending?: Pending): void =>
    put(plan.bookkeeping, before, { ...without(item, 'pending'), ...(pending !== undefined ? { pending } : {}) });

  // 1. New contests: shown as listed; their start is confirmed if it was shown ahead.
  for (const [id, item] of fetched) {
    if (stored.has(id)) continue;
    // Past its TTL (finished long ago, or left unfinished for years): not stored, or it would
    // expire at once and be inserted again after every TTL deletion.
    if (item.expiresAt <= nowSeconds) continue;
    put(plan.upserts, undefined, { ...item, confirmedStart: shownAhead(item.startTimeSeconds, nowSeconds) ? item.startTimeSeconds : 0 });
  }

  // 2. Stored contests: what the reply says of each; the unchanged ones are settled here.
  const changes: Change[] = [];
  for (const before of input.stored) {
    const listing: Listing = fetched.has(before.contestId)
      ? { kind: 'valid', item: fetched.get(before.contestId)! }
      : input.listedIds.has(before.contestId)
        ? { kind: 'invalid' }
        : { kind: 'missing' };
    const change = settle(before, listing);
    if (change !== undefined) changes.push(change);
  }

  // 3. Judge each change alone, then each kind of change across the reply.
  const upcoming = input.stored.filter((item) => item.phase !== 'FINISHED' && item.vanishedAt === undefined);
  const upcomingIds = new Set(upcoming.map(({ contestId }) => contestId));
  const massCount: Record<MassKind, number> = { drop: 0, reschedule: 0, earlier: 0 };
  for (const change of changes) {
    if (change.listed !== undefined) change.kind = implausibility(change.stored, change.listed, nowSeconds, lastSeenSeconds);
    if (change.undo) {
      if (change.kind === 'start-in-past') delete change.kind;
      continue;
    }
    if (change.kind !== undefined || !upcomingIds.has(change.stored.contestId)) continue;
    change.mass = massKindOf(change.stored, change.listed);
    if (change.mass !== undefined) massCount[change.mass] += 1;
  }
  const massive = (kind: MassKind | undefined) => kind !== undefined && isMassChange(massCount[kind], upcoming.length, settings);

  // 4. Act on each change: hold it, or show it.
  for (const change of changes) decide(change, massive(change.mass));
  return plan;

  /** The contests whose listing needs no judging are settled here; the others are returned as a change. */
  function settle(before: ContestItem, listing: Listing): Change | undefined {
    if (listing.kind === 'invalid') {
      // Listed with an entry that cannot be believed: it exists, so it is no miss (a run of misses
      // is broken) and a vanished one is back, as stored; nothing in the entry is acted on.
      if (before.vanishedAt !== undefined) {
        plan.restored.push(before.contestId);
        keep(before, without(before, 'vanishedAt', 'missingSyncs'));
      } else if (before.pending?.said === 'missing') keep(before, before);
      else plan.unchanged += 1;
      return undefined;
    }
    if (listing.kind === 'missing') {
      // Finished contests leave the list only by Codeforces' own clean-up; TTL removes them here.
      if (before.phase === 'FINISHED') plan.unchanged += 1;
      // In its grace period and still missing: one more miss.
      else if (before.vanishedAt !== undefined) missedAgain(before, (before.missingSyncs ?? 1) + 1, before.vanishedAt);
      else return { stored: before, listed: undefined, undo: false };
      return undefined;
    }
    const listed = listing.item;
    if (expiredUnfinished(before, listed)) return undefined;
    if (sameContest(before, listed) && before.vanishedAt === undefined) {
      agrees(before, listed);
      return undefined;
    }
    return { stored: before, listed, undo: isUndo(before, listed) };
  }

  /**
   * Past its TTL and still unfinished (Codeforces keeps some in PENDING_SYSTEM_TEST for years): left
   * as it is until its TTL removes it, once marked so that its reminders get the same TTL. One
   * that finally finishes still gets its final phase.
   */
  function expiredUnfinished(before: ContestItem, listed: ContestItem): boolean {
    if (listed.expiresAt > nowSeconds || listed.phase === 'FINISHED') return false;
    if (before.remindersPaused === 'expired' || before.phase === 'FINISHED') plan.unchanged += 1;
    else keep(before, before);
    return true;
  }

  /** The reply agrees with what is stored: a start awaiting confirmation is confirmed, held evidence is forgotten. */
  function agrees(before: ContestItem, listed: ContestItem): void {
    const pending = before.pending;
    // Unchanged, unless its reminders were paused for doubt (a stale reply, an outage): the pause ends.
    const paused = remindersPausedOf(before, gateOf(before, nowSeconds, settings.firingRule));
    if (pending === undefined && before.confirmedStart !== undefined && before.remindersPaused === paused) {
      plan.unchanged += 1;
      return;
    }
    const said = evidenceOf(listed);
    const confirmedStart = confirmStart(before, listed.startTimeSeconds, false);
    // Still unconfirmed (the evidence before was another claim): the next reply confirms it.
    const awaiting =
      confirmedStart !== listed.startTimeSeconds &&
      pending !== undefined &&
      pending.said !== said &&
      shownAhead(listed.startTimeSeconds, nowSeconds);
    const awaitedStart = awaitedStartAfter(before, listed.startTimeSeconds, confirmedStart, awaiting);
    keep(
      before,
      { ...without(before, 'awaitedStart'), confirmedStart, ...(awaitedStart !== undefined ? { awaitedStart } : {}) },
      awaiting ? { held: false, kind: 'confirm', said, replies: 1, since: nowSeconds } : undefined,
    );
  }

  /** Hold the change, or show it. */
  function decide(change: Change, mass: boolean): void {
    const { stored: before, listed } = change;
    const evidence = nextEvidence(before.pending, evidenceOf(listed), nowSeconds);
    // Held evidence that this reply repeats stays held until it converges, whatever the rest of
    // the reply looks like now (the share of a mass change moves as contests come and go).
    const stillHeld = !change.undo && before.pending?.held === true && evidence.replies > 1 ? (before.pending.kind as HeldKind) : undefined;
    const holdKind = settings.plausibility ? (change.kind ?? (mass ? change.mass : stillHeld)) : undefined;
    let accepted = false;
    if (holdKind !== undefined) {
      const held: HeldChange = { contestId: before.contestId, kind: holdKind, since: evidence.since, replies: evidence.replies };
      // A mass change may be honest (a mass postponement near the start): shown once a second reply
      // repeats it. What cannot be honest is held until acceptHeldAfterReplies.
      const needed = isMass(holdKind)
        ? Math.min(MASS_ACCEPT_AFTER_REPLIES, settings.acceptHeldAfterReplies)
        : settings.acceptHeldAfterReplies;
      const converged = evidence.replies >= needed;
      if (!converged && input.acceptHeld !== true) {
        plan.held.push(held);
        hold(before, listed, { held: true, kind: holdKind, ...evidence });
        return;
      }
      accepted = !converged;
      plan.accepted.push(held);
    }
    if (listed === undefined) missedAgain(before, evidence.replies, evidence.since);
    else show(before, listed, evidence, accepted);
  }

  /**
   * Held: shown as stored. A listing still breaks a run of misses (a vanished contest is back, as
   * stored), and a start two replies agree on is confirmed for the firing rule even while the
   * change is held (an honest mass move near the start must not wait for the hold to end).
   */
  function hold(before: ContestItem, listed: ContestItem | undefined, pending: Pending): void {
    if (before.vanishedAt !== undefined) plan.restored.push(before.contestId);
    const confirmedStart = listed !== undefined ? confirmStart(before, listed.startTimeSeconds, false) : confirmedStartOf(before);
    keep(before, { ...without(before, 'vanishedAt', 'missingSyncs'), confirmedStart }, pending);
  }

  /** Missing from `misses` consecutive replies since `since`: marked vanished, or deleted. */
  function missedAgain(before: ContestItem, misses: number, since: number): void {
    if (misses >= settings.missingSyncsBeforeDelete) {
      plan.cancelled.push(before.contestId);
      plan.remindersToCheck.push(before.contestId);
      return;
    }
    put(plan.vanished, before, { ...without(before, 'pending'), vanishedAt: since, missingSyncs: misses });
  }

  /** Show the listed version; a new start awaits a second reply before reminders may be due at it (unless it is later). */
  function show(
    before: ContestItem,
    listed: ContestItem,
    evidence: Pick<Pending, 'said' | 'replies' | 'since'>,
    acceptedByOperator: boolean,
  ): void {
    const confirmedStart = confirmStart(before, listed.startTimeSeconds, acceptedByOperator);
    const awaiting =
      confirmedStart !== listed.startTimeSeconds && evidence.replies === 1 && shownAhead(listed.startTimeSeconds, evidence.since);
    const awaitedStart = awaitedStartAfter(before, listed.startTimeSeconds, confirmedStart, awaiting);
    const item: ContestItem = {
      ...listed,
      confirmedStart,
      ...(awaitedStart !== undefined ? { awaitedStart } : {}),
      ...(awaiting ? { pending: { held: false, kind: 'reschedule', ...evidence } } : {}),
    };
    put(plan.upserts, before, item);
    if (before.vanishedAt !== undefined) plan.restored.push(before.contestId);
  }

  /**
   * The confirmed start after this reply lists `start`: the start itself once two consecutive
   * replies (or an operator) say it and it was shown ahead; otherwise the confirmed start stands.
   */
  function confirmStart(before: ContestItem, start: number, acceptedByOperator: boolean): number {
    const confirmed = confirmedStartOf(before);
    if (start === confirmed) return confirmed;
    // A reply showed it ahead (awaiting confirmation) and this one lists it again: what came
    // between (held, missing, or listing a start no reply showed ahead) could not refute it.
    if (start === before.awaitedStart) return start;
    const previous = before.pending?.said ?? shownEvidence(before);
    const repeated = startOfEvidence(previous) === start;
    // First seen by the reply that started the evidence for it (this one, if it is new).
    const firstSeen = repeated ? (before.pending !== undefined ? before.pending.since : undefined) : nowSeconds;
    if (firstSeen === undefined) return confirmed; // shown before and already judged not shown ahead
    if ((repeated || acceptedByOperator) && shownAhead(start, firstSeen)) return start;
    return confirmed;
  }
}
