/**
 * What the releases before platform-qualified keys stored: a Codeforces contest under its number
 * (`2120`, a DynamoDB Number) and the reply clock under `0`. Only the upgrade reads and writes
 * those keys (lambda/migration/; docs/runbook.md, "Upgrading to qualified keys"); everything else
 * names a contest by its qualified id (`codeforces:2120`).
 */

export const PLATFORM = 'codeforces';

/** The reply clock's key in the previous release's Contests table. */
export const LEGACY_CLOCK_ID = 0;

const QUALIFIED = /^codeforces:([1-9][0-9]{0,14})$/;

/** `codeforces:<n>` for a stored legacy id (a positive whole number), or undefined for anything else. */
export function fromLegacyContestId(value: unknown): string | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? `${PLATFORM}:${value}` : undefined;
}

/** The legacy number of a qualified Codeforces id (`codeforces:2120` → 2120), or undefined for any other id. */
export function toLegacyContestId(qualified: string): number | undefined {
  const match = QUALIFIED.exec(qualified);
  if (match === null) return undefined;
  const id = Number(match[1]);
  return Number.isSafeInteger(id) ? id : undefined;
}

/** The platform's own id of a legacy contest, as text (`2120`). */
export const legacyPlatformId = (legacy: number): string => String(legacy);
