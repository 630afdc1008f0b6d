/**
 * LeetCode's `allContests` as a reply of the model, pure (docs/sources.md, "LeetCode"). Its
 * contests have no phases: each is derived from its start and duration at the time the reply was
 * made (`phaseAt`). `allContests` lists finished contests too, so a contest that ends stays listed
 * (finished) instead of vanishing; the id is `titleSlug`.
 */
import { bound } from '@contest-sync/scheduled-singleton';
import { failed, jsonBody, statusProblem, type Outcome, type RawReply } from '../http/policy.js';
import { describeIssue, listedReply, safeId, type ListedReply, type Reading } from '../listing.js';
import { phaseAt } from '../source.js';
import { contestSchema, envelopeSchema, errorsSchema } from './schema.js';

export const PLATFORM = 'leetcode';
export const LABEL = 'LeetCode';

export const contestUrl = (slug: string): string => `https://leetcode.com/contest/${slug}`;

/** `weekly` (`weekly-contest-91`, once `leetcode-weekly-contest-57`), `biweekly`, else `other`. */
export function contestType(slug: string): string {
  if (/^(leetcode-)?weekly-contest-/.test(slug)) return 'weekly';
  return /^biweekly-contest-/.test(slug) ? 'biweekly' : 'other';
}

/** One entry as the model reads it, its phase at `atSeconds` (when the reply was made). */
export function entryReading(entry: unknown, atSeconds: number): Reading {
  const platformId = safeId((entry as { titleSlug?: unknown } | null)?.titleSlug);
  const withId = platformId === undefined ? {} : { platformId };
  const parsed = contestSchema.safeParse(entry);
  if (!parsed.success) return { kind: 'invalid', why: describeIssue(parsed.error), ...withId };
  const { title, titleSlug, startTime, duration } = parsed.data;
  const candidate = {
    platformId: titleSlug,
    name: title.trim(),
    type: contestType(titleSlug),
    phase: phaseAt(startTime, duration, atSeconds),
    startTimeSeconds: startTime,
    durationSeconds: duration,
    url: contestUrl(titleSlug),
  };
  return { kind: 'contest', candidate };
}

/** `data.allContests`, or why the reply is none: GraphQL errors (a refusal, a query LeetCode no longer knows), another shape. */
function allContests(json: unknown): Outcome<unknown[]> {
  const errors = errorsSchema.safeParse(json);
  if (errors.success) {
    const message = errors.data.errors[0]?.message;
    const text = typeof message === 'string' ? bound(message, 256) : 'no message';
    return failed('api-failed', `${LABEL} GraphQL answered with ${errors.data.errors.length} error(s): ${text}`);
  }
  const envelope = envelopeSchema.safeParse(json);
  if (!envelope.success) return failed('bad-shape', `${LABEL} reply is not an allContests answer: ${describeIssue(envelope.error)}`);
  return { ok: true, value: envelope.data.data.allContests };
}

/** The reply as LeetCode's contests, or why it cannot be believed whole. */
export function readLeetCodeReply(reply: RawReply, receivedAtMs: number, options: { maxInvalidShare?: number } = {}): Outcome<ListedReply> {
  const refused = statusProblem(reply, LABEL, receivedAtMs);
  if (refused !== undefined) return { ok: false, problem: refused };
  const json = jsonBody(reply, LABEL);
  if (!json.ok) return json;
  const contests = allContests(json.value);
  if (!contests.ok) return contests;
  return listedReply(reply, receivedAtMs, () => contests.value, entryReading, { platform: PLATFORM, label: LABEL, ...options });
}
