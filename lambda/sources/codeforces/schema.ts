/**
 * Shape of the Codeforces `contest.list` reply (https://codeforces.com/apiHelp/objects#Contest).
 * The envelope is checked strictly; contests are checked one by one so that a single odd entry
 * can be skipped and counted instead of failing the whole reply. Unknown fields are allowed
 * everywhere: the API adds fields over time.
 */
import * as z from 'zod';
import { bound } from '@contest-sync/scheduled-singleton';

export const CONTEST_TYPES = ['CF', 'IOI', 'ICPC'] as const;
export const CONTEST_PHASES = ['BEFORE', 'CODING', 'PENDING_SYSTEM_TEST', 'SYSTEM_TEST', 'FINISHED'] as const;

/**
 * Bounds of a storable contest. The longest real name is under 100 characters; 512 keeps a
 * stored item a few KB (DynamoDB refuses items over 400 KB and a transaction over 4 MB).
 * Durations: the longest real contests last days, never a year. Start times: Codeforces
 * started in 2010; anything outside 2000–2100 is garbage.
 */
export const CONTEST_LIMITS = {
  maxNameLength: 512,
  maxDurationSeconds: 366 * 24 * 3600,
  minStartTimeSeconds: Date.UTC(2000, 0, 1) / 1000,
  maxStartTimeSeconds: Date.UTC(2100, 0, 1) / 1000,
  /** How far a FINISHED contest's start may lie in the future (clock skew) before it is not believed. */
  finishedStartSkewSeconds: 10 * 60,
  /** How long after its end a contest may still claim to be BEFORE before it is not believed. */
  staleBeforeSeconds: 24 * 3600,
} as const;

/** One contest as the API sends it (`startTimeSeconds` is absent for unscheduled contests). */
export const contestSchema = z.looseObject({
  id: z.number().int().positive(),
  name: z.string().min(1).max(CONTEST_LIMITS.maxNameLength),
  type: z.enum(CONTEST_TYPES),
  phase: z.enum(CONTEST_PHASES),
  frozen: z.boolean(),
  durationSeconds: z.number().int().nonnegative().max(CONTEST_LIMITS.maxDurationSeconds),
  startTimeSeconds: z.number().int().min(CONTEST_LIMITS.minStartTimeSeconds).max(CONTEST_LIMITS.maxStartTimeSeconds).optional(),
  // now − start as Codeforces computed it when it made the reply (it dates the reply: codeforces/source.ts);
  // bounded by the span of storable starts, so a date stays a date.
  relativeTimeSeconds: z
    .number()
    .int()
    .min(CONTEST_LIMITS.minStartTimeSeconds - CONTEST_LIMITS.maxStartTimeSeconds)
    .max(CONTEST_LIMITS.maxStartTimeSeconds - CONTEST_LIMITS.minStartTimeSeconds)
    .optional(),
});

export type ApiContest = z.infer<typeof contestSchema>;

/** A scheduled contest: the only kind `fetchContests` returns to callers. */
export type CodeforcesContest = ApiContest & { startTimeSeconds: number };

export const okEnvelopeSchema = z.looseObject({
  status: z.literal('OK'),
  result: z.unknown(),
});

export const failedEnvelopeSchema = z.looseObject({
  status: z.literal('FAILED'),
  comment: z.string(),
});

/** `{status:"OK", result}` or `{status:"FAILED", comment}`; `result` is checked separately. */
export const envelopeSchema = z.discriminatedUnion('status', [okEnvelopeSchema, failedEnvelopeSchema]);

export type Envelope = z.infer<typeof envelopeSchema>;

export function isScheduled(contest: ApiContest): contest is CodeforcesContest {
  return contest.startTimeSeconds !== undefined;
}

/**
 * Why a well-formed scheduled contest cannot be believed at `nowSeconds`, or undefined:
 * FINISHED before its start, or BEFORE although it ended long ago. Such a reply would delete
 * the reminders of upcoming contests, or keep showing a contest that is over.
 */
export function inconsistency(contest: CodeforcesContest, nowSeconds: number): string | undefined {
  const start = contest.startTimeSeconds;
  if (contest.phase === 'FINISHED' && start > nowSeconds + CONTEST_LIMITS.finishedStartSkewSeconds) {
    return `phase FINISHED but it starts in ${start - nowSeconds} s`;
  }
  const end = start + contest.durationSeconds;
  if (contest.phase === 'BEFORE' && end < nowSeconds - CONTEST_LIMITS.staleBeforeSeconds) {
    return `phase BEFORE but it ended ${nowSeconds - end} s ago`;
  }
  return undefined;
}

/**
 * "phase: Invalid option: expected one of ..." — the first issue of a failed parse, with its
 * path; at most 256 bytes (a path or a message may echo the input).
 */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'invalid';
  const path = issue.path.map(String).join('.');
  return bound(path === '' ? issue.message : `${path}: ${issue.message}`, 256);
}
