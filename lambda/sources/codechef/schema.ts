/**
 * CodeChef's contest list (`GET /api/list/contests/all?sort_by=START&sorting_order=asc&offset=0&mode=all`)
 * as its open-source clients document it: `{ status: "success", message, present_contests: [...],
 * future_contests: [...], past_contests: [...] }`. The envelope is checked strictly; contests one by
 * one, so that one odd entry is skipped and counted. Unknown fields are allowed: CodeChef adds some.
 */
import * as z from 'zod';

/** Any answer with a `status`: CodeChef says `success`, or something else with a `message`. */
export const statusSchema = z.looseObject({
  status: z.string(),
  message: z.unknown().optional(),
});

export const listsSchema = z.looseObject({
  status: z.literal('success'),
  /** Running now. */
  present_contests: z.array(z.unknown()),
  /** Not started (placeholder rounds among them). */
  future_contests: z.array(z.unknown()),
  /** The latest finished ones: only those that ended recently are read. */
  past_contests: z.array(z.unknown()).optional(),
});

export type Lists = z.infer<typeof listsSchema>;

/** `contest_duration` in minutes: a string of digits as documented (a number means the same). */
const minutes = z.union([z.string().regex(/^\d{1,7}$/, 'minutes as digits'), z.number().int().nonnegative()]);

export const contestSchema = z.looseObject({
  contest_code: z.string(),
  contest_name: z.string(),
  /** `2024-05-15T20:00:00+05:30`: read only with its offset. */
  contest_start_date_iso: z.string(),
  contest_duration: minutes,
});

export type CodeChefContest = z.infer<typeof contestSchema>;
