/**
 * The data a chaos trial syncs, and what the tables must hold afterwards.
 *
 * Every Codeforces reply is a numbered version of one list: names carry `[vN]`, so every version
 * rewrites every stored contest and any item in the table says which reply it came from. Two
 * contests move by an hour from version to version (their reminders must follow). The tables are
 * seeded with a contest that no version lists (cancelled: deleted, its reminders kept) and one
 * that the sync before the trial saw finish, awaiting confirmation (its reminders are deleted).
 *
 * For the delivery part, three contests start within the hour (SOON_IDS) with reminders seeded due
 * as the app writes them (`dueAt`, `dueStart`, `dueShard`): some already due when the trial starts,
 * some due seconds into it, one not due for ten minutes (never to be sent in a trial). One of them
 * moves by 20 s from version to version, so the concurrent syncs re-time its reminders (and make a
 * reminder sent for one start due again at the next: once per start).
 *
 * The other platforms' jobs (sources.ts) sync their stand-ins' fixtures: one upcoming contest of
 * each (OTHER_SOON_IDS) is seeded as listed, with its reply clock and reminders due as the app
 * writes them — some already due, some due in the trial's first minutes, one not for ten minutes
 * —, so that delivery sends them while their own jobs' syncs keep them due, pause them (a failing
 * source) and bring them back.
 */

import type { ContestItem, ListedContest } from '../../lambda/contests/model.js';
import { codeforcesId, listedContest } from '../../lambda/sources/codeforces/source.js';
import { replyClockId } from '../../lambda/contests/model.js';
import { contestKeyOf } from '../../lambda/reminders/table.js';
import { DEFAULT_PLAN_SETTINGS, toItem } from '../../lambda/contests/plan.js';

export const RETENTION_SECONDS = 7 * 24 * 3600;
const HOUR = 3600;
const DAY = 24 * HOUR;

export interface ApiContest {
  id: number;
  name: string;
  type: 'CF';
  phase: 'BEFORE' | 'CODING' | 'FINISHED';
  frozen: false;
  durationSeconds: number;
  startTimeSeconds: number;
  relativeTimeSeconds: number;
}

/** A Contests item as the checker compares it (`updatedAt` is bookkeeping, not compared). */
export type ContestRow = Omit<ContestItem, 'updatedAt'>;

export interface ReminderRow {
  /** The contest's qualified id (`codeforces:<id>`; the other platforms' soon contests: `atcoder:abc199` …). */
  contestId: string;
  /** The row's key: its contest's bucket key for the user. */
  contestKey: string;
  userId: string;
  minutesBefore: number;
  remindAt: number;
  /** Seeded due (as the app writes a reminder of a contest that is not paused). */
  dueAt?: number;
  dueStart?: number;
  dueShard?: number;
  expiresAt?: number;
}

export const CANCELLED_ID = 3099;
export const FINISHING_ID = 3013;
export const LONG_FINISHED_ID = 3016;
const MOVING_IDS = new Set([3003, 3007]);
/** Contests starting within the hour: their reminders fall due during the trial (delivery). */
export const SOON_IDS = [3021, 3022, 3023] as const;
/** The soon contest that moves by 20 s per list version. */
export const SOON_MOVING_ID = 3023;
/** Offsets (s) of the soon contests' starts from the trial's base, version 0. */
const SOON_START: Record<(typeof SOON_IDS)[number], number> = { 3021: 20 * 60 + 5, 3022: 30 * 60 + 15, 3023: 25 * 60 + 10 };
/** The soon contests' reminders: [contest, user, minutesBefore] (due at start − 60 × minutesBefore). */
const SOON_REMINDERS: readonly [number, string, number][] = [
  [3021, 'u1', 20], // due 5 s into the trial
  [3021, 'u2', 21], // due 55 s before it
  [3021, 'u3', 19], // due 65 s into it (in the quiet phase, or after the trial)
  [3021, 'u9', 10], // due 10 minutes into it: never sent during a trial
  [3022, 'u1', 30], // due 15 s into it
  [3022, 'u4', 30],
  [3022, 'u5', 31], // due 45 s before it
  [3023, 'u1', 25], // due 10 s into it, moving by 20 s per version
  [3023, 'u2', 26], // due 50 s before it, moving
];

/**
 * Each other platform's contest whose reminders the trial seeds: an upcoming one of its stand-in's
 * fixture (local/source-fixtures.ts, served shifted to the trial's start) within the week a lead
 * time may reach (ROW_LIMITS.maxMinutesBefore): abc199 starts 33 h after the anchor, START135A
 * 167.5 h, Weekly Contest 91 1.5 h.
 */
export const OTHER_SOON_IDS: Readonly<Record<string, string>> = {
  atcoder: 'atcoder:abc199',
  codechef: 'codechef:START135A',
  leetcode: 'leetcode:weekly-contest-91',
};
/**
 * Their reminders: [user, minutes added to the lead that makes it due in the trial's first minute]:
 * 0 due within it, 1 up to a minute before the trial, −1 one to two minutes into it (the quiet
 * phase), −10 ten minutes into it (never sent during a trial).
 */
const OTHER_SOON_REMINDERS: readonly [string, number][] = [
  ['u1', 0],
  ['u2', 1],
  ['u3', -1],
  ['u9', -10],
];

const VERSION_TAG = /\[v(\d+)\]/;

/** The version a contest name (or a reply body) carries, if any. */
export function versionOf(text: string): number | undefined {
  const match = VERSION_TAG.exec(text);
  return match === null ? undefined : Number(match[1]);
}

export interface Dataset {
  /** Trial base time, epoch seconds. */
  baseSeconds: number;
  /**
   * The large-commit fault: this many more reminders on a contest that moves an hour every version
   * (LARGE_COMMIT_ID), so that every sync moves them in several transactions. Absent: none.
   */
  largeCommit?: number;
  /**
   * The other platforms' soon contests (OTHER_SOON_IDS) as their source lists them from the
   * stand-in at the trial's start (sources.ts, `soonContests`): seeded with their reply clocks and
   * reminders. Absent: Codeforces' alone.
   */
  others?: readonly ListedContest[];
}

/** The contest whose reminders make the large commit (one of the moving ones). */
export const LARGE_COMMIT_ID = 3003;

function startOf(dataset: Dataset, id: number, version: number): number {
  const base = dataset.baseSeconds;
  if (id in SOON_START) return base + SOON_START[id as (typeof SOON_IDS)[number]] + (id === SOON_MOVING_ID ? (version % 3) * 20 : 0);
  if (id <= 3010) return base + (id - 3000) * 6 * HOUR + (MOVING_IDS.has(id) ? (version % 3) * HOUR : 0);
  if (id <= 3012) return base - 1800;
  if (id <= 3015) return base - (id - 3012) * DAY;
  return base - 30 * DAY;
}

function phaseOf(id: number): ApiContest['phase'] {
  if (id <= 3010 || id in SOON_START) return 'BEFORE';
  if (id <= 3012) return 'CODING';
  return 'FINISHED';
}

/** The contest list of reply `version`, as Codeforces would send it. */
export function contestList(dataset: Dataset, version: number): ApiContest[] {
  const list: ApiContest[] = [];
  for (const id of [...Array.from({ length: LONG_FINISHED_ID - 3000 }, (_, i) => 3001 + i), ...SOON_IDS]) {
    const startTimeSeconds = startOf(dataset, id, version);
    list.push({
      id,
      name: `Codeforces Round ${id} (Div. 2) [v${version}]`,
      type: 'CF',
      phase: phaseOf(id),
      frozen: false,
      durationSeconds: 7200,
      startTimeSeconds,
      relativeTimeSeconds: dataset.baseSeconds - startTimeSeconds,
    });
  }
  return list;
}

const PLAN_SETTINGS = { ...DEFAULT_PLAN_SETTINGS, finishedRetentionSeconds: RETENTION_SECONDS };

/** The item the function stores for a listed contest (the same mapping, `toItem`, minus `updatedAt`). */
function row(contest: Pick<ApiContest, 'id' | 'name' | 'type' | 'phase' | 'startTimeSeconds' | 'durationSeconds'>): ContestRow {
  const { updatedAt: _updatedAt, ...item } = toItem(listedContest({ ...contest, frozen: false }), PLAN_SETTINGS, '');
  return item;
}

/**
 * The finishing contest as the sync before the trial left it: written FINISHED, its reminders'
 * deletion (irreversible) awaiting the next reply's confirmation (docs/design.md, "A reply is
 * evidence"). Every reply of the trial lists it FINISHED, so the first successful sync deletes them.
 */
function finishing(contest: ApiContest): NonNullable<ContestItem['pending']> {
  return {
    held: false,
    kind: 'finish',
    said: `FINISHED@${contest.startTimeSeconds}+${contest.durationSeconds}`,
    replies: 1,
    since: contest.startTimeSeconds + DAY / 2,
  };
}

/**
 * What the tables hold before the trial (version 0 as if synced earlier, plus two special cases;
 * the other platforms' soon contests as listed). Each platform's reply clock says when its newest
 * applied reply was made: `clockAgeSeconds` before the trial (fresh: delivery may send at once;
 * over 70 minutes: it waits for a sync of that platform).
 */
export function seedRows(
  dataset: Dataset,
  clockAgeSeconds = 300,
): {
  contests: (ContestRow & { updatedAt: string })[];
  reminders: ReminderRow[];
  clocks: { contestId: string; replyMadeAt: number; updatedAt: string; dueShards: number }[];
} {
  const updatedAt = new Date((dataset.baseSeconds - DAY) * 1000).toISOString();
  const contests = contestList(dataset, 0)
    .filter((contest) => contest.id !== LONG_FINISHED_ID)
    .map((contest) => ({ ...row(contest), ...(contest.id === FINISHING_ID ? { pending: finishing(contest) } : {}), updatedAt }));
  contests.push({
    ...row({
      id: CANCELLED_ID,
      name: 'Codeforces Round 3099 (cancelled) [v0]',
      type: 'CF',
      phase: 'BEFORE',
      startTimeSeconds: dataset.baseSeconds + 2 * DAY,
      durationSeconds: 7200,
    }),
    updatedAt,
  });
  // The other platforms' soon contests, as their sources list them (stored as the sync maps them).
  const others = dataset.others ?? [];
  contests.push(...others.map((contest) => ({ ...toItem(contest, PLAN_SETTINGS, ''), updatedAt })));
  const startById = new Map(contests.map((contest) => [contest.contestId, contest.startTimeSeconds]));
  const reminderOf = (contestId: string, userId: string, minutesBefore: number): ReminderRow => ({
    contestId,
    contestKey: contestKeyOf(contestId, userId),
    userId,
    minutesBefore,
    remindAt: (startById.get(contestId) ?? 0) - 60 * minutesBefore,
  });
  const reminder = (id: number, userId: string, minutesBefore: number): ReminderRow => reminderOf(codeforcesId(id), userId, minutesBefore);
  const expiresById = new Map(contests.map((contest) => [contest.contestId, contest.expiresAt]));
  const dueOf = (row: ReminderRow): ReminderRow => ({
    ...row,
    dueAt: row.remindAt,
    dueStart: startById.get(row.contestId)!,
    dueShard: 0,
    expiresAt: expiresById.get(row.contestId)!,
  });
  const due = (id: number, userId: string, minutesBefore: number): ReminderRow => dueOf(reminder(id, userId, minutesBefore));
  // The lead that makes a reminder due within the trial's first minute, shifted per row.
  const leadOf = (contest: ListedContest, shift: number): number =>
    Math.floor((contest.startTimeSeconds - dataset.baseSeconds) / 60) + shift;
  // The setting the seeded rows were written with (1: shard 0), as a sync that ran on it records it.
  const clockOf = (platform: string) => ({
    contestId: replyClockId(platform),
    replyMadeAt: dataset.baseSeconds - clockAgeSeconds,
    updatedAt,
    dueShards: 1,
  });
  return {
    contests,
    clocks: [clockOf('codeforces'), ...others.map((contest) => clockOf(contest.platform))],
    reminders: [
      ...SOON_REMINDERS.map(([contestId, userId, minutesBefore]) => due(contestId, userId, minutesBefore)),
      ...others.flatMap((contest) =>
        OTHER_SOON_REMINDERS.map(([userId, shift]) => dueOf(reminderOf(contest.contestId, userId, leadOf(contest, shift)))),
      ),
      reminder(3001, 'u1', 15),
      reminder(3003, 'u1', 30),
      reminder(3003, 'u2', 60),
      reminder(3007, 'u3', 120),
      reminder(FINISHING_ID, 'u3', 10),
      reminder(CANCELLED_ID, 'u1', 30),
      ...Array.from({ length: dataset.largeCommit ?? 0 }, (_, i) => reminder(LARGE_COMMIT_ID, `big-${i}`, 5 + (i % 120))),
    ],
  };
}

/**
 * The tables after a successful sync whose reply was `version`, from the seeded tables: every
 * listed contest except the one finished long ago (never stored), without the cancelled one; the
 * reminders of moved contests follow them; those of finished and cancelled contests are kept
 * (paused: the sync never deletes a reminder), at their last time.
 */
export function expectedRows(dataset: Dataset, version: number): { contests: ContestRow[]; reminders: ReminderRow[] } {
  const contests = contestList(dataset, version)
    .filter((contest) => contest.id !== LONG_FINISHED_ID)
    .map((contest) => row(contest));
  const startById = new Map(contests.map((contest) => [contest.contestId, contest.startTimeSeconds]));
  // Codeforces' rows: the other platforms' are their own jobs' (judged by the delivery checker).
  const reminders = seedRows({ ...dataset, others: [] }).reminders.map(({ contestId, contestKey, userId, minutesBefore, remindAt }) => {
    const start = startById.get(contestId);
    return { contestId, contestKey, userId, minutesBefore, remindAt: start === undefined ? remindAt : start - 60 * minutesBefore };
  });
  return { contests, reminders };
}
