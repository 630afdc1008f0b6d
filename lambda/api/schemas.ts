/**
 * What every request may carry, as zod schemas: validated where it enters (Powertools' router
 * runs them before a route), and the source of the OpenAPI description (lambda/api/openapi.ts).
 * Public ids are platform-qualified (`codeforces:2120`) everywhere. docs/api.md.
 */
import * as z from 'zod';
import { API_LIMITS, PLATFORMS } from './contract.js';
import { MAX_QUALIFIED_ID_CHARS, parseQualifiedId, type QualifiedId } from '../sources/ids.js';

export { parseQualifiedId, type QualifiedId };

/** `<platform>:<platformId>` (already percent-decoded by the router): a known platform, and an id of [A-Za-z0-9_.-] (lambda/sources/ids.ts). */
const contestIdParam = z
  .string()
  .max(MAX_QUALIFIED_ID_CHARS)
  .refine((text) => parseQualifiedId(text) !== undefined, {
    message: `expected a contest id such as "codeforces:2120" or "atcoder:abc199" (platforms: ${PLATFORMS.join(', ')})`,
  })
  .meta({ description: 'A platform-qualified contest id', example: 'codeforces:2120' });

export const reminderPathSchema = z.object({ contestId: contestIdParam });

export const reminderBodySchema = z
  .object({
    minutesBefore: z.number().int().min(0).max(10_080).meta({ description: 'How long before the start to be reminded (0 to 7 days)' }),
  })
  .strict()
  .meta({ id: 'ReminderRequest' });

const cursor = z
  .string()
  .min(1)
  .max(API_LIMITS.maxCursorChars)
  .regex(/^[A-Za-z0-9_-]+$/, 'expected the cursor of a previous page')
  .meta({ description: 'The `cursor` of the previous page' });
const limit = z.coerce
  .number()
  .int()
  .min(1)
  .max(API_LIMITS.maxPageSize)
  .default(API_LIMITS.defaultPageSize)
  .meta({ description: `Page size, 1 to ${API_LIMITS.maxPageSize}` });

export const contestsQuerySchema = z
  .object({
    platform: z
      .enum(PLATFORMS, { error: `expected one of ${PLATFORMS.join(', ')} (or no platform, for every platform's contests)` })
      .optional()
      .meta({ description: "One platform's contests; without it, every platform's, merged in one order" }),
    status: z.enum(['upcoming', 'recent']).default('upcoming').meta({
      description: '`upcoming`: starting now or later, soonest first; `recent`: started in the last 7 days, latest first',
    }),
    limit,
    cursor: cursor.optional(),
  })
  .strict();

export const remindersQuerySchema = z.object({ limit, cursor: cursor.optional() }).strict();

export const contestViewSchema = z
  .object({
    id: z.string().meta({ example: 'codeforces:2120' }),
    platform: z.enum(PLATFORMS),
    name: z.string(),
    type: z.string().optional(),
    phase: z.string(),
    startTime: z.iso.datetime(),
    startTimeSeconds: z.number().int(),
    durationSeconds: z.number().int(),
    url: z.string(),
  })
  .meta({ id: 'Contest' });

export const reminderViewSchema = z
  .object({
    contestId: z.string().meta({ example: 'codeforces:2120' }),
    platform: z.enum(PLATFORMS),
    minutesBefore: z.number().int(),
    remindAt: z.iso.datetime().meta({ description: 'When it is due: the start the product stands behind, minus the lead time' }),
    state: z.enum(['scheduled', 'paused', 'sent']).meta({
      description:
        '`scheduled`: will fire at remindAt; `paused`: held while its contest is in doubt; `sent`: delivered for the current start (a later move of the start schedules it again)',
    }),
  })
  .meta({ id: 'Reminder' });

export const errorSchema = z
  .object({
    error: z.object({ code: z.string(), message: z.string(), fields: z.array(z.string()).optional() }),
  })
  .meta({ id: 'Error' });

export const contestsPageSchema = z.object({ contests: z.array(contestViewSchema), cursor: z.string().optional() });
export const remindersPageSchema = z.object({ reminders: z.array(reminderViewSchema), cursor: z.string().optional() });
export const reminderSetSchema = z.object({ reminder: reminderViewSchema, changed: z.boolean() });
export const calendarStatusSchema = z.object({ active: z.boolean(), createdAt: z.iso.datetime().optional() });
export const calendarIssuedSchema = z.object({ url: z.string(), webcal: z.string(), createdAt: z.iso.datetime() });
