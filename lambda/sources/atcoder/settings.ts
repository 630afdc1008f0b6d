/**
 * What is particular to AtCoder: its settings (docs/sources.md, "Settings"). No runtime imports:
 * the CDK app reads the poll period from here. Which of this platform's behaviours the simulated
 * year generates, and which it does not: docs/sources.md, "What the simulated year generates".
 */
import { HOUR_SECONDS, type SourceSettings } from '../settings.js';

/** What is particular to AtCoder; each value from what its schedule did (docs/sources.md, "Settings"). */
export const ATCODER_SETTINGS = {
  /** Hourly, as Codeforces: the promise's 70 minutes rest on it; rounds are posted weeks ahead, so polling more gains nothing. */
  pollPeriodSeconds: HOUR_SECONDS,
  http: {
    /** A page, not an API: two seconds between attempts is polite. */
    minSpacingMs: 2_000,
    attemptTimeoutMs: 10_000,
    /** The page is about 50 KB (46 KB recorded): 40 times that. */
    maxBodyBytes: 2 * 1024 * 1024,
  },
  /** As Codeforces. The recorded page has 1 invalid row of 57 (joisc2021: a 00:00 duration, an archive). */
  maxInvalidShare: 0.1,
  schedule: {
    /** 30 contests changed before their start in three years. */
    moves: true,
    /**
     * Replies a held change needs (a start in the past, a mass change …; a plausible move is not
     * held and lands at once). One round moved −60 min and back within 3 hours: a held change
     * showing for as few replies never lands (docs/sources.md, "Settings").
     */
    acceptMoveAfterReplies: 4,
    /** No move of AtCoder's recurred at one amount. */
    suspectMovesSeconds: [],
    suspectMoveHeldSeconds: 0,
  },
} as const satisfies SourceSettings;
