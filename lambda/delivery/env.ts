/** The delivery function's own environment variables (the stack sets them; the handler reads them). No runtime imports: the CDK app loads it. */
import { ENV } from '../contract.js';

export const DELIVERY_ENV = {
  contestsTable: ENV.contestsTable,
  remindersTable: ENV.remindersTable,
  /** The byDue partition this function serves: `contestId mod dueShards` (default 0). */
  dueShard: 'DUE_SHARD',
} as const;
