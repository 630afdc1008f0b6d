/**
 * The firing rule, "when in doubt, delay" (docs/design.md, "The firing rule"), as pure functions:
 * the gate of a contest (due at which start, or paused and why) from what the sync stores of it,
 * and the state each of its reminders must have (`dueAt`, `dueShard`, `dueStart`, `paused`,
 * `remindAt`, `expiresAt`). The notifier reads nothing else: it sends a reminder once `dueAt <= now`.
 */
import { confirmedStartOf, shownAhead, startOfEvidence } from './judge.js';
import type { ContestItem, PauseReason, ReminderItem } from './model.js';

/** Whether a contest's reminders may fire, and at which start. */
export type Gate = { due: true; start: number } | { due: false; reason: PauseReason };

/**
 * A reminder is due only when every current piece of evidence says so:
 * - deleted, vanished, or the latest reply reports a change that is held (a drop, a finish, a
 *   postponement, a move into the past): paused;
 * - finished at its confirmed start:
 *   due there (a reminder that never fired, say after a pause, fires late); otherwise paused;
 * - left unfinished past its TTL: paused;
 * - otherwise due at the later of the confirmed start and the latest reply's start, the latter
 *   counting only if a reply showed it ahead: a move later lands at once, a move earlier only once
 *   confirmed (then it is the confirmed start), the undo of an unconfirmed change at once (the
 *   confirmed start is the later one again), never earlier than a start a reply showed ahead that
 *   awaits its second reply (`awaitedStart`); with none: paused (`started`).
 */
export function gateOf(contest: ContestItem | undefined, nowSeconds: number, firingRule = true): Gate {
  if (contest === undefined || contest.vanishedAt !== undefined) return { due: false, reason: 'vanished' };
  // The broken variant: due at whatever the contest shows, as a notifier reading remindAt would.
  if (!firingRule)
    return contest.phase === 'FINISHED' ? { due: false, reason: 'finished' } : { due: true, start: contest.startTimeSeconds };
  const pending = contest.pending;
  const said = pending?.held === true ? pending.said : undefined;
  // Any held change is doubt: a withdrawal, a finish, a move (later or earlier, or into the past).
  if (said !== undefined) return { due: false, reason: 'held' };
  if (contest.phase !== 'FINISHED' && contest.expiresAt <= nowSeconds) return { due: false, reason: 'expired' };
  const confirmed = confirmedStartOf(contest);
  const latest = said !== undefined ? (startOfEvidence(said) ?? contest.startTimeSeconds) : contest.startTimeSeconds;
  if (contest.phase === 'FINISHED')
    return confirmed > 0 && latest === confirmed ? { due: true, start: confirmed } : { due: false, reason: 'finished' };
  // The latest start counts if it is the confirmed one, or a reply showed it ahead (its evidence says when).
  const latestCounts =
    latest === confirmed || (pending !== undefined && startOfEvidence(pending.said) === latest && shownAhead(latest, pending.since));
  // A start a reply showed ahead that awaits its second reply (`awaitedStart`) is evidence too: a
  // reply listing a start no reply showed ahead (a contest "started minutes ago") cannot bring the
  // reminders back to an earlier start than it.
  const start = Math.max(confirmed, latestCounts ? latest : 0, contest.awaitedStart ?? 0);
  return start > 0 ? { due: true, start } : { due: false, reason: 'started' };
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

/**
 * A contest deleted after its misses and listed again at the start its reminders were kept at
 * brings them back at once, even if that start has passed meanwhile (a partial list longer than
 * the grace period): the app set them against that start when a reply showed it ahead, so the
 * reminders are evidence that the start was confirmed. Its own item is new and knows no confirmed
 * start (`started`, or `finished` elsewhere); this is the start to confirm, if any.
 */
export function keptStart(contest: ContestItem | undefined, reminders: readonly ReminderItem[], nowSeconds: number): number | undefined {
  if (contest === undefined || contest.vanishedAt !== undefined) return undefined;
  const gate = gateOf(contest, nowSeconds);
  if (gate.due || (gate.reason !== 'started' && gate.reason !== 'finished')) return undefined;
  const start = contest.startTimeSeconds;
  return reminders.some((r) => r.paused === 'vanished' && r.remindAt + 60 * r.minutesBefore === start) ? start : undefined;
}

export function sameGate(a: Gate, b: Gate): boolean {
  return a.due ? b.due && a.start === b.start : !b.due && a.reason === b.reason;
}

/** The start a reminder was last sent for (a reminder sent before the rule: the start its remindAt was for). */
export function notifiedStartOf(reminder: ReminderItem): number | undefined {
  if (reminder.notifiedStart !== undefined) return reminder.notifiedStart;
  return reminder.notifiedAt !== undefined ? reminder.remindAt + 60 * reminder.minutesBefore : undefined;
}

/** Every start a reminder was sent for: the last one and those before it. */
export function sentStartsOf(reminder: ReminderItem): Set<number> {
  const sent = new Set<number>(reminder.sentStarts ?? []);
  const last = notifiedStartOf(reminder);
  if (last !== undefined) sent.add(last);
  return sent;
}

/** The attributes of a reminder the sync keeps. */
export interface ReminderState {
  remindAt: number;
  expiresAt: number;
  dueAt?: number;
  dueShard?: number;
  dueStart?: number;
  paused?: string;
  sentStarts?: Set<number>;
}

export const KEPT_ATTRIBUTES = [
  'remindAt',
  'expiresAt',
  'dueAt',
  'dueShard',
  'dueStart',
  'paused',
  'sentStarts',
] as const satisfies readonly (keyof ReminderState)[];

function same(a: unknown, b: unknown): boolean {
  if (a instanceof Set && b instanceof Set) return a.size === b.size && [...a].every((x) => b.has(x));
  return a === b;
}

/**
 * A reminder's new state, written only where it differs from what was read; the write is
 * conditional on `minutesBefore` and `notifiedStart` being as read (the app may change the one,
 * the notifier may send it meanwhile).
 */
export interface ReminderUpdate {
  contestId: number;
  userId: string;
  minutesBefore: number;
  /** The user's intent as read (absent on a row written before intents): the write fails if the app set it again since. */
  intent?: string;
  /** As read: the write fails if the notifier sent it since. */
  notifiedStart?: number;
  set: Partial<ReminderState>;
  remove: (keyof ReminderState)[];
}

export interface ReminderSettings {
  dueShards: number;
  finishedRetentionSeconds: number;
  /** false: the broken variant (reminders due at the shown start, whatever the evidence), to show the checks bite. */
  firingRule?: boolean;
}

/**
 * What a reminder must look like under its contest's gate. `contest` undefined: deleted (its
 * reminders keep their time and TTL). At most once per start: never due again at the start it was
 * sent for.
 */
export function reminderState(
  reminder: ReminderItem,
  contest: ContestItem | undefined,
  gate: Gate,
  settings: ReminderSettings,
  nowSeconds: number,
): ReminderState {
  const minutes = reminder.minutesBefore;
  const remindAt = contest !== undefined ? contest.startTimeSeconds - 60 * minutes : reminder.remindAt;
  const expiresAt = contest?.expiresAt ?? reminder.expiresAt ?? nowSeconds + settings.finishedRetentionSeconds;
  if (!gate.due) return { remindAt, expiresAt, paused: gate.reason };
  const start = gate.start;
  const sent = sentStartsOf(reminder);
  if (sent.has(start)) return { remindAt, expiresAt, paused: 'notified' };
  // Due again after a send: the start it was sent for joins sentStarts (the notifier overwrites notifiedStart).
  return {
    remindAt,
    expiresAt,
    dueAt: start - 60 * minutes,
    dueShard: reminder.contestId % settings.dueShards,
    dueStart: start,
    ...(sent.size > 0 ? { sentStarts: sent } : {}),
  };
}

/** The updates that bring a contest's reminders to its gate (none for reminders already right). */
export function planReminders(
  contestId: number,
  contest: ContestItem | undefined,
  reminders: readonly ReminderItem[],
  settings: ReminderSettings,
  nowSeconds: number,
): ReminderUpdate[] {
  const gate = gateOf(contest, nowSeconds, settings.firingRule);
  const updates: ReminderUpdate[] = [];
  for (const reminder of reminders) {
    // A reminder the app wrote without a usable minutesBefore cannot be timed; it is left alone
    // rather than fail every sync on it.
    if (!Number.isFinite(reminder.minutesBefore)) continue;
    const next = reminderState(reminder, contest, gate, settings, nowSeconds);
    const set: Partial<ReminderState> = {};
    const remove: (keyof ReminderState)[] = [];
    for (const key of KEPT_ATTRIBUTES) {
      const value = next[key];
      if (value === undefined) {
        // sentStarts is only ever added to: a pause keeps it.
        if (reminder[key] !== undefined && key !== 'sentStarts') remove.push(key);
      } else if (!same(reminder[key], value)) {
        (set as Record<string, unknown>)[key] = value;
      }
    }
    if (Object.keys(set).length === 0 && remove.length === 0) continue;
    updates.push({ ...readAs({ ...reminder, contestId }), set, remove });
  }
  return updates;
}

/** What following a contest writes: the contest again when its reminders confirm its start (`keptStart`), and their updates. */
export interface Following {
  contest?: ContestItem;
  updates: ReminderUpdate[];
}

/**
 * followContest: a contest's reminders brought to it, read after the contest was written, by the
 * run's rule —
 * - `gate`: to its gate; reminders kept at the start a deleted contest is listed again at confirm
 *   that start first (the contest is written again with it, before its reminders);
 * - `doubt`: no current evidence: those due before the next sync could see a change are paused,
 *   with their contest first (`remindersPaused: held`, no `dueStart`: nothing of it may fire).
 */
export function followContest(
  rule: 'gate' | 'doubt',
  read: { contestId: number; contest: ContestItem | undefined; reminders: readonly ReminderItem[] },
  settings: ReminderSettings & { doubtSeconds: number },
  nowSeconds: number,
): Following {
  const { contestId, contest, reminders } = read;
  if (rule === 'doubt') {
    const updates = doubtUpdates(contestId, reminders, nowSeconds, settings.doubtSeconds);
    if (updates.length === 0 || contest === undefined) return { updates };
    const { dueStart: _dueStart, ...paused } = contest;
    return { contest: { ...paused, remindersPaused: 'held' }, updates };
  }
  const kept = settings.firingRule === false ? undefined : keptStart(contest, reminders, nowSeconds);
  const confirmed = kept !== undefined ? withGate({ ...contest!, confirmedStart: kept }, nowSeconds) : undefined;
  return {
    ...(confirmed !== undefined ? { contest: confirmed } : {}),
    updates: planReminders(contestId, confirmed ?? contest, reminders, settings, nowSeconds),
  };
}

/**
 * When in doubt, delay: while the upstream gives no current evidence (a stale reply, Codeforces
 * failing), the truth may move unseen. Reminders that would fire before the next sync could see it
 * (`dueAt <= now + windowSeconds`) are paused (`held`) with their contest (`remindersPaused: held`,
 * so the app writes none due); the next applied reply ends the pause (plan.ts sees the contest's
 * pause disagree with its evidence and reads its reminders again). Contests whose reminders are not
 * due are not read.
 */
export function contestsToDoubt(contests: readonly ContestItem[]): ContestItem[] {
  return contests.filter((c) => c.remindersPaused === undefined && c.vanishedAt === undefined);
}

export function doubtUpdates(
  contestId: number,
  reminders: readonly ReminderItem[],
  nowSeconds: number,
  windowSeconds: number,
): ReminderUpdate[] {
  return reminders
    .filter((r) => r.dueAt !== undefined && r.dueAt <= nowSeconds + windowSeconds && Number.isFinite(r.minutesBefore))
    .map((r) => ({
      ...readAs({ ...r, contestId }),
      set: { paused: 'held' },
      remove: ['dueAt', 'dueShard', 'dueStart'] as (keyof ReminderState)[],
    }));
}

/** What an update of a reminder is conditional on: the row as read (the app may set it again, the notifier may send it). */
function readAs(r: ReminderItem): Pick<ReminderUpdate, 'contestId' | 'userId' | 'minutesBefore' | 'intent' | 'notifiedStart'> {
  return {
    contestId: r.contestId,
    userId: r.userId,
    minutesBefore: r.minutesBefore,
    ...(r.intent !== undefined ? { intent: r.intent } : {}),
    ...(r.notifiedStart !== undefined ? { notifiedStart: r.notifiedStart } : {}),
  };
}
