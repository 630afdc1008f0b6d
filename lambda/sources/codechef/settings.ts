/**
 * What is particular to CodeChef: its settings (docs/sources.md, "Settings"). No runtime imports:
 * the CDK app reads the poll period from here. Which of this platform's behaviours the simulated
 * year generates, and which it does not: docs/sources.md, "What the simulated year generates".
 */
import { DAY_SECONDS, HOUR_SECONDS, type SourceSettings } from '../settings.js';

export interface CodeChefSettings extends SourceSettings {
  /** Past contests that ended longer ago than this are not read (a stored one that just finished is). */
  recentPastSeconds: number;
}

/** What is particular to CodeChef; each value from what its schedule did (docs/sources.md, "Settings"). */
export const CODECHEF_SETTINGS = {
  /** Hourly: the promise's 70 minutes rest on it; CodeChef's 12-hour flips and slides are days long, not minutes. */
  pollPeriodSeconds: HOUR_SECONDS,
  http: {
    minSpacingMs: 2_000,
    attemptTimeoutMs: 10_000,
    /** A JSON list of a few dozen contests (tens of KB): 4 MiB is a hundred times that. */
    maxBodyBytes: 4 * 1024 * 1024,
  },
  maxInvalidShare: 0.1,
  /**
   * The judge keeps finished contests 7 days: a contest it stores finished within them, so only
   * those past contests are read (the rest of `past_contests` is history no table holds).
   */
  recentPastSeconds: 7 * DAY_SECONDS,
  schedule: {
    /** 119 contests changed before their start in three years: the most of the four platforms. */
    moves: true,
    /**
     * As Codeforces. Placeholder rounds, whose "(Date to be decided)" start slid ±7 days week by
     * week, are not scheduled contests: never stored, their slides never reach the judge.
     */
    acceptMoveAfterReplies: 3,
    /**
     * Four rounds flipped exactly 12 hours earlier and came back a week later (an upstream AM/PM
     * error): a ±12 h move is taken for that error and held past a week (8 days) before it lands.
     */
    suspectMovesSeconds: [-12 * HOUR_SECONDS, 12 * HOUR_SECONDS],
    suspectMoveHeldSeconds: 8 * DAY_SECONDS,
  },
} as const satisfies CodeChefSettings;
