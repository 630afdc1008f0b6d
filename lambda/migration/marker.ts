/**
 * The marker's record logic (docs/runbook.md, "Upgrading to qualified keys"), pure: what the
 * marker item says, and what the migration does next from it. Persistence is in store.ts.
 *
 *   (none) ─► copying: contests ─► copying: barrier ─► copying: reminders ─► done
 *                 ▲                                                          │
 *                 └──────────────── rolled-back (npm run migrate -- back) ◄──┘
 *
 * 1. No marker, or one a rollback left: the migration starts (now is its start).
 * 2. Contests, then reminders, are copied page by page from the cursor; each page commits with
 *    the marker's new cursor and counts in one fenced transaction, so a run that stops anywhere
 *    leaves the marker at the last page that landed, and the next run goes on from there.
 * 3. The barrier between them waits until `barrierMs` past the start (no request of the previous
 *    API code is still writing), then takes and releases every delivery shard's lease once (no
 *    previous delivery run is still claiming).
 * 4. `done` is final: nothing reads the legacy tables again.
 */
import * as z from 'zod';
import { MigrationStateError } from './errors.js';

export const MIGRATION_STATES = ['copying', 'done', 'rolled-back'] as const;
export const MIGRATION_PHASES = ['contests', 'barrier', 'reminders', 'done'] as const;
export type MigrationState = (typeof MIGRATION_STATES)[number];
export type MigrationPhase = (typeof MIGRATION_PHASES)[number];

/** What a migration counts, over all its runs. */
export interface MigrationCounts {
  /** Contests items copied (the reply clock included). */
  contests: number;
  /** Reminder rows copied. */
  reminders: number;
  /** Reminder rows already in the new table (a copy never overwrites one). */
  existing: number;
  /** Items that cannot be carried to the new key: left out, counted. */
  refused: number;
}

export interface MigrationMarker {
  state: MigrationState;
  phase: MigrationPhase;
  /** When the migration started (epoch ms): the barrier counts from here. */
  startedAtMs: number;
  updatedAtMs: number;
  /** Where the copy of the current phase's table goes on (the Scan's ExclusiveStartKey); absent at its start. */
  cursor?: Record<string, unknown>;
  counts: MigrationCounts;
  /** Runs that worked on it. */
  runs: number;
  /** The DUE_SHARDS the reminders' due shards were computed under. */
  dueShards?: number;
  /** When every delivery shard's lease had been taken and released once. */
  barrierAtMs?: number;
  doneAtMs?: number;
  rolledBackAtMs?: number;
}

/** The barrier: past API Gateway's 30 s integration timeout (the API function's own is 10 s). */
export const DEFAULT_BARRIER_MS = 30_000;

export const ZERO_COUNTS: MigrationCounts = { contests: 0, reminders: 0, existing: 0, refused: 0 };

const count = z.number().int().nonnegative();
const schema = z.object({
  state: z.enum(MIGRATION_STATES),
  phase: z.enum(MIGRATION_PHASES),
  startedAtMs: z.number().int().nonnegative(),
  updatedAtMs: z.number().int().nonnegative(),
  cursor: z.record(z.string(), z.unknown()).optional(),
  counts: z.object({ contests: count, reminders: count, existing: count, refused: count }),
  runs: count,
  dueShards: z.number().int().positive().optional(),
  barrierAtMs: z.number().int().nonnegative().optional(),
  doneAtMs: z.number().int().nonnegative().optional(),
  rolledBackAtMs: z.number().int().nonnegative().optional(),
});

/** The marker the item holds; undefined for no item. Anything else is a MigrationStateError. */
export function parseMarker(item: unknown): MigrationMarker | undefined {
  if (item === undefined) return undefined;
  const parsed = schema.safeParse(item);
  if (!parsed.success) {
    const fields = [...new Set(parsed.error.issues.map((issue) => issue.path.join('.') || '(item)'))].slice(0, 8);
    throw new MigrationStateError(`the migration marker is not one the migration wrote (${fields.join(', ')})`);
  }
  const marker = parsed.data;
  if ((marker.state === 'done' && marker.phase !== 'done') || (marker.state === 'copying' && marker.phase === 'done'))
    throw new MigrationStateError('the migration marker is done in one field only');
  return marker;
}

export type NextStep =
  | { kind: 'start' }
  | { kind: 'copy'; table: 'contests' | 'reminders'; cursor?: Record<string, unknown> }
  | { kind: 'wait'; untilMs: number }
  | { kind: 'barrier' }
  | { kind: 'done' };

/** What the migration does next (rules 1-4). */
export function nextStep(marker: MigrationMarker | undefined, nowMs: number, barrierMs = DEFAULT_BARRIER_MS): NextStep {
  if (marker === undefined || marker.state === 'rolled-back') return { kind: 'start' };
  switch (marker.phase) {
    case 'done':
      return { kind: 'done' };
    case 'barrier':
      return nowMs < marker.startedAtMs + barrierMs ? { kind: 'wait', untilMs: marker.startedAtMs + barrierMs } : { kind: 'barrier' };
    case 'contests':
    case 'reminders':
      return { kind: 'copy', table: marker.phase, ...(marker.cursor === undefined ? {} : { cursor: marker.cursor }) };
  }
}

/** Rule 1: a new migration, started now by a run, its due shards computed under `dueShards`. */
export function started(nowMs: number, previous?: MigrationMarker, dueShards?: number): MigrationMarker {
  return {
    state: 'copying',
    phase: 'contests',
    startedAtMs: nowMs,
    updatedAtMs: nowMs,
    counts: { ...ZERO_COUNTS },
    runs: (previous?.runs ?? 0) + 1,
    ...(dueShards === undefined ? {} : { dueShards }),
  };
}

/** Rule 2: one page copied; `next` is the Scan's LastEvaluatedKey (undefined: the table is done, the next phase begins). */
export function pageCopied(
  marker: MigrationMarker,
  page: Partial<MigrationCounts>,
  next: Record<string, unknown> | undefined,
  nowMs: number,
): MigrationMarker {
  const counts = { ...marker.counts };
  for (const key of Object.keys(ZERO_COUNTS) as (keyof MigrationCounts)[]) counts[key] += page[key] ?? 0;
  const { cursor: _cursor, ...rest } = marker;
  if (next !== undefined) return { ...rest, cursor: next, counts, updatedAtMs: nowMs };
  return marker.phase === 'contests'
    ? { ...rest, phase: 'barrier', counts, updatedAtMs: nowMs }
    : { ...rest, state: 'done', phase: 'done', counts, updatedAtMs: nowMs, doneAtMs: nowMs };
}

/** Rule 3: every delivery shard's lease was taken and released once. */
export function barrierPassed(marker: MigrationMarker, nowMs: number): MigrationMarker {
  const { cursor: _cursor, ...rest } = marker;
  return { ...rest, phase: 'reminders', barrierAtMs: nowMs, updatedAtMs: nowMs };
}

/** A run takes the migration on where the last one left it. */
export const resumed = (marker: MigrationMarker, nowMs: number): MigrationMarker => ({
  ...marker,
  runs: marker.runs + 1,
  updatedAtMs: nowMs,
});

/** After `npm run migrate -- back`: the next upgrade starts over. */
export function rolledBack(marker: MigrationMarker | undefined, nowMs: number): MigrationMarker {
  const base = marker ?? started(nowMs);
  const { cursor: _cursor, doneAtMs: _doneAtMs, ...rest } = base;
  return { ...rest, state: 'rolled-back', updatedAtMs: nowMs, rolledBackAtMs: nowMs };
}
