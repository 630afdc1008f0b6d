/**
 * The model of what one reply may change (docs/design.md, "A reply is evidence"), as pure rules:
 * is a listed change plausible against what is stored and the time since the last successful sync,
 * which changes of one kind are a suspicious mass change, and how evidence repeated by consecutive
 * replies is counted. plan.ts applies these rules to a whole reply.
 */
import type { ContestItem, Pending } from './model.js';

/**
 * Why a change is held (not acted on):
 * - `start-in-past`: the start moved to before the last successful sync, which saw the old start.
 * - `finish`: reported FINISHED before its end.
 * - `phase`: running before its start, or a phase going backwards (FINISHED back to BEFORE).
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
  /** Evidence repeated by this many consecutive replies is accepted (held change lands). */
  acceptHeldAfterReplies: number;
}

/** Clock skew and rounding tolerated when comparing a reply's times with ours. */
export const SKEW_SECONDS = 10 * 60;

const PHASE_ORDER: Record<string, number> = { BEFORE: 0, CODING: 1, PENDING_SYSTEM_TEST: 2, SYSTEM_TEST: 3, FINISHED: 4 };

/**
 * Why a listed version of a stored contest cannot be believed now, or undefined if it can.
 * @param lastSyncSeconds when the last successful sync ran (it saw `stored`); the rules ask what
 *   could have happened since.
 */
export function implausibility(stored: ContestItem, listed: ContestItem, nowSeconds: number, lastSyncSeconds: number): HeldKind | undefined {
  const moved = listed.startTimeSeconds !== stored.startTimeSeconds;
  // The last sync saw the old start: had the contest moved to before that sync, that sync would
  // have listed the new start already. A real move earlier is announced ahead of the new start.
  if (moved && listed.startTimeSeconds < lastSyncSeconds - SKEW_SECONDS) return 'start-in-past';
  const listedOrder = PHASE_ORDER[listed.phase] ?? 0;
  const storedOrder = PHASE_ORDER[stored.phase] ?? 0;
  if (listedOrder < storedOrder) return 'phase';
  if (listedOrder >= 1 && listedOrder <= 3 && listed.startTimeSeconds > nowSeconds + SKEW_SECONDS) return 'phase';
  if (listed.phase === 'FINISHED' && stored.phase !== 'FINISHED' && listed.startTimeSeconds + listed.durationSeconds > nowSeconds + SKEW_SECONDS) {
    return 'finish';
  }
  return undefined;
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

/** What a reply said of a contest, as compared between replies: its timing and phase, or `missing`. */
export function evidenceOf(listed: ContestItem | undefined): string {
  return listed === undefined ? 'missing' : `${listed.phase}@${listed.startTimeSeconds}+${listed.durationSeconds}`;
}

/** The evidence after this reply: counted on from the stored one if the reply says the same. */
export function nextEvidence(stored: Pending | undefined, said: string, nowSeconds: number): Pick<Pending, 'said' | 'replies' | 'since'> {
  if (stored !== undefined && stored.said === said) return { said, replies: stored.replies + 1, since: stored.since };
  return { said, replies: 1, since: nowSeconds };
}
