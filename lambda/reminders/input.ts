/**
 * The write path's inputs, validated where they enter (zod): what a caller may ask, within the
 * bounds the rest of the product believes (lambda/delivery/due.ts, ROW_LIMITS), and the opaque
 * cursor of listReminders. Pure. A refusal is an InvalidInputError naming the fields, never
 * quoting their values.
 */
import { createHash } from 'node:crypto';
import * as z from 'zod';
import { ROW_LIMITS } from '../delivery/due.js';
import { MAX_QUALIFIED_ID_CHARS, parseQualifiedId } from '../sources/ids.js';
import { InvalidInputError } from './errors.js';
import { isUserId, MAX_USER_ID_BYTES, USER_ID_RULE } from './user-id.js';

/** A user id (the app's `sub`): the product's one definition, ./user-id.ts. */
export { MAX_USER_ID_BYTES };
/** Lead time: a whole number of minutes, at most a week. */
export const MAX_MINUTES_BEFORE = ROW_LIMITS.maxMinutesBefore;
/** listReminders' page size: 1..100, 50 unless asked. */
export const MAX_LIST_LIMIT = 100;
export const DEFAULT_LIST_LIMIT = 50;
/** No cursor this module makes is longer (a qualified id and a tag, base64url); a longer one is refused before it is decoded. */
const MAX_CURSOR_CHARS = 4 * Math.ceil((MAX_QUALIFIED_ID_CHARS + 20) / 3);

/** A platform-qualified contest id of a known platform: `codeforces:2120`, `atcoder:abc199` (lambda/sources/ids.ts). */
const contestId = z.string().refine((text) => parseQualifiedId(text) !== undefined);
const userId = z.string().refine(isUserId);
const minutesBefore = z.number().int().min(0).max(MAX_MINUTES_BEFORE);

/** What each field must be, in the words of a refusal. */
const PROBLEMS: Record<string, string> = {
  contestId: 'contestId must be a platform-qualified contest id such as codeforces:2120',
  userId: `userId must be a string of ${USER_ID_RULE}`,
  minutesBefore: `minutesBefore must be an integer from 0 to ${MAX_MINUTES_BEFORE}`,
  limit: `limit must be an integer from 1 to ${MAX_LIST_LIMIT}`,
  cursor: 'cursor must be one that listReminders returned',
};

export const setInputSchema = z.strictObject({ contestId, userId, minutesBefore });
export const cancelInputSchema = z.strictObject({ contestId, userId });
export const listInputSchema = z.strictObject({
  userId,
  limit: z.number().int().min(1).max(MAX_LIST_LIMIT).optional(),
  cursor: z.string().min(1).max(MAX_CURSOR_CHARS).optional(),
});

export type SetInput = z.infer<typeof setInputSchema>;
export type CancelInput = z.infer<typeof cancelInputSchema>;
export type ListInput = z.infer<typeof listInputSchema>;

/** `input` as `schema` accepts it, or an InvalidInputError naming every field that is wrong. */
export function parseInput<T>(schema: z.ZodType<T>, input: unknown, what: string): T {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new InvalidInputError(`${what}: the input must be an object`, []);
  }
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const fields: string[] = [];
  const problems: string[] = [];
  for (const issue of result.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      // Key names come from the caller: a few, each cut short.
      const keys = issue.keys.slice(0, 3).map((key) => JSON.stringify(key.slice(0, 40)));
      problems.push(`unknown field${issue.keys.length > 1 ? 's' : ''} ${keys.join(', ')}${issue.keys.length > 3 ? ', …' : ''}`);
      continue;
    }
    const field = String(issue.path[0] ?? '');
    if (fields.includes(field)) continue;
    fields.push(field);
    problems.push(PROBLEMS[field] ?? `${field} is invalid`);
  }
  return refuse(`${what}: ${problems.join('; ')}`, fields);
}

function refuse(message: string, fields: string[]): never {
  throw new InvalidInputError(message, fields);
}

/**
 * listReminders' cursor: opaque to callers, and never trusted. It carries only a position in the
 * caller's own list (the last contest id of a page) and a tag binding it to that user, so a
 * cursor altered or taken from another user's listing is refused (invalid-input). The query is
 * always made on the caller's own partition (the start key is rebuilt from the validated user id),
 * so even a forged cursor can only skip within the caller's own reminders.
 */
export function encodeCursor(userId: string, contestId: string): string {
  return Buffer.from(`2 ${contestId} ${cursorTag(userId, contestId)}`, 'utf8').toString('base64url');
}

/** The contest id after which the next page starts, or an InvalidInputError. */
export function decodeCursor(userId: string, cursor: string): string {
  const refusal = () => refuse(`listReminders: ${PROBLEMS.cursor}`, ['cursor']);
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return refusal();
  const match = /^2 (\S{1,200}) ([A-Za-z0-9_-]{16})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (match === null) return refusal();
  const contestId = match[1]!;
  if (parseQualifiedId(contestId) === undefined || match[2] !== cursorTag(userId, contestId)) return refusal();
  return contestId;
}

function cursorTag(userId: string, contestId: string): string {
  return createHash('sha256')
    .update(JSON.stringify(['byUser-cursor', userId, contestId]))
    .digest('base64url')
    .slice(0, 16);
}
