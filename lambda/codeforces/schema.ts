/**
 * Shape of the Codeforces `contest.list` reply (https://codeforces.com/apiHelp/objects#Contest).
 * The envelope is checked strictly; contests are checked one by one so that a single odd entry
 * can be skipped and counted instead of failing the whole reply. Unknown fields are allowed
 * everywhere: the API adds fields over time.
 */
import * as z from 'zod';

export const CONTEST_TYPES = ['CF', 'IOI', 'ICPC'] as const;
export const CONTEST_PHASES = ['BEFORE', 'CODING', 'PENDING_SYSTEM_TEST', 'SYSTEM_TEST', 'FINISHED'] as const;

/** One contest as the API sends it (`startTimeSeconds` is absent for unscheduled contests). */
export const contestSchema = z.looseObject({
  id: z.number().int().positive(),
  name: z.string().min(1),
  type: z.enum(CONTEST_TYPES),
  phase: z.enum(CONTEST_PHASES),
  frozen: z.boolean(),
  durationSeconds: z.number().int().nonnegative(),
  startTimeSeconds: z.number().int().optional(),
  relativeTimeSeconds: z.number().int().optional(),
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

/** "phase: Invalid option: expected one of ..." — the first issue of a failed parse, with its path. */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'invalid';
  const path = issue.path.map(String).join('.');
  return path === '' ? issue.message : `${path}: ${issue.message}`;
}
