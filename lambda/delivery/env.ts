/** The delivery function's own environment variables (the stack sets them; the handler reads them). No runtime imports: the CDK app loads it. */
import { ENV } from '../contract.js';

export const DELIVERY_ENV = {
  contestsTable: ENV.contestsTable,
  remindersTable: ENV.remindersTable,
  /** This job's shard, 0 to DUE_SHARDS - 1 (default 0): the one byDue partition it reads. */
  dueShard: 'DUE_SHARD',
  /** The stack's setting (context `contestSync:dueShards`), the same the sync and the write path get: `dueShard = bucket mod DUE_SHARDS`. */
  dueShards: ENV.dueShards,
} as const;
