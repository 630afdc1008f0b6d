/**
 * The invariants of the simulated year, checked against the truth (pure: the runner feeds it what
 * it observed). Their bounds are what users are promised, not the model's settings
 * (docs/simulation.md, "Invariants: the user's promise"):
 *
 * - a reminder's identity is the user's intent: each set that changes it (a new reminder, a changed
 *   lead time, a set after a cancel) is a new intent, judged on its own, and a cancelled intent is
 *   never sent after its cancel;
 * - an intent fires at most once per start time (no two notifications announce the same start),
 *   never more than 10 minutes before its true time (the start Codeforces lists at that moment,
 *   minus its lead; between two good syncs a change cannot be seen, so the start the last honest
 *   reply listed stands until the next sync), and no later than 70 minutes after the latest of its
 *   true time (or when it was set), the end of a wrong-upstream episode and the first reply showing
 *   the current start — except for a start no reply showed more than 10 minutes before it began;
 * - none fires for a contest withdrawn more than 70 minutes earlier;
 * - no reminder of a contest that takes place is ever lost, and no reminder row is destroyed other
 *   than by its TTL or the user's cancel;
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
  | 'reminder-cancelled'
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
  /** Each job's own (run#<platform>#…): it keeps its records about a month, an interval's one or two. */
  runRecordsPerJob: 31 * 24 * 2,
  reminderAgeSeconds: 90 * 24 * HOUR,
} as const;

/** Violations kept in the report per invariant; the totals are counted past it. */
export const VIOLATIONS_KEPT_PER_INVARIANT = 25;

/** Each interval's sync runs this many seconds into it (the scheduled event's delivery, test/sim/runner.ts). */
export const SYNC_OFFSET_SECONDS = 2;

/** What the upstream gave the sync of one hour. */
export interface UpstreamHour {
  /** When the hour's sync ran (epoch s). */
  t: number;
  /** A sync succeeded on a reply that was the truth when it was served. */
  ok: boolean;
  /** With `ok`: the contests the reply lied about (one, or several at once). */
  wrongFor?: number | readonly number[];
}

interface Fire {
  at: number;
  /** The start the notification announced (the claimed row's `dueStart`; undefined: unknown, judged by the truth). */
  start: number | undefined;
}

/** One intent of a user about one contest's reminder: from the set that made it until it was changed or cancelled. */
interface Intent {
  contestId: number;
  userId: string;
  minutesBefore: number;
  setAt: number;
  /** 1 for the first intent of this user and contest, 2 for the next, … */
  n: number;
  endedAt?: number;
  endedBy?: 'changed' | 'cancelled';
  fires: Fire[];
  /** Claims that committed without an event (the outbox already held one with its id): the user is not told. */
  silentClaims: number;
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
  /** Fired more than 10 minutes before the true time, for the start the last sync's honest reply listed: Codeforces changed it after that sync (no reply could show it). */
  earlyUnseen: number;
  /** Not judged late or missed: no reply showed the start it took place at more than 10 minutes before it began (the promise's exception). */
  startNotShown: number;
  /** Intents changed or cancelled by their user before they were due to be delivered (not judged late or missed). */
  superseded: number;
  /** Intents (sets that changed what the user asked: new, a changed lead, set again after a cancel) and cancels. */
  intents: number;
  cancels: number;
  /** Claims that committed without a ReminderDue (its event id already in the outbox): never told. */
  silentClaims: number;
  /** Notifications for an intent whose cancel committed before the claim (a violation each). */
  afterCancel: number;
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
  private readonly reminders = new Map<string, Intent[]>();
  /** The intent each claimed event id was claimed for (reminderClaimed). */
  private readonly claimedFor = new Map<string, Intent>();
  private cancels = 0;
  private readonly destroyed = new Set<string>();
  private readonly byId: Map<number, TruthContest>;

  constructor(private readonly truth: Truth) {
    this.byId = new Map(truth.contests.map((c) => [c.id, c]));
    for (const change of truth.changes) {
      if (change.kind === 'announce') continue;
      this.honestChangeHours.add(this.hourOf(change.at));
      this.honestChangeHours.add(this.firstSyncHourAfter(change.at));
    }
  }

  /**
   * The hour whose sync is the first that can see a change made at `t`: that hour's own for a change
   * on the whole hour (just before its sync), the next one for a change between two syncs. The view
   * may lag there: a mass change is shown by the second reply that says it (design.md, "What a user
   * of the app sees meanwhile": within 2 syncs), so a mass withdrawal at 11:34 is held by the 12:00
   * sync and shown by the 13:00 one.
   */
  private firstSyncHourAfter(t: number): number {
    return Math.ceil((t - this.truth.yearStart - SYNC_OFFSET_SECONDS) / HOUR);
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

  /** The user's intent now (undefined: none, or cancelled). */
  private current(contestId: number, userId: string): Intent | undefined {
    const intents = this.reminders.get(`${contestId}/${userId}`);
    const last = intents?.[intents.length - 1];
    return last !== undefined && last.endedBy !== 'cancelled' ? last : undefined;
  }

  /** A set that changed what the user asked (a new reminder, a changed lead, a set after a cancel): a new intent from `setAt`. */
  reminderSet(contestId: number, userId: string, minutesBefore: number, setAt: number): void {
    const key = `${contestId}/${userId}`;
    const intents = this.reminders.get(key) ?? [];
    const previous = intents[intents.length - 1];
    if (previous !== undefined && previous.endedAt === undefined) {
      previous.endedAt = setAt;
      previous.endedBy = 'changed';
    }
    intents.push({ contestId, userId, minutesBefore, setAt, n: intents.length + 1, fires: [], silentClaims: 0 });
    this.reminders.set(key, intents);
  }

  /** The user cancelled the reminder at `at` (its row deleted): nothing may be claimed for that intent afterwards. */
  reminderCancelled(contestId: number, userId: string, at: number): void {
    const intent = this.current(contestId, userId);
    if (intent === undefined || intent.endedAt !== undefined) return;
    intent.endedAt = at;
    intent.endedBy = 'cancelled';
    this.cancels += 1;
  }

  /**
   * A claim of the reminder row committed at `at`, with its event (`eventId`) or without one (the
   * outbox already held an event with that id): it belongs to the intent current at that moment.
   */
  reminderClaimed(contestId: number, userId: string, at: number, eventId: string | undefined): void {
    const intents = this.reminders.get(`${contestId}/${userId}`);
    const intent = intents?.[intents.length - 1];
    if (intent === undefined) return;
    if (intent.endedBy === 'cancelled') {
      this.violate(
        this.hourOf(at),
        'reminder-cancelled',
        `reminder ${contestId}/${userId} (intent ${intent.n}, ${intent.minutesBefore} min) claimed ${iso(at)}, after its cancel at ${iso(intent.endedAt!)}`,
      );
    }
    if (eventId === undefined) intent.silentClaims += 1;
    else if (!this.claimedFor.has(eventId)) this.claimedFor.set(eventId, intent);
  }

  /**
   * The user was told (a ReminderDue handled by the app's consumer). With the event id, it is the
   * notification of the intent it was claimed for; without, of the intent current when it arrived.
   */
  reminderFired(contestId: number, userId: string, firedAt: number, announcedStart?: number, eventId?: string): void {
    const claimed = eventId !== undefined ? this.claimedFor.get(eventId) : undefined;
    const intents = this.reminders.get(`${contestId}/${userId}`) ?? [];
    const intent = claimed ?? [...intents].reverse().find((i) => i.setAt <= firedAt) ?? intents[0];
    intent?.fires.push({ at: firedAt, start: announcedStart });
  }

  /** The reminder rows stored now (`contestId/userId`) and the ones TTL swept: any other set reminder that is gone was destroyed. */
  remindersStored(hour: number, stored: ReadonlySet<string>, swept: ReadonlySet<string>): void {
    for (const [key, intents] of this.reminders) {
      const last = intents[intents.length - 1]!;
      // Cancelled by its user: the row is rightly gone.
      if (last.endedBy === 'cancelled' || stored.has(key) || swept.has(key) || this.destroyed.has(key)) continue;
      this.destroyed.add(key);
      this.violate(hour, 'reminder-destroyed', `reminder ${key} (${last.minutesBefore} min) deleted, not by its TTL`);
    }
  }

  /** A month's end: contests, the lease item, run records and reminders stay bounded; no reminder outlives its contest by months. */
  storage(
    hour: number,
    nowSeconds: number,
    figures: {
      contests: number;
      leaseItemBytes: number;
      /** Run records per sync job (its run record prefix). */
      runRecordsByJob: Readonly<Record<string, number>>;
      reminderKeys: readonly string[];
    },
  ): void {
    const old = figures.reminderKeys.filter((key) => {
      const intents = this.reminders.get(key);
      const last = intents?.[intents.length - 1];
      return last !== undefined && last.setAt < nowSeconds - STORAGE_BOUNDS.reminderAgeSeconds;
    });
    const problems: string[] = [];
    if (figures.contests > STORAGE_BOUNDS.contests) problems.push(`${figures.contests} contests`);
    if (figures.leaseItemBytes > STORAGE_BOUNDS.leaseItemBytes) problems.push(`lease item ${figures.leaseItemBytes} bytes`);
    for (const [job, count] of Object.entries(figures.runRecordsByJob))
      if (count > STORAGE_BOUNDS.runRecordsPerJob) problems.push(`${count} run records of ${job}`);
    if (old.length > 0) problems.push(`${old.length} reminders set more than 90 days ago still stored (${old.slice(0, 3).join(', ')})`);
    if (problems.length > 0) this.violate(hour, 'storage-unbounded', problems.join('; '));
  }

  private honestFor(record: UpstreamHour | undefined, contestId: number): boolean {
    if (record === undefined || !record.ok) return false;
    const wrong = record.wrongFor;
    return wrong === undefined || (typeof wrong === 'number' ? wrong !== contestId : !wrong.includes(contestId));
  }

  /** Whether a sync got a reply showing `start` for the contest more than 10 minutes before it began. */
  shownAhead(contest: TruthContest, start: number): boolean {
    const last = Math.min(this.upstream.length - 1, this.hourOf(start - PROMISE.earlySeconds));
    for (let hour = Math.max(0, this.hourOf(contest.announcedAt)); hour <= last; hour += 1) {
      const record = this.upstream[hour];
      if (record === undefined || record.t >= start - PROMISE.earlySeconds || !this.honestFor(record, contest.id)) continue;
      if (listedAt(contest, record.t) && startAt(contest, record.t) === start) return true;
    }
    return false;
  }

  /**
   * The start the last sync before `t` got from an honest reply about the contest (undefined when
   * that sync failed or got a wrong reply): between two good syncs, what the product could know at
   * `t`. During a wrong-upstream episode nothing is excused — the product must delay.
   */
  lastSeenStart(contest: TruthContest, t: number): number | undefined {
    for (let hour = Math.min(this.upstream.length - 1, this.hourOf(t)); hour >= 0; hour -= 1) {
      const record = this.upstream[hour];
      if (record === undefined || record.t > t) continue;
      if (!this.honestFor(record, contest.id) || !listedAt(contest, record.t)) return undefined;
      return startAt(contest, record.t);
    }
    return undefined;
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

  /** Judges every intent once the run is over (`end`: the last simulated second). */
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
      earlyUnseen: 0,
      startNotShown: 0,
      superseded: 0,
      intents: 0,
      cancels: this.cancels,
      silentClaims: 0,
      afterCancel: this.byInvariant['reminder-cancelled'] ?? 0,
    };
    for (const intents of this.reminders.values()) {
      figures.set += 1;
      for (const intent of intents) this.judge(intent, intents.length > 1, end, figures);
    }
    return figures;
  }

  private judge(intent: Intent, several: boolean, end: number, figures: ReminderFigures): void {
    figures.intents += 1;
    figures.fired += intent.fires.length;
    figures.silentClaims += intent.silentClaims;
    const contest = this.byId.get(intent.contestId);
    if (contest === undefined) return;
    const label = `reminder ${intent.contestId}/${intent.userId}${several ? ` intent ${intent.n}` : ''} (${intent.minutesBefore} min, set ${iso(intent.setAt)})`;
    const lead = MINUTE * intent.minutesBefore;
    const fires = [...intent.fires].sort((a, b) => a.at - b.at);
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
        // Codeforces changed the start after the last sync, which got an honest reply: the start that reply listed stands.
        const seen = this.lastSeenStart(contest, fired);
        if (seen !== undefined && seen === claimed && seen !== start && fired >= seen - lead - PROMISE.earlySeconds) {
          figures.earlyUnseen += 1;
        } else {
          figures.early += 1;
          this.violate(
            this.hourOf(fired),
            'reminder-early',
            `${label} fired ${iso(fired)} (announcing ${iso(claimed)}), ${Math.round((start - lead - fired) / 60)} min before its true time ${iso(start - lead)}`,
          );
        }
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
    if (!takesPlace(contest)) return;
    const start = finalStart(contest);
    const due = start - lead;
    // Delivered: a notification announcing the start it takes place at, not earlier than the promise allows.
    const first = fires.find((fire) => (fire.start ?? startAt(contest, fire.at)) === start && fire.at >= due - PROMISE.earlySeconds)?.at;
    const deadline = this.deadline(contest, due, intent.setAt);
    // Judged only when the promise's deadline lies inside the run, and inside the intent's life.
    if (first === undefined && deadline > end) return;
    // Changed or cancelled by its user before it was delivered and before its deadline: what the user asked next is judged instead.
    if (intent.endedAt !== undefined && intent.endedAt < deadline && (first === undefined || first > intent.endedAt)) {
      figures.superseded += 1;
      return;
    }
    if ((first === undefined || first > deadline) && !this.shownAhead(contest, start)) {
      figures.startNotShown += 1;
      return;
    }
    figures.expected += 1;
    if (first === undefined) {
      figures.missed += 1;
      const silent =
        intent.silentClaims > 0 ? ` (claimed ${intent.silentClaims} time(s) without an event: its id was already in the outbox)` : '';
      this.violate(
        this.hourOf(due),
        'reminder-missed',
        `${label} due ${iso(due)} (start ${iso(start)}) never fired${silent}; the promise's deadline was ${iso(deadline)}`,
      );
      return;
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
