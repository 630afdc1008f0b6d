/**
 * The app's door on this machine (`npm start`; docs/api.md): the HTTP API's bundle as the stack
 * builds it, in a warm child process behind a local API Gateway with a JWT authorizer for a local
 * issuer; the feed objects in a local bucket and the FIFO feed queue feeding the builder; the
 * signed webhooks relayed to the example receiver, which verifies them. Every store is DynamoDB
 * Local's tables from the template, or a stand-in for a service that does not run here.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SQSRecord } from 'aws-lambda';
import { webhookReceiver } from '../../examples/webhook-receiver/receiver.js';
import { reminderUsers, sqsSender } from '../../lambda/calendar/aws.js';
import { createBuilder } from '../../lambda/calendar/builder.js';
import { CALENDAR_ENV } from '../../lambda/calendar/contract.js';
import type { CalendarDeps } from '../../lambda/calendar/feeds.js';
import { dynamoDoorTable, s3FeedObjects } from '../../lambda/calendar/store.js';
import { createReminderClient } from '../../lambda/reminders/index.js';
import { createRelay } from '../../lambda/webhooks/relay.js';
import { WEBHOOK_EVENT_PATTERN } from '../../lib/constructs/webhooks.js';
import { referenced } from '../../lib/wiring.js';
import { rulesFromTemplate, type BusEvent, type BusRule, type Target } from '../bus-standin.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../dynamodb-local.js';
import { functionEnv } from '../local-events.js';
import type { TableNames } from '../tables.js';
import { bundleDirOfFunction, type CfnTemplate } from '../template.js';
import { startFunctionProcess, type FunctionProcess } from './function-process.js';
import { gatewayFromTemplate, startGateway, type Gateway } from './gateway.js';
import { startLocalIssuer, type LocalIssuer } from './issuer.js';
import { bucketFromTemplate, startObjectStandin, type ObjectStandin } from './object-standin.js';
import { queueFromTemplate, startQueueStandin, type QueueStandin } from './queue-standin.js';

export const FEED_BUCKET = 'local-feeds';
export const DEFAULT_PORT = 3100;
/** The local issuer's `iss` (the stack's `contestSync:jwtIssuer` in a deployment). */
export const LOCAL_ISSUER = 'https://issuer.contest-sync.local';

export interface DoorOptions {
  template: CfnTemplate;
  /** The cloud assembly the template was synthesized into, with bundling. */
  outdir: string;
  dynamoEndpoint: string;
  /** The feed builder's DynamoDB endpoint, if not `dynamoEndpoint` (the bench counts the API's requests alone). */
  builderDynamoEndpoint?: string;
  names: TableNames;
  /** The API's port (0: any free one). */
  port?: number;
  /** The function's JSON logs and one line per request, if given. */
  log?: (line: string) => void;
}

export interface LocalDoor {
  /** The API's base URL, e.g. http://localhost:3100. */
  url: string;
  issuer: LocalIssuer;
  /** The bus's rules and targets of the door, from the template: contest events to the feed queue, every event to the webhook relay. */
  bus: { rules: BusRule[]; targets: Record<string, Target> };
  /** What the example receiver accepted (verified), in order. */
  webhooks: BusEvent[];
  /** The example receiver's URL, where the relay posts each signed webhook. */
  receiverUrl: string;
  objects: ObjectStandin;
  /** The feed queue: messages sent to it, holding them back from the builder, what it dead-lettered. */
  queue: Pick<QueueStandin, 'sent' | 'hold' | 'deadLetters' | 'deduplicated'>;
  /** Resolves once the feed queue has no message left to build. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** The HTTP API function's logical id in the template. */
export function apiFunctionId(template: CfnTemplate): string {
  const ids = Object.keys(template.Resources ?? {}).filter(
    (id) => id.startsWith('DoorApiFunction') && template.Resources[id].Type === 'AWS::Lambda::Function',
  );
  if (ids.length !== 1) throw new Error(`expected one DoorApiFunction in the template, found ${ids.length}`);
  return ids[0]!;
}

const localAws = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };

/** The feed queue's logical id: the queue the API function's FEED_QUEUE_URL names. */
export function feedQueueId(template: CfnTemplate): string {
  const ref = template.Resources[apiFunctionId(template)].Properties.Environment.Variables[CALENDAR_ENV.feedQueueUrl];
  const id = referenced(ref);
  if (id === undefined || template.Resources[id]?.Type !== 'AWS::SQS::Queue')
    throw new Error(`${CALENDAR_ENV.feedQueueUrl} names no queue of the template`);
  return id;
}

/** The feed bucket's logical id: the bucket the API function's FEED_BUCKET_NAME names. */
export function feedBucketId(template: CfnTemplate): string {
  const id = referenced(template.Resources[apiFunctionId(template)].Properties.Environment.Variables[CALENDAR_ENV.feedBucket]);
  if (id === undefined || template.Resources[id]?.Type !== 'AWS::S3::Bucket')
    throw new Error(`${CALENDAR_ENV.feedBucket} names no bucket of the template`);
  return id;
}

/** The product's bus (OutboxDelivery's) in the template. */
export function busId(template: CfnTemplate): string {
  const ids = Object.keys(template.Resources).filter((id) => template.Resources[id].Type === 'AWS::Events::EventBus');
  if (ids.length !== 1) throw new Error(`expected one event bus in the template, found ${ids.length}`);
  return ids[0]!;
}

/**
 * The door's rules on the bus, as the template declares them: the one feeding the feed queue, and
 * the webhook relay's. A template synthesized without `contestSync:webhookUrl` has no webhook
 * rule; the local door then wires the one the Webhooks construct would (lib/constructs/webhooks.ts).
 */
function doorRules(template: CfnTemplate, queueId: string): BusRule[] {
  const rules = rulesFromTemplate(template, busId(template));
  const feeds = rules.filter((rule) => rule.targets.includes(queueId));
  const webhooks = rules
    .filter((rule) => rule.name.startsWith('WebhooksAllEvents'))
    .map((rule) => ({ ...rule, targets: ['webhooks'], parameters: {} }));
  return [
    ...feeds,
    ...(webhooks.length > 0 ? webhooks : [{ name: 'WebhooksAllEvents', pattern: WEBHOOK_EVENT_PATTERN, targets: ['webhooks'] }]),
  ];
}

/** The feed builder's stores: the local tables, bucket and queue (the builder runs in this process). */
function calendarDeps(options: DoorOptions, objects: ObjectStandin, queueUrl: string): CalendarDeps {
  const dynamo = new DynamoDBClient({ endpoint: options.builderDynamoEndpoint ?? options.dynamoEndpoint, ...localAws });
  const doc = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
  const { contests, reminders: remindersTable } = options.names;
  const reminders = createReminderClient({ dynamo: doc, tables: { contests, reminders: remindersTable } });
  return {
    objects: s3FeedObjects(new S3Client({ endpoint: objects.endpoint, forcePathStyle: true, ...localAws }), FEED_BUCKET),
    door: dynamoDoorTable(doc, options.names.door!),
    reminders,
    send: sqsSender(new SQSClient({ endpoint: new URL(queueUrl).origin, ...localAws }), queueUrl),
    usersOf: reminderUsers(doc, remindersTable),
    now: Date.now,
  };
}

/** The API function's environment as the template sets it, pointed at the local tables and stand-ins. */
function apiEnv(options: DoorOptions, objects: ObjectStandin, queue: QueueStandin): Record<string, string> {
  return {
    ...functionEnv(options.template, apiFunctionId(options.template), options.names),
    [CALENDAR_ENV.feedBucket]: FEED_BUCKET,
    [CALENDAR_ENV.feedQueueUrl]: queue.url,
    AWS_ENDPOINT_URL_DYNAMODB: options.dynamoEndpoint,
    AWS_ENDPOINT_URL_S3: objects.endpoint,
    AWS_ENDPOINT_URL_SQS: queue.endpoint,
    AWS_S3_FORCE_PATH_STYLE: 'true',
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    POWERTOOLS_LOG_LEVEL: options.log === undefined ? 'SILENT' : 'INFO',
  };
}

/** The example receiver on a free port, and the relay that signs each bus event to it. */
async function startWebhooks(received: BusEvent[]): Promise<{ server: Server; url: string; target: Target }> {
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const server = webhookReceiver(secret, async (event) => void received.push(event as BusEvent)).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/contest-sync`;
  const relay = createRelay({
    url,
    secrets: async () => [secret],
    post: async (to, headers, body) => (await fetch(to, { method: 'POST', headers, body })).status,
    retryAfter: async () => undefined,
    ratePerSecond: 100,
    now: Date.now,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    log: { info: () => undefined, warn: () => undefined },
  });
  const target: Target = async (event) => {
    const record = {
      messageId: event.id,
      receiptHandle: event.id,
      body: JSON.stringify(event),
      attributes: { ApproximateReceiveCount: '1' },
    };
    const { batchItemFailures } = await relay({ Records: [record as unknown as SQSRecord] });
    if (batchItemFailures.length > 0) throw new Error('the receiver did not accept the webhook');
  };
  return { server, url, target };
}

export async function startLocalDoor(options: DoorOptions): Promise<LocalDoor> {
  const objects = await startObjectStandin(bucketFromTemplate(options.template, feedBucketId(options.template), FEED_BUCKET));
  const quiet = { info: () => undefined, warn: (m: string) => options.log?.(m), error: (m: string) => options.log?.(m) };
  const built: { builder?: ReturnType<typeof createBuilder> } = {};
  const queueId = feedQueueId(options.template);
  const queue = await startQueueStandin(queueFromTemplate(options.template, queueId), (records) => built.builder!({ Records: records }), {
    name: 'feeds.fifo',
  });
  built.builder = createBuilder(calendarDeps(options, objects, queue.url), quiet);
  const entry = `${bundleDirOfFunction(options.outdir, options.template, apiFunctionId(options.template))}/index.mjs`;
  const api: FunctionProcess = await startFunctionProcess({
    entry,
    name: 'ContestSync-Api-local',
    env: apiEnv(options, objects, queue),
    output: options.log,
  });
  const port = options.port ?? DEFAULT_PORT;
  const issuer = await startLocalIssuer(LOCAL_ISSUER);
  const gateway: Gateway = await startGateway({
    api: gatewayFromTemplate(options.template),
    invoke: (event) => api.invoke(event),
    verify: (token) => issuer.verify(token),
    port,
    ...(options.log === undefined ? {} : { log: options.log }),
  });
  const webhooks: BusEvent[] = [];
  const relay = await startWebhooks(webhooks);
  return {
    url: gateway.url,
    issuer,
    webhooks,
    receiverUrl: relay.url,
    objects,
    queue,
    bus: {
      rules: doorRules(options.template, queueId),
      targets: { [queueId]: async (event, target) => queue.fromRule(JSON.stringify(event), target.sqsParameters), webhooks: relay.target },
    },
    settled: () => queue.idle(),
    async close() {
      await gateway.close();
      await api.stop();
      await new Promise((resolve) => relay.server.close(resolve));
      await queue.close();
      await objects.close();
    },
  };
}
