/**
 * Codeforces as a source of the contest model: what an entry of `contest.list` means in the
 * model's platform-neutral terms (lambda/sources/source.ts, `ListedContest`: the qualified id
 * `codeforces:<id>`), and when a reply was made. Codeforces' ids are numbers; this folder is the
 * only place that knows it (`legacyIdSeed`).
 */
import { qualifiedId, type ListedContest, type ReplyDating, type SourceReply } from '../source.js';
import type { FetchContestsResult } from './client.js';
import type { CodeforcesContest } from './schema.js';

export const PLATFORM = 'codeforces';

export function contestUrl(contestId: number): string {
  return `https://codeforces.com/contest/${contestId}`;
}

/** The qualified id of a Codeforces contest id: `codeforces:2120`. */
export const codeforcesId = (id: number): string => qualifiedId(PLATFORM, String(id));

/**
 * What the ids of a Codeforces contest (its contest events', its ReminderDue events') were derived
 * from before ids were qualified: the number itself. Kept, so that an event id a consumer has seen
 * stays the same across the upgrade (lambda/sources/ids.ts, `idSeed`). Undefined for a platform id
 * that is not a Codeforces number (never listed by this source).
 */
export function legacyIdSeed(platformId: string): number | undefined {
  if (!/^[1-9][0-9]{0,14}$/.test(platformId)) return undefined;
  const id = Number(platformId);
  return Number.isSafeInteger(id) ? id : undefined;
}

/**
 * The qualified id of an id written before ids were qualified (a number in a calendar projection or
 * an event of that release): every such id was a Codeforces contest's.
 */
export function fromLegacyId(id: number): string | undefined {
  return Number.isSafeInteger(id) && id > 0 ? codeforcesId(id) : undefined;
}

/** One entry as the model sees it. */
export function listedContest(entry: CodeforcesContest): ListedContest {
  return {
    contestId: codeforcesId(entry.id),
    platform: PLATFORM,
    platformId: String(entry.id),
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
    listedIds: new Set(fetched.listedIds.map(codeforcesId)),
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
