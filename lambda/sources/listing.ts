/**
 * What every source does with the entries of a reply once its platform's schema has read them
 * (docs/sources.md, "Entries"): each entry becomes a contest, an unscheduled entry (listed, not
 * stored, no miss) or an invalid one (skipped and counted); a contest is checked against the bounds
 * of the contract and against the time the reply was made; the list as a whole is refused when it
 * cannot be the truth (empty, too many entries, too many invalid ones). Pure.
 */
import * as z from 'zod';
import { bound } from '@contest-sync/scheduled-singleton';
import { failed, replyMadeAt, type Outcome, type RawReply } from './http/policy.js';
import { LISTED_LIMITS, qualifiedId, type ListedContest, type Phase, type ReplyDating, type SourceReply } from './source.js';

/** A contest as a source maps it, before its id is qualified and its bounds are checked. */
export type Candidate = Omit<ListedContest, 'contestId' | 'platform'>;

/** What a source makes of one entry; `platformId` when the entry has a safe id, even if nothing else is right. */
export type Reading =
  | { kind: 'contest'; candidate: Candidate }
  | { kind: 'unscheduled'; platformId?: string }
  | { kind: 'invalid'; platformId?: string; why: string };

export interface Listing {
  contests: ListedContest[];
  /** Qualified ids of every entry with a safe id, valid or not. */
  listedIds: Set<string>;
  invalid: number;
  /** Entries listed without a start (placeholders): listed, not stored, not invalid. */
  unscheduled: number;
}

export interface ListingOptions {
  platform: string;
  /** The platform in messages: 'AtCoder'. */
  label: string;
  /** When the reply was made (or, undated, received): entries inconsistent with it are invalid. */
  nowSeconds: number;
  /** More invalid entries than this share of the list fails the reply. @default 0.1 */
  maxInvalidShare?: number;
  /** A longer list is refused unread. @default MAX_LIST_ENTRIES */
  maxEntries?: number;
}

/**
 * Entries a list may have before it is refused unvalidated: every platform lists at most a few
 * thousand; a body under the byte cap could hold millions of tiny entries.
 */
export const MAX_LIST_ENTRIES = 50_000;

const PHASES = ['BEFORE', 'CODING', 'PENDING_SYSTEM_TEST', 'SYSTEM_TEST', 'FINISHED'] as const satisfies readonly Phase[];

const candidateSchema = z.strictObject({
  platformId: z.string().regex(LISTED_LIMITS.platformIdPattern, 'not a safe id (1-64 of A-Z a-z 0-9 _ . -)'),
  name: z.string().min(1).max(LISTED_LIMITS.maxNameLength),
  type: z.string().min(1).max(LISTED_LIMITS.maxTypeLength),
  phase: z.enum(PHASES),
  startTimeSeconds: z.number().int().min(LISTED_LIMITS.minStartTimeSeconds).max(LISTED_LIMITS.maxStartTimeSeconds),
  durationSeconds: z.number().int().positive().max(LISTED_LIMITS.maxDurationSeconds),
  url: z
    .url({ protocol: /^https$/ })
    .refine((url) => Buffer.byteLength(url, 'utf8') <= LISTED_LIMITS.maxUrlBytes, `longer than ${LISTED_LIMITS.maxUrlBytes} bytes`),
});

/** The first issue of a failed parse with its path, at most 256 bytes (a message may echo the input). */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'invalid';
  const path = issue.path.map(String).join('.');
  return bound(path === '' ? issue.message : `${path}: ${issue.message}`, 256);
}

/** The entry's id if it is one the contract can store, else undefined (it can name nothing stored). */
export function safeId(raw: unknown): string | undefined {
  return typeof raw === 'string' && LISTED_LIMITS.platformIdPattern.test(raw) ? raw : undefined;
}

/**
 * Why a candidate cannot be stored or believed at `nowSeconds`, or undefined: out of the contract's
 * bounds, FINISHED before its start, or not started although it ended long ago.
 */
export function candidateProblem(candidate: Candidate, nowSeconds: number): string | undefined {
  const parsed = candidateSchema.safeParse(candidate);
  if (!parsed.success) return describeIssue(parsed.error);
  const { phase, startTimeSeconds: start, durationSeconds } = candidate;
  if (phase === 'FINISHED' && start > nowSeconds + LISTED_LIMITS.finishedStartSkewSeconds) {
    return `phase FINISHED but it starts in ${start - nowSeconds} s`;
  }
  const end = start + durationSeconds;
  if (phase === 'BEFORE' && end < nowSeconds - LISTED_LIMITS.staleBeforeSeconds)
    return `phase BEFORE but it ended ${nowSeconds - end} s ago`;
  return undefined;
}

interface Group {
  readings: Reading[];
}

/** Each entry read and checked, grouped by id (an entry without a safe id stands alone). */
function readAll(entries: readonly unknown[], read: (entry: unknown, index: number) => Reading, options: ListingOptions) {
  const groups = new Map<string, Group>();
  const loose: Reading[] = [];
  let example: string | undefined;
  entries.forEach((entry, index) => {
    let reading = read(entry, index);
    if (reading.kind === 'contest') {
      const why = candidateProblem(reading.candidate, options.nowSeconds);
      const platformId = safeId(reading.candidate.platformId);
      if (why !== undefined) reading = { kind: 'invalid', why, ...(platformId === undefined ? {} : { platformId }) };
    }
    if (reading.kind === 'invalid') example ??= `${reading.platformId ?? `entry #${index}`}: ${reading.why}`;
    const id = reading.kind === 'contest' ? reading.candidate.platformId : reading.platformId;
    if (id === undefined) loose.push(reading);
    else groups.set(id, { readings: [...(groups.get(id)?.readings ?? []), reading] });
  });
  return { groups, loose, example };
}

/** One id's entries: one contest, or several saying the same; anything else is not believed. */
function decide(platformId: string, group: Group, options: ListingOptions): ListedContest | 'unscheduled' | 'invalid' {
  const [first, ...rest] = group.readings;
  if (first === undefined || first.kind === 'invalid') return 'invalid';
  const same = rest.every((r) => JSON.stringify(r) === JSON.stringify(first));
  if (!same) return 'invalid';
  if (first.kind === 'unscheduled') return 'unscheduled';
  return { contestId: qualifiedId(options.platform, platformId), platform: options.platform, ...first.candidate };
}

/** A reply's entries as a Listing, or why the reply as a whole cannot be believed. */
export function listEntries(
  entries: readonly unknown[],
  read: (entry: unknown, index: number) => Reading,
  options: ListingOptions,
): Outcome<Listing> {
  const { label, maxInvalidShare = 0.1, maxEntries = MAX_LIST_ENTRIES } = options;
  if (entries.length > maxEntries)
    return failed('too-large', `${label} reply refused: its list has ${entries.length} entries, above the ${maxEntries}-entry cap`);
  if (entries.length === 0) return failed('empty', `${label} returned an empty contest list`);
  const { groups, loose, example } = readAll(entries, read, options);
  const listing: Listing = { contests: [], listedIds: new Set(), invalid: 0, unscheduled: 0 };
  for (const reading of loose) listing[reading.kind === 'unscheduled' ? 'unscheduled' : 'invalid'] += 1;
  let conflict: string | undefined;
  for (const [platformId, group] of groups) {
    listing.listedIds.add(qualifiedId(options.platform, platformId));
    const decided = decide(platformId, group, options);
    if (decided === 'invalid' && group.readings.length > 1)
      conflict ??= `${platformId}: listed ${group.readings.length} times, differently`;
    if (decided === 'invalid') listing.invalid += group.readings.length;
    else if (decided === 'unscheduled') listing.unscheduled += group.readings.length;
    else listing.contests.push(decided);
  }
  if (listing.invalid / entries.length > maxInvalidShare) {
    return failed(
      'invalid-contests',
      `${listing.invalid} of ${entries.length} ${label} entries failed validation (e.g. ${example ?? conflict})`,
    );
  }
  if (listing.contests.length === 0) {
    const detail = `${listing.unscheduled} unscheduled, ${listing.invalid} invalid of ${entries.length}`;
    return failed('empty', `${label} returned no scheduled contests (${detail})`);
  }
  return { ok: true, value: listing };
}

/**
 * The time a reply's entries are judged against, in epoch seconds: when it was made (by its
 * headers), never later than when it arrived; when it arrived if it is undated.
 */
export function referenceSeconds(madeAt: number | undefined, receivedAtMs: number): number {
  const received = Math.floor(receivedAtMs / 1000);
  return Math.min(madeAt ?? received, received);
}

/**
 * When a reply was made, as far as it tells (docs/design.md, "Stale replies"): `madeAt` from its
 * headers (Date − Age, http/policy.ts), and the bound its contests give — a contest it lists as not
 * started had not started when it was made (the judge uses the bound when there is no `madeAt`).
 */
export function replyDating(madeAt: number | undefined, contests: readonly ListedContest[]): ReplyDating {
  const notStarted = contests.filter((c) => c.phase === 'BEFORE').map((c) => c.startTimeSeconds);
  return {
    ...(madeAt === undefined ? {} : { madeAt }),
    ...(notStarted.length === 0 ? {} : { madeBefore: Math.min(...notStarted) }),
  };
}

/** A reply's entries read and dated: what every source's pure reading returns. */
export interface ListedReply {
  listing: Listing;
  dating: ReplyDating;
}

/**
 * The last step of every source's reading, once the envelope is right: the entries (`entries`, from
 * the time the reply was made) read one by one by `read`, checked and listed, and the reply dated.
 */
export function listedReply(
  reply: RawReply,
  receivedAtMs: number,
  entries: (nowSeconds: number) => readonly unknown[],
  read: (entry: unknown, nowSeconds: number) => Reading,
  options: Omit<ListingOptions, 'nowSeconds'>,
): Outcome<ListedReply> {
  const madeAt = replyMadeAt(reply.headers);
  const nowSeconds = referenceSeconds(madeAt, receivedAtMs);
  const listed = listEntries(entries(nowSeconds), (entry) => read(entry, nowSeconds), { ...options, nowSeconds });
  if (!listed.ok) return listed;
  return { ok: true, value: { listing: listed.value, dating: replyDating(madeAt, listed.value.contests) } };
}

/** A fetched listing as the reply the judge reads. */
export function sourceReply(listed: ListedReply, fetched: { attempts: number; latencyMs: number }): SourceReply {
  const { listing, dating } = listed;
  return {
    contests: listing.contests,
    listedIds: listing.listedIds,
    dating,
    invalid: listing.invalid,
    attempts: fetched.attempts,
    latencyMs: fetched.latencyMs,
  };
}
