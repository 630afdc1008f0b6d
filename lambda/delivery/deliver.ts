/**
 * One delivery pass (docs/delivery.md): read the due rows of each byDue partition the job serves,
 * page by page (the first pages are the precheck's, read before the lease), believe only valid
 * rows whose contest agrees (THE RULE: the row's `dueStart` is its contest's), and claim them in
 * fenced transactions of at most 49 claims, each with its ReminderDue event and one
 * ConditionCheck per contest that checks the rule again when the claims commit. The pass stops
 * starting new work shortly before its deadline; what is left stays due and the next minute's run
 * takes it.
 */
import type { CommitOptions, CommitResult, TransactAction } from '@contest-sync/scheduled-singleton';
import {
  claimBytes,
  contestAgrees,
  contestView,
  deliverable,
  evidenceFresh,
  packClaims,
  reminderDueEvent,
  servedShards,
  validRow,
  type DeferReason,
  type DueRow,
  type InvalidReason,
} from './due.js';
import { REPLY_CLOCK_ID } from '../contests/model.js';
import { commitClaims, type Claim, type DuePage, type DynamoDueStore } from './dynamo-due.js';

/** What a pass did: the summary line's counts (docs/delivery.md, "Summary line"). */
export interface DeliveryCounts {
  /** Rows the index returned. */
  due: number;
  delivered: number;
  /** Skipped: a missing or absurd attribute, or an event EventBridge would refuse (by reason). */
  invalid: number;
  invalidReasons: Partial<Record<InvalidReason, number>>;
  /** Valid but not sent now: the stored contest disagrees, or the evidence is stale (by reason); the sync puts the row right. */
  deferred: number;
  deferredReasons: Partial<Record<DeferReason, number>>;
  /** Claims refused: the row changed or was claimed meanwhile, or its contest moved or paused (its check failed). */
  lost: number;
  duplicates: number;
  queries: number;
  contestReads: number;
  transactions: number;
  retries: number;
  /** Contest ConditionChecks committed (the rule: one per contest per transaction). */
  contestChecks: number;
  /** Rows may be left due for the next run (the deadline came, or the index has more pages). */
  more: boolean;
  /** A dry run: the claims it would have committed (nothing is written). */
  wouldDeliver?: number;
}

export function emptyDeliveryCounts(): DeliveryCounts {
  return {
    due: 0,
    delivered: 0,
    invalid: 0,
    invalidReasons: {},
    deferred: 0,
    deferredReasons: {},
    lost: 0,
    duplicates: 0,
    queries: 0,
    contestReads: 0,
    transactions: 0,
    retries: 0,
    contestChecks: 0,
    more: false,
  };
}

export interface DeliveryDeps {
  store: DynamoDueStore;
  /** The job's shard: it serves servedShards(shard, dueShards). */
  shard: number;
  /** DUE_SHARDS, the stack's setting (default 1). */
  dueShards?: number;
  /** The EventBridge source of the job's events (the outbox's), for the size check. */
  eventSource: string;
  now: () => number;
  /** Stop starting batches this long before the run's deadline (ms). */
  stopBeforeDeadlineMs?: number;
  /** Claims per transaction (default and most: MAX_CLAIMS_PER_TRANSACTION); the bench compares 1. */
  claimsPerTransaction?: number;
  log?: { warn(message: string, fields?: Record<string, unknown>): void };
}

export interface DeliveryRun {
  signal: AbortSignal;
  deadline: number;
  commit: (actions: readonly TransactAction[], options?: CommitOptions) => Promise<CommitResult>;
  /** The first page of each served shard, read before the lease by the precheck (may be stale: every claim is conditional). */
  firstPages?: ReadonlyMap<number, DuePage>;
  /** A console dry run: read and judge, count what would be claimed, write nothing. */
  dryRun?: boolean;
}

const DEFAULT_STOP_BEFORE_DEADLINE_MS = 3_000;

const bump = <K extends string>(counts: Partial<Record<K, number>>, key: K) => {
  counts[key] = (counts[key] ?? 0) + 1;
};

/** The rows of a page that are worth a contest read: the valid ones (the others are counted). */
export function screenRows(rows: readonly Record<string, unknown>[], counts: DeliveryCounts): DueRow[] {
  const valid: DueRow[] = [];
  for (const raw of rows) {
    const checked = validRow(raw);
    if (checked.ok) valid.push(checked.row);
    else {
      counts.invalid += 1;
      bump(counts.invalidReasons, checked.reason);
    }
  }
  return valid;
}

export async function deliverDue(run: DeliveryRun, deps: DeliveryDeps): Promise<DeliveryCounts> {
  const counts = emptyDeliveryCounts();
  const stopAt = run.deadline - (deps.stopBeforeDeadlineMs ?? DEFAULT_STOP_BEFORE_DEADLINE_MS);
  const contests = new Map<number, Record<string, unknown> | undefined>();
  const nowSeconds = () => Math.floor(deps.now() / 1000);
  for (const shard of servedShards(deps.shard, deps.dueShards ?? 1)) {
    if (deps.now() >= stopAt) {
      counts.more = true;
      return counts;
    }
    // The precheck's pages, read before the lease, count as this pass's queries.
    let page: DuePage = run.firstPages?.get(shard) ?? (await deps.store.duePage(shard, nowSeconds(), undefined, run.signal));
    counts.queries += 1;
    for (;;) {
      const done = await deliverPage(page, run, deps, contests, counts, stopAt);
      if (done === 'deadline') return counts;
      if (done === 'stale' || page.next === undefined) {
        // Stale evidence: nothing more is read of this shard; what is left stays due.
        if (page.next !== undefined) counts.more = true;
        break;
      }
      if (deps.now() >= stopAt) {
        counts.more = true;
        return counts;
      }
      page = await deps.store.duePage(shard, nowSeconds(), page.next, run.signal);
      counts.queries += 1;
    }
  }
  return counts;
}

/** One page: screen its rows, read their contests, apply the rule, claim what may be sent. */
async function deliverPage(
  page: DuePage,
  run: DeliveryRun,
  deps: DeliveryDeps,
  contests: Map<number, Record<string, unknown> | undefined>,
  counts: DeliveryCounts,
  stopAt: number,
): Promise<'page' | 'stale' | 'deadline'> {
  counts.due += page.rows.length;
  const rows = screenRows(page.rows, counts);
  const unknown = [...new Set(rows.map((row) => row.contestId))].filter((id) => !contests.has(id));
  // The sync's reply clock is read with the first contests, in the same request: an idle
  // minute still costs only its Queries.
  if (rows.length > 0 && !contests.has(REPLY_CLOCK_ID)) unknown.unshift(REPLY_CLOCK_ID);
  if (unknown.length > 0) {
    const read = await deps.store.contests(unknown, run.signal);
    counts.contestReads += Math.ceil(unknown.length / 100);
    for (const id of unknown) contests.set(id, read.get(id));
  }
  const nowSeconds = Math.floor(deps.now() / 1000);
  if (rows.length > 0 && !evidenceFresh(contests.get(REPLY_CLOCK_ID), nowSeconds)) {
    // When in doubt, delay: nothing is claimed, every row stays due for a pass after a fresh sync.
    counts.deferred += rows.length;
    counts.deferredReasons['evidence-stale'] = (counts.deferredReasons['evidence-stale'] ?? 0) + rows.length;
    return 'stale';
  }
  const claims = claimsOf(rows, contests, deps, counts, nowSeconds);
  if (run.dryRun === true) {
    counts.wouldDeliver = (counts.wouldDeliver ?? 0) + claims.length;
    claims.length = 0;
  }
  for (const batch of packClaims(claims, deps.claimsPerTransaction)) {
    if (deps.now() >= stopAt) {
      counts.more = true;
      return 'deadline';
    }
    const outcome = await commitClaims(run.commit, batch, (contestId, dueStart) => deps.store.contestCheck(contestId, dueStart));
    counts.delivered += outcome.delivered;
    counts.lost += outcome.lost;
    counts.duplicates += outcome.duplicates;
    counts.transactions += outcome.transactions;
    counts.retries += outcome.retries;
    counts.contestChecks += outcome.contestChecks;
  }
  return 'page';
}

/**
 * The claims of a page's valid rows: those the rule lets fire (the others deferred, by reason)
 * and whose event the outbox would take (the others invalid, `too-large`).
 */
function claimsOf(
  rows: readonly DueRow[],
  contests: ReadonlyMap<number, Record<string, unknown> | undefined>,
  deps: DeliveryDeps,
  counts: DeliveryCounts,
  nowSeconds: number,
): Claim[] {
  const claims: Claim[] = [];
  for (const row of rows) {
    const contest = contestView(contests.get(row.contestId));
    const agrees = contestAgrees(row, contest);
    if (!agrees.ok || contest === undefined) {
      counts.deferred += 1;
      bump(counts.deferredReasons, agrees.ok ? 'contest-missing' : agrees.reason);
      continue;
    }
    const event = reminderDueEvent(row, contest);
    const detailBytes = deliverable(event, deps.eventSource);
    if (detailBytes === undefined) {
      counts.invalid += 1;
      bump(counts.invalidReasons, 'too-large');
      continue;
    }
    claims.push({ contestId: row.contestId, row, event, action: deps.store.claim(row, nowSeconds), bytes: claimBytes(row, detailBytes) });
  }
  return claims;
}
