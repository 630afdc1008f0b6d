/**
 * The one listed-contest shape every source maps to (docs/sources.md, "The contract"): a source is a
 * folder (`lambda/sources/<platform>/`) that fetches one platform's list, validates it and maps each
 * entry to a `ListedContest`; the judge reads only these types and knows no platform. A contest's
 * key everywhere is its platform-qualified id (`qualifiedId`), so ids of two platforms never collide.
 */

export type Phase = 'BEFORE' | 'CODING' | 'PENDING_SYSTEM_TEST' | 'SYSTEM_TEST' | 'FINISHED';

/** A contest as a source lists it: valid and scheduled, in the model's terms. */
export interface ListedContest {
  /** Platform-qualified id `<platform>:<platformId>` (qualifiedId()): the key in every table, event and surface. */
  contestId: string;
  /** 'codeforces' | 'atcoder' | 'codechef' | 'leetcode' | … (lowercase letters and digits, <= 20 chars). */
  platform: string;
  /** The platform's own id as text: '2120', 'abc199', 'START151A', 'weekly-contest-91' (<= 64 chars, [A-Za-z0-9_.-]). */
  platformId: string;
  /** 1..512 characters. */
  name: string;
  /** The platform's kind of round, bounded (<= 32 chars), e.g. 'CF', 'ABC', 'weekly'. */
  type: string;
  /** A platform without phases: derived from start/end against when the reply was made (`phaseAt`). */
  phase: Phase;
  /** Epoch seconds, 2000..2100. */
  startTimeSeconds: number;
  /** 0 < d <= 366 days. */
  durationSeconds: number;
  /** https URL of the contest page on the platform, <= 2048 bytes. */
  url: string;
}

/** When the reply was made (epoch seconds), as far as it tells: docs/design.md "Stale replies". */
export interface ReplyDating {
  madeAt?: number;
  madeBefore?: number;
}

export interface SourceReply {
  contests: ListedContest[];
  /** Qualified ids of every entry listed, valid or not: an entry that cannot be believed is no miss. */
  listedIds: ReadonlySet<string>;
  dating: ReplyDating;
  /** Entries skipped because they could not be believed (counted). */
  invalid: number;
  attempts: number;
  latencyMs: number;
}

/** One platform: what the sync job of that platform runs. */
export interface Source {
  readonly platform: string;
  /** Throws the platform's SourceError (lambda/sources/errors.ts) for a reply it cannot believe whole. */
  fetchReply(options: { signal: AbortSignal; deadline: number }): Promise<SourceReply>;
}

export const qualifiedId = (platform: string, platformId: string): string => `${platform}:${platformId}`;

/**
 * The bounds of a listed contest (docs/sources.md, "The contract"). Names: the longest real one is
 * under 100 characters, 512 keeps an item a few KB. Starts outside 2000–2100 and durations over a
 * year are garbage on every platform.
 */
export const LISTED_LIMITS = {
  platformPattern: /^[a-z0-9]{1,20}$/,
  platformIdPattern: /^[A-Za-z0-9_.-]{1,64}$/,
  maxPlatformIdLength: 64,
  maxNameLength: 512,
  maxTypeLength: 32,
  maxUrlBytes: 2048,
  minStartTimeSeconds: Date.UTC(2000, 0, 1) / 1000,
  maxStartTimeSeconds: Date.UTC(2100, 0, 1) / 1000,
  maxDurationSeconds: 366 * 24 * 3600,
  /** How far a FINISHED contest's start may lie ahead of the reply (clock skew) before it is not believed. */
  finishedStartSkewSeconds: 10 * 60,
  /** How long after its end a contest may still be listed as not started before it is not believed. */
  staleBeforeSeconds: 24 * 3600,
} as const;

/**
 * The phase of a contest of a platform without phases, at `atSeconds` (when the reply was made):
 * not started, running (start inclusive), or over (end inclusive).
 */
export function phaseAt(startTimeSeconds: number, durationSeconds: number, atSeconds: number): Phase {
  if (atSeconds < startTimeSeconds) return 'BEFORE';
  return atSeconds < startTimeSeconds + durationSeconds ? 'CODING' : 'FINISHED';
}
