/**
 * What differs per platform: one documented settings object per source (docs/sources.md,
 * "Settings", which says what reads each field); every value is explained beside it from what the
 * platform's schedule did over three years of recorded schedules.
 */
import type { FetchOptions } from './http/index.js';

/** The shared HTTP layer's bounds for one platform (http/fetch.ts, `FetchOptions`). */
export interface SourceHttpSettings {
  /** Attempt starts at least this far apart (politeness, and a platform's rate limit). */
  minSpacingMs: number;
  /** One attempt's headers+body timeout, capped by the deadline. */
  attemptTimeoutMs: number;
  /** Compressed and decompressed body cap: many times the real reply, far below the function's memory. */
  maxBodyBytes: number;
}

/** What is plausible on the platform's schedule, and so what the judge holds there (lambda/contests/evidence.ts). */
export interface ScheduleSettings {
  /** Whether the platform moves scheduled rounds at all: false, every move of a start is held (`move`) until repeated. */
  moves: boolean;
  /** A held change (a move the judge doubts included) is shown once this many consecutive replies repeat it. */
  acceptMoveAfterReplies: number;
  /**
   * Start moves of exactly these amounts (seconds, signed) are taken for an upstream error rather
   * than news (`suspect-move`): held until they have lasted `suspectMoveHeldSeconds`.
   */
  suspectMovesSeconds: readonly number[];
  suspectMoveHeldSeconds: number;
}

export interface SourceSettings {
  /** How often the platform's job polls, in seconds. */
  pollPeriodSeconds: number;
  http: SourceHttpSettings;
  /** More invalid entries than this share of one reply fail the reply. */
  maxInvalidShare: number;
  schedule: ScheduleSettings;
}

export const HOUR_SECONDS = 3600;
export const DAY_SECONDS = 24 * HOUR_SECONDS;

/** What a source's factory takes besides its settings: where the platform is, and the test seams. */
export interface SourceOptions extends Pick<FetchOptions, 'dispatcher' | 'now' | 'sleep' | 'random'> {
  /** The platform's origin (a local stand-in in tests and offline runs). @default the real one */
  baseUrl?: string;
}

/** One call's fetch options: the call's signal and deadline, the settings' bounds, the options' seams. */
export function fetchOptions(settings: SourceSettings, options: SourceOptions, call: { signal: AbortSignal; deadline: number }) {
  return {
    ...options,
    signal: call.signal,
    deadline: call.deadline,
    minSpacingMs: settings.http.minSpacingMs,
    attemptTimeoutMs: settings.http.attemptTimeoutMs,
    maxBodyBytes: settings.http.maxBodyBytes,
    maxInvalidShare: settings.maxInvalidShare,
  };
}
