/**
 * The invariants of the simulated year, checked against the truth (pure: the runner feeds it what
 * it observed). Their bounds are what users are promised, not the model's settings
 * (docs/simulation.md, "Invariants: the user's promise"):
 *
 * - a reminder fires at most once per start time (no two notifications announce the same start),
 *   never more than 10 minutes before its true time (the start Codeforces lists at that moment,
 *   minus its lead), and no later than 70 minutes after
 *   the latest of its true time, the end of a wrong-upstream episode and the first reply showing the
 *   current start;
 * - none fires for a contest withdrawn more than 70 minutes earlier;
 * - no reminder of a contest that takes place is ever lost, and no reminder row is destroyed other
 *   than by its TTL;
 * - the app's upcoming view equals the truth within one interval after an episode ends (or an
 *   honest change lands).
 */
import {
  finalStart,
  finalStartSince,
  HOUR,
  listedAt,
  MINUTE,
  startAt,
  takesPlace,
  withdrawnSince,
  type Truth,
  type TruthContest,
  type UpcomingEntry,
} from './truth.js';

export type Invariant =
  | 'one-sync-per-interval'
  | 'upcoming-stale'
  | 'reminder-missed'
  | 'reminder-duplicate'
  | 'reminder-early'
  | 'reminder-late'
  | 'reminder-withdrawn'
  | 'reminder-destroyed'
  | 'storage-unbounded';

export interface Violation {
  hour: number;
  invariant: Invariant;
  detail: string;
}

/** The user's promise (docs/design.md, "The promise"). */
export const PROMISE = {
  /** A reminder never fires more than this before its true time. */
  earlySeconds: 10 * MINUTE,
  /** ...nor later than this after the latest of its true time, an episode's end, the first reply showing its start. */
  lateSeconds: 70 * MINUTE,
  /** None fires for a contest withdrawn longer ago than this. */
  withdrawnSeconds: 70 * MINUTE,
  /** The upcoming view equals the truth within this many intervals after an episode ends. */
  viewIntervals: 1,
} as const;

/** Storage stays flat: a month's end finds no more than this (the checker's `storage-unbounded`). */
export const STORAGE_BOUNDS = {
  contests: 300,
  leaseItemBytes: 64 * 1024,
  runRecords: 31 * 24 * 2,
  reminderAgeSeconds: 90 * 24 * HOUR,
} as const;

/** Violations kept in the report per invariant; the totals are counted past it. */
export const VIOLATIONS_KEPT_PER_INVARIANT = 25;

/** What the upstream gave the sync of one hour. */
export interface UpstreamHour {
  /** When the hour's sync ran (epoch s). */
  t: number;
  /** A sync succeeded on a reply that was the truth when it was served. */
  ok: boolean;
  /** With `ok`: one contest the reply lied about. */
  wrongFor?: number;
}

interface Fire {
  at: number;
  /** The start the notification announced (the claimed row's `dueStart`; undefined: unknown, judged by the truth). */
  start: number | undefined;
}

interface SetReminder {
  contestId: number;
  userId: string;
  minutesBefore: number;
  setAt: number;
  fires: Fire[];
}

export interface ReminderFigures {
  set: number;
  /** Reminders of contests that take place, judged (their deadline inside the run). */
  expected: number;
  fired: number;
  /** Fired for the start it took place at within 10 min before – 70 min after its true time. */
  onTime: number;
  /** Fired later than 70 minutes after its true time, within the promise (an episode, a late first reply). */
  lateExcused: number;
  early: number;
  late: number;
  missed: number;
  duplicate: number;
  forWithdrawn: number;
  /** Fired again for a new start time (the contest moved after the reminder fired). */
  refired: number;
  /** Announced a start Codeforces did not list at that moment (a lie relayed, or a move not yet seen). */
  untrueStart: number;
  /** The latest first notification for the final start, minutes after its true time. */
  maxLateMinutes: number;
}

export class Checker {
  readonly violations: Violation[] = [];
  violationsTotal = 0;
  readonly byInvariant: Partial<Record<Invariant, number>> = {};
  maxStalenessIntervals = 0;
  staleHours = 0;
  contestsDeletedWhileListed = 0;
  private lastMatchHour = -1;
  private readonly honestChangeHours = new Set<number>();
  private readonly upstream: UpstreamHour[] = [];
  private readonly syncsByInterval = new Map<string, number>();
  private readonly reminders = new Map<string, SetReminder>();
  private readonly destroyed = new Set<string>();
  private readonly byId: Map<number, TruthContest>;

  constructor(private readonly truth: Truth) {
    this.byId = new Map(truth.contests.map((c) => [c.id, c]));
    for (const change of truth.changes) if (change.kind !== 'announce') this.honestChangeHours.add(this.hourOf(change.at));
  }

  private hourOf(t: number): number {
    return Math.floor((t - this.truth.yearStart) / HOUR);
  }

  violate(hour: number, invariant: Invariant, detail: string): void {
    this.violationsTotal += 1;
    const n = (this.byInvariant[invariant] ?? 0) + 1;
    this.byInvariant[invariant] = n;
    if (n <= VIOLATIONS_KEPT_PER_INVARIANT) this.violations.push({ hour, invariant, detail });
  }

  /** What the upstream gave the sync of `hour` (call once per hour, before `compareUpcoming`). */
  upstreamHour(hour: number, record: UpstreamHour): void {
    this.upstream[hour] = record;
  }

  /** A successful scheduled sync of `interval` (from its summary). */
  syncSucceeded(hour: number, interval: string): void {
    const n = (this.syncsByInterval.get(interval) ?? 0) + 1;
    this.syncsByInterval.set(interval, n);
    if (n > 1) this.violate(hour, 'one-sync-per-interval', `interval ${interval} synced ${n} times`);
  }

  /** The view may differ in an hour the upstream was wrong or failed, in the first honest hour after, and in the hour of an honest change. */
  excused(hour: number): boolean {
    const clean = (h: number): boolean => {
      const record = this.upstream[h];
      return record === undefined || (record.ok && record.wrongFor === undefined);
    };
    return !clean(hour) || (hour > 0 && !clean(hour - 1)) || this.honestChangeHours.has(hour);
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
    if (!this.excused(hour)) this.violate(hour, 'upcoming-stale', `stale for ${staleness} interval(s): ${difference}`);
    return difference;
  }

  /** Contests gone from the table since the last look that no TTL removed: counted (the user sees the view and the reminders, both checked). */
  contestsDeleted(ids: number[], listed: (contestId: number) => boolean): void {
    for (const id of ids) if (listed(id)) this.contestsDeletedWhileListed += 1;
  }

  reminderSet(contestId: number, userId: string, minutesBefore: number, setAt: number): void {
    this.reminders.set(`${contestId}/${userId}`, { contestId, userId, minutesBefore, setAt, fires: [] });
  }

  reminderFired(contestId: number, userId: string, firedAt: number, announcedStart?: number): void {
    this.reminders.get(`${contestId}/${userId}`)?.fires.push({ at: firedAt, start: announcedStart });
  }

  /** The reminder rows stored now (`contestId/userId`) and the ones TTL swept: any other set reminder that is gone was destroyed. */
  remindersStored(hour: number, stored: ReadonlySet<string>, swept: ReadonlySet<string>): void {
    for (const [key, reminder] of this.reminders) {
      if (stored.has(key) || swept.has(key) || this.destroyed.has(key)) continue;
      this.destroyed.add(key);
      this.violate(hour, 'reminder-destroyed', `reminder ${key} (${reminder.minutesBefore} min) deleted, not by its TTL`);
    }
  }

  /** A month's end: contests, the lease item, run records and reminders stay bounded; no reminder outlives its contest by months. */
  storage(
    hour: number,
    nowSeconds: number,
    figures: { contests: number; leaseItemBytes: number; runRecords: number; reminderKeys: readonly string[] },
  ): void {
    const old = figures.reminderKeys.filter((key) => {
      const reminder = this.reminders.get(key);
      return reminder !== undefined && reminder.setAt < nowSeconds - STORAGE_BOUNDS.reminderAgeSeconds;
    });
    const problems: string[] = [];
    if (figures.contests > STORAGE_BOUNDS.contests) problems.push(`${figures.contests} contests`);
    if (figures.leaseItemBytes > STORAGE_BOUNDS.leaseItemBytes) problems.push(`lease item ${figures.leaseItemBytes} bytes`);
    if (figures.runRecords > STORAGE_BOUNDS.runRecords) problems.push(`${figures.runRecords} run records`);
    if (old.length > 0) problems.push(`${old.length} reminders set more than 90 days ago still stored (${old.slice(0, 3).join(', ')})`);
    if (problems.length > 0) this.violate(hour, 'storage-unbounded', problems.join('; '));
  }

  private honestFor(record: UpstreamHour | undefined, contestId: number): boolean {
    return record !== undefined && record.ok && record.wrongFor !== contestId;
  }

  /** When the first sync at or after `t` got an honest reply about the contest (Infinity: none in the run). */
  firstHonest(contestId: number, t: number): number {
    for (let hour = Math.max(0, this.hourOf(t) - 1); hour < this.upstream.length; hour += 1) {
      const record = this.upstream[hour];
      if (record !== undefined && record.t >= t && this.honestFor(record, contestId)) return record.t;
    }
    return Infinity;
  }

  /**
   * The promise's latest moment for the first notification for the final start: 70 minutes after
   * the latest of its true time (or when it was set), the first reply showing that start, and the
   * end of any wrong-upstream episode in progress until then.
   */
  deadline(contest: TruthContest, due: number, setAt: number): number {
    let base = Math.max(due, setAt, this.firstHonest(contest.id, finalStartSince(contest)));
    for (;;) {
      // An episode (or a failed sync) between the true time and the deadline moves it to 70 minutes after the episode's end.
      let moved = false;
      for (let hour = Math.max(0, this.hourOf(Math.max(due, setAt))); hour < this.upstream.length; hour += 1) {
        const record = this.upstream[hour];
        if (record === undefined || record.t > base + PROMISE.lateSeconds) break;
        if (record.t < Math.max(due, setAt) - HOUR || this.honestFor(record, contest.id)) continue;
        const end = this.firstHonest(contest.id, record.t + 1);
        if (end > base) {
          base = end;
          moved = true;
          break;
        }
      }
      if (!moved || base === Infinity) return base + PROMISE.lateSeconds;
    }
  }

  /** Judges every reminder once the run is over (`end`: the last simulated second). */
  finishReminders(end: number): ReminderFigures {
    const figures: ReminderFigures = {
      set: 0,
      expected: 0,
      fired: 0,
      onTime: 0,
      lateExcused: 0,
      early: 0,
      late: 0,
      missed: 0,
      duplicate: 0,
      forWithdrawn: 0,
      refired: 0,
      untrueStart: 0,
      maxLateMinutes: 0,
    };
    for (const reminder of this.reminders.values()) {
      figures.set += 1;
      figures.fired += reminder.fires.length;
      const contest = this.byId.get(reminder.contestId);
      if (contest === undefined) continue;
      const label = `reminder ${reminder.contestId}/${reminder.userId} (${reminder.minutesBefore} min, set ${iso(reminder.setAt)})`;
      const lead = MINUTE * reminder.minutesBefore;
      const fires = [...reminder.fires].sort((a, b) => a.at - b.at);
      const announced = new Set<number>();
      for (const { at: fired, start: said } of fires) {
        const start = startAt(contest, fired);
        const claimed = said ?? start;
        if (!listedAt(contest, fired)) {
          const since = withdrawnSince(contest, fired) ?? fired;
          if (fired > since + PROMISE.withdrawnSeconds) {
            figures.forWithdrawn += 1;
            this.violate(
              this.hourOf(fired),
              'reminder-withdrawn',
              `${label} fired ${iso(fired)}, ${Math.round((fired - since) / 60)} min after its contest was withdrawn`,
            );
            continue;
          }
        } else if (claimed !== start) {
          figures.untrueStart += 1;
        }
        if (fired < start - lead - PROMISE.earlySeconds) {
          figures.early += 1;
          this.violate(
            this.hourOf(fired),
            'reminder-early',
            `${label} fired ${iso(fired)} (announcing ${iso(claimed)}), ${Math.round((start - lead - fired) / 60)} min before its true time ${iso(start - lead)}`,
          );
        }
        if (announced.has(claimed)) {
          figures.duplicate += 1;
          this.violate(
            this.hourOf(fired),
            'reminder-duplicate',
            `${label} fired again ${iso(fired)} announcing the same start ${iso(claimed)} (true start then ${iso(start)})`,
          );
        } else if (announced.size > 0) {
          figures.refired += 1;
        }
        announced.add(claimed);
      }
      if (!takesPlace(contest)) continue;
      const start = finalStart(contest);
      const due = start - lead;
      // Delivered: a notification announcing the start it takes place at, not earlier than the promise allows.
      const first = fires.find((fire) => (fire.start ?? startAt(contest, fire.at)) === start && fire.at >= due - PROMISE.earlySeconds)?.at;
      const deadline = this.deadline(contest, due, reminder.setAt);
      // Judged only when the promise's deadline lies inside the run.
      if (first === undefined && deadline > end) continue;
      figures.expected += 1;
      if (first === undefined) {
        figures.missed += 1;
        this.violate(
          this.hourOf(due),
          'reminder-missed',
          `${label} due ${iso(due)} (start ${iso(start)}) never fired; the promise's deadline was ${iso(deadline)}`,
        );
        continue;
      }
      figures.maxLateMinutes = Math.max(figures.maxLateMinutes, Math.round((first - due) / 60));
      if (first > deadline) {
        figures.late += 1;
        this.violate(
          this.hourOf(first),
          'reminder-late',
          `${label} due ${iso(due)} fired ${iso(first)}, ${Math.round((first - deadline) / 60)} min after the promise's deadline ${iso(deadline)}`,
        );
      } else if (first > due + PROMISE.lateSeconds) {
        figures.lateExcused += 1;
      } else {
        figures.onTime += 1;
      }
    }
    return figures;
  }
}

function iso(seconds: number): string {
  return Number.isFinite(seconds) ? new Date(seconds * 1000).toISOString().replace(':00.000Z', 'Z') : String(seconds);
}

/** Undefined when equal; else a short description of the first differences. */
export function diffUpcoming(view: Map<number, UpcomingEntry>, truth: Map<number, UpcomingEntry>): string | undefined {
  const problems: string[] = [];
  for (const [id, entry] of truth) {
    const shown = view.get(id);
    if (shown === undefined) problems.push(`${id} missing`);
    else if (shown.startTimeSeconds !== entry.startTimeSeconds)
      problems.push(`${id} starts ${shown.startTimeSeconds - entry.startTimeSeconds} s off`);
    else if (shown.name !== entry.name) problems.push(`${id} named "${shown.name}"`);
  }
  for (const id of view.keys()) if (!truth.has(id)) problems.push(`${id} shown but not upcoming`);
  if (problems.length === 0) return undefined;
  return problems.slice(0, 4).join(', ') + (problems.length > 4 ? ` (+${problems.length - 4})` : '');
}
