/**
 * The clients and stores the door's functions (the HTTP API, the feed builder) share, built from
 * the environment the stack sets: DynamoDB with the product's call budget, S3 for the feed
 * objects, SQS for the feed queue, the reminder write path (lambda/reminders/) and the feeds.
 * docs/api.md.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { budgetedDynamoClient } from '@contest-sync/scheduled-singleton';
import { CALENDAR_ENV } from './contract.js';
import { reminderUsers, sqsSender } from './aws.js';
import type { CalendarDeps } from './feeds.js';
import { dynamoDoorTable, s3FeedObjects } from './store.js';
import { createReminderClient, type ReminderClient } from '../reminders/index.js';
import { DEFAULTS, MAX_DUE_SHARDS } from '../contract.js';

const name = z.string({ error: 'is not set' }).min(3).max(255);
const doorEnvSchema = z.object({
  [CALENDAR_ENV.contestsTable]: name,
  [CALENDAR_ENV.remindersTable]: name,
  [CALENDAR_ENV.doorTable]: name,
  [CALENDAR_ENV.feedBucket]: name,
  [CALENDAR_ENV.feedQueueUrl]: z.url({ error: 'is not a URL' }),
  // The same setting the sync and the delivery jobs get: a due row's shard is its bucket mod it.
  [CALENDAR_ENV.dueShards]: z
    .string()
    .regex(/^\d{1,2}$/, { error: `is not a whole number from 1 to ${MAX_DUE_SHARDS}` })
    .transform(Number)
    .pipe(z.number().int().min(1).max(MAX_DUE_SHARDS))
    .default(DEFAULTS.dueShards),
});

/** The door's environment, as the stack sets it (a missing or bad value is refused, naming it). */
export function doorEnv(env: NodeJS.ProcessEnv): z.infer<typeof doorEnvSchema> {
  return doorEnvSchema.parse(env);
}

export interface DoorClients {
  doc: DynamoDBDocumentClient;
  env: z.infer<typeof doorEnvSchema>;
  reminders: ReminderClient;
  calendar: CalendarDeps;
}

export function doorClients(env: NodeJS.ProcessEnv, now: () => number = Date.now): DoorClients {
  const parsed = doorEnv(env);
  const dynamo = budgetedDynamoClient();
  const doc = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
  const reminders = createReminderClient({
    dynamo: doc,
    tables: { contests: parsed[CALENDAR_ENV.contestsTable], reminders: parsed[CALENDAR_ENV.remindersTable] },
    dueShards: parsed[CALENDAR_ENV.dueShards],
    now,
  });
  const calendar: CalendarDeps = {
    objects: s3FeedObjects(new S3Client({}), parsed[CALENDAR_ENV.feedBucket]),
    door: dynamoDoorTable(doc, parsed[CALENDAR_ENV.doorTable]),
    reminders,
    send: sqsSender(new SQSClient({}), parsed[CALENDAR_ENV.feedQueueUrl]),
    usersOf: reminderUsers(doc, parsed[CALENDAR_ENV.remindersTable]),
    now,
  };
  return { doc, env: parsed, reminders, calendar };
}
