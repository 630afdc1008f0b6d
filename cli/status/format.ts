/**
 * `npm run status`, the pure part: from the lease item and the run records of the Coordination
 * table to the text an operator reads. No I/O (cli/status/read.ts fetches, bin/status.ts prints).
 */
import { ledgerSlots } from '@contest-sync/scheduled-singleton';

/** The lease item as stored (attributes the status shows; see the package's runtime/record.ts). */
export interface LeaseView {
  holder?: string;
  expiresAtMs?: number;
  fence?: number;
  acquiredAtMs?: number;
  releasedAtMs?: number;
  source?: string;
  interval?: string;
  /** The interval ledger: `done` and `doneAtMs` (compact), or `ledger` (slots, epoch minutes, as a set). */
  ledger?: ReadonlySet<number>;
  done?: string;
  doneAtMs?: number;
  lastRun?: { runId?: string; outcome?: string; fence?: number; interval?: string | null; finishedAtMs?: number };
}

/** One run record (`run#...`) as stored by the function. */
export interface RunView {
  pk: string;
  runId?: string;
  fence?: number;
  source?: string;
  outcome?: string;
  dryRun?: boolean;
  interval?: string;
  reason?: string;
  error?: string;
  startedAtMs?: number;
  finishedAtMs?: number;
  counts?: Record<string, number>;
  /** Changes the run held (the first 50; `counts.contestsHeld` has the total). */
  held?: HeldView[];
  /** Held changes the run acted on. */
  accepted?: HeldView[];
  /** A stale reply the run did not apply (ISO times). */
  stale?: { madeAt: string; newestApplied: string };
}

/** A held change as a run record names it (lambda/summary.ts). */
export interface HeldView {
  /** The qualified id (a record written before ids were qualified holds a number). */
  contestId: string | number;
  kind: string;
  /** ISO time of the first reply that said it. */
  since: string;
  replies: number;
}

export interface StatusView {
  /** Where it was read from, e.g. `table ContestSync-Coordination... (stack ContestSync)`. */
  source: string;
  /** Undefined: there is no lease item yet (no run ever acquired it). */
  lease: LeaseView | undefined;
  /** Newest first. */
  runs: RunView[];
  /** How many run records the table holds in all. */
  totalRuns: number;
}

export type LeaseState =
  | { state: 'never-used' }
  | { state: 'free'; releasedAtMs?: number }
  | { state: 'lapsed'; holder: string; expiresAtMs: number }
  | { state: 'held'; holder: string; expiresAtMs: number };

/** Free (released, or never taken), lapsed (a holder that never released, expired), or held. */
export function leaseState(lease: LeaseView | undefined, now: number): LeaseState {
  if (lease === undefined) return { state: 'never-used' };
  if (lease.holder === undefined)
    return { state: 'free', ...(lease.releasedAtMs !== undefined ? { releasedAtMs: lease.releasedAtMs } : {}) };
  const expiresAtMs = lease.expiresAtMs ?? 0;
  return expiresAtMs > now ? { state: 'held', holder: lease.holder, expiresAtMs } : { state: 'lapsed', holder: lease.holder, expiresAtMs };
}

/** `2026-11-30 11:20:03 UTC`. */
export function utc(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '–';
  return `${new Date(ms).toISOString().replace('T', ' ').slice(0, 19)} UTC`;
}

/** `12 s`, `4 min`, `3 h`, `2 d` (rounded down). */
export function span(ms: number): string {
  const s = Math.floor(Math.abs(ms) / 1000);
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.floor(s / 60)} min`;
  if (s < 172_800) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86_400)} d`;
}

const ago = (at: number, now: number) => (at <= now ? `${span(now - at)} ago` : `in ${span(at - now)}`);

/** Aligned plain-text table: a header, a rule, one line per row. */
export function textTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The counts a status row shows, in this order; any other count is summed into no column. */
const COUNT_COLUMNS: [string, string][] = [
  ['fetched', 'contestsFetched'],
  ['written', 'contestsWritten'],
  ['unchanged', 'contestsUnchanged'],
  ['removed', 'contestsRemoved'],
];

export function runRows(runs: RunView[]): { headers: string[]; rows: string[][] } {
  const headers = ['finished (UTC)', 'source', 'interval', 'outcome', 'fence', ...COUNT_COLUMNS.map(([label]) => label), 'ms', 'run id'];
  const rows = runs.map((run) => [
    utc(run.finishedAtMs).replace(' UTC', ''),
    run.source ?? '–',
    run.interval ?? '–',
    [run.outcome ?? '?', run.dryRun ? '(dry run)' : '', run.reason ?? ''].filter((part) => part !== '').join(' '),
    run.fence === undefined ? '–' : String(run.fence),
    ...COUNT_COLUMNS.map(([, key]) => (run.counts?.[key] === undefined ? '–' : String(run.counts[key]))),
    run.startedAtMs !== undefined && run.finishedAtMs !== undefined ? String(run.finishedAtMs - run.startedAtMs) : '–',
    run.runId ?? run.pk,
  ]);
  return { headers, rows };
}

export function formatStatus(view: StatusView, now: number): string {
  const out: string[] = [];
  out.push(`contest-sync status from ${view.source}, at ${utc(now)}`);
  out.push('');
  const state = leaseState(view.lease, now);
  const lease = view.lease;
  const fields: [string, string][] = [];
  switch (state.state) {
    case 'never-used':
      fields.push(['lease', 'free (no run has taken it yet)']);
      break;
    case 'free':
      fields.push([
        'lease',
        `free${state.releasedAtMs !== undefined ? ` (released ${utc(state.releasedAtMs)}, ${ago(state.releasedAtMs, now)})` : ''}`,
      ]);
      break;
    case 'lapsed':
      fields.push([
        'lease',
        `free: lapsed at ${utc(state.expiresAtMs)} (${ago(state.expiresAtMs, now)}); ${state.holder} never released it (crashed or timed out)`,
      ]);
      break;
    case 'held':
      fields.push(['lease', `HELD by ${state.holder}`]);
      fields.push(['until', `${utc(state.expiresAtMs)} (${ago(state.expiresAtMs, now)})`]);
      if (lease?.acquiredAtMs !== undefined)
        fields.push([
          'since',
          `${utc(lease.acquiredAtMs)} (${lease.source ?? '?'}${lease.interval ? `, interval ${lease.interval}` : ''})`,
        ]);
      break;
  }
  fields.push(['fence', lease?.fence === undefined ? '0 (never acquired)' : String(lease.fence)]);
  const last = lease?.lastRun;
  fields.push([
    'last run',
    last === undefined
      ? '–'
      : `${last.outcome ?? '?'}, fence ${last.fence ?? '?'}${last.interval ? `, interval ${last.interval}` : ''}, finished ${utc(last.finishedAtMs)}${last.finishedAtMs !== undefined ? ` (${ago(last.finishedAtMs, now)})` : ''}, run ${last.runId ?? '?'}`,
  ]);
  const done = [...ledgerSlots(lease)].sort((a, b) => a - b);
  const latest = done.at(-1);
  fields.push([
    'intervals done',
    latest === undefined ? '0' : `${done.length} remembered, latest ${new Date(latest * 60_000).toISOString().replace('.000Z', 'Z')}`,
  ]);
  const width = Math.max(...fields.map(([k]) => k.length));
  for (const [key, value] of fields) out.push(`${key.padEnd(width)}  ${value}`);
  out.push('');
  if (view.runs.length === 0) {
    out.push('No run records (a run that skipped writes none; records are kept 30 days).');
  } else {
    out.push(`Last ${view.runs.length} of ${view.totalRuns} run record${view.totalRuns === 1 ? '' : 's'}, newest first:`);
    const { headers, rows } = runRows(view.runs);
    out.push(textTable(headers, rows));
    const failed = view.runs.filter((run) => run.error !== undefined);
    for (const run of failed) out.push(`  ${run.runId ?? run.pk}: ${run.error}`);
  }
  out.push('', ...heldLines(view.runs, now), ...staleLines(view.runs));
  return `${out.join('\n')}\n`;
}

/**
 * What the newest successful (not dry) run held: each change with its kind and since when, and how
 * to let it through. Held changes land by themselves once enough consecutive replies repeat them.
 */
export function heldLines(runs: RunView[], now: number): string[] {
  const newest = runs.find((run) => run.outcome === 'succeeded' && run.dryRun !== true);
  if (newest === undefined) return ['Held changes: unknown (no successful run among the records shown).'];
  const total = newest.counts?.contestsHeld ?? newest.held?.length ?? 0;
  const as = `as of the run finished ${utc(newest.finishedAtMs)}`;
  if (total === 0 || newest.held === undefined) return [`Held changes: none (${as}).`];
  const rows = newest.held.map((change) => {
    const since = Date.parse(change.since);
    return [String(change.contestId), change.kind, `${utc(since)} (${ago(since, now)})`, String(change.replies)];
  });
  return [
    `Held changes: ${total} (${as}${total > newest.held.length ? `, the first ${newest.held.length} listed` : ''}):`,
    textTable(['contest', 'kind', 'since', 'replies'], rows),
    'Each lands by itself once enough consecutive replies repeat it; to accept them all now, invoke the function with {"acceptHeld": true}.',
  ];
}

/**
 * Stale replies among the runs shown (docs/design.md, "Stale replies"): how many, and the newest
 * one's making time against the newest reply applied. A run of them means Codeforces serves an old
 * copy (a lagging replica or cache): nothing of it is applied, the contests stay as they were.
 */
export function staleLines(runs: RunView[]): string[] {
  const stale = runs.filter((run) => (run.counts?.repliesStale ?? 0) > 0);
  if (stale.length === 0) return [`Stale replies: none in the ${runs.length} run${runs.length === 1 ? '' : 's'} shown.`];
  const newest = stale[0]!;
  const detail = newest.stale !== undefined ? `; newest made ${newest.stale.madeAt}, newest applied ${newest.stale.newestApplied}` : '';
  return [`Stale replies: ${stale.length} of the ${runs.length} runs shown (never applied)${detail}.`];
}
