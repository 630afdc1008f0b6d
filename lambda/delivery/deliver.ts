/**
 * One delivery pass (docs/delivery.md): read the due rows of the job's own byDue partition, page
 * by page (the first page is the precheck's, read before the lease), believe only valid
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
  validRow,
  type DeferReason,
  type DueRow,
  type InvalidReason,
} from './due.js';
import { replyClockId } from '../contests/model.js';
import { platformOf } from '../sources/ids.js';
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
  /** Gate ConditionChecks committed (the rule: one per bucket key per transaction). */
  gateChecks: number;
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
    gateChecks: 0,
    more: false,
  };
}

export interface DeliveryDeps {
  store: DynamoDueStore;
  /** The job's shard: the one byDue partition it reads (the sync moves rows out of retired ones). */
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
  /** The shard's first page, read before the lease by the precheck (may be stale: every claim is conditional). */
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
  const contests = new Map<string, Record<string, unknown> | undefined>();
  const nowSeconds = () => Math.floor(deps.now() / 1000);
  // The precheck's page, read before the lease, counts as this pass's query.
  let page: DuePage = run.firstPage ?? (await deps.store.duePage(deps.shard, nowSeconds(), undefined, run.signal));
  counts.queries += 1;
  for (;;) {
    const done = await deliverPage(page, run, deps, contests, counts, stopAt);
    if (done === 'deadline') return counts;
    if (page.next === undefined) return counts;
    // Stale evidence, or the deadline: nothing more is read; what is left stays due.
    if (done === 'stale' || deps.now() >= stopAt) {
      counts.more = true;
      return counts;
    }
    page = await deps.store.duePage(deps.shard, nowSeconds(), page.next, run.signal);
    counts.queries += 1;
  }
}

/**
 * The contests a page's rows name, and the reply clock of each source they come from, read in the
 * same requests as the contests: an idle minute still costs only its Query.
 */
async function readContests(
  rows: readonly DueRow[],
  contests: Map<string, Record<string, unknown> | undefined>,
  deps: DeliveryDeps,
  run: DeliveryRun,
  counts: DeliveryCounts,
): Promise<void> {
  const clocks = [...new Set(rows.map((row) => replyClockId(platformOf(row.contestId))))];
  const unknown = [...new Set([...clocks, ...rows.map((row) => row.contestId)])].filter((id) => !contests.has(id));
  if (unknown.length === 0) return;
  const read = await deps.store.contests(unknown, run.signal);
  counts.contestReads += Math.ceil(unknown.length / 100);
  for (const id of unknown) contests.set(id, read.get(id));
}

/** One page: screen its rows, read their contests, apply the rule, claim what may be sent. */
async function deliverPage(
  page: DuePage,
  run: DeliveryRun,
  deps: DeliveryDeps,
  contests: Map<string, Record<string, unknown> | undefined>,
  counts: DeliveryCounts,
  stopAt: number,
): Promise<'page' | 'stale' | 'deadline'> {
  counts.due += page.rows.length;
  const rows = screenRows(page.rows, counts);
  await readContests(rows, contests, deps, run, counts);
  const nowSeconds = Math.floor(deps.now() / 1000);
  const { fresh, stale } = byEvidence(rows, contests, nowSeconds);
  if (stale.length > 0) {
    // When in doubt, delay: rows of a source no sync applied a fresh reply of stay due.
    counts.deferred += stale.length;
    counts.deferredReasons['evidence-stale'] = (counts.deferredReasons['evidence-stale'] ?? 0) + stale.length;
    if (fresh.length === 0) return 'stale';
  }
  const claims = claimsOf(fresh, contests, deps, counts, nowSeconds);
  if (run.dryRun === true) {
    counts.wouldDeliver = (counts.wouldDeliver ?? 0) + claims.length;
    claims.length = 0;
  }
  for (const batch of packClaims(claims, deps.claimsPerTransaction)) {
    if (deps.now() >= stopAt) {
      counts.more = true;
      return 'deadline';
    }
    const outcome = await commitClaims(run.commit, batch, (contestKey, dueStart) => deps.store.gateCheck(contestKey, dueStart));
    counts.delivered += outcome.delivered;
    counts.lost += outcome.lost;
    counts.duplicates += outcome.duplicates;
    counts.transactions += outcome.transactions;
    counts.retries += outcome.retries;
    counts.gateChecks += outcome.gateChecks;
  }
  return 'page';
}

/** Rows whose source's reply clock is fresh, and rows whose is not (evidenceFresh). */
function byEvidence(
  rows: readonly DueRow[],
  contests: ReadonlyMap<string, Record<string, unknown> | undefined>,
  nowSeconds: number,
): { fresh: DueRow[]; stale: DueRow[] } {
  const fresh: DueRow[] = [];
  const stale: DueRow[] = [];
  for (const row of rows) (evidenceFresh(contests.get(replyClockId(platformOf(row.contestId))), nowSeconds) ? fresh : stale).push(row);
  return { fresh, stale };
}

/**
 * The claims of a page's valid rows: those the rule lets fire (the others deferred, by reason)
 * and whose event the outbox would take (the others invalid, `too-large`).
 */
function claimsOf(
  rows: readonly DueRow[],
  contests: ReadonlyMap<string, Record<string, unknown> | undefined>,
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
    claims.push({ contestKey: row.contestKey, row, event, action: deps.store.claim(row, nowSeconds), bytes: claimBytes(row, detailBytes) });
  }
  return claims;
}
