/**
 * LeetCode as a source (docs/sources.md, "LeetCode"): its settings, and the `Source` its job runs.
 */
import { DAY_SECONDS, fetchOptions, HOUR_SECONDS, type SourceOptions, type SourceSettings } from '../settings.js';
import type { Source } from '../source.js';
import { fetchLeetCodeReply } from './client.js';
import { PLATFORM } from './source.js';

export {
  GRAPHQL_PATH,
  LEETCODE_BASE_URL,
  LEETCODE_USER_AGENT,
  fetchLeetCodeReply,
  leetcodeExchange,
  type LeetCodeFetchOptions,
} from './client.js';
export { QUERY } from './schema.js';
export { PLATFORM, LABEL, contestType, contestUrl, entryReading, readLeetCodeReply } from './source.js';

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
    /** Weekly and biweekly rounds at fixed times, listed about a week ahead. */
    postsAheadSeconds: 7 * DAY_SECONDS,
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

/** The source LeetCode's job runs. */
export function leetcodeSource(options: SourceOptions = {}, settings: SourceSettings = LEETCODE_SETTINGS): Source {
  return {
    platform: PLATFORM,
    fetchReply: (call) => fetchLeetCodeReply(fetchOptions(settings, options, call)),
  };
}
