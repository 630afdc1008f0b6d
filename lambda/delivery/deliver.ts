/**
 * One delivery pass over a shard (docs/delivery.md): read the due rows page by page from the byDue
 * index (the first page is the precheck's, read before the lease), believe only valid rows whose
 * contest agrees, and claim them in fenced transactions of at most 49 claims, each with its
 * ReminderDue event. The pass stops starting new work shortly before its deadline; what is left
 * stays due and the next minute's run takes it.
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
  /** Valid but not sent now: the stored contest disagrees (by reason); the sync puts the row right. */
  deferred: number;
  deferredReasons: Partial<Record<DeferReason, number>>;
  /** Claims refused: the row changed or was claimed meanwhile. */
  lost: number;
  duplicates: number;
  queries: number;
  contestReads: number;
  transactions: number;
  retries: number;
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
    more: false,
  };
}

export interface DeliveryDeps {
  store: DynamoDueStore;
  shard: number;
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
  /** The first page, read before the lease by the precheck (may be stale: every claim is conditional). */
  firstPage?: DuePage;
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
  // The precheck's page, read before the lease, counts as this pass's first query.
  const page0 = run.firstPage ?? (await deps.store.duePage(deps.shard, Math.floor(deps.now() / 1000), undefined, run.signal));
  let page: DuePage = page0;
  counts.queries += 1;
  for (;;) {
    counts.due += page.rows.length;
    const rows = screenRows(page.rows, counts);
    const unknown = [...new Set(rows.map((row) => row.contestId))].filter((id) => !contests.has(id));
    // The sync's reply clock is read with the first contests, in the same request: an idle
    // minute still costs its one Query.
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
      counts.more = page.next !== undefined;
      return counts;
    }
    const claims: Claim[] = [];
    for (const row of rows) {
      const contest = contestView(contests.get(row.contestId));
      const agrees = contestAgrees(contest);
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
      claims.push({ row, event, action: deps.store.claim(row, nowSeconds), bytes: claimBytes(row, detailBytes) });
    }
    if (run.dryRun === true) {
      counts.wouldDeliver = (counts.wouldDeliver ?? 0) + claims.length;
      claims.length = 0;
    }
    for (const batch of packClaims(claims, deps.claimsPerTransaction)) {
      if (deps.now() >= stopAt) {
        counts.more = true;
        return counts;
      }
      const outcome = await commitClaims(run.commit, batch);
      counts.delivered += outcome.delivered;
      counts.lost += outcome.lost;
      counts.duplicates += outcome.duplicates;
      counts.transactions += outcome.transactions;
      counts.retries += outcome.retries;
    }
    if (page.next === undefined) return counts;
    if (deps.now() >= stopAt) {
      counts.more = true;
      return counts;
    }
    page = await deps.store.duePage(deps.shard, Math.floor(deps.now() / 1000), page.next, run.signal);
    counts.queries += 1;
  }
}
