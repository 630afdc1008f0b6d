/**
 * Platform-qualified contest ids (`codeforces:2120`, `atcoder:abc199`): the key of a contest in
 * every table, index, event and surface. Nothing outside a source folder knows what a platform's
 * own ids look like; what the product needs of one — which of its ids predate qualification — it
 * asks the source here (`idSeed`).
 */
import { fromLegacyId, legacyIdSeed } from './codeforces/source.js';
import { PLATFORMS, type Platform } from './platforms.js';
import { LISTED_LIMITS, qualifiedId } from './source.js';

export { qualifiedId };

/** A platform's own id, as every surface takes it: a letter or digit, then up to 63 of [A-Za-z0-9_.-]. */
export const PLATFORM_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** The longest qualified id: a platform name (20), the colon, a platform id (64). */
export const MAX_QUALIFIED_ID_CHARS = 20 + 1 + LISTED_LIMITS.maxPlatformIdLength;

export interface QualifiedId {
  platform: Platform;
  platformId: string;
  contestId: string;
}

/** `codeforces:2120` → its parts, or undefined for anything that is not a qualified id of a known platform. */
export function parseQualifiedId(text: unknown): QualifiedId | undefined {
  if (typeof text !== 'string' || text.length > MAX_QUALIFIED_ID_CHARS) return undefined;
  const colon = text.indexOf(':');
  if (colon < 0) return undefined;
  const platform = text.slice(0, colon);
  const platformId = text.slice(colon + 1);
  if (!(PLATFORMS as readonly string[]).includes(platform) || !PLATFORM_ID.test(platformId)) return undefined;
  return { platform: platform as Platform, platformId, contestId: text };
}

/** The platform of a qualified id (the text before its first colon). */
export function platformOf(contestId: string): string {
  const colon = contestId.indexOf(':');
  return colon < 0 ? '' : contestId.slice(0, colon);
}

/** The platform's own id of a qualified id (the text after its first colon). */
export function platformIdOf(contestId: string): string {
  return contestId.slice(contestId.indexOf(':') + 1);
}

/**
 * What a contest's event ids (contest events, ReminderDue) are derived from: the qualified id,
 * except for the ids a source says predate qualification — a Codeforces contest's number, which
 * its ids were always derived from, so that no id a consumer has deduped on changes across the
 * upgrade (docs/events.md, "What changed").
 */
export function idSeed(contestId: string): string | number {
  if (platformOf(contestId) === 'codeforces') return legacyIdSeed(platformIdOf(contestId)) ?? contestId;
  return contestId;
}

/**
 * A contest id as a store or an event of any release holds it: a qualified id as it is, or a
 * number written before ids were qualified, as the source those numbers came from names it
 * (`codeforces:<n>`). Undefined for anything else.
 */
export function currentContestId(value: unknown): string | undefined {
  if (typeof value === 'number') return fromLegacyId(value);
  return parseQualifiedId(value)?.contestId;
}
