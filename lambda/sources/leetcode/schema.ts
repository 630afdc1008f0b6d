/**
 * LeetCode's GraphQL reply to `{ allContests { title titleSlug startTime duration } }`:
 * `{ data: { allContests: [...] } }`, or `{ errors: [{ message }], data: null }`. The envelope is
 * checked strictly; contests one by one, so that one odd entry is skipped and counted. Unknown
 * fields are allowed (the recorded reply carries more: description, cardImg, isVirtual…).
 */
import * as z from 'zod';

export const QUERY = '{ allContests { title titleSlug startTime duration } }';

/** GraphQL's error answer (spec.graphql.org, "Errors"): a non-empty `errors` list. */
export const errorsSchema = z.looseObject({
  errors: z.array(z.looseObject({ message: z.unknown().optional() })).min(1),
});

export const envelopeSchema = z.looseObject({
  data: z.looseObject({ allContests: z.array(z.unknown()) }),
});

export const contestSchema = z.looseObject({
  title: z.string(),
  /** The id: `weekly-contest-91`. */
  titleSlug: z.string(),
  /** Epoch seconds. */
  startTime: z.number().int(),
  /** Seconds. */
  duration: z.number().int(),
});
