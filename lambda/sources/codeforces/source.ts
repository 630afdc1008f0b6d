/**
 * Codeforces as a source of the contest model: what an entry of `contest.list` means in the
 * model's platform-neutral terms (lambda/contests/model.ts, `ListedContest`), and when a reply was
 * made. A second source would be a sibling folder with the same two functions.
 */
import type { ListedContest, ReplyDating, SourceReply } from '../../contests/model.js';
import type { FetchContestsResult } from './client.js';
import type { CodeforcesContest } from './schema.js';

export const PLATFORM = 'codeforces';

export function contestUrl(contestId: number): string {
  return `https://codeforces.com/contest/${contestId}`;
}

/** One entry as the model sees it. */
export function listedContest(entry: CodeforcesContest): ListedContest {
  return {
    contestId: entry.id,
    platform: PLATFORM,
    name: entry.name,
    type: entry.type,
    phase: entry.phase,
    startTimeSeconds: entry.startTimeSeconds,
    durationSeconds: entry.durationSeconds,
    url: contestUrl(entry.id),
  };
}

/** A fetched `contest.list` as the reply the model judges. */
export function codeforcesReply(fetched: FetchContestsResult): SourceReply {
  return {
    contests: fetched.contests.map(listedContest),
    listedIds: new Set(fetched.listedIds),
    dating: replyDating(fetched.contests),
    invalid: fetched.invalid,
    attempts: fetched.attempts,
    latencyMs: fetched.latencyMs,
  };
}

/** What dating a reply needs of an entry. */
export type DatedEntry = Pick<CodeforcesContest, 'phase' | 'startTimeSeconds' | 'relativeTimeSeconds'>;

/**
 * When Codeforces made the reply: it computes `relativeTimeSeconds` (now − start) as it makes it,
 * so `startTimeSeconds + relativeTimeSeconds` dates each entry; the median of the entries' dates
 * dates the reply (an entry whose start a lie moved without its relative time is outvoted).
 * Without the field, its phases bound it: a contest listed as not started (`BEFORE`) had not
 * started when the reply was made.
 */
export function replyDating(entries: readonly DatedEntry[]): ReplyDating {
  const dates = entries
    .flatMap((e) => (e.relativeTimeSeconds === undefined ? [] : [e.startTimeSeconds + e.relativeTimeSeconds]))
    .sort((a, b) => a - b);
  if (dates.length > 0) return { madeAt: dates[Math.floor((dates.length - 1) / 2)]! };
  const notStarted = entries.filter((e) => e.phase === 'BEFORE').map((e) => e.startTimeSeconds);
  return notStarted.length > 0 ? { madeBefore: Math.min(...notStarted) } : {};
}
