/**
 * A contest's reminders brought to it (docs/design.md, "The firing rule"), as pure functions: the
 * state each reminder must have under its contest's gate (contests/judge.ts) — `dueAt`, `dueShard`,
 * `dueStart`, `paused`, `remindAt`, `expiresAt` — read and written by the act step after the
 * contest itself (sync/act.ts), and the rules that follow a contest: to its gate, or paused for
 * doubt. Delivery sends a reminder once `dueAt <= now`, while its `dueStart` is its contest's.
 */
import { gateOf, withGate, type Gate } from './gate.js';
import type { ContestItem, ReminderItem } from './model.js';
import { contestKeyOf, dueShardOf } from '../reminders/table.js';

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
  contestId: string;
  /** The row's partition key as read (`<contestId>#<bucket>`). */
  contestKey: string;
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
    dueShard: dueShardOf(reminder.userId, settings.dueShards),
    dueStart: start,
    ...(sent.size > 0 ? { sentStarts: sent } : {}),
  };
}

/** The updates that bring a contest's reminders to its gate (none for reminders already right). */
export function planReminders(
  contestId: string,
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
  read: { contestId: string; contest: ContestItem | undefined; reminders: readonly ReminderItem[] },
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

export function doubtUpdates(
  contestId: string,
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
function readAs(
  r: ReminderItem,
): Pick<ReminderUpdate, 'contestId' | 'contestKey' | 'userId' | 'minutesBefore' | 'intent' | 'notifiedStart'> {
  return {
    contestId: r.contestId,
    contestKey: r.contestKey ?? contestKeyOf(r.contestId, r.userId),
    userId: r.userId,
    minutesBefore: r.minutesBefore,
    ...(r.intent !== undefined ? { intent: r.intent } : {}),
    ...(r.notifiedStart !== undefined ? { notifiedStart: r.notifiedStart } : {}),
  };
}
