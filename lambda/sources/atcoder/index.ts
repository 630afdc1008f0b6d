/**
 * AtCoder as a source (docs/sources.md, "AtCoder"): its settings, and the `Source` its job runs.
 */
import { DAY_SECONDS, fetchOptions, HOUR_SECONDS, type SourceOptions, type SourceSettings } from '../settings.js';
import type { Source } from '../source.js';
import { fetchAtCoderReply } from './client.js';
import { PLATFORM } from './source.js';

export { ATCODER_BASE_URL, CONTESTS_PATH, atcoderExchange, fetchAtCoderReply, type AtCoderFetchOptions } from './client.js';
export { PLATFORM, LABEL, contestType, contestUrl, parseDuration, parseRated, readAtCoderReply, rowReading, type Rated } from './source.js';

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
    /** The recorded page lists arc119 about a month ahead: rounds are posted weeks ahead. */
    postsAheadSeconds: 35 * DAY_SECONDS,
    /** 30 contests changed before their start in three years. */
    moves: true,
    /**
     * One round moved −60 min and back within 3 hours: at most 3 hourly replies showed it, so a 4th
     * keeps such a flap from ever landing; the real moves (+24 h twelve days ahead, −7 days) were
     * announced days ahead and land 4 hours after they appear.
     */
    acceptMoveAfterReplies: 4,
    /** No move of AtCoder's recurred at one amount. */
    suspectMovesSeconds: [],
    suspectMoveHeldSeconds: 0,
  },
} as const satisfies SourceSettings;

/** The source AtCoder's job runs. */
export function atcoderSource(options: SourceOptions = {}, settings: SourceSettings = ATCODER_SETTINGS): Source {
  return {
    platform: PLATFORM,
    fetchReply: (call) => fetchAtCoderReply(fetchOptions(settings, options, call)),
  };
}
