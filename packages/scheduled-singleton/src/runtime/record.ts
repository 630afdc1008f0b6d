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
 *   ledger        number set: slots (epoch minutes) of the intervals that succeeded, within retention
 *   handoff       string set: what runs handed over to the next one
 *   ttl           epoch seconds, far beyond expiry: garbage collection of an abandoned job only
 */
import { EventValidationError } from './errors.js';
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
  handoff?: Set<string>;
  ttl?: number;
}

/** The `ttl` of the lease item: long after expiry, so only an abandoned job's item is collected. */
export const LEASE_ITEM_TTL_SECONDS = 30 * 24 * 3600;

export function leaseTtlSeconds(expiresAtMs: number): number {
  return Math.ceil(expiresAtMs / 1000) + LEASE_ITEM_TTL_SECONDS;
}

// ---------------------------------------------------------------------------------------------
// The interval ledger
// ---------------------------------------------------------------------------------------------

const MINUTE_MS = 60_000;
/** Lambda keeps an async event at most 6 hours: no retry or duplicate arrives later than that. */
export const MIN_LEDGER_RETENTION_MS = 6 * 3600 * 1000;
export const MAX_LEDGER_RETENTION_MS = 7 * 24 * 3600 * 1000;
/** Periods remembered, between the bounds above. */
export const LEDGER_PERIODS = 200;

/**
 * How long succeeded intervals are remembered for a schedule of `periodMinutes`: 200 periods,
 * at least 6 hours (every retry and duplicate arrives within it) and at most 7 days. At a
 * one-minute rate that is 360 slots (about 2 KB in the lease item); hourly, 168.
 */
export function ledgerRetentionMs(periodMinutes: number): number {
  return Math.min(MAX_LEDGER_RETENTION_MS, Math.max(MIN_LEDGER_RETENTION_MS, LEDGER_PERIODS * periodMinutes * MINUTE_MS));
}

/** The ledger slot of an interval (an ISO time on a period boundary): its epoch minute. */
export function slotOf(interval: string): number {
  const at = Date.parse(interval);
  if (!Number.isFinite(at)) throw new EventValidationError(`not an interval: ${interval}`);
  return Math.floor(at / MINUTE_MS);
}

/** The ledger after `interval` succeeded: the new slot plus those inside retention. */
export function rememberDone(ledger: ReadonlySet<number>, interval: string, nowMs: number, retentionMs: number): Set<number> {
  const oldest = Math.floor((nowMs - retentionMs) / MINUTE_MS);
  const keep = new Set<number>();
  for (const slot of ledger) if (slot >= oldest) keep.add(Number(slot));
  keep.add(slotOf(interval));
  return keep;
}

// ---------------------------------------------------------------------------------------------
// Conditions
// ---------------------------------------------------------------------------------------------

/**
 * Acquire: free (no holder) or expired by the expiry attribute; for a scheduled interval also
 * "not already done". One conditional write; on refusal DynamoDB returns the old item.
 */
export function acquireCondition(withInterval: boolean): string {
  const free = '(attribute_not_exists(holder) OR expiresAtMs <= :now)';
  return withInterval ? `${free} AND NOT contains(ledger, :slot)` : free;
}

/** Renew, release and every fenced data write: this run still holds this acquisition, unexpired. */
export const OWNED_CONDITION = 'holder = :runId AND fence = :fence AND expiresAtMs > :now';
/** Release does not require unexpired: an expired lease nobody took over is still ours to free. */
export const RELEASE_CONDITION = 'holder = :runId AND fence = :fence';

/** Why an acquisition was refused, from the item the failed conditional write returned. */
export function explainRefusal(old: LeaseItem | undefined, now: number, interval: string | undefined): AcquireRefusal {
  if (interval !== undefined && old?.ledger?.has(slotOf(interval))) {
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
