/**
 * What the contests page must hold (the "envelope", checked strictly: the sections the source reads)
 * and what each row's texts must look like (checked row by row, so that one odd row is skipped and
 * counted). The page's markup is page.ts's; what the texts mean is source.ts's.
 */
import * as z from 'zod';
import type { PageRow } from './page.js';

/**
 * The page as the source reads it: the upcoming and recent sections always exist (AtCoder posts
 * rounds weeks ahead; the recent table holds the latest 50); the running one only while something runs.
 */
export const pageSchema = z.strictObject({
  upcoming: z.array(z.custom<PageRow>(), { error: 'no such table' }),
  recent: z.array(z.custom<PageRow>(), { error: 'no such table' }).min(1, 'no rows'),
  action: z.array(z.custom<PageRow>()).optional(),
});

/** `2021-04-24 21:00:00+0900`: a start always printed with its offset. */
export const TIME_PATTERN = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[+-]\d{2}:?\d{2}|Z)$/;
/** `01:40`, `200:00` (long contests have more hours), `1992:40`. */
export const DURATION_PATTERN = /^(\d{1,5}):([0-5]\d)$/;
/** `/contests/abc199`: the id is the last segment. */
export const CONTEST_HREF = /^\/contests\/([^/?#]+)\/?$/;

export const rowSchema = z.strictObject({
  cells: z.literal(4, 'a row of four cells (start, name, duration, rated)'),
  time: z.string().regex(TIME_PATTERN, 'a start with its offset, e.g. 2021-04-24 21:00:00+0900'),
  href: z.string().regex(CONTEST_HREF, 'a link /contests/<id>'),
  name: z.string(),
  duration: z.string().regex(DURATION_PATTERN, 'a duration HH:MM'),
  rated: z.string().max(64),
});

export type Row = z.infer<typeof rowSchema>;
