/**
 * The invariants of the simulated year, checked against the truth (pure: the runner feeds it what
 * it observed). docs/simulation.md lists them with their bounds.
 */
import { finalStart, HOUR, type Truth, type TruthContest, type UpcomingEntry } from './truth.js';

export type Invariant =
  | 'one-sync-per-interval'
  | 'upcoming-stale'
  | 'reminder-missed'
  | 'reminder-duplicate'
  | 'reminder-early'
  | 'reminder-late'
  | 'reminder-withdrawn'
  | 'deleted-listed'
  | 'storage-unbounded';

export interface Violation {
  hour: number;
  invariant: Invariant;
  detail: string;
}

export interface Bounds {
  /** Intervals the upcoming view may lag after a glitch hour (the glitch's own hour included). */
  afterGlitch: number;
  /** ...after an honest change of one contest. */
  honestChange: number;
  /** ...after an honest change of at least 3 contests in one hour (held for N syncs by design: N + 1). */
  honestMassChange: number;
  /** A reminder fires at most this long before or after its true time (one interval). */
  reminderSlackSeconds: number;
}

export const DEFAULT_BOUNDS: Bounds = { afterGlitch: 2, honestChange: 1, honestMassChange: 4, reminderSlackSeconds: HOUR };

/** Violations kept in the report per invariant; the totals are counted past it. */
export const VIOLATIONS_KEPT_PER_INVARIANT = 25;

interface SetReminder {
  contestId: number;
  userId: string;
  minutesBefore: number;
  setAt: number;
  fires: number[];
}

export interface ReminderFigures {
  set: number;
  expected: number;
  fired: number;
  onTime: number;
  early: number;
  late: number;
  missed: number;
  duplicate: number;
  forWithdrawn: number;
}

export class Checker {
  readonly violations: Violation[] = [];
  violationsTotal = 0;
  readonly byInvariant: Partial<Record<Invariant, number>> = {};
  maxStalenessIntervals = 0;
  staleHours = 0;
  private lastMatchHour = -1;
  private excusedUntil = -1;
  private readonly syncsByInterval = new Map<string, number>();
  private readonly reminders = new Map<string, SetReminder>();

  constructor(
    private readonly truth: Truth,
    private readonly bounds: Bounds = DEFAULT_BOUNDS,
  ) {}

  violate(hour: number, invariant: Invariant, detail: string): void {
    this.violationsTotal += 1;
    const n = (this.byInvariant[invariant] ?? 0) + 1;
    this.byInvariant[invariant] = n;
    if (n <= VIOLATIONS_KEPT_PER_INVARIANT) this.violations.push({ hour, invariant, detail });
  }

  /** A glitch (Codeforces, crash, DynamoDB fault, duplicate) happened in `hour`. */
  glitch(hour: number): void {
    this.excusedUntil = Math.max(this.excusedUntil, hour + this.bounds.afterGlitch);
  }

  /** The truth changed at the start of `hour` (announce, reschedule, rename, withdrawal). */
  honestChange(hour: number, mass: boolean): void {
    this.excusedUntil = Math.max(this.excusedUntil, hour + (mass ? this.bounds.honestMassChange : this.bounds.honestChange));
  }

  /** A successful scheduled sync of `interval` (from its summary). */
  syncSucceeded(hour: number, interval: string): void {
    const n = (this.syncsByInterval.get(interval) ?? 0) + 1;
    this.syncsByInterval.set(interval, n);
    if (n > 1) this.violate(hour, 'one-sync-per-interval', `interval ${interval} synced ${n} times`);
  }

  /** The app's upcoming view against the truth's, once an hour after the sync. */
  compareUpcoming(hour: number, view: Map<number, UpcomingEntry>, truth: Map<number, UpcomingEntry>): string | undefined {
    const difference = diffUpcoming(view, truth);
    if (difference === undefined) {
      this.lastMatchHour = hour;
      return undefined;
    }
    this.staleHours += 1;
    const staleness = hour - this.lastMatchHour;
    this.maxStalenessIntervals = Math.max(this.maxStalenessIntervals, staleness);
    if (hour > this.excusedUntil) this.violate(hour, 'upcoming-stale', `stale for ${staleness} interval(s): ${difference}`);
    return difference;
  }

  /** Contests gone from the table since the last look that nobody's TTL removed. */
  contestsDeleted(hour: number, ids: number[], listed: (contestId: number) => boolean): void {
    for (const id of ids) if (listed(id)) this.violate(hour, 'deleted-listed', `contest ${id} deleted while Codeforces lists it`);
  }

  reminderSet(contestId: number, userId: string, minutesBefore: number, setAt: number): void {
    this.reminders.set(`${contestId}/${userId}`, { contestId, userId, minutesBefore, setAt, fires: [] });
  }

  reminderFired(contestId: number, userId: string, firedAt: number): void {
    this.reminders.get(`${contestId}/${userId}`)?.fires.push(firedAt);
  }

  /** Judges every reminder once the run is over (`end`: the last simulated second). */
  finishReminders(end: number): ReminderFigures {
    const byId = new Map<number, TruthContest>(this.truth.contests.map((c) => [c.id, c]));
    const figures: ReminderFigures = { set: 0, expected: 0, fired: 0, onTime: 0, early: 0, late: 0, missed: 0, duplicate: 0, forWithdrawn: 0 };
    const hourOf = (t: number): number => Math.floor((t - this.truth.yearStart) / HOUR);
    for (const reminder of this.reminders.values()) {
      figures.set += 1;
      figures.fired += reminder.fires.length;
      const contest = byId.get(reminder.contestId);
      const label = `reminder ${reminder.contestId}/${reminder.userId} (${reminder.minutesBefore} min)`;
      if (contest === undefined || contest.withdrawnAt !== undefined) {
        if (reminder.fires.length > 0) {
          figures.forWithdrawn += reminder.fires.length;
          this.violate(hourOf(reminder.fires[0]!), 'reminder-withdrawn', `${label} fired for a withdrawn contest`);
        }
        continue;
      }
      const due = finalStart(contest) - 60 * reminder.minutesBefore;
      // Judged only with a whole interval (and the notifier's next round) left before the end.
      if (due > end - 2 * HOUR) continue;
      figures.expected += 1;
      const [first, ...rest] = reminder.fires;
      if (first === undefined) {
        figures.missed += 1;
        this.violate(hourOf(due), 'reminder-missed', `${label} due ${new Date(due * 1000).toISOString()} never fired`);
        continue;
      }
      if (rest.length > 0) {
        figures.duplicate += rest.length;
        this.violate(hourOf(rest[0]!), 'reminder-duplicate', `${label} fired ${reminder.fires.length} times`);
      }
      if (first < due - this.bounds.reminderSlackSeconds) {
        figures.early += 1;
        this.violate(hourOf(first), 'reminder-early', `${label} fired ${Math.round((due - first) / 60)} min early`);
      } else if (first > due + this.bounds.reminderSlackSeconds) {
        figures.late += 1;
        this.violate(hourOf(first), 'reminder-late', `${label} fired ${Math.round((first - due) / 60)} min late`);
      } else {
        figures.onTime += 1;
      }
    }
    return figures;
  }
}

/** Undefined when equal; else a short description of the first differences. */
export function diffUpcoming(view: Map<number, UpcomingEntry>, truth: Map<number, UpcomingEntry>): string | undefined {
  const problems: string[] = [];
  for (const [id, entry] of truth) {
    const shown = view.get(id);
    if (shown === undefined) problems.push(`${id} missing`);
    else if (shown.startTimeSeconds !== entry.startTimeSeconds) problems.push(`${id} starts ${shown.startTimeSeconds - entry.startTimeSeconds} s off`);
    else if (shown.name !== entry.name) problems.push(`${id} named "${shown.name}"`);
  }
  for (const id of view.keys()) if (!truth.has(id)) problems.push(`${id} shown but not upcoming`);
  if (problems.length === 0) return undefined;
  return problems.slice(0, 4).join(', ') + (problems.length > 4 ? ` (+${problems.length - 4})` : '');
}
