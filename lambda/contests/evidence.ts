/**
 * The evidence (docs/design.md, "A reply is evidence" and "Stale replies"), pure: when a reply was
 * made and whether it is stale, what is plausible, mass changes, evidence repeated by consecutive
 * replies, and starts shown ahead. One rule per function.
 */
import type { ContestItem, Pending, ReplyDating } from './model.js';

/**
 * Why a change is held (not shown):
 * - `start-in-past`: the start moved to before the newest reply seen before, which showed the old start.
 * - `finish`: reported FINISHED before its end.
 * - `phase`: reported running before its start.
 * - `drop`, `reschedule`, `earlier`: one of many stored upcoming contests missing from the reply,
 *   moved later, or moved earlier in the same reply (a mass change of that kind).
 * - `suspect-move`: the start moved by exactly an amount the platform's upstream errors move it by
 *   (`suspectMovesSeconds`): held until it has lasted `suspectMoveHeldSeconds`.
 * - `move`: the start moved on a platform that does not move its rounds (`moves: false`).
 */
export type HeldKind = 'start-in-past' | 'finish' | 'phase' | 'drop' | 'reschedule' | 'earlier' | 'suspect-move' | 'move';

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
  /**
   * The platform's schedule (its settings' `schedule`, docs/sources.md "Settings"): whether it moves
   * scheduled rounds at all; false, every move of a start is held (`move`).
   */
  moves: boolean;
  /** Start moves of exactly these amounts (seconds, signed) are taken for an upstream error (`suspect-move`)... */
  suspectMovesSeconds: readonly number[];
  /** ...and held until they have lasted this long since the first reply that said them (and enough replies said them). */
  suspectMoveHeldSeconds: number;
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
 * What the platform's schedule makes of a moved start, or undefined: a move by exactly one of the
 * amounts its upstream errors move starts by is `suspect-move` (CodeChef's rounds flipped by exactly
 * 12 hours and came back a week later); any move on a platform that does not move its rounds is
 * `move` (a wrong reply is likelier than news). Nothing for a start that did not move.
 */
export function scheduleImplausibility(
  stored: ContestItem,
  listed: ContestItem,
  settings: Pick<JudgeSettings, 'moves' | 'suspectMovesSeconds'>,
): 'suspect-move' | 'move' | undefined {
  const by = listed.startTimeSeconds - stored.startTimeSeconds;
  if (by === 0) return undefined;
  if (settings.suspectMovesSeconds.includes(by)) return 'suspect-move';
  return settings.moves ? undefined : 'move';
}

/**
 * Whether held evidence of `kind` has converged: repeated by `needed` consecutive replies, and a
 * suspect move besides lasted `suspectMoveHeldSeconds` since the first reply that said it.
 */
export function heldConverged(
  kind: HeldKind,
  evidence: Pick<Pending, 'replies' | 'since'>,
  needed: number,
  nowSeconds: number,
  settings: Pick<JudgeSettings, 'suspectMoveHeldSeconds'>,
): boolean {
  if (evidence.replies < needed) return false;
  return kind !== 'suspect-move' || nowSeconds - evidence.since >= settings.suspectMoveHeldSeconds;
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
