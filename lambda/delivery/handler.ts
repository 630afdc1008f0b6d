/**
 * The Lambda entry of reminder delivery (docs/delivery.md): every minute, on the package's
 * wrapper. The precheck is one Query of the job's own byDue partition, before any lease: an idle
 * minute costs that one request and nothing else. A minute with rows goes on under
 * the shard's lease, reads their contests, and claims each row in the fenced transaction that
 * writes its ReminderDue event and checks its contest (the rule).
 */
import { type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import {
  JOB_ENV,
  scheduledSingleton,
  type JobContext,
  type ScheduledSingletonHandler,
  type Write,
} from '@contest-sync/scheduled-singleton';
import { MAX_DUE_SHARDS } from '../contract.js';
import { DELIVERY_ENV } from './env.js';
import { deliverDue, emptyDeliveryCounts, screenRows, type DeliveryCounts } from './deliver.js';
import { DynamoDueStore, type DuePage } from './dynamo-due.js';

const tableName = z.string({ error: 'is not set' }).regex(/^[a-zA-Z0-9_.-]{3,255}$/, 'is not a DynamoDB table name');
const schema = z.object({
  [DELIVERY_ENV.contestsTable]: tableName,
  [DELIVERY_ENV.remindersTable]: tableName,
  [DELIVERY_ENV.dueShard]: z.coerce
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(0, 'must be >= 0')
    .max(MAX_DUE_SHARDS - 1, `must be <= ${MAX_DUE_SHARDS - 1}`)
    .default(0),
  [DELIVERY_ENV.dueShards]: z.coerce
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(1, 'must be >= 1')
    .max(MAX_DUE_SHARDS, `must be <= ${MAX_DUE_SHARDS}`)
    .default(1),
  [JOB_ENV.eventSource]: z.string({ error: 'is not set (the job publishes through its outbox)' }).min(1, 'is not set'),
});

export class DeliveryConfigError extends Error {
  override readonly name = 'DeliveryConfigError';
}

export interface DeliveryConfig {
  tables: { contests: string; reminders: string };
  /** This job's shard (the one byDue partition it reads), and the stack's DUE_SHARDS (the shard is below it). */
  shard: number;
  dueShards: number;
  eventSource: string;
}

export function readDeliveryConfig(env: Record<string, string | undefined>): DeliveryConfig {
  const present = Object.fromEntries(
    Object.keys(schema.shape).flatMap((name) => (env[name] === undefined || env[name] === '' ? [] : [[name, env[name]]])),
  );
  const parsed = schema.safeParse(present);
  if (!parsed.success) {
    throw new DeliveryConfigError(
      `invalid configuration: ${parsed.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`).join('; ')}`,
    );
  }
  const c = parsed.data;
  if (c[DELIVERY_ENV.dueShard] >= c[DELIVERY_ENV.dueShards]) {
    throw new DeliveryConfigError(
      `invalid configuration: ${DELIVERY_ENV.dueShard} ${c[DELIVERY_ENV.dueShard]} must be below ${DELIVERY_ENV.dueShards} (${c[DELIVERY_ENV.dueShards]})`,
    );
  }
  return {
    tables: { contests: c[DELIVERY_ENV.contestsTable], reminders: c[DELIVERY_ENV.remindersTable] },
    shard: c[DELIVERY_ENV.dueShard],
    dueShards: c[DELIVERY_ENV.dueShards],
    eventSource: c[JOB_ENV.eventSource],
  };
}

export interface DeliveryHandlerOptions {
  env?: Record<string, string | undefined>;
  dynamo?: DynamoDBClient;
  now?: () => number;
  newRunId?: () => string;
  write?: Write;
  /** Claims per transaction (the bench compares per-row transactions); default the most that fit. */
  claimsPerTransaction?: number;
}

/** The summary line's fields of a pass (and of an idle minute: what the look saw). */
function summaryOf(counts: DeliveryCounts): Record<string, unknown> {
  return { counts };
}

/** What a container reads once: its configuration, and the due store on the wrapper's client. */
interface DeliverySetup {
  config: DeliveryConfig;
  store: DynamoDueStore;
}

function deliverySetup(config: DeliveryConfig, dynamo: DynamoDBClient): DeliverySetup {
  const doc = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
  return { config, store: new DynamoDueStore(doc, config.tables) };
}

export function createDeliveryHandler(options: DeliveryHandlerOptions = {}): ScheduledSingletonHandler {
  const env = options.env ?? process.env;
  const now = options.now ?? Date.now;
  return scheduledSingleton(
    async (job: JobContext<DuePage, DeliverySetup>) => {
      const { config, store } = job.config;
      return deliverDue(
        {
          signal: job.signal,
          deadline: job.deadline,
          commit: job.commit,
          dryRun: job.dryRun,
          ...(job.precheck !== undefined ? { firstPage: job.precheck } : {}),
        },
        {
          store,
          shard: config.shard,
          eventSource: config.eventSource,
          now,
          log: job.log,
          ...(options.claimsPerTransaction !== undefined ? { claimsPerTransaction: options.claimsPerTransaction } : {}),
        },
      );
    },
    {
      ...(options.dynamo !== undefined ? { dynamo: options.dynamo } : {}),
      env,
      now,
      // Read once per container, on the wrapper's DynamoDB client (its time budget).
      configure: (configEnv, { dynamo }) => deliverySetup(readDeliveryConfig(configEnv), dynamo),
      ...(options.newRunId !== undefined ? { newRunId: options.newRunId } : {}),
      ...(options.write !== undefined ? { write: options.write } : {}),
      // Look before the lease: the one Query an idle minute costs.
      // Rows that cannot be believed do not make a minute busy (they are counted, every minute,
      // until the app fixes them).
      precheck: async ({ signal, config: { config, store } }) => {
        return precheck(store, config, Math.floor(now() / 1000), signal);
      },
      summary: summaryOf,
      record: ({ value }) =>
        value === undefined ? {} : { delivered: value.delivered, invalid: value.invalid, lost: value.lost, more: value.more },
    },
  );
}

/**
 * The look before the lease: the first page of the job's own partition. Idle when it has no row
 * that can be believed, nor more pages.
 */
async function precheck(
  store: DynamoDueStore,
  config: DeliveryConfig,
  nowSeconds: number,
  signal: AbortSignal,
): Promise<{ idle: true; summary: Record<string, unknown> } | { idle: false; value: DuePage }> {
  const page = await store.duePage(config.shard, nowSeconds, undefined, signal);
  const seen = emptyDeliveryCounts();
  seen.queries = 1;
  seen.due = page.rows.length;
  const busy = screenRows(page.rows, seen).length > 0 || page.next !== undefined;
  return busy ? { idle: false, value: page } : { idle: true, summary: summaryOf(seen) };
}

export { DELIVERY_ENV };
export const handler = createDeliveryHandler();
