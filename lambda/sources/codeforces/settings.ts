/**
 * What is particular to Codeforces (docs/sources.md, "Settings"). No runtime imports: the CDK app
 * reads it. The stack's context (`contestSync:scheduleRateMinutes`, `contestSync:acceptHeldAfterReplies`)
 * still sets Codeforces' poll rate and held-change replies, as before there were several sources.
 * What the simulated year generates of its behaviours: docs/sources.md, "What the simulated year generates".
 */
import { HOUR_SECONDS, type SourceSettings } from '../settings.js';

export const CODEFORCES_SETTINGS = {
  /** Hourly: the promise's 70 minutes rest on it. */
  pollPeriodSeconds: HOUR_SECONDS,
  http: {
    /** Codeforces allows one call per 2 s. */
    minSpacingMs: 2_000,
    attemptTimeoutMs: 10_000,
    /** 8 MiB: 16 times the real contest.list (the client's `MAX_BODY_BYTES`, its default when called without settings). */
    maxBodyBytes: 8 * 1024 * 1024,
  },
  maxInvalidShare: 0.1,
  schedule: {
    /** 152 contests changed before their start in three years: the judge's rules were written on them. */
    moves: true,
    acceptMoveAfterReplies: 3,
    suspectMovesSeconds: [],
    suspectMoveHeldSeconds: 0,
  },
} as const satisfies SourceSettings;
