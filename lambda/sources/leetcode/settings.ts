/**
 * What is particular to LeetCode: its settings (docs/sources.md, "Settings"). No runtime imports:
 * the CDK app reads the poll period from here. Which of this platform's behaviours the simulated
 * year generates, and which it does not: docs/sources.md, "What the simulated year generates".
 */
import { HOUR_SECONDS, type SourceSettings } from '../settings.js';

/** What is particular to LeetCode; each value from what its schedule did (docs/sources.md, "Settings"). */
export const LEETCODE_SETTINGS = {
  /** Hourly: the promise's 70 minutes rest on it, though LeetCode's rounds never moved. */
  pollPeriodSeconds: HOUR_SECONDS,
  http: {
    /** LeetCode blocks clients that call it often: attempts at least 5 s apart. */
    minSpacingMs: 5_000,
    attemptTimeoutMs: 10_000,
    /** Four fields per contest, about a thousand contests (the recorded reply, with descriptions, is 300 KB for 97): 4 MiB. */
    maxBodyBytes: 4 * 1024 * 1024,
  },
  maxInvalidShare: 0.1,
  schedule: {
    /** None of LeetCode's contests changed before its start in three years. */
    moves: false,
    /**
     * A move is then more likely a wrong reply than news: six consecutive hourly replies before it
     * lands (a postponement still pauses reminders at once; an earlier start waits six hours).
     */
    acceptMoveAfterReplies: 6,
    suspectMovesSeconds: [],
    suspectMoveHeldSeconds: 0,
  },
} as const satisfies SourceSettings;
