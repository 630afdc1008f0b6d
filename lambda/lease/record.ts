/**
 * The lease item and the pure decisions around it: the conditional expressions DynamoDB evaluates,
 * how a refused acquisition is explained from the item the failed write returns, and which
 * succeeded intervals are remembered. No I/O here.
 *
 * Lease item (Coordination table, pk = LEASE_PK):
 *   holder        run id of the current holder; absent when free
 *   expiresAtMs   epoch ms after which the lease is free (decides expiry; `ttl` only collects garbage)
 *   fence         incremented by every acquisition; data writes check holder + fence
 *   acquiredAtMs, renewedAtMs, releasedAtMs, source, interval, lastRun
 *   doneIntervals string set of scheduled intervals that succeeded (pruned to a retention window)
 *   recheck       number set of contests whose reminders the last runs touched: the next run
 *                 checks their reminders again (the app may have written one meanwhile)
 *   ttl           epoch seconds, far beyond expiry: garbage collection of an abandoned job only
 */

/** Who invoked the run: `schedule`, `deploy` or `console` (recorded on the lease item as is). */
export type InvocationSource = string;

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
  doneIntervals?: Set<string>;
  recheck?: Set<number>;
  ttl?: number;
}

export interface HeldLease {
  readonly runId: string;
  readonly fence: number;
  /** Last expiry DynamoDB confirmed for this holder. */
  readonly expiresAtMs: number;
  readonly doneIntervals: ReadonlySet<string>;
  /** Contests the previous runs asked to check again (from the acquiring write's answer). */
  readonly recheck: ReadonlySet<number>;
}

export type AcquireRefusal =
  | {
      reason: 'lease-held';
      holder: string;
      expiresAtMs?: number;
      fence: number | undefined;
      /** Set when no holder was read: DynamoDB contention outlasted the retry budget. */
      contention?: string;
    }
  | { reason: 'already-done'; interval: string };

/** The `ttl` of the lease item: long after expiry, so only an abandoned job's item is collected. */
export const LEASE_ITEM_TTL_SECONDS = 30 * 24 * 3600;
/** How long a succeeded interval is remembered (longer than Lambda's 6 h maximum event age). */
export const DONE_INTERVAL_RETENTION_MS = 7 * 24 * 3600 * 1000;

export function leaseTtlSeconds(expiresAtMs: number): number {
  return Math.ceil(expiresAtMs / 1000) + LEASE_ITEM_TTL_SECONDS;
}

/**
 * Acquire: free (no holder) or expired by the expiry attribute; for a scheduled interval also
 * "not already done". One conditional write; on refusal DynamoDB returns the old item.
 */
export function acquireCondition(withInterval: boolean): string {
  const free = '(attribute_not_exists(holder) OR expiresAtMs <= :now)';
  return withInterval ? `${free} AND NOT contains(doneIntervals, :interval)` : free;
}

/** Renew, release and every fenced data write: this run still holds this acquisition, unexpired. */
export const OWNED_CONDITION = 'holder = :runId AND fence = :fence AND expiresAtMs > :now';
/** Release does not require unexpired: an expired lease nobody took over is still ours to free. */
export const RELEASE_CONDITION = 'holder = :runId AND fence = :fence';

/** Why an acquisition was refused, from the item the failed conditional write returned. */
export function explainRefusal(old: LeaseItem | undefined, now: number, interval: string | undefined): AcquireRefusal {
  if (interval !== undefined && old?.doneIntervals?.has(interval)) {
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

/** Intervals to remember after `interval` succeeded: the new one plus those inside retention. */
export function rememberDone(done: ReadonlySet<string>, interval: string, now: number): Set<string> {
  const keep = new Set<string>();
  for (const key of done) {
    const at = Date.parse(key);
    if (Number.isFinite(at) && now - at <= DONE_INTERVAL_RETENTION_MS) keep.add(key);
  }
  keep.add(interval);
  return keep;
}
