/**
 * The lease item and the pure decisions around it: the conditional expressions DynamoDB evaluates,
 * how a refused acquisition is explained from the item the failed write returns, and the interval
 * ledger. No I/O here.
 *
 * Lease item (Coordination table, pk = the job's lease key):
 *   holder        run id of the current holder; absent when free
 *   expiresAtMs   epoch ms after which the lease is free (decides expiry; `ttl` only collects garbage)
 *   fence         incremented by every acquisition; data writes check holder + fence
 *   acquiredAtMs, renewedAtMs, releasedAtMs, source, interval, lastRun
 *   done, doneAtMs  the interval ledger, compact: two characters per interval that succeeded (ledger.ts)
 *   ledger        the interval ledger as a number set of epoch minutes (a long retention; earlier releases)
 *   handoff       string set: what runs handed over to the next one
 *   ttl           epoch seconds, far beyond expiry: garbage collection of an abandoned job only
 */
import { ledgerHolds } from './ledger.js';
import type { AcquireRefusal } from './ports.js';

export interface LeaseItem {
  pk: string;
  holder?: string;
  expiresAtMs?: number;
  fence?: number;
  acquiredAtMs?: number;
  renewedAtMs?: number;
  releasedAtMs?: number;
  source?: string;
  interval?: string;
  ledger?: Set<number>;
  done?: string;
  doneAtMs?: number;
  handoff?: Set<string>;
  /** The last release's summary of its run (how a release whose answer was lost is confirmed). */
  lastRun?: { runId?: string; fence?: number; [field: string]: unknown };
  ttl?: number;
}

/** The `ttl` of the lease item: long after expiry, so only an abandoned job's item is collected. */
export const LEASE_ITEM_TTL_SECONDS = 30 * 24 * 3600;

export function leaseTtlSeconds(expiresAtMs: number): number {
  return Math.ceil(expiresAtMs / 1000) + LEASE_ITEM_TTL_SECONDS;
}

// ---------------------------------------------------------------------------------------------
// Conditions
// ---------------------------------------------------------------------------------------------

/**
 * Acquire: free (no holder) or expired by the expiry attribute; for a scheduled interval also
 * "not already done" in the number set (`:slot`) and, when the interval is in the compact form's
 * window, in `done` (`:token`) unless `done` is stale (`doneAtMs < :stale`). One conditional write;
 * on refusal DynamoDB returns the old item.
 */
export function acquireCondition(dedupe: { slot: boolean; token: boolean } | boolean): string {
  const free = '(attribute_not_exists(holder) OR expiresAtMs <= :now)';
  const test = typeof dedupe === 'boolean' ? { slot: dedupe, token: dedupe } : dedupe;
  const clauses = [free];
  if (test.slot) clauses.push('NOT contains(ledger, :slot)');
  if (test.token) clauses.push('(doneAtMs < :stale OR NOT contains(#done, :token))');
  return clauses.join(' AND ');
}

/** Renew, release and every fenced data write: this run still holds this acquisition, unexpired. */
export const OWNED_CONDITION = 'holder = :runId AND fence = :fence AND expiresAtMs > :now';
/** Release does not require unexpired: an expired lease nobody took over is still ours to free. */
export const RELEASE_CONDITION = 'holder = :runId AND fence = :fence';

/** Why an acquisition was refused, from the item the failed conditional write returned. */
export function explainRefusal(old: LeaseItem | undefined, now: number, interval: string | undefined): AcquireRefusal {
  if (interval !== undefined && ledgerHolds(old, interval, now)) {
    return { reason: 'already-done', interval };
  }
  if (old?.holder !== undefined && old.expiresAtMs !== undefined && old.expiresAtMs > now) {
    return { reason: 'lease-held', holder: old.holder, expiresAtMs: old.expiresAtMs, fence: old.fence };
  }
  // The condition failed but the returned item shows neither: the state changed between the
  // evaluation and our reading of it (clock skew between hosts). Report it as held.
  return {
    reason: 'lease-held',
    holder: old?.holder ?? 'unknown',
    expiresAtMs: old?.expiresAtMs ?? now,
    fence: old?.fence,
  };
}

/** Why a renewal was refused, from the item the failed conditional write returned. */
export function explainLoss(runId: string, old: LeaseItem | undefined, now: number): string {
  if (old?.holder !== undefined && old.holder !== runId) return `taken over by ${old.holder} (fence ${String(old.fence)})`;
  if (old?.expiresAtMs !== undefined && old.expiresAtMs <= now) return `expired ${now - old.expiresAtMs} ms ago`;
  return 'released or missing';
}
