/**
 * One item to the other key and back (docs/runbook.md, "Upgrading to qualified keys"): pure. A
 * copy keeps every attribute of the item as the previous release wrote it — the user's intent and
 * lead, what was sent and for which start, the gate, what was published, the register — and
 * changes only what the key is made of:
 *
 * 1. a contest: `contestId` 2120 (Number) → `codeforces:2120`, and `platformId` '2120';
 * 2. the reply clock: `contestId` 0 → `clock#codeforces`, its `withdrawn` register keyed by qualified ids;
 * 3. a reminder: `contestKey` `codeforces:2120#<bucket>` and `contestId` `codeforces:2120`;
 *    `dueShard` (present while it is due) recomputed: `bucket mod DUE_SHARDS`;
 * 4. back: the inverse for Codeforces items (`dueShard` = `contestId mod DUE_SHARDS` again);
 *    an item of another platform has no legacy key and is left out.
 *
 * An item that cannot be carried (a key that is not a legacy id, no user) is refused with a
 * MigrationItemError, never written half.
 */
import { LEGACY_CLOCK_ID, PLATFORM, fromLegacyContestId, legacyPlatformId, toLegacyContestId } from '../sources/codeforces/legacy.js';
import { MigrationItemError } from './errors.js';
import { bucketOf, clockKey, contestKeyOf } from './keys.js';

/** A table item in the document client's form (numbers, strings, sets, maps). */
export type Item = Record<string, unknown>;

/** A sort key is at most 1,024 bytes (DynamoDB); the write path allows 256 bytes of user id. */
const MAX_USER_ID_BYTES = 1024;

/** Rules 1 and 2: a legacy Contests item as the new table keys it. */
export function contestToNew(legacy: Item): Item {
  if (legacy.contestId === LEGACY_CLOCK_ID) return clockToNew(legacy);
  const contestId = fromLegacyContestId(legacy.contestId);
  if (contestId === undefined) throw new MigrationItemError('contests', 'contestId is not a positive whole number');
  if (legacy.platform !== PLATFORM) throw new MigrationItemError('contests', `platform is not ${PLATFORM}`);
  return { ...legacy, contestId, platformId: legacyPlatformId(legacy.contestId as number) };
}

function clockToNew(legacy: Item): Item {
  const { withdrawn, ...rest } = legacy;
  return { ...rest, contestId: clockKey(PLATFORM), ...(withdrawn === undefined ? {} : { withdrawn: registerToNew(withdrawn) }) };
}

function registerToNew(register: unknown): Item {
  if (typeof register !== 'object' || register === null || Array.isArray(register))
    throw new MigrationItemError('contests', "the reply clock's withdrawn register is not a map");
  return Object.fromEntries(
    Object.entries(register).map(([id, entry]) => {
      const qualified = /^[1-9][0-9]*$/.test(id) ? fromLegacyContestId(Number(id)) : undefined;
      if (qualified === undefined) throw new MigrationItemError('contests', 'a withdrawn register key is not a legacy contest id');
      return [qualified, entry];
    }),
  );
}

/** Rule 3: a legacy Reminders row as the new table keys it, its due shard under `dueShards`. */
export function reminderToNew(legacy: Item, dueShards: number): Item {
  const contestId = fromLegacyContestId(legacy.contestId);
  if (contestId === undefined) throw new MigrationItemError('reminders', 'contestId is not a positive whole number');
  const { userId } = legacy;
  if (typeof userId !== 'string' || userId === '' || Buffer.byteLength(userId) > MAX_USER_ID_BYTES)
    throw new MigrationItemError('reminders', 'userId is not a string of 1 to 1,024 bytes');
  const bucket = bucketOf(userId);
  return {
    ...legacy,
    contestKey: contestKeyOf(contestId, bucket),
    contestId,
    ...(legacy.dueShard === undefined ? {} : { dueShard: bucket % dueShards }),
  };
}

/** Rule 4: a new Contests item under the previous release's key; undefined for another platform's. */
export function contestToLegacy(item: Item): Item | undefined {
  if (item.contestId === clockKey(PLATFORM)) {
    const { withdrawn, ...rest } = item;
    const register = withdrawn === undefined ? undefined : registerToLegacy(withdrawn);
    return { ...rest, contestId: LEGACY_CLOCK_ID, ...(register === undefined ? {} : { withdrawn: register }) };
  }
  const legacy = typeof item.contestId === 'string' ? toLegacyContestId(item.contestId) : undefined;
  if (legacy === undefined) return undefined;
  const { platformId: _platformId, ...rest } = item;
  return { ...rest, contestId: legacy };
}

function registerToLegacy(register: unknown): Item | undefined {
  if (typeof register !== 'object' || register === null) return undefined;
  const entries = Object.entries(register).flatMap(([id, entry]) => {
    const legacy = toLegacyContestId(id);
    return legacy === undefined ? [] : [[String(legacy), entry] as const];
  });
  return entries.length === 0 ? undefined : Object.fromEntries(entries);
}

/** Rule 4: a new Reminders row under the previous release's key; undefined for another platform's. */
export function reminderToLegacy(item: Item, dueShards: number): Item | undefined {
  const legacy = typeof item.contestId === 'string' ? toLegacyContestId(item.contestId) : undefined;
  if (legacy === undefined) return undefined;
  const { contestKey: _contestKey, ...rest } = item;
  return { ...rest, contestId: legacy, ...(item.dueShard === undefined ? {} : { dueShard: legacy % dueShards }) };
}

/** The attributes whose values differ between two items (sets and maps compared by value), sorted. */
export function differences(expected: Item, actual: Item): string[] {
  const names = new Set([...Object.keys(expected), ...Object.keys(actual)]);
  return [...names].filter((name) => !sameValue(expected[name], actual[name])).sort();
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Set || b instanceof Set) {
    if (!(a instanceof Set && b instanceof Set) || a.size !== b.size) return false;
    return [...a].every((value) => b.has(value));
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((value, i) => sameValue(value, b[i]));
  }
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].every((key) => sameValue((a as Item)[key], (b as Item)[key]));
  }
  return a === b;
}
