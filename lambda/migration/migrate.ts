/**
 * The migration's run (docs/runbook.md, "Upgrading to qualified keys"): under the Codeforces
 * sync's lease, every write a fenced commit. Its steps:
 *
 *   read the marker ─► start or resume ─► copy the contests ─► the barrier ─► copy the reminders ─► done
 *
 * Each page of a table commits with the marker's new cursor in one transaction, so the run can stop
 * anywhere (its deadline, a crash, a lost lease) and the next run goes on from the last page that
 * landed; copies are idempotent (a contest's copy is the whole item again, a reminder's is never
 * written over a row already there), so a page committed twice changes nothing.
 */
import { FencedWriteError, type Sleep, type TransactAction, type WorkContext } from '@contest-sync/scheduled-singleton';
import { fromLegacyContestId } from '../sources/codeforces/legacy.js';
import { MigrationItemError } from './errors.js';
import { contestToNew, reminderToNew, type Item } from './items.js';
import {
  barrierPassed,
  DEFAULT_BARRIER_MS,
  nextStep,
  pageCopied,
  resumed,
  started,
  ZERO_COUNTS,
  type MigrationCounts,
  type MigrationMarker,
  type MigrationPhase,
  type MigrationState,
} from './marker.js';
import {
  CONTEST_PAGE_ITEMS,
  contestCopy,
  markerPut,
  PAGE_ITEMS,
  reminderPut,
  type MigrationStore,
  type MigrationTables,
  type Page,
  type ShardLeases,
} from './store.js';

export interface MigrationDeps {
  store: MigrationStore;
  shardLeases: ShardLeases;
  tables: MigrationTables;
  /** The stack's DUE_SHARDS: a due row's shard in the new table is its bucket mod this. */
  dueShards: number;
  now: () => number;
  sleep: Sleep;
  /** @default DEFAULT_BARRIER_MS (30 s past the migration's start) */
  barrierMs?: number;
  /** @default PAGE_ITEMS (98: with the lease check and the marker, one full transaction) */
  pageItems?: number;
  /** No page is started this close to the run's deadline. @default 3000 */
  stopBeforeDeadlineMs?: number;
  /** Told of each item refused (never its content). @default none */
  onRefused?: (table: 'contests' | 'reminders', problem: string) => void;
}

/** What the work context gives the migration: the run, its deadline and signal, fenced commits, the sync's handoff. */
export type MigrationRun = Pick<WorkContext, 'runId' | 'signal' | 'deadline' | 'commit' | 'handoff' | 'keep'>;

export interface MigrationProgress {
  state: MigrationState;
  phase: MigrationPhase;
  startedAtMs: number;
  /** What this run copied. */
  copied: MigrationCounts;
  /** What the migration copied over all its runs. */
  total: MigrationCounts;
  /** This run stopped before the migration was done: its deadline came (the next run goes on). */
  unfinished?: 'deadline';
}

export async function migrate(run: MigrationRun, deps: MigrationDeps): Promise<MigrationProgress> {
  const read = await deps.store.readMarker(run.signal);
  const first = nextStep(read, deps.now(), deps.barrierMs);
  if (first.kind === 'done') return progressOf(read!, { ...ZERO_COUNTS });
  let marker = first.kind === 'start' ? started(deps.now(), read, deps.dueShards) : resumed(read!, deps.now());
  await run.commit([markerPut(deps.tables.coordination, marker)]);
  const copied = { ...ZERO_COUNTS };
  const stopAt = run.deadline - (deps.stopBeforeDeadlineMs ?? 3_000);
  for (;;) {
    const step = nextStep(marker, deps.now(), deps.barrierMs ?? DEFAULT_BARRIER_MS);
    if (step.kind === 'done') return progressOf(marker, copied);
    if (deps.now() >= stopAt) return unfinished(run, marker, copied);
    if (step.kind === 'copy') {
      marker = await copyTable(step.table, marker, run, deps, copied, stopAt);
    } else if (step.kind === 'wait') {
      if (step.untilMs >= stopAt) return unfinished(run, marker, copied);
      await deps.sleep(step.untilMs - deps.now(), run.signal);
    } else if (step.kind === 'barrier') {
      if (!(await deps.shardLeases.takeEach(run.runId, stopAt, run.signal))) return unfinished(run, marker, copied);
      marker = barrierPassed(marker, deps.now());
      await run.commit([markerPut(deps.tables.coordination, marker)]);
    }
  }
}

/** The deadline came first: what earlier syncs handed over stays for the run that finishes the copy. */
function unfinished(run: MigrationRun, marker: MigrationMarker, copied: MigrationCounts): MigrationProgress {
  run.keep([...run.handoff]);
  return progressOf(marker, copied, 'deadline');
}

const progressOf = (marker: MigrationMarker, copied: MigrationCounts, unfinished?: 'deadline'): MigrationProgress => ({
  state: marker.state,
  phase: marker.phase,
  startedAtMs: marker.startedAtMs,
  copied,
  total: marker.counts,
  ...(unfinished === undefined ? {} : { unfinished }),
});

/** One table, page by page from the marker's cursor; the next page is read while this one commits. */
async function copyTable(
  table: 'contests' | 'reminders',
  start: MigrationMarker,
  run: MigrationRun,
  deps: MigrationDeps,
  copied: MigrationCounts,
  stopAt: number,
): Promise<MigrationMarker> {
  const source = table === 'contests' ? deps.tables.legacyContests : deps.tables.legacyReminders;
  const read = (cursor: Record<string, unknown> | undefined): Promise<Page> => {
    // A contest's copy is its put and its bucket gates: fewer of them fill a transaction.
    const items = table === 'contests' ? Math.min(deps.pageItems ?? PAGE_ITEMS, CONTEST_PAGE_ITEMS) : (deps.pageItems ?? PAGE_ITEMS);
    const page = deps.store.scanPage(source, cursor, items, run.signal);
    page.catch(() => undefined); // a page read ahead and never used must not be an unhandled rejection
    return page;
  };
  let marker = start;
  let next = read(marker.cursor);
  for (;;) {
    const page = await next;
    if (page.next !== undefined) next = read(page.next);
    marker = await commitPage(table, copiesOf(table, page.items, deps), page.next, marker, run, deps, copied);
    if (page.next === undefined || deps.now() >= stopAt) return marker;
  }
}

interface Copies {
  /** One per item copied: the contest's put, or the reminder's conditional put. */
  actions: TransactAction[];
  /** The copied contests' bucket gates (unconditional puts, not counted as copies). */
  gates: TransactAction[];
  refused: number;
}

function copiesOf(table: 'contests' | 'reminders', items: readonly Item[], deps: MigrationDeps): Copies {
  const copies: Copies = { actions: [], gates: [], refused: 0 };
  for (const item of items) {
    try {
      if (table === 'contests') {
        const [contest, ...gates] = contestCopy(deps.tables.contests, contestToNew(item));
        copies.actions.push(contest!);
        copies.gates.push(...gates);
      } else copies.actions.push(reminderPut(deps.tables.reminders, reminderToNew(item, deps.dueShards)));
    } catch (error) {
      if (!(error instanceof MigrationItemError)) throw error;
      copies.refused += 1;
      deps.onRefused?.(table, error.message);
    }
  }
  return copies;
}

/**
 * The page's copies and the marker's new cursor in one fenced transaction. A reminder already in
 * the new table (its condition refused) is dropped and counted `existing`, and the rest is sent
 * again: each retry drops at least one copy.
 */
async function commitPage(
  table: 'contests' | 'reminders',
  copies: Copies,
  next: Record<string, unknown> | undefined,
  marker: MigrationMarker,
  run: MigrationRun,
  deps: MigrationDeps,
  copied: MigrationCounts,
): Promise<MigrationMarker> {
  let pending = copies.actions;
  let existing = 0;
  for (;;) {
    const counts = { [table]: pending.length, existing, refused: copies.refused };
    const after = pageCopied(marker, counts, next, deps.now());
    // The copy's last commit hands the sync's handoff on under qualified ids, kept past this run.
    const handoff = after.state === 'done' ? qualifiedHandoff(run.handoff) : [];
    try {
      await run.commit([...pending, ...copies.gates, markerPut(deps.tables.coordination, after)], handoff.length > 0 ? { handoff } : {});
      for (const [key, value] of Object.entries(counts)) copied[key as keyof MigrationCounts] += value;
      if (after.state === 'done') run.keep(handoff);
      return after;
    } catch (error) {
      if (!(error instanceof FencedWriteError) || error.refused.length === 0) throw error;
      const refused = new Set(error.refused);
      const kept = pending.filter((action) => !refused.has(action));
      if (kept.length === pending.length) throw error; // refused something that is not a copy
      existing += pending.length - kept.length;
      pending = kept;
    }
  }
}

/** The sync's handoff entries (contest ids) under qualified ids: `2125` → `codeforces:2125`; others as they are. */
export function qualifiedHandoff(entries: ReadonlySet<string>): string[] {
  return [...entries].map((entry) => (/^[1-9][0-9]*$/.test(entry) ? (fromLegacyContestId(Number(entry)) ?? entry) : entry));
}
