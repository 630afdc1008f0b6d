/**
 * The data a chaos trial syncs, and what the tables must hold afterwards.
 *
 * Every Codeforces reply is a numbered version of one list: names carry `[vN]`, so every version
 * rewrites every stored contest and any item in the table says which reply it came from. Two
 * contests move by an hour from version to version (their reminders must follow). The tables are
 * seeded with a contest that no version lists (cancelled: deleted, its reminders kept) and one
 * that the sync before the trial saw finish, awaiting confirmation (its reminders are deleted).
 */

import type { ContestItem } from '../../lambda/contests/model.js';
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
  contestId: number;
  userId: string;
  minutesBefore: number;
  remindAt: number;
}

export const CANCELLED_ID = 3099;
export const FINISHING_ID = 3013;
export const LONG_FINISHED_ID = 3016;
const MOVING_IDS = new Set([3003, 3007]);

const VERSION_TAG = /\[v(\d+)\]/;

/** The version a contest name (or a reply body) carries, if any. */
export function versionOf(text: string): number | undefined {
  const match = VERSION_TAG.exec(text);
  return match === null ? undefined : Number(match[1]);
}

export interface Dataset {
  /** Trial base time, epoch seconds. */
  baseSeconds: number;
}

function startOf(dataset: Dataset, id: number, version: number): number {
  const base = dataset.baseSeconds;
  if (id <= 3010) return base + (id - 3000) * 6 * HOUR + (MOVING_IDS.has(id) ? (version % 3) * HOUR : 0);
  if (id <= 3012) return base - 1800;
  if (id <= 3015) return base - (id - 3012) * DAY;
  return base - 30 * DAY;
}

function phaseOf(id: number): ApiContest['phase'] {
  if (id <= 3010) return 'BEFORE';
  if (id <= 3012) return 'CODING';
  return 'FINISHED';
}

/** The contest list of reply `version`, as Codeforces would send it. */
export function contestList(dataset: Dataset, version: number): ApiContest[] {
  const list: ApiContest[] = [];
  for (let id = 3001; id <= LONG_FINISHED_ID; id += 1) {
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
  const { updatedAt: _updatedAt, ...item } = toItem({ ...contest, frozen: false }, PLAN_SETTINGS, '');
  return item;
}

/**
 * The finishing contest as the sync before the trial left it: written FINISHED, its reminders'
 * deletion (irreversible) awaiting the next reply's confirmation (docs/design.md, "A reply is
 * evidence"). Every reply of the trial lists it FINISHED, so the first successful sync deletes them.
 */
function finishing(contest: ApiContest): NonNullable<ContestItem['pending']> {
  return { held: false, kind: 'finish', said: `FINISHED@${contest.startTimeSeconds}+${contest.durationSeconds}`, replies: 1, since: contest.startTimeSeconds + DAY / 2 };
}

/** What the tables hold before the trial (version 0 as if synced earlier, plus two special cases). */
export function seedRows(dataset: Dataset): { contests: (ContestRow & { updatedAt: string })[]; reminders: ReminderRow[] } {
  const updatedAt = new Date((dataset.baseSeconds - DAY) * 1000).toISOString();
  const contests = contestList(dataset, 0)
    .filter((contest) => contest.id !== LONG_FINISHED_ID)
    .map((contest) => ({ ...row(contest), ...(contest.id === FINISHING_ID ? { pending: finishing(contest) } : {}), updatedAt }));
  contests.push({
    ...row({ id: CANCELLED_ID, name: 'Codeforces Round 3099 (cancelled) [v0]', type: 'CF', phase: 'BEFORE', startTimeSeconds: dataset.baseSeconds + 2 * DAY, durationSeconds: 7200 }),
    updatedAt,
  });
  const startById = new Map(contests.map((contest) => [contest.contestId, contest.startTimeSeconds]));
  const reminder = (contestId: number, userId: string, minutesBefore: number): ReminderRow => ({
    contestId,
    userId,
    minutesBefore,
    remindAt: (startById.get(contestId) ?? 0) - 60 * minutesBefore,
  });
  return {
    contests,
    reminders: [
      reminder(3001, 'u1', 15),
      reminder(3003, 'u1', 30),
      reminder(3003, 'u2', 60),
      reminder(3007, 'u3', 120),
      reminder(FINISHING_ID, 'u3', 10),
      reminder(CANCELLED_ID, 'u1', 30),
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
  const reminders = seedRows(dataset).reminders.map((reminder) => {
    const start = startById.get(reminder.contestId);
    return start === undefined ? reminder : { ...reminder, remindAt: start - 60 * reminder.minutesBefore };
  });
  return { contests, reminders };
}
