/**
 * The model at planner level, hour by hour, without DynamoDB: the pure decisions (judgeReply,
 * planContests, planReminders) applied to in-memory tables the way lambda/sync.ts and the store
 * apply them, an app that writes reminders by the table contract (docs/tables.md) and a notifier
 * that sends what is due every 10 minutes. The review's cases run on it (plan.test.ts); the same
 * cases run against DynamoDB Local in test/integration/evidence.test.ts.
 */
import type { CodeforcesContest } from '../../../lambda/sources/codeforces/schema.js';
import { listedContest, replyDating } from '../../../lambda/sources/codeforces/source.js';
import { cf, type TestId } from '../../support/ids.js';

export { cf, type TestId };
import { DEFAULT_PLAN_SETTINGS, planContests, type ContestPlan, type PlanSettings } from '../../../lambda/contests/plan.js';
import { SKEW_SECONDS, judgeReply, type ReplyVerdict } from '../../../lambda/contests/evidence.js';
import { announce } from '../../../lambda/contests/events.js';
import type { ContestItem, ReminderItem } from '../../../lambda/contests/model.js';
import { followContest } from '../../../lambda/contests/reminders.js';
import type { OutboxEvent } from '@contest-sync/scheduled-singleton';

export const MIN = 60;
export const HOUR = 3600;
export const DAY = 24 * HOUR;

/** A contest as the truth has it (its start may change over time). */
export interface TrueContest {
  id: number;
  durationSeconds: number;
  /** The start the truth gives at `t`. */
  startAt(t: number): number;
  /** Listed at `t` (false: withdrawn). */
  listedAt?(t: number): boolean;
}

/** The contest.list entry of `contest` as an honest Codeforces makes it at `t`. */
export function entryAt(contest: TrueContest, t: number): CodeforcesContest {
  const start = contest.startAt(t);
  const phase = t < start ? 'BEFORE' : t < start + contest.durationSeconds ? 'CODING' : 'FINISHED';
  return {
    id: contest.id,
    name: `Codeforces Round ${contest.id}`,
    type: 'CF',
    phase,
    frozen: false,
    durationSeconds: contest.durationSeconds,
    startTimeSeconds: start,
    relativeTimeSeconds: t - start,
  };
}

export function honestList(contests: readonly TrueContest[], t: number): CodeforcesContest[] {
  return contests.filter((c) => c.listedAt?.(t) ?? true).map((c) => entryAt(c, t));
}

export interface Fired {
  contestId: string;
  userId: string;
  at: number;
  /** The dueStart it was sent for. */
  start: number;
}

export interface SyncResult {
  verdict: ReplyVerdict;
  plan?: ContestPlan;
}

export class PlannerWorld {
  readonly contests = new Map<string, ContestItem>();
  readonly reminders = new Map<string, ReminderItem>();
  readonly fired: Fired[] = [];
  /** The contest events the syncs published, as the outbox keeps them (one per id), with the time of their sync. */
  readonly events: (OutboxEvent & { at: number })[] = [];
  replyMadeAt: number | undefined;
  /** The reply clock's register of withdrawn, deleted contests. */
  withdrawn: Record<string, unknown> = {};
  private handoff = new Set<string>();

  constructor(readonly settings: PlanSettings = DEFAULT_PLAN_SETTINGS) {}

  /** One sync at `nowSeconds` of the reply `list`; `lastSeen` defaults to the reply clock. */
  sync(list: readonly CodeforcesContest[], nowSeconds: number, options: { acceptHeld?: boolean; listedIds?: number[] } = {}): SyncResult {
    const verdict = judgeReply(replyDating(list), this.replyMadeAt, nowSeconds);
    if (verdict.stale) return { verdict };
    const stored = [...this.contests.values()];
    const plan = planContests({
      fetched: list.map(listedContest),
      listedIds: new Set((options.listedIds ?? list.map((c) => c.id)).map(cf)),
      stored,
      nowMs: nowSeconds * 1000,
      ...(this.replyMadeAt !== undefined ? { lastSeenMs: this.replyMadeAt * 1000 } : {}),
      ...(options.acceptHeld === true ? { acceptHeld: true } : {}),
      settings: this.settings,
    });
    const after = new Map(stored.map((item) => [item.contestId, item]));
    // What users hear, and each put recording it (as lambda/sync.ts does with an outbox).
    const announced = announce({
      stored,
      puts: [...plan.upserts, ...plan.bookkeeping, ...plan.vanished],
      deletes: plan.cancelled,
      withdrawn: this.withdrawn,
      nowSeconds,
    });
    this.withdrawn = announced.withdrawn;
    for (const event of announced.events)
      if (!this.events.some(({ id }) => id === event.id)) this.events.push({ ...event, at: nowSeconds });
    for (const item of announced.puts) after.set(item.contestId, item);
    for (const id of plan.cancelled) after.delete(id);
    let writes = plan.upserts.length + plan.bookkeeping.length + plan.vanished.length + plan.cancelled.length;
    const check = new Set([...plan.remindersToCheck, ...this.handoff]);
    for (const contestId of check) {
      const following = followContest(
        'gate',
        { contestId, contest: after.get(contestId), reminders: this.remindersOf(contestId) },
        this.settings,
        nowSeconds,
      );
      if (following.contest !== undefined) after.set(contestId, following.contest);
      for (const update of following.updates) {
        const key = `${contestId}/${update.userId}`;
        const reminder = { ...this.reminders.get(key)! } as Record<string, unknown>;
        for (const name of update.remove) delete reminder[name];
        Object.assign(reminder, update.set);
        this.reminders.set(key, reminder as unknown as ReminderItem);
        writes += 1;
      }
    }
    this.handoff = new Set(plan.remindersToCheck);
    for (const [id, item] of after) this.contests.set(id, item);
    for (const id of plan.cancelled) this.contests.delete(id);
    // The reply clock is written with the run's writes, or alone once it advanced by more than the
    // skew (every hourly run), as lambda/sync.ts does: the next reply is judged against it.
    const madeAt = verdict.madeAt;
    if (madeAt !== undefined && (writes > 0 || this.replyMadeAt === undefined || madeAt > this.replyMadeAt + SKEW_SECONDS))
      this.replyMadeAt = madeAt;
    return { verdict, plan };
  }

  remindersOf(id: TestId): ReminderItem[] {
    return [...this.reminders.values()].filter((r) => r.contestId === cf(id));
  }

  /** The app sets a reminder by the contract: due at once unless the contest pauses its reminders. */
  setReminder(id: TestId, userId: string, minutesBefore: number): ReminderItem {
    const contestId = cf(id);
    const contest = this.contests.get(contestId);
    if (contest === undefined) throw new Error(`contest ${contestId} is not stored`);
    const remindAt = contest.startTimeSeconds - 60 * minutesBefore;
    const due = contest.remindersPaused === undefined && contest.vanishedAt === undefined;
    const reminder: ReminderItem = {
      contestId,
      userId,
      minutesBefore,
      remindAt,
      expiresAt: contest.expiresAt,
      ...(due ? { dueAt: remindAt, dueShard: 0, dueStart: contest.startTimeSeconds } : {}),
    };
    this.reminders.set(`${contestId}/${userId}`, reminder);
    return reminder;
  }

  /** The notifier: sends every reminder whose dueAt has come, claiming it (notifiedStart = dueStart). */
  notify(nowSeconds: number): void {
    for (const [key, reminder] of this.reminders) {
      if (reminder.dueAt === undefined || reminder.dueAt > nowSeconds) continue;
      this.fired.push({ contestId: reminder.contestId, userId: reminder.userId, at: nowSeconds, start: reminder.dueStart! });
      const { dueAt: _d, dueShard: _s, ...rest } = reminder;
      this.reminders.set(key, { ...rest, notifiedAt: nowSeconds, notifiedStart: reminder.dueStart!, paused: 'notified' });
    }
  }

  /**
   * `hours` hourly rounds from `from`: a sync 2 s into the hour of the reply `replyAt(t)` returns,
   * then the notifier every 10 minutes.
   */
  run(
    from: number,
    hours: number,
    replyAt: (t: number, hour: number) => CodeforcesContest[] | undefined,
    options: { acceptHeldAt?: number } = {},
  ): SyncResult[] {
    const results: SyncResult[] = [];
    for (let hour = 0; hour < hours; hour += 1) {
      const t = from + hour * HOUR + 2;
      const list = replyAt(t, hour);
      if (list !== undefined) results.push(this.sync(list, t, hour === options.acceptHeldAt ? { acceptHeld: true } : {}));
      for (let minute = 0; minute < 60; minute += 10) this.notify(from + hour * HOUR + minute * MIN + 10);
    }
    return results;
  }
}

/**
 * The user's promise for one reminder (docs/design.md, "The promise"): at most one send per start
 * time, none more than 10 minutes before the true time of the start true when it was sent, and one
 * for the final start no later than 70 minutes after the latest of its true time, the end of the
 * wrong-upstream episode and the first reply showing that start. Returns what broke it.
 */
export function promiseBroken(
  fired: readonly Fired[],
  reminder: { contestId: TestId; userId: string; minutesBefore: number },
  startAt: (t: number) => number,
  bounds: { episodeEnd?: number; firstShown?: number } = {},
): string[] {
  const name = `${reminder.contestId}/${reminder.userId}`;
  const sends = fired.filter((f) => f.contestId === cf(reminder.contestId) && f.userId === reminder.userId);
  const problems: string[] = [];
  const perStart = new Map<number, number>();
  for (const send of sends) {
    const start = startAt(send.at);
    perStart.set(start, (perStart.get(start) ?? 0) + 1);
    const trueTime = start - 60 * reminder.minutesBefore;
    if (send.at < trueTime - 10 * MIN) problems.push(`${name}: ${Math.round((trueTime - send.at) / 60)} min early`);
  }
  for (const [start, count] of perStart) if (count > 1) problems.push(`${name}: sent ${count} times for the start ${start}`);
  const final = startAt(Infinity);
  const last = sends.find((send) => startAt(send.at) === final);
  if (last === undefined) return [...problems, `${name}: never sent for its final start`];
  const latest = Math.max(final - 60 * reminder.minutesBefore, bounds.episodeEnd ?? 0, bounds.firstShown ?? 0) + 70 * MIN;
  if (last.at > latest) problems.push(`${name}: ${Math.round((last.at - latest) / 60)} min past the bound`);
  return problems;
}
