/**
 * The truth of the simulated year: what Codeforces lists at every moment. Pure: no I/O.
 *
 * Built from the real contests in test/sim/data/contests-2025.json (id, name, type, duration, start
 * as a real `contest.list` reply had them), repeated window after window and shifted forward by a
 * whole number of weeks so that the year lies after 2027-01-01 (DynamoDB Local deletes items whose
 * TTL is below the real clock, so the virtual year must lie in the real future). On top, seeded
 * honest churn, every change happening on a whole hour (just before that hour's sync, so the sync
 * is the first that can see it), and close to the start as often as far from it
 * (docs/simulation.md, "The truth"):
 *
 * - each contest is listed 7–21 days before its start (as Codeforces announces rounds);
 * - reschedules far ahead, postponements within 3 h of the start (down to the start itself),
 *   prepones within 3 h of the new start (announced at least 1.5 h before it), several reschedules
 *   of one contest, and mass postponements (most upcoming rounds moved by a day, 1–3 h before the
 *   first one starts);
 * - withdrawals of one contest (some within 2 h of the start), several at once, and withdrawn
 *   contests listed again under their id (some with a new start);
 * - duration changes (before the start, and extensions while it runs);
 * - renames (a round listed as "Codeforces Round (Div. 2)" gets its number later);
 * - phases in order BEFORE → CODING → PENDING_SYSTEM_TEST → SYSTEM_TEST → FINISHED, some contests
 *   stuck in PENDING_SYSTEM_TEST for hours or days, some going back from FINISHED to SYSTEM_TEST
 *   (a retest) for a while.
 */
import { readFileSync } from 'node:fs';
import { prng } from '../chaos/faults.js';

export const MINUTE = 60;
export const HOUR = 3600;
export const DAY = 24 * HOUR;
export const WEEK = 7 * DAY;

export interface SeedData {
  source: string;
  windowStartSeconds: number;
  windowWeeks: number;
  /** [id, name, type, durationSeconds, startTimeSeconds] */
  contests: [number, string, string, number, number][];
}

export function loadSeedData(): SeedData {
  return JSON.parse(readFileSync(new URL('./data/contests-2025.json', import.meta.url), 'utf8')) as SeedData;
}

/** A value that changes over time: `at` is when the version became true (the first at `announcedAt`). */
export interface Version<T> {
  at: number;
  value: T;
}

export interface TruthContest {
  id: number;
  type: string;
  announcedAt: number;
  /** Versions of the start time. */
  starts: Version<number>[];
  durations: Version<number>[];
  names: Version<string>[];
  /** Times it was not listed: withdrawn at `at`, listed again at `relistAt` (never, if absent). */
  withdrawals: { at: number; relistAt?: number }[];
  /** Time spent in PENDING_SYSTEM_TEST after the end. */
  pendingSeconds: number;
  systemTestSeconds: number;
  /** After FINISHED: back in SYSTEM_TEST from `at` for `seconds` (a phase regression). */
  retests: { at: number; seconds: number }[];
}

export type ChangeKind = 'announce' | 'reschedule' | 'withdraw' | 'relist' | 'rename' | 'duration' | 'retest';

export interface TruthChange {
  at: number;
  kind: ChangeKind;
  contestId: number;
  /** Part of a change of at least 3 contests of the same kind in the same hour. */
  mass: boolean;
  /** A reschedule or withdrawal within 3 hours of the start it changes. */
  near: boolean;
}

export interface Truth {
  yearStart: number;
  end: number;
  contests: TruthContest[];
  /** Every honest change inside the simulated span, by time. */
  changes: TruthChange[];
}

export interface TruthOptions {
  seed: number;
  days: number;
  /** Epoch seconds of the first simulated hour; default the first Monday of 2027, 00:00 UTC. */
  yearStart?: number;
  data?: SeedData;
  rates?: Partial<ChurnRates>;
}

/** Shares of contests that get each kind of churn. */
export interface ChurnRates {
  rename: number;
  /** Moved days or hours ahead of the start, earlier or later. */
  reschedule: number;
  /** Postponed within 3 h of the start (by 10 minutes to a day). */
  nearPostpone: number;
  /** Moved 30 min – 2.5 h earlier, announced 1.5–3 h before the new start. */
  nearPrepone: number;
  /** Of the rescheduled: rescheduled again (up to 3 times). */
  again: number;
  withdraw: number;
  /** Of the withdrawals: within 2 h of the start. */
  withdrawNearShare: number;
  /** Withdrawn and listed again under its id (half of them with a new start). */
  relist: number;
  duration: number;
  retest: number;
  stuckPending: number;
  /** Mean days between mass withdrawals. */
  massWithdrawEveryDays: number;
  /** Mean days between mass postponements. */
  massPostponeEveryDays: number;
  /** Share of the changes made between two syncs (1–58 minutes into an hour) instead of just before one. */
  betweenSyncs: number;
}

export const DEFAULT_CHURN: ChurnRates = {
  rename: 0.15,
  reschedule: 0.1,
  nearPostpone: 0.08,
  nearPrepone: 0.05,
  again: 0.4,
  withdraw: 0.04,
  withdrawNearShare: 0.4,
  relist: 0.03,
  duration: 0.06,
  retest: 0.05,
  stuckPending: 0.06,
  massWithdrawEveryDays: 60,
  massPostponeEveryDays: 45,
  betweenSyncs: 0.3,
};

/** 2027-01-04T00:00:00Z, a Monday. */
export const DEFAULT_YEAR_START = Date.UTC(2027, 0, 4) / 1000;

/** An honest prepone is announced at least this long before the new start. */
export const PREPONE_NOTICE_SECONDS = 90 * MINUTE;

const hourOf = (seconds: number): number => Math.floor(seconds / HOUR) * HOUR;
const ceilHour = (seconds: number): number => Math.ceil(seconds / HOUR) * HOUR;
const round5 = (seconds: number): number => Math.round(seconds / 300) * 300;

export function buildTruth(options: TruthOptions): Truth {
  const data = options.data ?? loadSeedData();
  const rates = { ...DEFAULT_CHURN, ...options.rates };
  const random = prng(options.seed ^ 0x7275_7468);
  const uniform = (a: number, b: number): number => a + random() * (b - a);
  // Draws of their own, so that the same seed gives the same contests and changes whatever the share.
  const minuteRandom = prng(options.seed ^ 0x6d69_6e75);
  /** A change at `hour` (a whole hour) happens instead 1–58 minutes into it, between two syncs, for a share of the changes. */
  const between = (hour: number): number =>
    minuteRandom() < rates.betweenSyncs ? hour + MINUTE * (1 + Math.floor(minuteRandom() * 58)) : hour;
  const yearStart = options.yearStart ?? DEFAULT_YEAR_START;
  const end = yearStart + options.days * DAY;
  const period = data.windowWeeks * WEEK;
  // Whole weeks, so the weekday and time of day of every real start is kept.
  const shift = Math.ceil((yearStart - 5 * WEEK - data.windowStartSeconds) / WEEK) * WEEK;
  const ids = data.contests.map(([id]) => id);
  const idSpan = Math.max(...ids) - Math.min(...ids) + 1;
  const roundSpan = roundNumberSpans(data.contests.map(([, name]) => name));

  const contests: TruthContest[] = [];
  for (let k = 0; data.windowStartSeconds + shift + k * period < end + 4 * WEEK; k += 1) {
    for (const [id, name, type, durationSeconds, start0] of data.contests) {
      const start = start0 + shift + k * period;
      if (start > end + 4 * WEEK) continue;
      const announcedAt = hourOf(start - uniform(7, 21) * DAY);
      const finalName = k === 0 ? name : advanceRound(name, k, roundSpan);
      const stuck = random() < rates.stuckPending;
      contests.push({
        id: id + k * idSpan,
        type,
        announcedAt,
        starts: [{ at: announcedAt, value: start }],
        durations: [{ at: announcedAt, value: durationSeconds }],
        names: [{ at: announcedAt, value: finalName }],
        withdrawals: [],
        pendingSeconds: stuck ? Math.round(uniform(6 * HOUR, 5 * DAY)) : Math.round(uniform(5, 20) * 60),
        systemTestSeconds: Math.round(uniform(20, 90) * 60),
        retests: [],
      });
    }
  }
  contests.sort((a, b) => a.starts[0]!.value - b.starts[0]!.value || a.id - b.id);

  // Churn, contest by contest, applied in time order and only where it is honest at that moment
  // (a reschedule or withdrawal of a contest that is listed and has not started).
  for (const contest of contests) {
    const earliest = Math.max(contest.announcedAt + HOUR, yearStart + HOUR);
    if (random() < rates.rename && /Round \d+/.test(contest.names[0]!.value)) {
      // Listed first without its number (as Codeforces often does), numbered later.
      const final = contest.names[0]!.value;
      const at = between(hourOf(uniform(earliest, contest.starts[0]!.value - HOUR)));
      if (at >= earliest)
        contest.names = [
          { at: contest.announcedAt, value: final.replace(/Round \d+/, 'Round') },
          { at, value: final },
        ];
    }
    let moves = random() < rates.reschedule + rates.nearPostpone + rates.nearPrepone ? 1 : 0;
    while (moves > 0 && moves < 3 && random() < rates.again) moves += 1;
    let after = earliest;
    for (let m = 0; m < moves; m += 1) {
      const start = lastValue(contest.starts);
      const pick = random() * (rates.reschedule + rates.nearPostpone + rates.nearPrepone);
      if (pick < rates.reschedule) {
        // Days or hours ahead: 1 h – 2 days either way, announced 3 h – 10 days before the start.
        const at = between(hourOf(uniform(Math.max(after, start - 10 * DAY), start - 3 * HOUR)));
        const delta = round5((random() < 0.5 ? -1 : 1) * uniform(HOUR, 2 * DAY));
        if (at >= after && tryReschedule(contest, at, start + delta)) after = at + HOUR;
      } else if (pick < rates.reschedule + rates.nearPostpone) {
        // Within 3 h of the start, down to the start itself: later by 10 minutes to a day.
        const at = between(ceilHour(uniform(start - 3 * HOUR, start - 1)));
        const delta = round5(random() < 0.5 ? uniform(10 * MINUTE, 2 * HOUR) : uniform(2 * HOUR, DAY));
        if (at >= after && tryReschedule(contest, at, start + delta)) after = at + HOUR;
      } else {
        // 30 min – 2.5 h earlier, announced 1.5–3 h before the new start.
        const newStart = start - round5(uniform(30 * MINUTE, 150 * MINUTE));
        const at = between(hourOf(uniform(newStart - 3 * HOUR, newStart - PREPONE_NOTICE_SECONDS)));
        if (at >= after && newStart - at >= PREPONE_NOTICE_SECONDS && tryReschedule(contest, at, newStart)) after = at + HOUR;
      }
    }
    if (random() < rates.duration) {
      const start = lastValue(contest.starts);
      const duration = lastValue(contest.durations);
      if (random() < 0.5) {
        const at = between(hourOf(uniform(Math.max(after, start - 7 * DAY), start - HOUR)));
        if (at >= after && at >= contest.announcedAt)
          contest.durations.push({ at, value: Math.max(1800, duration + round5((random() < 0.5 ? -1 : 1) * uniform(15, 60) * MINUTE)) });
      } else {
        // Extended while it runs (an hour boundary inside the contest).
        const at = between(ceilHour(start + 1));
        if (at < start + duration && at >= after) contest.durations.push({ at, value: duration + round5(uniform(10, 30) * MINUTE) });
      }
    }
    if (random() < rates.withdraw) {
      const start = lastValue(contest.starts);
      const near = random() < rates.withdrawNearShare;
      const at = between(
        near ? ceilHour(uniform(start - 2 * HOUR, start - 1)) : hourOf(uniform(Math.max(after, start - 10 * DAY), start - 2 * HOUR)),
      );
      if (at >= after && tryWithdraw(contest, at)) after = at + HOUR;
    } else if (random() < rates.relist) {
      const start = lastValue(contest.starts);
      const at = between(hourOf(uniform(Math.max(after, start - 10 * DAY), start - DAY)));
      const relistAt = between(hourOf(at) + ceilHour(uniform(HOUR, Math.min(3 * DAY, start - at - 3 * HOUR))));
      if (at >= after && tryWithdraw(contest, at)) {
        const newStart = random() < 0.5 ? start : start + round5(uniform(HOUR, 7 * DAY));
        tryRelist(contest, relistAt, newStart);
      }
    }
    if (random() < rates.retest) {
      const over = contestOver(contest);
      contest.retests.push({ at: between(ceilHour(over + uniform(HOUR, 2 * DAY))), seconds: round5(uniform(30, 180) * MINUTE) });
    }
  }

  // Mass withdrawals: 30–70 % (at least 3) of the upcoming rounds, at once.
  for (
    let at = hourOf(yearStart + uniform(5, 2 * rates.massWithdrawEveryDays) * DAY);
    at < end;
    at = hourOf(at + uniform(0.5, 1.5) * rates.massWithdrawEveryDays * DAY)
  ) {
    const when = between(at);
    const candidates = contests.filter((c) => listedAt(c, when) && startAt(c, when) > when + HOUR && lastChange(c) < when);
    if (candidates.length < 3) continue;
    const n = Math.max(3, Math.round(candidates.length * uniform(0.3, 0.7)));
    for (const contest of shuffle(candidates, random).slice(0, n)) tryWithdraw(contest, when);
  }
  // Mass postponements: most (at least 3) of the rounds of the next two weeks moved by about a
  // day, announced 1–3 h before the first of them starts.
  for (
    let t = hourOf(yearStart + uniform(5, 2 * rates.massPostponeEveryDays) * DAY);
    t < end;
    t = hourOf(t + uniform(0.5, 1.5) * rates.massPostponeEveryDays * DAY)
  ) {
    const first = contests.find((c) => listedAt(c, t) && startAt(c, t) > t + 4 * HOUR && lastChange(c) < t);
    if (first === undefined) continue;
    const at = between(ceilHour(startAt(first, t) - uniform(1, 3) * HOUR));
    const candidates = contests.filter(
      (c) => listedAt(c, at) && startAt(c, at) > at && startAt(c, at) < at + 14 * DAY && lastChange(c) < at,
    );
    if (candidates.length < 3 || !candidates.includes(first)) continue;
    const n = Math.max(3, Math.round(candidates.length * uniform(0.6, 1)));
    const moved = [
      first,
      ...shuffle(
        candidates.filter((c) => c !== first),
        random,
      ).slice(0, n - 1),
    ];
    const delta = round5(DAY + uniform(0, 2) * HOUR);
    for (const contest of moved) tryReschedule(contest, at, startAt(contest, at) + delta);
  }

  const changes: TruthChange[] = [];
  const push = (at: number, kind: ChangeKind, contest: TruthContest, near = false): void => {
    changes.push({ at, kind, contestId: contest.id, mass: false, near });
  };
  for (const contest of contests) {
    push(contest.announcedAt, 'announce', contest);
    for (let i = 1; i < contest.starts.length; i += 1) {
      const { at, value } = contest.starts[i]!;
      const previous = contest.starts[i - 1]!.value;
      push(at, 'reschedule', contest, Math.min(previous, value) - at <= 3 * HOUR);
    }
    for (const version of contest.names.slice(1)) push(version.at, 'rename', contest);
    for (const version of contest.durations.slice(1)) push(version.at, 'duration', contest);
    for (const w of contest.withdrawals) {
      push(w.at, 'withdraw', contest, startAt(contest, w.at - 1) - w.at <= 3 * HOUR);
      if (w.relistAt !== undefined) push(w.relistAt, 'relist', contest);
    }
    for (const r of contest.retests) push(r.at, 'retest', contest);
  }
  changes.sort((a, b) => a.at - b.at || a.contestId - b.contestId);
  const perHour = new Map<string, number>();
  for (const change of changes) perHour.set(`${change.at}/${change.kind}`, (perHour.get(`${change.at}/${change.kind}`) ?? 0) + 1);
  for (const change of changes) change.mass = change.kind !== 'announce' && (perHour.get(`${change.at}/${change.kind}`) ?? 0) >= 3;
  return { yearStart, end, contests, changes: changes.filter((c) => c.at >= yearStart && c.at < end) };
}

/** Moves the start at `at` if that is honest then: listed, not started, the new start still ahead. */
function tryReschedule(contest: TruthContest, at: number, newStart: number): boolean {
  const start = startAt(contest, at);
  if (!listedAt(contest, at) || at >= start || at < lastChange(contest) || newStart === start) return false;
  if (newStart < start ? newStart - at < PREPONE_NOTICE_SECONDS : newStart <= at) return false;
  contest.starts.push({ at, value: newStart });
  return true;
}

function tryWithdraw(contest: TruthContest, at: number): boolean {
  if (!listedAt(contest, at) || at >= startAt(contest, at) || at < lastChange(contest)) return false;
  contest.withdrawals.push({ at });
  return true;
}

function tryRelist(contest: TruthContest, at: number, newStart: number): boolean {
  const open = contest.withdrawals[contest.withdrawals.length - 1];
  if (open === undefined || open.relistAt !== undefined || at <= open.at || newStart - at < 3 * HOUR) return false;
  open.relistAt = at;
  if (newStart !== startAt(contest, at)) contest.starts.push({ at, value: newStart });
  return true;
}

function lastValue<T>(versions: Version<T>[]): T {
  return versions[versions.length - 1]!.value;
}

/** The last change of its start or listing (renames and durations change independently). */
function lastChange(contest: TruthContest): number {
  return Math.max(contest.announcedAt, ...contest.starts.map((s) => s.at), ...contest.withdrawals.flatMap((w) => [w.at, w.relistAt ?? 0]));
}

function shuffle<T>(items: T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Per series ("Codeforces Round", "Educational Codeforces Round", ...): how far its numbers advance per window. */
function roundNumberSpans(names: string[]): Map<string, number> {
  const seen = new Map<string, number[]>();
  for (const name of names) {
    const match = /^(.*?Round) (\d+)/.exec(name);
    if (match === null) continue;
    const list = seen.get(match[1]!) ?? [];
    list.push(Number(match[2]));
    seen.set(match[1]!, list);
  }
  return new Map([...seen].map(([series, numbers]) => [series, Math.max(...numbers) - Math.min(...numbers) + 1]));
}

function advanceRound(name: string, k: number, spans: Map<string, number>): string {
  return name.replace(/^(.*?Round) (\d+)/, (_, series: string, n: string) => `${series} ${Number(n) + k * (spans.get(series) ?? 0)}`);
}

function valueAt<T>(versions: Version<T>[], t: number): T {
  let value = versions[0]!.value;
  for (const version of versions) if (version.at <= t) value = version.value;
  return value;
}

export function listedAt(contest: TruthContest, t: number): boolean {
  return contest.announcedAt <= t && !contest.withdrawals.some((w) => w.at <= t && (w.relistAt === undefined || t < w.relistAt));
}

/** When the contest was last withdrawn at or before `t` (undefined: never). */
export function withdrawnSince(contest: TruthContest, t: number): number | undefined {
  let since: number | undefined;
  for (const w of contest.withdrawals) if (w.at <= t && (w.relistAt === undefined || t < w.relistAt)) since = w.at;
  return since;
}

export function startAt(contest: TruthContest, t: number): number {
  return valueAt(contest.starts, t);
}

export function durationAt(contest: TruthContest, t: number): number {
  return valueAt(contest.durations, t);
}

export function nameAt(contest: TruthContest, t: number): string {
  return valueAt(contest.names, t);
}

export function finalStart(contest: TruthContest): number {
  return lastValue(contest.starts);
}

/** The contest takes place: it is listed when its final start comes. */
export function takesPlace(contest: TruthContest): boolean {
  return listedAt(contest, finalStart(contest));
}

/** Since when the final start has been what Codeforces lists (its version, or the re-listing that showed it again). */
export function finalStartSince(contest: TruthContest): number {
  const since = contest.starts[contest.starts.length - 1]!.at;
  const relisted = contest.withdrawals.map((w) => w.relistAt ?? 0).filter((at) => at <= finalStart(contest));
  return Math.max(since, ...relisted);
}

/** When it is over for good (FINISHED, before any retest). */
export function contestOver(contest: TruthContest): number {
  return finalStart(contest) + lastValue(contest.durations) + contest.pendingSeconds + contest.systemTestSeconds;
}

/** The phase a contest with this start and duration is in at `t` (no stuck pending, no retest). */
export function phaseFor(start: number, durationSeconds: number, t: number): string {
  if (t < start) return 'BEFORE';
  if (t < start + durationSeconds) return 'CODING';
  if (t < start + durationSeconds + 10 * MINUTE) return 'PENDING_SYSTEM_TEST';
  if (t < start + durationSeconds + HOUR) return 'SYSTEM_TEST';
  return 'FINISHED';
}

export function phaseAt(contest: TruthContest, t: number): string {
  const start = startAt(contest, t);
  const end = start + durationAt(contest, t);
  if (t < start) return 'BEFORE';
  if (t < end) return 'CODING';
  if (t < end + contest.pendingSeconds) return 'PENDING_SYSTEM_TEST';
  if (t < end + contest.pendingSeconds + contest.systemTestSeconds) return 'SYSTEM_TEST';
  if (contest.retests.some((r) => r.at <= t && t < r.at + r.seconds)) return 'SYSTEM_TEST';
  return 'FINISHED';
}

export interface ApiEntry {
  id: number;
  name: string;
  type: string;
  phase: string;
  frozen: boolean;
  durationSeconds: number;
  startTimeSeconds: number;
  relativeTimeSeconds: number;
}

/**
 * The `result` of a contest.list reply made at `t` (newest first, as Codeforces orders it), with
 * `relativeTimeSeconds` as Codeforces computes it when it makes the reply: t − start.
 */
export function listAt(truth: Truth, t: number): ApiEntry[] {
  const out: ApiEntry[] = [];
  for (const contest of truth.contests) {
    if (!listedAt(contest, t)) continue;
    const start = startAt(contest, t);
    out.push({
      id: contest.id,
      name: nameAt(contest, t),
      type: contest.type,
      phase: phaseAt(contest, t),
      frozen: false,
      durationSeconds: durationAt(contest, t),
      startTimeSeconds: start,
      relativeTimeSeconds: t - start,
    });
  }
  return out.sort((a, b) => b.startTimeSeconds - a.startTimeSeconds || b.id - a.id);
}

export interface UpcomingEntry {
  name: string;
  startTimeSeconds: number;
}

/** What the app's upcoming view must show at `t`: listed contests starting at or after `t`. */
export function upcomingAt(truth: Truth, t: number): Map<number, UpcomingEntry> {
  const out = new Map<number, UpcomingEntry>();
  for (const contest of truth.contests) {
    if (!listedAt(contest, t)) continue;
    const start = startAt(contest, t);
    if (start >= t) out.set(contest.id, { name: nameAt(contest, t), startTimeSeconds: start });
  }
  return out;
}
