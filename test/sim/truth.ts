/**
 * The truth of the simulated year: what Codeforces lists at every moment. Pure: no I/O.
 *
 * Built from the real contests in test/sim/data/contests-2025.json (id, name, type, duration, start
 * as a real `contest.list` reply had them), repeated window after window and shifted forward by a
 * whole number of weeks so that the year lies after 2027-01-01 (DynamoDB Local deletes items whose
 * TTL is below the real clock, so the virtual year must lie in the real future). On top, seeded
 * honest churn, every change happening on a whole hour (between two syncs):
 *
 * - each contest is listed 7–21 days before its start (as Codeforces announces rounds);
 * - reschedules later and earlier, announced at least 2 days before both the old and the new start,
 *   so before any reminder (at most 1,440 minutes ahead) can be due: a reminder never has to be sent
 *   again for a new time;
 * - withdrawals of one contest, and several at once (30–70 % of the upcoming rounds), announced at
 *   least 2 days before each start;
 * - renames (a round listed as "Codeforces Round (Div. 2)" gets its number later);
 * - phases in order BEFORE → CODING → PENDING_SYSTEM_TEST → SYSTEM_TEST → FINISHED, some contests
 *   stuck in PENDING_SYSTEM_TEST for hours or days.
 */
import { readFileSync } from 'node:fs';
import { prng } from '../chaos/faults.js';

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

export interface TruthContest {
  id: number;
  type: string;
  durationSeconds: number;
  announcedAt: number;
  /** Versions of the start time: `at` is when the version became true (the first at `announcedAt`). */
  starts: { at: number; start: number }[];
  names: { at: number; name: string }[];
  withdrawnAt?: number;
  /** Time spent in PENDING_SYSTEM_TEST after the end. */
  pendingSeconds: number;
  systemTestSeconds: number;
}

export type ChangeKind = 'announce' | 'reschedule' | 'withdraw' | 'rename';

export interface TruthChange {
  at: number;
  kind: ChangeKind;
  contestId: number;
  /** Part of a change of at least 3 upcoming contests in the same hour. */
  mass: boolean;
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

export interface ChurnRates {
  rename: number;
  reschedule: number;
  withdraw: number;
  stuckPending: number;
  /** Mean days between mass withdrawals. */
  massWithdrawEveryDays: number;
}

export const DEFAULT_CHURN: ChurnRates = { rename: 0.15, reschedule: 0.1, withdraw: 0.03, stuckPending: 0.06, massWithdrawEveryDays: 60 };

/** 2027-01-04T00:00:00Z, a Monday. */
export const DEFAULT_YEAR_START = Date.UTC(2027, 0, 4) / 1000;

const hourOf = (seconds: number): number => Math.floor(seconds / HOUR) * HOUR;

export function buildTruth(options: TruthOptions): Truth {
  const data = options.data ?? loadSeedData();
  const rates = { ...DEFAULT_CHURN, ...options.rates };
  const random = prng(options.seed ^ 0x7275_7468);
  const uniform = (a: number, b: number): number => a + random() * (b - a);
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
        durationSeconds,
        announcedAt,
        starts: [{ at: announcedAt, start }],
        names: [{ at: announcedAt, name: finalName }],
        pendingSeconds: stuck ? Math.round(uniform(6 * HOUR, 5 * DAY)) : Math.round(uniform(5, 20) * 60),
        systemTestSeconds: Math.round(uniform(20, 90) * 60),
      });
    }
  }
  contests.sort((a, b) => a.starts[0]!.start - b.starts[0]!.start || a.id - b.id);

  // Churn only where it happens inside the simulated span, with room before the start.
  const changes: TruthChange[] = [];
  for (const contest of contests) {
    const start = contest.starts[0]!.start;
    const earliest = Math.max(contest.announcedAt + HOUR, yearStart + HOUR);
    if (random() < rates.rename && /Round \d+/.test(contest.names[0]!.name)) {
      // Listed first without its number (as Codeforces often does), numbered later.
      const final = contest.names[0]!.name;
      const at = hourOf(uniform(earliest, start - HOUR));
      if (at >= earliest) {
        contest.names = [
          { at: contest.announcedAt, name: final.replace(/Round \d+/, 'Round') },
          { at, name: final },
        ];
      }
    }
    if (random() < rates.reschedule) {
      const delta = Math.round((random() < 0.5 ? -1 : 1) * uniform(1 * HOUR, 2 * DAY) / 300) * 300;
      const newStart = start + delta;
      const latest = Math.min(start, newStart) - 2 * DAY - HOUR;
      if (latest >= earliest) {
        const at = hourOf(uniform(earliest, latest));
        if (at >= earliest) contest.starts.push({ at, start: newStart });
      }
    } else if (random() < rates.withdraw) {
      const latest = start - 2 * DAY - HOUR;
      if (latest >= earliest) contest.withdrawnAt = hourOf(uniform(earliest, latest));
    }
  }

  // Mass withdrawals: 30–70 % (at least 3) of the rounds upcoming more than 2 days ahead, at once.
  for (let at = hourOf(yearStart + uniform(5, 2 * rates.massWithdrawEveryDays) * DAY); at < end; at = hourOf(at + uniform(0.5, 1.5) * rates.massWithdrawEveryDays * DAY)) {
    const candidates = contests.filter(
      (c) => listedAt(c, at) && startAt(c, at) >= at + 2 * DAY + HOUR && c.starts.every((s) => s.start >= at + 2 * DAY + HOUR) && lastChange(c) < at,
    );
    if (candidates.length < 3) continue;
    const n = Math.max(3, Math.round(candidates.length * uniform(0.3, 0.7)));
    for (const contest of shuffle(candidates, random).slice(0, n)) {
      contest.withdrawnAt = at;
      contest.starts = contest.starts.filter((s) => s.at < at);
      contest.names = contest.names.filter((s) => s.at < at);
    }
  }

  for (const contest of contests) {
    if (contest.announcedAt >= yearStart && contest.announcedAt < end) changes.push({ at: contest.announcedAt, kind: 'announce', contestId: contest.id, mass: false });
    for (const version of contest.starts.slice(1)) changes.push({ at: version.at, kind: 'reschedule', contestId: contest.id, mass: false });
    for (const version of contest.names.slice(1)) changes.push({ at: version.at, kind: 'rename', contestId: contest.id, mass: false });
    if (contest.withdrawnAt !== undefined) changes.push({ at: contest.withdrawnAt, kind: 'withdraw', contestId: contest.id, mass: false });
  }
  changes.sort((a, b) => a.at - b.at || a.contestId - b.contestId);
  const perHour = new Map<string, number>();
  for (const change of changes) perHour.set(`${change.at}/${change.kind}`, (perHour.get(`${change.at}/${change.kind}`) ?? 0) + 1);
  for (const change of changes) change.mass = change.kind !== 'announce' && (perHour.get(`${change.at}/${change.kind}`) ?? 0) >= 3;
  return { yearStart, end, contests, changes: changes.filter((c) => c.at >= yearStart && c.at < end) };
}

function lastChange(contest: TruthContest): number {
  return Math.max(contest.announcedAt, ...contest.starts.map((s) => s.at), ...contest.names.map((n) => n.at));
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

export function listedAt(contest: TruthContest, t: number): boolean {
  return contest.announcedAt <= t && (contest.withdrawnAt === undefined || t < contest.withdrawnAt);
}

export function startAt(contest: TruthContest, t: number): number {
  let start = contest.starts[0]!.start;
  for (const version of contest.starts) if (version.at <= t) start = version.start;
  return start;
}

export function nameAt(contest: TruthContest, t: number): string {
  let name = contest.names[0]!.name;
  for (const version of contest.names) if (version.at <= t) name = version.name;
  return name;
}

export function finalStart(contest: TruthContest): number {
  return contest.starts[contest.starts.length - 1]!.start;
}

export function phaseAt(contest: TruthContest, t: number): string {
  const start = startAt(contest, t);
  const end = start + contest.durationSeconds;
  if (t < start) return 'BEFORE';
  if (t < end) return 'CODING';
  if (t < end + contest.pendingSeconds) return 'PENDING_SYSTEM_TEST';
  if (t < end + contest.pendingSeconds + contest.systemTestSeconds) return 'SYSTEM_TEST';
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

/** The `result` of a contest.list reply at `t` (newest first, as Codeforces orders it). */
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
      durationSeconds: contest.durationSeconds,
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
