/**
 * A second job on the single-execution module, and the smallest one: every scheduled interval it
 * records one heartbeat row `{ pk: "beat#<interval>", runId, fence, at }`. It uses the module's
 * public surface (lambda/single-execution/index.ts) and the AWS SDK only. Duplicate deliveries,
 * retries and overlaps are the module's business: at most one run holds the lease, an interval
 * that succeeded is skipped (`already-done`), and the row is written fenced, with the interval
 * marked done in the same transaction.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  DYNAMO_CLIENT_SETTINGS,
  DynamoFencedWriter,
  DynamoLease,
  describe,
  leaseTiming,
  ledgerRetentionMs,
  runExclusively,
  type ExclusiveDeps,
} from '../../lambda/single-execution/index.js';
import { ENV, LEASE_KEY, METRICS, RUN_RECORD_PREFIX } from './contract.js';

/** Set by ScheduledSingletonJob. */
const JOB_ENV = { coordinationTable: 'COORDINATION_TABLE_NAME', leaseDurationSeconds: 'LEASE_DURATION_SECONDS', periodMinutes: 'SCHEDULE_RATE_MINUTES' };

export interface HeartbeatResult {
  runId: string;
  source: 'schedule' | 'console';
  interval?: string;
  outcome: 'succeeded' | 'skipped' | 'failed';
  reason?: string;
  fence?: number;
  error?: string;
}

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
}

let deps: (ExclusiveDeps & { beatsTable: string; periodMinutes: number; workDelayMs: number }) | undefined;

function setup(): NonNullable<typeof deps> {
  const timing = leaseTiming(Number(required(JOB_ENV.leaseDurationSeconds)));
  const periodMinutes = Number(required(JOB_ENV.periodMinutes));
  const client = new DynamoDBClient({
    maxAttempts: DYNAMO_CLIENT_SETTINGS.maxAttempts,
    requestHandler: { connectionTimeout: DYNAMO_CLIENT_SETTINGS.connectionTimeoutMs, requestTimeout: DYNAMO_CLIENT_SETTINGS.requestTimeoutMs },
  });
  const doc = DynamoDBDocumentClient.from(client);
  const now = Date.now;
  return {
    lease: new DynamoLease({ doc, table: required(JOB_ENV.coordinationTable), key: LEASE_KEY, timing, now, ledgerRetentionMs: ledgerRetentionMs(periodMinutes) }),
    writer: new DynamoFencedWriter(doc, { now }),
    timing,
    now,
    runRecordPrefix: RUN_RECORD_PREFIX,
    onAcquired: (held) => log('lease acquired', { fence: held.fence }),
    beatsTable: required(ENV.beatsTable),
    periodMinutes,
    workDelayMs: Number(process.env[ENV.workDelayMs] ?? 0),
  };
}

/** A scheduled event stands for the interval its time falls in: its start, as an ISO time. */
function intervalOf(time: string, periodMinutes: number): string {
  const periodMs = periodMinutes * 60_000;
  return new Date(Math.floor(Date.parse(time) / periodMs) * periodMs).toISOString();
}

export async function handler(event: unknown, context: { getRemainingTimeInMillis(): number }): Promise<HeartbeatResult> {
  deps ??= setup();
  const { beatsTable, periodMinutes, workDelayMs } = deps;
  const scheduled = (event as { 'detail-type'?: unknown })?.['detail-type'] === 'Scheduled Event';
  const time = (event as { time?: unknown })?.time;
  const interval = scheduled && typeof time === 'string' ? intervalOf(time, periodMinutes) : undefined;
  const source = scheduled ? 'schedule' : 'console';
  const runId = randomUUID();

  const outcome = await runExclusively(
    { runId, source, ...(interval !== undefined ? { interval } : {}), remainingMs: () => context.getRemainingTimeInMillis() },
    // The work: wait (stands in for real work; a test hook), then write the beat, fenced.
    async ({ fence, signal, commit }) => {
      if (workDelayMs > 0) await sleep(workDelayMs, undefined, { signal });
      const pk = `beat#${interval ?? `${source}#${runId}`}`;
      await commit([{ Put: { TableName: beatsTable, Item: { pk, runId, fence, at: new Date().toISOString() } } }], { final: true });
      return pk;
    },
    deps,
  );

  const result: HeartbeatResult = {
    runId,
    source,
    ...(interval !== undefined ? { interval } : {}),
    outcome: outcome.outcome,
    ...('reason' in outcome ? { reason: outcome.reason } : {}),
    ...('fence' in outcome && outcome.fence !== undefined ? { fence: outcome.fence } : {}),
    ...('error' in outcome ? { error: describe(outcome.error) } : {}),
  };
  log(outcome.outcome, { summary: true, ...result });
  emitMetrics(result);
  // A failed scheduled run throws, so that Lambda retries it (and, after the retries, the failure queue gets it).
  if (result.outcome === 'failed' && scheduled) throw new Error(`heartbeat ${runId} failed (${result.reason}): ${result.error}`);
  return result;
}

function log(message: string, extra: Record<string, unknown>): void {
  console.log(JSON.stringify({ level: 'INFO', message, timestamp: new Date().toISOString(), ...extra }));
}

/** The metrics ScheduledSingletonJob's alarms read, as one CloudWatch EMF line. */
function emitMetrics(result: HeartbeatResult): void {
  const counts: Record<string, number> = {
    RunSucceeded: result.outcome === 'succeeded' ? 1 : 0,
    RunFailed: result.outcome === 'failed' ? 1 : 0,
    RunSkipped: result.outcome === 'skipped' ? 1 : 0,
    LeaseLost: result.reason === 'lease-lost' ? 1 : 0,
  };
  console.log(
    JSON.stringify({
      _aws: {
        Timestamp: Date.now(),
        CloudWatchMetrics: [{ Namespace: METRICS.namespace, Dimensions: [['service']], Metrics: Object.keys(counts).map((Name) => ({ Name, Unit: 'Count' })) }],
      },
      service: METRICS.service,
      ...counts,
    }),
  );
}
