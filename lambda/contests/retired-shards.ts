/**
 * Shards a lowered DUE_SHARDS left behind (docs/delivery.md, "Changing the setting"), pure: every
 * delivery job reads only its own `byDue` partition, so a row still in a partition at or above
 * the setting is read by nobody. The sync moves such rows into their current shard (their bucket
 * mod the setting) and records on its reply clock the setting it ensured; only when the clock
 * says a higher setting ran does it look (an unchanged sync makes no extra request), and it looks
 * once more on the following run, for rows written meanwhile by code still on the old setting.
 */
import { MAX_DUE_SHARDS } from '../contract.js';

/** What the reply clock records of the setting (absent on a clock that predates it: any shard may hold rows). */
export interface ShardRecord {
  dueShards?: number;
  retiredDueShards?: number;
}

export interface RetiredShards {
  /** The partitions to sweep this run (empty: nothing to do, no request). */
  sweep: number[];
  /** What the clock records after a sweep that finished. */
  after: { dueShards: number; retiredDueShards?: number };
  /** What it records after a sweep the deadline cut short (the next run sweeps them all again). */
  unfinished: { dueShards: number; retiredDueShards?: number };
}

/**
 * The retired partitions under a setting of `dueShards`, from what the clock recorded: those from
 * the setting up to the highest setting that may have left rows (the one recorded, or the one
 * recorded as retired, or MAX_DUE_SHARDS when nothing was recorded).
 */
export function retiredShards(recorded: ShardRecord, dueShards: number): RetiredShards {
  const last = recorded.dueShards ?? MAX_DUE_SHARDS;
  const highest = Math.max(last, recorded.retiredDueShards ?? 0);
  const sweep: number[] = [];
  for (let shard = dueShards; shard < Math.min(highest, MAX_DUE_SHARDS); shard += 1) sweep.push(shard);
  // Lowered by this deployment: swept now and once more by the following run.
  const again = last > dueShards ? { retiredDueShards: last } : {};
  return {
    sweep,
    after: { dueShards, ...again },
    unfinished: { dueShards, ...(highest > dueShards ? { retiredDueShards: highest } : {}) },
  };
}

/** Whether the clock must be written to record `next` (it differs from what was read). */
export function shardRecordChanged(recorded: ShardRecord, next: ShardRecord): boolean {
  return recorded.dueShards !== next.dueShards || recorded.retiredDueShards !== next.retiredDueShards;
}
