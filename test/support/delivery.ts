/**
 * The reminder delivery job of shard 0 in this process, on a test's DynamoDB Local tables (as the
 * stack configures it: its lease, run records and outbox), on a clock `offsetMs` ahead; and the
 * events the outbox holds, by source.
 */
import { expect } from 'vitest';
import { OUTBOX_ITEM } from '@contest-sync/scheduled-singleton';
import { ENV, EVENT_SOURCES } from '../../lambda/contract.js';
import { createDeliveryHandler } from '../../lambda/delivery/handler.js';
import { deliveryLeaseKey, deliveryRunRecordPrefix } from '../../lambda/delivery/schema.js';
import { localDynamoClient } from '../../local/dynamodb-local.js';
import { scanAll } from './contests.js';
import type { TestTables } from './tables.js';

/** The delivery function's environment on these tables, shard 0; `env` adds to it (e.g. DUE_SHARDS). */
export function deliveryEnv(tables: TestTables, env: Record<string, string> = {}): Record<string, string> {
  return {
    AWS_REGION: 'us-east-1',
    [ENV.contestsTable]: tables.names.contests,
    [ENV.remindersTable]: tables.names.reminders,
    COORDINATION_TABLE_NAME: tables.names.coordination,
    LEASE_DURATION_SECONDS: '5',
    SCHEDULE_RATE_MINUTES: '1',
    LEASE_KEY: deliveryLeaseKey(0),
    RUN_RECORD_PREFIX: deliveryRunRecordPrefix(0),
    OUTBOX_TABLE_NAME: tables.names.outbox!,
    OUTBOX_EVENT_SOURCE: EVENT_SOURCES.reminders,
    OUTBOX_RETENTION_DAYS: '7',
    POWERTOOLS_METRICS_NAMESPACE: 'ContestSync',
    POWERTOOLS_SERVICE_NAME: 'reminder-delivery-0',
    DUE_SHARD: '0',
    ...env,
  };
}

/** One run of the delivery job on a clock `offsetMs` ahead; it must succeed. */
export async function deliverAt(tables: TestTables, offsetMs: number, env: Record<string, string> = {}) {
  const handler = createDeliveryHandler({
    env: deliveryEnv(tables, env),
    dynamo: localDynamoClient(tables.endpoint),
    now: () => Date.now() + offsetMs,
    write: () => undefined,
  });
  const result = await handler({}, { getRemainingTimeInMillis: () => 60_000 });
  expect(result.outcome).toBe('succeeded');
  return result;
}

export interface OutboxEvent {
  eventId: string;
  detailType: string;
  time: string;
  detail: Record<string, unknown>;
}

/** The outbox's events of one source (EVENT_SOURCES), detail parsed. */
export async function outboxEvents(tables: TestTables, source: string): Promise<OutboxEvent[]> {
  const items = await scanAll(tables.doc, tables.names.outbox!);
  return items
    .filter((item) => item[OUTBOX_ITEM.source] === source)
    .map((item) => ({
      eventId: String(item[OUTBOX_ITEM.eventId]),
      detailType: String(item[OUTBOX_ITEM.detailType]),
      time: new Date(Number(item[OUTBOX_ITEM.createdAtMs])).toISOString(),
      detail: JSON.parse(String(item[OUTBOX_ITEM.detail])) as Record<string, unknown>,
    }));
}
