/** Names shared by the heartbeat job's handler and its stack (no runtime dependencies). */

/** The job's own keys in the (possibly shared) coordination table. */
export const LEASE_KEY = 'lease#heartbeat';
export const RUN_RECORD_PREFIX = 'run#heartbeat#';

/** The table the beats go to, and a test hook: how long the work waits before writing (ms). */
export const ENV = {
  beatsTable: 'BEATS_TABLE_NAME',
  workDelayMs: 'HEARTBEAT_WORK_DELAY_MS',
} as const;

/** EMF namespace and `service` dimension of the metrics the alarms read. */
export const METRICS = { namespace: 'Heartbeat', service: 'heartbeat' } as const;
