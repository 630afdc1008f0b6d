/**
 * The Lambda entry of reminder delivery (docs/delivery.md): every minute, on the package's
 * wrapper. The precheck is the one Query of the byDue index, before any lease: an idle minute
 * costs that request and nothing else. A minute with rows goes on under the shard's lease, reads
 * their contests, and claims each row in the fenced transaction that writes its ReminderDue event.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import {
  DYNAMO_CLIENT_SETTINGS,
  JOB_ENV,
  scheduledSingleton,
  type JobContext,
  type ScheduledSingletonHandler,
  type Write,
} from '@contest-sync/scheduled-singleton';
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
    .max(1023, 'must be <= 1023')
    .default(0),
  [JOB_ENV.eventSource]: z.string({ error: 'is not set (the job publishes through its outbox)' }).min(1, 'is not set'),
});

export class DeliveryConfigError extends Error {
  override readonly name = 'DeliveryConfigError';
}

export interface DeliveryConfig {
  tables: { contests: string; reminders: string };
  shard: number;
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
  return {
    tables: { contests: c[DELIVERY_ENV.contestsTable], reminders: c[DELIVERY_ENV.remindersTable] },
    shard: c[DELIVERY_ENV.dueShard],
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

export function createDeliveryHandler(options: DeliveryHandlerOptions = {}): ScheduledSingletonHandler {
  const env = options.env ?? process.env;
  const now = options.now ?? Date.now;
  const dynamo =
    options.dynamo ??
    new DynamoDBClient({
      maxAttempts: DYNAMO_CLIENT_SETTINGS.maxAttempts,
      requestHandler: {
        connectionTimeout: DYNAMO_CLIENT_SETTINGS.connectionTimeoutMs,
        requestTimeout: DYNAMO_CLIENT_SETTINGS.requestTimeoutMs,
      },
    });
  const doc = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
  let ready: { config: DeliveryConfig; store: DynamoDueStore } | undefined;
  const setup = () => {
    if (ready === undefined) {
      const config = readDeliveryConfig(env);
      ready = { config, store: new DynamoDueStore(doc, config.tables) };
    }
    return ready;
  };

  return scheduledSingleton(
    async (job: JobContext<DuePage>) => {
      const { config, store } = setup();
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
      dynamo,
      env,
      now,
      ...(options.newRunId !== undefined ? { newRunId: options.newRunId } : {}),
      ...(options.write !== undefined ? { write: options.write } : {}),
      // Look before the lease: the one Query an idle minute costs. Rows that cannot be believed
      // do not make a minute busy (they are counted, every minute, until the app fixes them).
      precheck: async ({ signal }) => {
        const { config, store } = setup();
        const page = await store.duePage(config.shard, Math.floor(now() / 1000), undefined, signal);
        const seen = emptyDeliveryCounts();
        seen.queries = 1;
        seen.due = page.rows.length;
        const valid = screenRows(page.rows, seen);
        if (valid.length === 0 && page.next === undefined) return { idle: true, summary: summaryOf(seen) };
        return { idle: false, value: page };
      },
      summary: summaryOf,
      record: ({ value }) =>
        value === undefined ? {} : { delivered: value.delivered, invalid: value.invalid, lost: value.lost, more: value.more },
    },
  );
}

export { DELIVERY_ENV };
export const handler = createDeliveryHandler();
